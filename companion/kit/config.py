"""Run-time settings shared by every chapter: profile, seed, device and threads.

Two profiles exist (see docs/architecture.md, "Profiles"):

* ``quick`` — the default, for laptops and CI: every notebook finishes in under a minute on
  two CPU cores while the phenomenon stays unmistakable;
* ``full`` — the book's sizes (widths, steps, grids); uses a GPU when one is present.

A **smoke** run (``COMPANION_SMOKE=1``, only with the full profile) checks the full profile's code paths on a
CPU in seconds: every shape, width and recording cadence stays the full one, but each step count written
with :func:`pick_steps` is cut to :data:`SMOKE_INTERVALS` recording intervals, and claims are shown as
``◇ SMOKE (not judged)``.

They are chosen with the environment variables ``COMPANION_PROFILE`` and ``COMPANION_SEED``.
An unknown value is an error that names the allowed ones.  Chapters write their
hyper-parameters once with :func:`pick`, so the quick and full values stand side by side::

    steps = pick(quick=2_000, full=10_000)

A step count (training steps, epochs, iterations) is written with :func:`pick_steps` instead, naming
the full profile's recording interval, so that a smoke run can cut it::

    steps = pick_steps(quick=2_000, full=10_000, every=50)

Torch's thread count is set once, here, the first time a chapter asks for the settings:
small matrix products run many times faster on one thread than on oversubscribed ones, so
the quick profile uses ``COMPANION_THREADS`` (default 1) threads.  The same count limits the BLAS
libraries that NumPy and SciPy bundle (OpenBLAS, through threadpoolctl): left at one thread per core,
two notebooks side by side (``reproduce --jobs 2``, the robustness sweep) start four BLAS threads on
two cores, and OpenBLAS's spinning threads then make a small SVD or least-squares fit tens of times
slower.  A large batched computation (a whole ensemble of transformers per step) is the exception:
:func:`batched_threads` lends it up to two threads for its duration.

Torch's OpenMP threads wait for each other at the end of every parallel operation, by default *spinning* there
for a while.  When another program holds one of the cores, a thread waits for a descheduled partner: measured on
2 cores beside two busy processes, a small batched matmul + backward loop took 213 s on 2 threads against 19 s on
one.  A *passive* wait policy (threads sleep at a barrier) fixes that but makes every quiet run slower (ch12's
heaviest cell +34 % on 2 cores), so :func:`batched_threads` instead lends the second thread only while a core is
actually free: a :class:`ThreadLender` reads, about twice a second, how much CPU time other programs took on this
process's cores (``/proc/stat`` less this process's own time) and drops back to one thread within half a second of
another program starting.  The thread count, and with it the last bits of rounding in a batched computation, thus
follows the machine's load; ``COMPANION_THREADS`` fixes it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import torch
from threadpoolctl import threadpool_limits

PROFILES = ("quick", "full")
LANGUAGES = ("en", "zh")  # the editions (companion.kit.i18n)
T = TypeVar("T")
#: How many of the full profile's recording intervals a step count keeps in a smoke run.
SMOKE_INTERVALS = 2


class ConfigError(ValueError):
    """A setting (environment variable or argument) has a value that is not allowed."""


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message, its middle cut out when longer than ``limit`` characters (a 100 kB
    value gives a one-line message, not a 100 kB one)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit // 2]}…{text[-(limit // 2):]} ({len(str(value))} characters)"


def env_value(name: str, default: str) -> str:
    """The environment variable ``name``, stripped; unset or empty means ``default`` (the same for every
    ``COMPANION_*`` variable)."""
    raw = os.environ.get(name, "").strip()
    return raw if raw else default


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` or a container sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Settings:
    """The active profile, seed, device and thread count of this process."""

    profile: str
    seed: int
    device: torch.device
    threads: int
    smoke: bool = False

    def describe(self) -> str:
        return (f"profile={self.profile}{' (smoke)' if self.smoke else ''}  seed={self.seed}  "
                f"device={self.device.type}  torch threads={self.threads}")


def read_profile(value: str | None = None) -> str:
    """Return the profile named by ``value`` or by ``COMPANION_PROFILE`` (default ``quick``)."""
    raw = env_value("COMPANION_PROFILE", "quick") if value is None else value
    name = str(raw).strip().lower()
    if name not in PROFILES:
        raise ConfigError(f"unknown profile {shown(raw)}: COMPANION_PROFILE must be one of {', '.join(PROFILES)}")
    return name


class LanguageError(ConfigError):
    """``COMPANION_LANG`` or a ``--lang`` option names a language the companion does not have."""


def read_language(value: str | None = None) -> str:
    """The language named by ``value`` or by ``COMPANION_LANG`` (default ``en``); an unknown one is an error."""
    raw = env_value("COMPANION_LANG", "en") if value is None else value
    name = str(raw).strip().lower()
    if name not in LANGUAGES:
        raise LanguageError(f"unknown language {shown(raw)}: COMPANION_LANG (or --lang) must be one of {', '.join(LANGUAGES)}")
    return name


def read_seed(value: str | int | None = None) -> int:
    """Return the seed given or read from ``COMPANION_SEED`` (default 0): an integer in [0, 2**32), written in
    ASCII digits (``int()`` alone would also take ``１_０`` and read 10)."""
    raw = env_value("COMPANION_SEED", "0") if value is None else value
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()):
        raise ConfigError(f"COMPANION_SEED must be a non-negative integer written in digits 0-9, got {shown(raw)}")
    if len(text) > 10 or not 0 <= int(text) < 2**32:
        raise ConfigError(f"COMPANION_SEED must lie in [0, 2**32), got {shown(raw)}")
    return int(text)


def read_smoke(profile: str, value: str | bool | None = None) -> bool:
    """Whether this is a smoke run: ``value`` or ``COMPANION_SMOKE`` (``1``/``0``, default off); only with ``full``."""
    raw = env_value("COMPANION_SMOKE", "0") if value is None else value
    text = str(raw).strip().lower()
    if text not in ("", "0", "1", "false", "true"):
        raise ConfigError(f"COMPANION_SMOKE must be 1 or 0, got {shown(raw)}")
    smoke = text in ("1", "true")
    if smoke and profile != "full":
        raise ConfigError(f"a smoke run checks the full profile: --smoke (COMPANION_SMOKE=1) needs --profile full "
                          f"(COMPANION_PROFILE=full), got {profile!r}")
    return smoke


def read_threads(profile: str, value: str | int | None = None) -> int:
    """Thread count: ``COMPANION_THREADS`` if set, else 1 (quick) or all available cores (full); at most the
    available cores (:func:`available_cores`): more threads than cores only wait for each other, and a huge
    count made OpenBLAS start threads until the user's process limit ran out."""
    raw = os.environ.get("COMPANION_THREADS") if value is None else value
    cores = available_cores()
    if raw is None or str(raw).strip() == "":
        return 1 if profile == "quick" else cores
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 6 or not 1 <= int(text) <= cores:
        raise ConfigError(f"COMPANION_THREADS must be a whole number from 1 to {cores} (the cores this process "
                          f"may use), got {shown(raw)}")
    return int(text)


def pick_device(profile: str) -> torch.device:
    """CUDA in the full profile when available, otherwise the CPU (quick runs are CPU-sized)."""
    if profile == "full" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


_SETTINGS: Settings | None = None


def settings() -> Settings:
    """Read the environment once, set torch's threads (and NumPy's BLAS threads) once; the active settings."""
    global _SETTINGS
    if _SETTINGS is None:
        read_language()  # a bad COMPANION_LANG is named in the setup cell, not at the first claim
        profile = read_profile()
        threads = read_threads(profile)
        torch.set_num_threads(threads)
        import scipy.linalg  # noqa: F401 — loads SciPy's own OpenBLAS, so that the limit reaches it too
        threadpool_limits(limits=threads, user_api="blas")
        smoke = read_smoke(profile)
        _SETTINGS = Settings(profile=profile, seed=read_seed(), device=pick_device(profile), threads=threads,
                             smoke=smoke)
    return _SETTINGS


class CoreWatch:
    """How many of this process's cores other programs kept busy since the last look, from the kernel's counters.

    ``/proc/stat`` counts each core's busy time (user, nice, system, irq, softirq, steal); less this process's own
    CPU time over the same interval, that is what everything else used.  Only the cores this process may run on
    (:func:`available_cores`) are counted.  Where the counters cannot be read (not Linux, or a sandbox without
    per-core lines), :meth:`others` is ``None``: nothing is known, so nothing is lent.
    """

    BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user nice system irq softirq steal (idle and iowait are 3 and 4)

    def __init__(self, stat_path: str = "/proc/stat") -> None:
        self.stat_path = stat_path
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        try:
            self.cpus = {f"cpu{n}" for n in os.sched_getaffinity(0)}
        except (AttributeError, OSError):
            self.cpus = set()
        self.last = self._read()

    def age(self) -> float:
        """Seconds since the last look: the interval the next :meth:`others` measures."""
        return time.monotonic() - self.read_at

    def _read(self) -> tuple[float, float] | None:
        """(busy seconds of this process's cores, this process's CPU seconds), or None if unreadable."""
        own, self.read_at = time.process_time(), time.monotonic()
        try:
            with open(self.stat_path, encoding="ascii") as stat:
                lines = [line.split() for line in stat if line.startswith("cpu") and not line.startswith("cpu ")]
        except (OSError, UnicodeDecodeError):
            return None
        counted = [fields for fields in lines if fields[0] in self.cpus]
        if not counted or len(counted) != len(self.cpus):
            return None
        try:
            busy = sum(int(fields[1 + i]) for fields in counted for i in self.BUSY_FIELDS if 1 + i < len(fields))
        except ValueError:
            return None
        return busy / self.tick, own

    def others(self) -> float | None:
        """Cores' worth of CPU time other programs used since the last call (≥ 0), or None if unknown."""
        now, last = self._read(), self.last
        self.last = now
        if now is None or last is None:
            return None
        interval_busy, interval_own = now[0] - last[0], now[1] - last[1]
        return max(0.0, interval_busy - interval_own)


_WATCH: CoreWatch | None = None


def core_watch() -> CoreWatch:
    """This process's :class:`CoreWatch`, made at the first batched computation."""
    global _WATCH
    if _WATCH is None:
        _WATCH = CoreWatch()
    return _WATCH


class ThreadLender:
    """The thread count of a batched computation, following the cores that are free (module docstring).

    Starts on ``before`` threads; the first :meth:`update` looks at once when the process's :class:`CoreWatch`
    (one per process, :func:`core_watch`) has not looked for :attr:`INTERVAL` seconds (the load between two batched
    computations counts), and each later one at least :attr:`INTERVAL` seconds after the last look
    measures the other programs' load (:class:`CoreWatch`) over that interval and sets
    min(``limit``, cores − others, rounded down with a quarter-core allowance) threads, never fewer than ``before``.
    ``lend=False`` (an explicit ``COMPANION_THREADS``) keeps ``before`` throughout.
    """

    INTERVAL = 0.5  # seconds between looks: a busy program costs at most this long on spinning threads
    ALLOWANCE = 0.25  # cores' worth of other programs' load (a browser, a Jupyter server) that still leaves a core free

    def __init__(self, before: int, limit: int, lend: bool, watch: CoreWatch | None = None) -> None:
        self.before, self.threads = before, before
        self.cores = available_cores()
        self.limit = max(before, min(limit, self.cores)) if lend else before
        self.watch = (watch or core_watch()) if self.limit > before else None
        waited = self.watch is not None and self.watch.age() >= self.INTERVAL
        self.looked = time.monotonic() - (self.INTERVAL if waited else 0.0)

    def lendable(self, others: float | None) -> int:
        """Threads to use when other programs keep ``others`` cores busy (None: unknown, lend nothing)."""
        if others is None:
            return self.before
        free = int(self.cores - others + self.ALLOWANCE)
        return max(self.before, min(self.limit, free))

    def update(self) -> int:
        """Look again if :attr:`INTERVAL` has passed, set torch's threads accordingly; the count in use."""
        if self.watch is None or time.monotonic() - self.looked < self.INTERVAL:
            return self.threads
        self.looked = time.monotonic()
        threads = self.lendable(self.watch.others())
        if threads != self.threads:
            torch.set_num_threads(threads)
            self.threads = threads
        return self.threads


@contextmanager
def batched_threads(limit: int = 2) -> Iterator[ThreadLender]:
    """Run a large batched computation on up to min(``limit``, cores) threads while those cores are free, then
    restore the setting; the body calls ``.update()`` between its steps (:class:`ThreadLender`).

    Its matrix products are big enough for a second thread to pay (a step of 12 batched
    transformers: 1.45× faster on 2 threads than on 1, measured on the 2-core CI machine), whereas
    the small products elsewhere are not.  An explicit ``COMPANION_THREADS`` always wins.
    """
    before = settings().threads
    explicit = os.environ.get("COMPANION_THREADS", "").strip() != ""
    lender = ThreadLender(before, limit, lend=not explicit)
    try:
        yield lender
    finally:
        torch.set_num_threads(before)


def reset_settings() -> None:
    """Forget the cached settings so that the next :func:`settings` call re-reads the environment."""
    global _SETTINGS
    _SETTINGS = None


def pick(*, quick: T, full: T, smoke: T | None = None) -> T:
    """Choose a hyper-parameter by the active profile, writing both values side by side.

    ``smoke``, where given, is what a smoke run takes instead of ``full``: the size of a sweep (seeds, trials, grid
    points) cut so that every code path still runs in seconds; widths and shapes stay the full ones.
    """
    active = settings()
    if active.profile == "quick":
        return quick
    return smoke if active.smoke and smoke is not None else full


def pick_steps(*, quick: int, full: int, every: int, smoke: int | None = None) -> int:
    """Choose a step count (training steps, epochs, iterations) by the active profile, like :func:`pick`.

    ``every`` is the full profile's recording interval (the ``record_every`` of the run that takes these
    steps; for a run that records only its end, a few steps).  A smoke run keeps :data:`SMOKE_INTERVALS` of
    those intervals (at most ``full``), so that the full profile's recording, indexing, plotting and claims
    all run in seconds; a run whose full-size steps are too slow for that on one CPU thread names its own
    smaller ``smoke`` count (it still records its first and last step).
    """
    if every < 1:
        raise ValueError(f"every must be a positive recording interval, got {every}")
    active = settings()
    if active.profile == "quick":
        return quick
    if not active.smoke:
        return full
    return min(full, SMOKE_INTERVALS * every if smoke is None else smoke)
