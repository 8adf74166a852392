"""On-disk results cache, so that reruns and interrupted sweeps resume instead of recomputing.

Built on :class:`joblib.Memory`: a cached function's result is stored under a hash of its code
and its arguments, so a changed setting (or changed code) recomputes while everything else is
read back.  :func:`sweep` runs one cached function over a list of configurations with a
progress bar; every finished item is on disk at once, so a sweep stopped half-way (Ctrl-C, a
closed laptop) resumes where it stopped.  With ``n_jobs > 1`` the items run through
:class:`joblib.Parallel`, whose backends (loky, Dask, Ray) can also spread a full-profile grid.

The cache lives in ``COMPANION_CACHE`` (default ``~/.cache/dl-phenomena-companion``); set it
to ``off`` to disable caching.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import joblib
from tqdm.auto import tqdm

from companion.kit.progress import progress_enabled

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_LOCATION = Path.home() / ".cache" / "dl-phenomena-companion"


def cache_location() -> Path | None:
    """The cache folder named by ``COMPANION_CACHE``, or ``None`` when caching is off."""
    raw = os.environ.get("COMPANION_CACHE", "").strip()
    if raw.lower() in ("off", "none", "0"):
        return None
    return Path(raw).expanduser() if raw else DEFAULT_LOCATION


def memory() -> joblib.Memory:
    """A :class:`joblib.Memory` at the current cache location (read each call)."""
    location = cache_location()
    return joblib.Memory(None if location is None else str(location), verbose=0)


def cached(func: F) -> F:
    """Decorator: store ``func``'s results on disk, keyed by its code and its arguments.

    The location is looked up at call time, so tests and the ``reproduce`` command can point a
    process at a fresh cache with ``COMPANION_CACHE``.
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return memory().cache(func)(*args, **kwargs)

    wrapper.__name__, wrapper.__qualname__ = func.__name__, func.__qualname__
    wrapper.__doc__, wrapper.__module__ = func.__doc__, func.__module__
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def is_cached(func: Callable[..., Any], **kwargs: Any) -> bool:
    """Whether the result of ``func(**kwargs)`` is already on disk (``func`` undecorated or decorated)."""
    target = getattr(func, "__wrapped__", func)
    return memory().cache(target).check_call_in_cache(**kwargs)


def sweep(func: Callable[..., Any], configs: Iterable[Mapping[str, Any]], *, n_jobs: int = 1,
          desc: str = "sweep", progress: bool = True) -> list[Any]:
    """Evaluate ``func(**config)`` for every config, caching each result as soon as it is done.

    Results come back in the order of ``configs``.  Items already on disk are read, not
    recomputed, so an interrupted sweep resumes from its last finished item.
    """
    configs = [dict(c) for c in configs]
    target = getattr(func, "__wrapped__", func)
    fn = memory().cache(target)
    bar = tqdm(total=len(configs), desc=desc, disable=not progress_enabled(progress), leave=False)
    results: list[Any] = []
    try:
        if n_jobs == 1:
            for config in configs:
                results.append(fn(**config))
                bar.update(1)
        else:
            parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
            for result in parallel(joblib.delayed(fn)(**config) for config in configs):
                results.append(result)
                bar.update(1)
    finally:
        bar.close()
    return results


def clear() -> None:
    """Delete every cached result."""
    memory().clear(warn=False)
