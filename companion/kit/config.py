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
"""

from __future__ import annotations

import os
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
    raw = os.environ.get("COMPANION_PROFILE", "quick") if value is None else value
    name = raw.strip().lower()
    if name not in PROFILES:
        raise ConfigError(f"unknown profile {raw!r}: COMPANION_PROFILE must be one of {', '.join(PROFILES)}")
    return name


class LanguageError(ConfigError):
    """``COMPANION_LANG`` or a ``--lang`` option names a language the companion does not have."""


def read_language(value: str | None = None) -> str:
    """The language named by ``value`` or by ``COMPANION_LANG`` (default ``en``); an unknown one is an error."""
    raw = os.environ.get("COMPANION_LANG", "en") if value is None else value
    name = str(raw).strip().lower()
    if name not in LANGUAGES:
        raise LanguageError(f"unknown language {raw!r}: COMPANION_LANG (or --lang) must be one of {', '.join(LANGUAGES)}")
    return name


def read_seed(value: str | int | None = None) -> int:
    """Return the seed given or read from ``COMPANION_SEED`` (default 0): a non-negative integer."""
    raw = os.environ.get("COMPANION_SEED", "0") if value is None else value
    text = str(raw).strip()
    if text.isdigit() and len(text.lstrip("0")) > 10:  # too large (and int() refuses more than 4,300 digits)
        raise ConfigError(f"COMPANION_SEED must lie in [0, 2**32), got a {len(text.lstrip('0'))}-digit number")
    try:
        seed = int(text)
    except ValueError:
        raise ConfigError(f"COMPANION_SEED must be a non-negative integer, got {raw!r}") from None
    if not 0 <= seed < 2**32:
        raise ConfigError(f"COMPANION_SEED must lie in [0, 2**32), got {seed}")
    return seed


def read_smoke(profile: str, value: str | bool | None = None) -> bool:
    """Whether this is a smoke run: ``value`` or ``COMPANION_SMOKE`` (``1``/``0``, default off); only with ``full``."""
    raw = os.environ.get("COMPANION_SMOKE", "0") if value is None else value
    text = str(raw).strip().lower()
    if text not in ("", "0", "1", "false", "true"):
        raise ConfigError(f"COMPANION_SMOKE must be 1 or 0, got {raw!r}")
    smoke = text in ("1", "true")
    if smoke and profile != "full":
        raise ConfigError(f"a smoke run checks the full profile: --smoke (COMPANION_SMOKE=1) needs --profile full "
                          f"(COMPANION_PROFILE=full), got {profile!r}")
    return smoke


def read_threads(profile: str, value: str | int | None = None) -> int:
    """Thread count: ``COMPANION_THREADS`` if set, else 1 (quick) or all cores (full)."""
    raw = os.environ.get("COMPANION_THREADS") if value is None else value
    if raw is None or str(raw).strip() == "":
        return 1 if profile == "quick" else max(1, os.cpu_count() or 1)
    try:
        threads = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"COMPANION_THREADS must be a positive integer, got {raw!r}") from None
    if threads < 1:
        raise ConfigError(f"COMPANION_THREADS must be a positive integer, got {threads}")
    return threads


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


@contextmanager
def batched_threads(limit: int = 2) -> Iterator[int]:
    """Run a large batched computation on min(``limit``, cores) threads, then restore the setting.

    Its matrix products are big enough for a second thread to pay (a step of 12 batched
    transformers: 1.45× faster on 2 threads than on 1, measured on the 2-core CI machine), whereas
    the small products elsewhere are not.  An explicit ``COMPANION_THREADS`` always wins.
    """
    before = settings().threads
    explicit = os.environ.get("COMPANION_THREADS", "").strip() != ""
    threads = before if explicit else max(before, min(limit, os.cpu_count() or 1))
    torch.set_num_threads(threads)
    try:
        yield threads
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
