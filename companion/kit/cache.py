"""On-disk results cache, so that reruns and interrupted sweeps resume instead of recomputing.

A cached function's result is stored under a hash of its arguments (:func:`joblib.hash`, which reads nothing back)
in a folder named after torch's version and a digest of the code the function can reach (:func:`code_digest`: its
module and every ``companion`` module that module imports, directly or not): an edit deeper in the package, or
another torch, starts a fresh folder, while an edit of a module the function cannot reach keeps its results.
A run that raises (an error, Ctrl-C) stores nothing.  :func:`sweep` runs one cached function over a list of
configurations with a progress bar; every finished item is on disk at once, so a sweep stopped half-way (Ctrl-C, a
closed laptop) resumes where it stopped.  With ``n_jobs > 1`` the items run through :class:`joblib.Parallel`, whose
backends (loky, Dask, Ray) can also spread a full-profile grid.

Results are stored as data, never as pickles, so a crafted cache entry cannot run code: each entry is a folder
``<namespace>/<function>/<argument hash>/`` holding ``result.json`` (the structure, with type tags and
:data:`FORMAT`) and ``arrays.npz`` (NumPy arrays and tensors' bytes, read with ``allow_pickle=False``).  Allowed
are None, bool, int, float, complex, str, NumPy scalars and arrays (not of object dtype), tensors of every dtype
(bfloat16 included), torch dtypes and generators' states, lists, tuples, dicts, sets, dataclasses defined in
``companion`` and ``companion`` classes that define their own ``to_record``/``from_record`` (the trained models);
anything else is a :class:`NotData` error when the result is stored.  An entry that is corrupt, truncated, of
another format or unreadable is named in one :class:`CacheWarning` line and recomputed.  Entries are written to a
temporary folder and renamed into place (two processes storing the same result leave one valid entry); folders are
private (0700), files 0600.

The cache lives in ``COMPANION_CACHE`` (default ``~/.cache/dl-phenomena-companion``; a relative path is taken from
the current folder); set it to ``off`` to disable caching.  A cache folder is marked by a ``CACHEDIR.TAG`` file.
``python -m companion cache info`` shows what it holds (current and outdated code), ``cache clear [--outdated]``
deletes its entries, and refuses a folder that holds anything else.  A chapter whose cache cannot be used (a file,
an unwritable folder) runs without it after one warning.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import shutil
import tempfile
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from unittest.mock import patch

import joblib
import numpy as np
import torch
from tqdm.auto import tqdm

from companion.kit.config import ConfigError, shown
from companion.kit.progress import progress_enabled

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_LOCATION = Path.home() / ".cache" / "dl-phenomena-companion"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds companion/
SWEEPS = "sweeps"  # the namespace of the robustness sweeps (keyed by their chapter digests instead)
FORMAT = 1  # the version of the entries' layout; an entry of another version is recomputed
RESULT, ARRAYS, MARKER = "result.json", "arrays.npz", "CACHEDIR.TAG"
TEMP_PREFIX = ".tmp-"  # an entry being written, beside the entries of its function
MARKER_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
               "# This folder is the results cache of dl-phenomena-companion (python -m companion cache info).\n"
               "# For information about cache directory tags see https://bford.info/cachedir/\n")
OFF = ("off", "none", "0")
NAME_MAX, PATH_MAX = 255, 4000  # bytes of one path component, and of a whole path (Linux: 255, 4096)


class CacheWarning(UserWarning):
    """A cache entry or folder that cannot be used: the result is computed (and, where possible, stored) anew."""


class NotData(TypeError):
    """A result that the cache cannot store as data (a function, an optimizer, a model without a record…)."""


class BadEntry(Exception):
    """A stored entry that cannot be trusted (corrupt, truncated, foreign or unreadable); the message says why."""


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


# ---------------------------------------------------------------------------------------------- where the cache is
def absolute_setting(raw: str) -> str:
    """The value of ``COMPANION_CACHE`` to hand to a process in another folder (a notebook kernel runs in
    ``chapters/``): a relative path made absolute against the current folder; other values unchanged."""
    value = raw.strip()
    if not value or value.lower() in OFF or value.startswith("~") or os.path.isabs(value):
        return raw
    return os.path.abspath(value)


def cache_location() -> Path | None:
    """The cache folder named by ``COMPANION_CACHE`` (absolute; a relative one is taken from the current folder),
    or ``None`` when caching is off.  A ``~user`` that does not exist is a :class:`ConfigError`."""
    raw = os.environ.get("COMPANION_CACHE", "").strip()
    if raw.lower() in OFF:
        return None
    if not raw:
        return DEFAULT_LOCATION
    try:
        path = Path(raw).expanduser()
    except RuntimeError:
        raise ConfigError(f"COMPANION_CACHE={shown(raw)}: cannot find the home folder of that user; "
                          "name a folder, or 'off'") from None
    return Path(os.path.abspath(path))


def check_location(location: Path) -> None:
    """Raise a :class:`ConfigError` naming ``COMPANION_CACHE`` unless ``location`` can hold the cache: not too long,
    not under /proc or /sys, a readable and writable folder (or a folder that can be made there)."""
    raw = os.environ.get("COMPANION_CACHE", "").strip() or str(location)

    def bad(why: str) -> ConfigError:
        return ConfigError(f"COMPANION_CACHE={shown(raw)} cannot hold the results cache: {why}; "
                           "name another folder, or 'off'")

    encoded = os.fsencode(str(location))
    if len(encoded) > PATH_MAX or any(len(os.fsencode(part)) > NAME_MAX for part in location.parts):
        raise bad("the name is too long")
    if location.parts[1:2] in (("proc",), ("sys",)):
        raise bad(f"/{location.parts[1]} is not a place for files")
    existing = location
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise bad(f"{shown(str(existing))} is a file" if existing == location
                      else f"{shown(str(existing))} is not a folder")
        if existing == location and not os.access(location, os.R_OK | os.W_OK | os.X_OK):
            raise bad("the folder cannot be read and written (permissions)")
        if existing != location and not os.access(existing, os.W_OK | os.X_OK):
            raise bad(f"cannot make the folder in {shown(str(existing))} (permissions)")
    except OSError as exc:
        raise bad(exc.strerror or type(exc).__name__) from None


def usable_location() -> Path | None:
    """The cache folder for a computation, or ``None`` (off, or unusable: then one :class:`CacheWarning` says why
    and the results are computed without the cache)."""
    try:
        location = cache_location()
        if location is not None:
            check_location(location)
        return location
    except ConfigError as exc:
        _warn(f"results cache not used: {exc}")
        return None


def _private_dirs(path: Path) -> None:
    """Make ``path`` and every missing folder above it, each with mode 0700."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass


def _write_private(path: Path, data: bytes) -> None:
    """Write a new file ``path`` with mode 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _own_name(name: str) -> bool:
    """Whether a name at the top of a cache folder is the cache's own: its marker or one of its namespaces."""
    return name in (MARKER, SWEEPS) or name.startswith("torch-")


def prepare(location: Path) -> None:
    """Make the cache folder (0700) if needed, and mark it with ``CACHEDIR.TAG`` when it holds nothing but the
    cache's own folders (a folder holding other files is used but never marked, so ``clear`` leaves it alone)."""
    _private_dirs(location)
    if not (location / MARKER).exists() and all(_own_name(n) for n in os.listdir(location)):
        try:
            _write_private(location / MARKER, MARKER_TEXT.encode())
        except FileExistsError:
            pass


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


# ------------------------------------------------------------------------------------------ results as data
def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _companion_class(path: str) -> type:
    """The class ``module:qualname`` of a ``companion`` module, or :class:`BadEntry` (nothing outside the package
    is ever imported)."""
    module, _, qualname = path.partition(":")
    if not module.startswith("companion.") or not qualname:
        raise BadEntry(f"refusing the class {path!r} (not a companion class)")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        raise BadEntry(f"no class {path!r}") from None
    if not isinstance(found, type):
        raise BadEntry(f"{path!r} is not a class")
    return found


def _has_record(cls: type) -> bool:
    """Whether ``cls`` (a ``companion`` class) turns its instances into data itself (``to_record``/``from_record``
    defined on the class, not inherited: a subclass's own state would be lost)."""
    return cls.__module__.startswith("companion.") and "to_record" in vars(cls) and "from_record" in vars(cls)


def _float(value: float) -> str:
    return value.hex()  # exact, NaN and ±inf included


class Encoder:
    """Turns a result into JSON-able data with type tags, collecting its arrays (see :func:`decode`)."""

    def __init__(self, what: str) -> None:
        self.what = what  # the function, for error messages
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, value: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = value
        return key

    def __call__(self, obj: Any, where: str = "result") -> Any:  # noqa: C901  (one case per type)
        kind = type(obj)
        if obj is None or kind in (bool, str):
            return obj
        if kind is int:
            return {"$": "int", "v": str(obj)}
        if kind is float:
            return {"$": "float", "v": _float(obj)}
        if kind is complex:
            return {"$": "complex", "v": [_float(obj.real), _float(obj.imag)]}
        if kind in (list, tuple, set, frozenset):
            items = sorted(obj, key=repr) if kind in (set, frozenset) else obj
            return {"$": kind.__name__, "v": [self(v, f"{where}[{i}]") for i, v in enumerate(items)]}
        if kind in (dict, OrderedDict):  # an OrderedDict: a module's state_dict
            return {"$": "dict" if kind is dict else "odict",
                    "v": [[self(k, f"{where} key"), self(v, f"{where}[{k!r}]")] for k, v in obj.items()]}
        if isinstance(obj, np.generic) and not obj.dtype.hasobject:
            return {"$": "npscalar", "a": self.array(np.asarray(obj))}
        if kind is np.ndarray and not obj.dtype.hasobject:
            return {"$": "ndarray", "a": self.array(obj)}
        if kind in (torch.Tensor, torch.nn.Parameter) and obj.layout == torch.strided and not obj.is_quantized:
            data = obj.detach().cpu().resolve_conj().resolve_neg().contiguous()
            return {"$": "param" if kind is torch.nn.Parameter else "tensor", "dtype": str(obj.dtype).split(".")[-1],
                    "shape": list(obj.shape), "grad": obj.requires_grad, "device": str(obj.device),
                    "a": self.array(data.reshape(-1).view(torch.uint8).numpy() if data.numel() else np.zeros(0, np.uint8))}
        if kind is torch.dtype:
            return {"$": "dtype", "v": str(obj).split(".")[-1]}
        if kind is torch.device:
            return {"$": "device", "v": str(obj)}
        if kind is torch.Generator:
            return {"$": "generator", "device": str(obj.device), "a": self.array(obj.get_state().numpy())}
        if dataclasses.is_dataclass(kind) and kind.__module__.startswith("companion."):
            return {"$": "dataclass", "cls": _class_path(kind),
                    "v": {f.name: self(getattr(obj, f.name), f"{where}.{f.name}") for f in dataclasses.fields(obj)}}
        if _has_record(kind):
            return {"$": "record", "cls": _class_path(kind), "v": self(obj.to_record(), f"{where}.to_record()")}
        raise NotData(f"{self.what}: cannot store {where}, a {kind.__module__}.{kind.__qualname__}, in the results "
                      "cache: a cached function must return data (numbers, strings, arrays, tensors, lists, tuples, "
                      "dicts, companion dataclasses), e.g. a model's state_dict instead of the model")


def _tensor(spec: Mapping[str, Any], raw: np.ndarray) -> torch.Tensor:
    dtype = getattr(torch, str(spec["dtype"]), None)
    if not isinstance(dtype, torch.dtype) or raw.dtype != np.uint8 or raw.ndim != 1:
        raise BadEntry(f"bad tensor {spec.get('dtype')!r}")
    shape = [int(n) for n in spec["shape"]]
    empty = torch.empty(shape, dtype=dtype)
    if raw.size != empty.numel() * empty.element_size():
        raise BadEntry("a tensor's bytes do not match its shape")
    flat = torch.from_numpy(raw.copy()).view(dtype) if raw.size else torch.empty(0, dtype=dtype)
    tensor = flat.reshape(shape).to(str(spec["device"]))
    if spec["$"] == "param":
        return torch.nn.Parameter(tensor, requires_grad=bool(spec["grad"]))
    return tensor.requires_grad_(bool(spec["grad"]))


def decode(data: Any, arrays: Mapping[str, np.ndarray]) -> Any:  # noqa: C901  (one case per tag)
    """The result that :class:`Encoder` stored as ``data`` and ``arrays``; :class:`BadEntry` for anything that does
    not follow the format (an unknown tag, a class outside ``companion``, a missing array…)."""
    if data is None or type(data) in (bool, str):
        return data
    if type(data) is not dict or not isinstance(data.get("$"), str):
        raise BadEntry(f"untagged {type(data).__name__} in the result")
    tag, value = data["$"], data.get("v")

    def array(key: str = "a") -> np.ndarray:
        if data.get(key) not in arrays:
            raise BadEntry(f"missing array {data.get(key)!r}")
        return arrays[data[key]]

    try:
        if tag == "int":
            return int(value)
        if tag == "float":
            return float.fromhex(value)
        if tag == "complex":
            return complex(float.fromhex(value[0]), float.fromhex(value[1]))
        if tag in ("list", "tuple", "set", "frozenset"):
            if type(value) is not list:
                raise BadEntry(f"bad {tag}")
            items = [decode(v, arrays) for v in value]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag in ("dict", "odict"):
            pairs = [(decode(k, arrays), decode(v, arrays)) for k, v in value]
            return dict(pairs) if tag == "dict" else OrderedDict(pairs)
        if tag == "npscalar":
            return array()[()]
        if tag == "ndarray":
            return array()
        if tag in ("tensor", "param"):
            return _tensor(data, array())
        if tag == "dtype":
            dtype = getattr(torch, value)
            if not isinstance(dtype, torch.dtype):
                raise BadEntry(f"bad dtype {value!r}")
            return dtype
        if tag == "device":
            return torch.device(value)
        if tag == "generator":
            gen = torch.Generator(data["device"])
            gen.set_state(torch.from_numpy(array().copy()))
            return gen
        if tag == "dataclass":
            cls = _companion_class(data["cls"])
            names = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else None
            if names is None or type(value) is not dict or sorted(value) != sorted(names):
                raise BadEntry(f"{data['cls']} does not match the stored fields")
            obj = object.__new__(cls)  # as pickle does: no __init__, no __post_init__, the stored fields as they were
            for name in names:
                object.__setattr__(obj, name, decode(value[name], arrays))
            return obj
        if tag == "record":
            cls = _companion_class(data["cls"])
            if not _has_record(cls):
                raise BadEntry(f"{data['cls']} cannot be rebuilt from a record")
            return cls.from_record(decode(value, arrays))
    except BadEntry:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RuntimeError, OverflowError) as exc:
        raise BadEntry(f"bad {tag!r} value ({type(exc).__name__})") from None
    raise BadEntry(f"unknown tag {tag!r}")




# ------------------------------------------------------------------------------------------------- the store
def _read_entry(entry: Path) -> Any:
    """The result stored in the folder ``entry``; :class:`BadEntry` if it cannot be trusted."""
    try:
        data = json.loads((entry / RESULT).read_bytes())
        if type(data) is not dict or data.get("format") != FORMAT:
            raise BadEntry(f"not an entry of format {FORMAT}")
        with open(entry / ARRAYS, "rb") as f, np.load(f, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        return decode(data.get("result"), arrays)
    except FileNotFoundError as exc:
        raise BadEntry(f"{Path(exc.filename or '').name or 'a file'} is missing") from None
    except PermissionError:
        raise BadEntry("cannot be read (permissions)") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:  # json, zip and npy errors
        raise BadEntry(f"corrupt ({type(exc).__name__})") from None
    except RecursionError:
        raise BadEntry("nested too deeply") from None


def _write_entry(entry: Path, result: Any, what: str) -> None:
    """Store ``result`` as the folder ``entry``: written whole into a temporary folder beside it, then renamed into
    place; when another process put an entry there first, that one is kept.  :class:`NotData` for a result that is
    not data (before anything is written)."""
    encode = Encoder(what)
    text = json.dumps({"format": FORMAT, "function": what, "result": encode(result)}, allow_nan=False).encode()
    _private_dirs(entry.parent)
    temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{entry.name}-", dir=entry.parent))  # mode 0700
    try:
        _write_private(temp / RESULT, text)
        fd = os.open(temp / ARRAYS, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **encode.arrays, allow_pickle=False)
        try:
            os.rename(temp, entry)
        except OSError:
            if not entry.is_dir():
                raise  # not a lost race: a real failure
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _discard(entry: Path) -> None:
    """Remove a bad entry: renamed aside first, so that no reader ever sees half of it."""
    aside = entry.with_name(f"{TEMP_PREFIX}{entry.name}-bad-{os.getpid()}")
    try:
        os.rename(entry, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


_WARNED: set[str] = set()


def _warn(message: str) -> None:
    """One line on stderr (a :class:`CacheWarning` with no source line under it), once per process per message."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn_explicit(message, CacheWarning, filename="companion results cache", lineno=0,
                               module=__name__, registry=None)


class CachedFunction:
    """``func`` with its results stored in the namespace ``space`` of the cache (looked up at each call)."""

    def __init__(self, func: Callable[..., Any], space: str) -> None:
        self.func, self.space = func, space
        self.what = f"{getattr(func, '__module__', '?')}.{func.__qualname__}"

    def entry(self, location: Path, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Path:
        """The folder of the result of ``func(*args, **kwargs)``: keyed by the arguments as bound to the signature
        (defaults included), so positional and keyword calls share it."""
        bound = inspect.signature(self.func).bind(*args, **kwargs)
        bound.apply_defaults()
        return location / self.space / self.func.__qualname__ / joblib.hash(list(bound.arguments.items()))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        location = usable_location()
        if location is None:
            return self.func(*args, **kwargs)
        entry = self.entry(location, args, kwargs)
        try:
            exists = entry.is_dir()
        except OSError as exc:
            exists = False
            _warn(f"results cache: cannot look at {entry} ({exc.strerror}); computing without the cache")
        if exists:
            try:
                return _read_entry(entry)
            except BadEntry as exc:
                _warn(f"results cache: ignoring the entry {entry}: {exc}; computing it again")
                _discard(entry)
        result = self.func(*args, **kwargs)
        try:
            prepare(location)
            _write_entry(entry, result, self.what)
        except OSError as exc:
            _warn(f"results cache: cannot store {entry} ({exc.strerror or type(exc).__name__}); the result is not kept")
        return result

    def check_call_in_cache(self, *args: Any, **kwargs: Any) -> bool:
        """Whether the result of ``func(*args, **kwargs)`` is on disk (a readable entry of this format)."""
        location = usable_location()
        if location is None:
            return False
        try:
            _read_entry(self.entry(location, args, kwargs))
            return True
        except (BadEntry, OSError):
            return False


class Store:
    """The functions' results in one namespace of the cache (what :func:`memory` gives)."""

    def __init__(self, space: str) -> None:
        self.space = space

    def cache(self, func: Callable[..., Any]) -> CachedFunction:
        return CachedFunction(func, self.space)


def memory(space: str) -> Store:
    """The results stored in the namespace ``space`` (e.g. :data:`SWEEPS`): ``memory(space).cache(func)`` is ``func``
    with its results cached, with ``check_call_in_cache(*args)``."""
    return Store(space)


def namespace(func: Callable[..., Any]) -> str:
    """The folder of ``func``'s results: torch's version, then its module and that module's :func:`code_digest`."""
    module = getattr(func, "__module__", None) or "__main__"
    return f"torch-{torch.__version__}/{module}-{code_digest(module) or 'nosource'}"


def _cached_call(func: Callable[..., Any]) -> CachedFunction:
    target = getattr(func, "__wrapped__", func)
    return CachedFunction(target, namespace(target))


def cached(func: F) -> F:
    """Decorator: store ``func``'s results on disk, keyed by its code, the code it reaches, torch's version
    and its arguments.

    The location is looked up at call time, so tests and the ``reproduce`` command can point a
    process at a fresh cache with ``COMPANION_CACHE``.
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _cached_call(func)(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def is_cached(func: Callable[..., Any], **kwargs: Any) -> bool:
    """Whether the result of ``func(**kwargs)`` is already on disk (``func`` undecorated or decorated)."""
    return _cached_call(func).check_call_in_cache(**kwargs)


def sweep(func: Callable[..., Any], configs: Iterable[Mapping[str, Any]], *, n_jobs: int = 1,
          desc: str = "sweep", progress: bool = True) -> list[Any]:
    """Evaluate ``func(**config)`` for every config, caching each result as soon as it is done.

    Results come back in the order of ``configs``.  Items already on disk are read, not
    recomputed, so an interrupted sweep resumes from its last finished item.
    """
    configs = [dict(c) for c in configs]
    fn = _cached_call(func)
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


def _checked_location() -> Path | None:
    location = cache_location()
    if location is not None:
        check_location(location)
    return location


def folders() -> list[Folder]:
    """What the cache holds, per namespace folder (see :func:`namespace`); a :class:`ConfigError` when
    ``COMPANION_CACHE`` names something that cannot be a cache."""
    location = _checked_location()
    if location is None or not location.exists():
        return []
    found = []
    for folder in sorted(p for p in location.glob("torch-*/*") if p.is_dir()) + sorted(
            p for p in [location / SWEEPS] if p.is_dir()):
        files = [f for f in folder.rglob("*") if f.is_file()]
        name = folder.relative_to(location).as_posix()
        current = None
        if name.startswith("torch-") and "/" in name:
            version, rest = name.split("/", 1)
            module, _, digest = rest.rpartition("-")
            known = code_digest(module) if module else None
            current = None if known is None else (version == f"torch-{torch.__version__}" and digest == known)
        entries = sum(f.name == RESULT and not f.parent.name.startswith(TEMP_PREFIX) for f in files)
        found.append(Folder(name, entries, sum(f.stat().st_size for f in files), current))
    return found


def clear(outdated_only: bool = False) -> list[Folder]:
    """Delete every cached result (or, with ``outdated_only``, the folders made by other code or another torch);
    return the folders deleted.  Only the cache's own folders go; a folder that is not marked as a cache
    (``CACHEDIR.TAG``) or that holds anything else is refused with a :class:`ConfigError`, and nothing is deleted."""
    location = _checked_location()
    if location is None or not location.exists():
        return []
    raw = os.environ.get("COMPANION_CACHE", "").strip() or str(location)
    names = sorted(os.listdir(location))
    foreign = [n for n in names if not _own_name(n)]
    if foreign:
        listed = ", ".join(shown(n, 40) for n in foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                                                  else "")
        raise ConfigError(f"COMPANION_CACHE={shown(raw)} holds files that are not results cache entries ({listed}); "
                          "nothing was deleted")
    if names and MARKER not in names:
        raise ConfigError(f"COMPANION_CACHE={shown(raw)} is not marked as a results cache (no {MARKER}); "
                          "nothing was deleted")
    gone = [f for f in folders() if f.current is False or not outdated_only]
    doomed = [folder.name for folder in gone] if outdated_only else [name for name in names if name != MARKER]
    for name in doomed:
        shutil.rmtree(location / name)
    return gone
