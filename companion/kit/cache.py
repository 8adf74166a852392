"""On-disk results cache, so that reruns and interrupted sweeps resume instead of recomputing.

Built on :class:`joblib.Memory`: a cached function's result is stored under a hash of its code
and its arguments, so a changed setting (or changed code) recomputes while everything else is
read back.  joblib hashes only the cached function's own code, so each function's results live in
a folder named after torch's version and a digest of the code it can reach (:func:`code_digest`:
its module and every ``companion`` module that module imports, directly or not): an edit deeper in
the package, or another torch, starts a fresh folder, while an edit of a module the function cannot
reach keeps its results.  A run that raises (an error, Ctrl-C) stores nothing.  :func:`sweep` runs one cached function over a list of configurations with a
progress bar; every finished item is on disk at once, so a sweep stopped half-way (Ctrl-C, a
closed laptop) resumes where it stopped.  With ``n_jobs > 1`` the items run through
:class:`joblib.Parallel`, whose backends (loky, Dask, Ray) can also spread a full-profile grid.

The cache lives in ``COMPANION_CACHE`` (default ``~/.cache/dl-phenomena-companion``); set it
to ``off`` to disable caching.  ``python -m companion cache info`` shows what it holds (current and
outdated code), ``cache clear [--outdated]`` deletes it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from unittest.mock import patch

import joblib
import torch
from tqdm.auto import tqdm

from companion.kit.config import ConfigError
from companion.kit.progress import progress_enabled

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_LOCATION = Path.home() / ".cache" / "dl-phenomena-companion"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds companion/
SWEEPS = "sweeps"  # the namespace of the robustness sweeps (keyed by their chapter digests instead)


def _hash_tensor(hasher: joblib.hashing.Hasher, tensor: torch.Tensor) -> None:
    """Hash a tensor by its type, dtype, shape and bytes.

    joblib hashes an argument through its pickle, and a tensor's pickle differs from one process to the next
    (torch serialises its storage with per-process keys): a tensor argument, and any object holding one, gave a
    new key in every process, so a second run never found the first one's results.
    """
    data = tensor.detach().cpu().contiguous().reshape(-1)
    hasher.save((type(tensor).__name__, str(tensor.dtype), tuple(tensor.shape), tensor.requires_grad,
                 data.view(torch.uint8).numpy() if data.numel() else b""))


for _tensor_type in (torch.Tensor, torch.nn.Parameter):
    joblib.hashing.Hasher.dispatch[_tensor_type] = _hash_tensor


def cache_location() -> Path | None:
    """The cache folder named by ``COMPANION_CACHE``, or ``None`` when caching is off."""
    raw = os.environ.get("COMPANION_CACHE", "").strip()
    if raw.lower() in ("off", "none", "0"):
        return None
    return Path(raw).expanduser() if raw else DEFAULT_LOCATION


def module_file(name: str) -> Path | None:
    """The source file of the dotted module ``companion.…`` (a module or a package), if it exists."""
    base = PACKAGE_ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def imported_modules(path: Path) -> set[str]:
    """The dotted ``companion`` modules that the Python file at ``path`` imports directly (also inside functions).

    ``from companion.core import nets`` names the module ``companion.core.nets``; the package's own
    ``__init__`` files are followed too, so a change anywhere the code reaches is seen.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "companion" \
                and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "companion")
    return {name for name in found if module_file(name) is not None}


def reachable_modules(path: Path) -> list[str]:
    """Every ``companion`` module the file at ``path`` imports, directly or through other modules, sorted."""
    todo, seen = list(imported_modules(path)), set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imported_modules(module_file(name)))
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def code_digest(module: str) -> str | None:
    """A digest of module ``module``'s source and of every ``companion`` module it reaches (None if it has no
    source file).  Read once per process: the code a process runs does not change under it."""
    spec = importlib.util.find_spec(module) if module != "__main__" else None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    digest = hashlib.sha256(path.read_bytes())
    for name in reachable_modules(path):
        digest.update(name.encode() + b"\0" + module_file(name).read_bytes())
    return digest.hexdigest()[:12]


def namespace(func: Callable[..., Any]) -> str:
    """The folder of ``func``'s results: torch's version, then its module and that module's :func:`code_digest`."""
    module = getattr(func, "__module__", None) or "__main__"
    return f"torch-{torch.__version__}/{module}-{code_digest(module) or 'nosource'}"


def memory(space: str | None = None) -> joblib.Memory:
    """A :class:`joblib.Memory` at the current cache location (read each call), in the folder ``space``."""
    location = cache_location()
    return joblib.Memory(None if location is None else str(location if space is None else location / space),
                         verbose=0)


def cached(func: F) -> F:
    """Decorator: store ``func``'s results on disk, keyed by its code, the code it reaches, torch's version
    and its arguments.

    The location is looked up at call time, so tests and the ``reproduce`` command can point a
    process at a fresh cache with ``COMPANION_CACHE``.
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return memory(namespace(func)).cache(func)(*args, **kwargs)

    wrapper.__name__, wrapper.__qualname__ = func.__name__, func.__qualname__
    wrapper.__doc__, wrapper.__module__ = func.__doc__, func.__module__
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def is_cached(func: Callable[..., Any], **kwargs: Any) -> bool:
    """Whether the result of ``func(**kwargs)`` is already on disk (``func`` undecorated or decorated)."""
    target = getattr(func, "__wrapped__", func)
    return memory(namespace(target)).cache(target).check_call_in_cache(**kwargs)


def sweep(func: Callable[..., Any], configs: Iterable[Mapping[str, Any]], *, n_jobs: int = 1,
          desc: str = "sweep", progress: bool = True) -> list[Any]:
    """Evaluate ``func(**config)`` for every config, caching each result as soon as it is done.

    Results come back in the order of ``configs``.  Items already on disk are read, not
    recomputed, so an interrupted sweep resumes from its last finished item.
    """
    configs = [dict(c) for c in configs]
    target = getattr(func, "__wrapped__", func)
    fn = memory(namespace(target)).cache(target)
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


BACKENDS = ("local", "dask")


@contextmanager
def parallel_backend(name: str = "local", scheduler: str | None = None, workers: int = 2) -> Iterator[Any]:
    """Where the joblib tasks of a sweep run (:func:`sweep`, the robustness report): ``"local"`` (this machine's
    processes, the default) or ``"dask"`` — a dask.distributed cluster at ``scheduler`` (e.g.
    ``tcp://10.0.0.5:8786``, started by hand or by dask-jobqueue on Slurm), or without one a ``LocalCluster`` of
    ``workers`` single-threaded processes.  Yields the dask client (None locally).  Workers must see the same
    results cache folder (``COMPANION_CACHE`` on a shared file system) for their results to be kept.
    """
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")
    if name == "local":
        if scheduler:
            raise ConfigError("--scheduler needs --backend dask")
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("--backend dask needs dask.distributed: pip install -e '.[cluster]'") from None
    # dask sets OMP_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_, PYTHONHASHSEED … in this process's environment for the
    # workers it spawns, and leaves them there: every kernel started afterwards would inherit them (measured: the
    # notebooks run after such a sweep took twice as long).  The environment is restored when the block ends.
    with patch.dict(os.environ):
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except OSError as exc:
                raise ConfigError(f"cannot reach the dask scheduler at {scheduler!r}: {exc}") from None
            cluster = None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        try:
            with joblib.parallel_config(backend="dask"):
                yield client
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


@dataclass(frozen=True)
class Folder:
    """One folder of the cache: a function module's results under one torch and one code digest."""

    name: str  # relative to the cache location, e.g. "torch-2.13.0/companion.core.fprinciple-3fa2…"
    entries: int  # stored results
    bytes: int
    current: bool | None  # made by the code and torch of this process (None: cannot tell, e.g. a test module)


def folders() -> list[Folder]:
    """What the cache holds, per folder (see :func:`namespace`)."""
    location = cache_location()
    if location is None or not location.exists():
        return []
    found = []
    for folder in sorted(p for p in location.glob("*/*") if p.is_dir()) + sorted(
            p for p in [location / SWEEPS] if p.is_dir()):
        files = [f for f in folder.rglob("*") if f.is_file()]
        name = folder.relative_to(location).as_posix()
        current = None
        if name.startswith("torch-") and "/" in name:
            version, rest = name.split("/", 1)
            module, _, digest = rest.rpartition("-")
            known = code_digest(module) if module else None
            current = None if known is None else (version == f"torch-{torch.__version__}" and digest == known)
        found.append(Folder(name, sum(f.name == "output.pkl" for f in files), sum(f.stat().st_size for f in files),
                            current))
    return found


def clear(outdated_only: bool = False) -> list[Folder]:
    """Delete every cached result (or, with ``outdated_only``, the folders made by other code or another torch);
    return the folders deleted."""
    location = cache_location()
    if location is None or not location.exists():
        return []
    if not outdated_only:
        gone = folders()
        shutil.rmtree(location)
        return gone
    gone = [f for f in folders() if f.current is False]
    for folder in gone:
        shutil.rmtree(location / folder.name)
    return gone
