"""Hand the memory that a long training run has freed back to the operating system.

On Linux, torch's CPU tensors come from glibc's ``malloc``, which keeps freed blocks for reuse and returns them to the
system only when the free space sits at the top of its heap.  A training step allocates and frees the same
temporaries thousands of times, and glibc reuses them badly enough that a process can grow without bound: chapter
9's full profile (100 nets of width 500, full-batch GD on 64 points, 40 000 steps) grew by about 0.48 GB per 1000 steps
and was killed for lack of memory at 12 GB, though its tensors and records need under 1 GB.  ``malloc_trim(0)``
releases the free blocks (the workaround the torch maintainers suggest, pytorch/pytorch#41486); with it the same run
stays at 0.3 GB, its time within 7 % (``benchmarks/memory_release.py`` measures both).

:class:`MemoryReleaser` asks for it at most once every :data:`RELEASE_EVERY_SECONDS`, which costs nothing measurable;
:func:`companion.core.train.run`, the package's one training loop, calls it after every step.  Elsewhere (macOS,
Windows, musl) it does nothing: their allocators return memory on their own terms.
"""

from __future__ import annotations

import ctypes
import sys
import time
from collections.abc import Callable

RELEASE_EVERY_SECONDS = 1.0


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)`` through ctypes, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):  # musl and other C libraries have no malloc_trim
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


_TRIM = _malloc_trim()


def release_free_memory() -> bool:
    """Return the C heap's free blocks to the operating system; False where that cannot be asked for."""
    if _TRIM is None:
        return False
    _TRIM()
    return True


class MemoryReleaser:
    """A call per training step that releases free memory (:func:`release_free_memory`) at most once every
    ``seconds`` of ``clock`` (the first call releases)."""

    def __init__(self, seconds: float = RELEASE_EVERY_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        if not seconds >= 0:
            raise ValueError(f"seconds must be ≥ 0, got {seconds}")
        self.seconds, self.clock, self.last = seconds, clock, None
        self.releases = 0

    def __call__(self) -> None:
        now = self.clock()
        if self.last is None or now - self.last >= self.seconds:
            self.last = now
            self.releases += release_free_memory()


__all__ = ["MemoryReleaser", "release_free_memory", "RELEASE_EVERY_SECONDS"]
