from pathlib import Path

import pytest

from companion.kit import cache

CALLS: list[int] = []


def slow_square(x: int) -> int:
    CALLS.append(x)
    if x == 3 and len(CALLS) < 4:
        raise KeyboardInterrupt  # the user stops the sweep half-way
    return x * x


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "cache"))
    CALLS.clear()


def test_cached_function_returns_stored_result(fresh_cache):
    square = cache.cached(slow_square)
    assert square(2) == 4 and square(2) == 4
    assert CALLS == [2]
    assert cache.is_cached(square, x=2) and not cache.is_cached(square, x=5)


def test_interrupted_sweep_resumes_without_recomputing(fresh_cache):
    configs = [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}]
    with pytest.raises(KeyboardInterrupt):
        cache.sweep(slow_square, configs, progress=False)
    assert CALLS == [1, 2, 3]
    assert cache.sweep(slow_square, configs, progress=False) == [1, 4, 9, 16]
    assert CALLS == [1, 2, 3, 3, 4]          # 1 and 2 came from disk


def test_cache_off(monkeypatch):
    monkeypatch.setenv("COMPANION_CACHE", "off")
    CALLS.clear()
    square = cache.cached(slow_square)
    square(5), square(5)
    assert CALLS == [5, 5]


STEPS = 200


def fit_line(seed: int, stop_at: int | None = None) -> dict:
    """A real (tiny) training run; ``stop_at`` simulates Ctrl-C at that step through a probe."""
    import torch

    from companion.core.train import train

    def probe(model, step):
        if stop_at is not None and step >= stop_at:
            raise KeyboardInterrupt
        return {}

    torch.manual_seed(seed)
    model = torch.nn.Linear(1, 1)
    x = torch.linspace(-1, 1, 16)[:, None]
    hist = train(model, x, 2 * x, steps=STEPS, lr=1e-2, record_every=10, probe=probe, progress=False)
    return {"seed": seed, "steps": hist.steps.tolist(), "loss": float(hist.train_loss[-1])}


def test_an_interrupted_training_run_is_not_cached_and_the_rerun_completes_it(fresh_cache):
    configs = [{"seed": 1}, {"seed": 2, "stop_at": 100}, {"seed": 3}]
    with pytest.raises(KeyboardInterrupt):
        cache.sweep(fit_line, configs, progress=False)
    assert cache.is_cached(fit_line, seed=1)
    assert not cache.is_cached(fit_line, seed=2, stop_at=100)      # no truncated history on disk
    assert not cache.is_cached(fit_line, seed=3)
    done = cache.sweep(fit_line, [{"seed": 1}, {"seed": 2}, {"seed": 3}], progress=False)
    assert all(r["steps"][-1] == STEPS for r in done)                # every run complete
    assert all(cache.is_cached(fit_line, seed=s) for s in (1, 2, 3))


def test_results_live_under_torch_version_and_the_digest_of_the_code_they_reach(fresh_cache, tmp_path, monkeypatch):
    import torch

    from companion.core import fprinciple

    space = cache.namespace(fprinciple.run_fprinciple.__wrapped__)
    assert space == f"torch-{torch.__version__}/companion.core.fprinciple-{cache.code_digest('companion.core.fprinciple')}"
    # the digest covers the module and every companion module it reaches, not the others
    package = tmp_path / "pkg"
    (package / "companion" / "core").mkdir(parents=True)
    for name in ("__init__.py", "core/__init__.py"):
        (package / "companion" / name).write_text("")
    (package / "companion" / "core" / "deep.py").write_text("K = 1\n")
    (package / "companion" / "core" / "other.py").write_text("J = 1\n")
    (package / "companion" / "core" / "top.py").write_text("from companion.core import deep\n")
    monkeypatch.setattr(cache, "PACKAGE_ROOT", package)
    monkeypatch.setattr(cache.importlib.util, "find_spec",
                        lambda name: type("Spec", (), {"origin": str(package / (name.replace(".", "/") + ".py"))}))
    digest = lambda: (cache.code_digest.cache_clear(), cache.code_digest("companion.core.top"))[1]  # noqa: E731
    before = digest()
    (package / "companion" / "core" / "other.py").write_text("J = 2\n")  # not reached: same folder
    assert digest() == before
    (package / "companion" / "core" / "deep.py").write_text("K = 2\n")  # reached through top's import
    assert digest() != before
    cache.code_digest.cache_clear()


def test_a_failed_run_is_not_stored_and_cache_info_and_clear(fresh_cache, capsys, monkeypatch):
    from companion.__main__ import main

    def fails(x: int) -> int:
        CALLS.append(x)
        raise RuntimeError("diverged")

    bad = cache.cached(fails)
    with pytest.raises(RuntimeError):
        bad(1)
    assert not cache.is_cached(bad, x=1)
    square = cache.cached(slow_square)
    square(2), square(4)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "2 results" in out and f"{__name__}-" in out
    (folder,) = [f for f in cache.folders() if f.entries]
    monkeypatch.setattr(cache, "code_digest", lambda module: "0" * 12)  # as if the code had changed since
    assert cache.folders()[0].current is False
    assert main(["cache", "clear", "--outdated"]) == 0 and "deleted 2 results" in capsys.readouterr().out
    assert cache.folders() == [] or all(f.entries == 0 for f in cache.folders())
    assert main(["cache", "clear"]) == 0


def _total(x) -> float:
    return float(x.sum())


def test_a_tensor_argument_finds_its_result_from_another_process(fresh_cache, tmp_path):
    """A tensor's pickle differs from process to process; its cache key must not (a second run, a warm
    `reproduce`, a robustness sweep read results another process stored)."""
    import subprocess
    import sys

    import torch

    program = ("import sys, torch; sys.path.insert(0, sys.argv[1]); from companion.kit import cache; "
               "import test_cache as t; x = torch.linspace(0, 1, 11, dtype=torch.float64); "
               "net = torch.nn.Linear(2, 3); torch.nn.init.constant_(net.weight, 0.5); "
               "print(cache.is_cached(t._total, x=x), cache.is_cached(t._total, x=net.weight), t._total(x), "
               "cache.cached(t._total)(x), cache.cached(t._total)(net.weight))")
    runs = [subprocess.run([sys.executable, "-c", program, str(Path(__file__).parent)], capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    assert runs[0][:2] == ["False", "False"] and runs[1][:2] == ["True", "True"]  # the 2nd process reads the 1st's
    x = torch.linspace(0, 1, 11, dtype=torch.float64)
    assert not cache.is_cached(_total, x=x.float()) and not cache.is_cached(_total, x=x + 1e-12)  # dtype, values
    assert not cache.is_cached(_total, x=x.reshape(1, -1))  # shape


# ------------------------------------------------------------------ results stored as data (issue 37, review §1.32–1.37, §2)
import json  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from companion.kit.config import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def same(a, b, path="result"):
    """``a`` and ``b`` are the same data: types, dtypes, shapes, bits (NaN where NaN), modules' weights and settings."""
    assert type(a) is type(b), (path, type(a), type(b))
    if isinstance(a, torch.Tensor):
        assert (a.dtype, a.shape, a.requires_grad, a.device) == (b.dtype, b.shape, b.requires_grad, b.device), path
        assert torch.equal(a.detach().reshape(-1).view(torch.uint8), b.detach().reshape(-1).view(torch.uint8)), path
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b) and np.asarray(a).tobytes() == np.asarray(b).tobytes()
    elif isinstance(a, torch.nn.Module):
        sa, sb = ({k: v for k, v in vars(m).items() if not k.startswith("_")} for m in (a, b))
        same(sa, sb, path)
        same(dict(a.state_dict()), dict(b.state_dict()), path + ".state_dict()")
    elif isinstance(a, torch.Generator):
        assert torch.equal(a.get_state(), b.get_state()), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif hasattr(a, "__dataclass_fields__"):
        same(vars(a), vars(b), path)
    elif isinstance(a, float):
        assert a.hex() == b.hex() or (a != a and b != b), path
    elif callable(a):
        assert a is b, path
    else:
        assert a == b, path


def roundtrip(value):
    """``value`` through the store's encoding and back (JSON text and an npz file, as on disk)."""
    import io

    encode = cache.Encoder("test")
    text = json.dumps(encode(value), allow_nan=False)
    buffer = io.BytesIO()
    np.savez(buffer, **encode.arrays, allow_pickle=False)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as npz:
        return cache.decode(json.loads(text), {k: npz[k] for k in npz.files})


def every_kind():
    from companion.core.fprinciple import FPConfig

    return {
        "leaves": [None, True, False, 0, -(2 ** 70), 1.5, -0.0, float("nan"), float("inf"), -float("inf"), 1 + 2j, "é"],
        "numpy scalars": [np.float32(0.1), np.float64(np.nan), np.int64(-3), np.int8(7), np.uint16(9), np.bool_(True),
                          np.float16(2.5), np.complex64(1 - 1j)],
        "arrays": [np.arange(6.0).reshape(2, 3), np.array([np.nan, 1.0], np.float32), np.zeros((0, 3)),
                   np.array(["a", "bc"]), np.arange(4, dtype=np.int16)[::2]],
        "tensors": [torch.randn(3, 2, dtype=torch.bfloat16), torch.tensor([float("nan"), 1.0]), torch.tensor(3),
                    torch.ones(2, dtype=torch.float16), torch.tensor([True, False]), torch.zeros(0, 4),
                    torch.randn(2, dtype=torch.complex64), torch.arange(6, dtype=torch.int64).reshape(2, 3).t(),
                    torch.nn.Parameter(torch.randn(2)), torch.randn(2).requires_grad_()],
        "dtypes": [torch.float64, torch.bfloat16],
        (1, "tuple key"): ((1, 2), [1, 2], (), []),
        7: {frozenset({1, 2}), 3} and {3, 4},
        "dataclass": FPConfig(),
        "a state_dict": torch.nn.Linear(2, 3).state_dict(),  # an OrderedDict (ch12's and ch13's runs keep one)
    }


def test_every_kind_of_result_round_trips_bit_for_bit():
    value = every_kind()
    same(value, roundtrip(value))


def test_the_trained_models_in_results_round_trip_with_their_settings_and_random_state():
    from companion.core.ensemble import TwoLayerEnsemble
    from companion.core.nets import MLP
    from companion.core.transformer import Transformer, TransformerConfig
    from companion.experiments.ch11_flatness import DropoutMLP

    gen = torch.Generator().manual_seed(3)
    nets = [TwoLayerEnsemble(2, [3, 5], beta1=[1.0, 2.0], dtype=torch.float64, seed=4), MLP([2, 4, 1], "relu", generator=gen),
            DropoutMLP([2, 4, 3], "tanh", keep=0.7, generator=gen, mask_generator=torch.Generator().manual_seed(5)),
            Transformer(TransformerConfig(vocab_size=7, d_model=8, n_layers=2, max_len=5, d_ff=16), n_members=2, gamma=0.6),
            Transformer(TransformerConfig(vocab_size=None, d_input=3, d_out=2, d_model=8, d_ff=0, norm="pre"))]
    with torch.no_grad():
        nets[0].a.add_(1.0)
    nets[2].eval()
    before = torch.random.get_rng_state()
    back = roundtrip(nets)
    assert torch.equal(torch.random.get_rng_state(), before)  # rebuilding draws nothing from torch's global stream
    same(nets, back)
    x = torch.randn(4, 2)
    assert torch.equal(nets[2].train()(x), back[2].train()(x))  # the same dropout masks next


def test_a_result_that_is_not_data_is_an_error_naming_the_function_and_the_type(fresh_cache):
    def returns_an_optimizer(x: int):
        return {"opt": torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)}

    with pytest.raises(cache.NotData, match=r"returns_an_optimizer.*result\['opt'\].*torch\.optim\.sgd\.SGD"):
        cache.cached(returns_an_optimizer)(1)
    for bad in (lambda: 0, torch.nn.Linear(1, 1), np.array([object()]), Path("x")):
        with pytest.raises(cache.NotData):
            cache.Encoder("f")(bad)


class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ.get('EVIL_TARGET', '/nonexistent/evil')}",))


def _entry(square=None):
    """The entry folder of ``slow_square(2)`` in the current cache."""
    fn = cache._cached_call(slow_square)
    return fn.entry(cache.cache_location(), (2,), {})


def test_a_crafted_pickle_in_the_cache_runs_nothing_and_the_result_is_recomputed(fresh_cache, tmp_path, monkeypatch):
    target = tmp_path / "pwned"
    monkeypatch.setenv("EVIL_TARGET", str(target))
    square = cache.cached(slow_square)
    assert square(2) == 4
    entry = _entry()
    payload = pickle.dumps(Evil())
    for name in ("output.pkl", cache.RESULT, cache.ARRAYS):  # where joblib read, and every file of the new format
        (entry / name).write_bytes(payload)
    CALLS.clear()
    with pytest.warns(cache.CacheWarning, match="corrupt"):
        assert square(2) == 4
    assert CALLS == [2] and not target.exists()
    CALLS.clear()
    assert square(2) == 4 and CALLS == []  # rewritten whole
    # a dataclass path outside companion is refused, never imported or called
    result = json.loads((entry / cache.RESULT).read_text())
    result["result"] = {"$": "dataclass", "cls": "os:system", "v": {}}
    (entry / cache.RESULT).write_text(json.dumps(result))
    with pytest.warns(cache.CacheWarning, match="not a companion class"):
        assert square(2) == 4
    assert not target.exists()


def _corrupt(entry: Path, how: str) -> None:
    result, arrays = entry / cache.RESULT, entry / cache.ARRAYS
    if how == "truncated npz":
        arrays.write_bytes(arrays.read_bytes()[:30])
    elif how == "random bytes":
        result.write_bytes(os.urandom(300))
    elif how == "empty file":
        result.write_bytes(b"")
    elif how == "garbage json":
        result.write_text("garbage{{")
    elif how == "another format":
        result.write_text(json.dumps({**json.loads(result.read_text()), "format": 999}))
    elif how == "not the schema":
        result.write_text(json.dumps({"format": cache.FORMAT, "result": [1, 2]}))
    elif how == "unknown tag":
        result.write_text(json.dumps({"format": cache.FORMAT, "result": {"$": "pickle", "v": "x"}}))
    elif how == "missing arrays":
        arrays.unlink()
    elif how == "foreign dataclass":
        result.write_text(json.dumps({"format": cache.FORMAT, "result": {"$": "dataclass", "cls": "pathlib:Path", "v": {}}}))


CORRUPTIONS = ["truncated npz", "random bytes", "empty file", "garbage json", "another format", "not the schema",
               "unknown tag", "missing arrays", "foreign dataclass"]


def tensor_result(x: int) -> dict:
    CALLS.append(x)
    return {"t": torch.full((3,), float(x), dtype=torch.bfloat16), "a": np.arange(x)}


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_corrupt_entry_is_named_in_one_warning_and_recomputed(fresh_cache, how):
    fn = cache.cached(tensor_result)
    first = fn(5)
    entry = cache._cached_call(tensor_result).entry(cache.cache_location(), (5,), {})
    _corrupt(entry, how)
    CALLS.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = fn(5)
    assert CALLS == [5]
    assert len(caught) == 1 and caught[0].category is cache.CacheWarning
    message = str(caught[0].message)
    assert "\n" not in message and str(entry) in message and len(message) < 400 + len(str(entry))
    same(first, again)
    CALLS.clear()
    same(first, fn(5))
    assert CALLS == []  # rewritten, and read back


def test_a_corrupt_entry_of_a_sweep_is_recomputed_too(fresh_cache):
    cache.sweep(tensor_result, [{"x": 2}], progress=False)
    _corrupt(cache._cached_call(tensor_result).entry(cache.cache_location(), (2,), {}), "random bytes")
    assert not cache.is_cached(tensor_result, x=2)
    CALLS.clear()
    with pytest.warns(cache.CacheWarning):
        cache.sweep(tensor_result, [{"x": 2}], progress=False)
    assert CALLS == [2] and cache.is_cached(tensor_result, x=2)


def _as_user_without_root_powers(code: str, env: dict) -> subprocess.CompletedProcess:
    """Run ``code`` in a Python process that cannot bypass file permissions (as root: capabilities dropped)."""
    prefix = []
    if os.geteuid() == 0:
        if not shutil_which("setpriv"):
            pytest.skip("running as root without setpriv: permissions cannot be tested")
        prefix = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]
    return subprocess.run(prefix + [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                          text=True, cwd=str(Path(__file__).parent), timeout=120)


def shutil_which(name):
    import shutil

    return shutil.which(name)


def test_an_unreadable_entry_or_function_folder_is_recomputed_not_an_error(fresh_cache):
    square = cache.cached(slow_square)
    square(2), square(6)
    entry = _entry()
    os.chmod(entry, 0)
    os.chmod(entry.parent.parent, 0o500)  # the namespace folder: nothing new can be written
    code = ("import warnings, test_cache as t; from companion.kit import cache; warnings.simplefilter('always');"
            "print(cache.cached(t.slow_square)(2), cache.cached(t.slow_square)(6), t.CALLS)")
    try:
        run = _as_user_without_root_powers(code, {"COMPANION_CACHE": os.environ["COMPANION_CACHE"],
                                                  "PYTHONPATH": str(ROOT)})
    finally:
        os.chmod(entry.parent.parent, 0o700)
        os.chmod(entry, 0o700)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[0] == "4 36 [2]"  # 2 recomputed, 6 read
    assert "CacheWarning" in run.stderr and "Traceback" not in run.stderr


def test_an_unusable_cache_gives_one_warning_and_the_run_continues(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for value in (str(afile), str(tmp_path / ("y" * 300)), "~nouser/x", "/proc/1/nope"):
        monkeypatch.setenv("COMPANION_CACHE", value)
        CALLS.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert cache.cached(slow_square)(2) == 4
        assert CALLS == [2] and len(caught) == 1 and "COMPANION_CACHE" in str(caught[0].message)
    assert afile.read_text() == "x"


def _writer(location: str, barrier) -> None:
    os.environ["COMPANION_CACHE"] = location
    barrier.wait()
    cache.cached(tensor_result)(7)


def test_two_processes_storing_the_same_result_leave_one_valid_entry(fresh_cache):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(3)
    procs = [ctx.Process(target=_writer, args=(os.environ["COMPANION_CACHE"], barrier)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    entry = cache._cached_call(tensor_result).entry(cache.cache_location(), (7,), {})
    assert sorted(os.listdir(entry.parent)) == [entry.name]  # no temporary folder left
    assert sorted(os.listdir(entry)) == [cache.ARRAYS, cache.RESULT]
    same(cache._read_entry(entry), tensor_result(7))


def test_the_cache_is_private_and_marked(fresh_cache):
    old = os.umask(0o022)
    try:
        cache.cached(slow_square)(2)
    finally:
        os.umask(old)
    location = cache.cache_location()
    assert (location / cache.MARKER).read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    for path in [location, *location.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def cli(args, env):
    return subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=env.get("CWD", str(ROOT)), timeout=120)


def test_cache_clear_refuses_a_folder_with_other_files_and_deletes_nothing(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "important.txt").write_text("precious")
    for action in (["clear"], ["clear", "--outdated"]):
        run = cli(["cache", *action], {"COMPANION_CACHE": str(folder)})
        assert run.returncode == 2 and "important.txt" in run.stderr and "COMPANION_CACHE" in run.stderr
        assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert (folder / "important.txt").read_text() == "precious"
    (folder / "important.txt").unlink()
    (folder / "torch-0").mkdir()  # the cache's own names, but no marker: not known to be a cache
    run = cli(["cache", "clear"], {"COMPANION_CACHE": str(folder)})
    assert run.returncode == 2 and "CACHEDIR.TAG" in run.stderr and (folder / "torch-0").is_dir()


def test_cache_clear_removes_the_entries_of_a_real_cache_and_keeps_it_marked(fresh_cache, capsys):
    from companion.__main__ import main

    cache.cached(slow_square)(2), cache.cached(tensor_result)(3)
    cache.memory(cache.SWEEPS).cache(slow_square)(4)
    assert main(["cache", "info"]) == 0 and "sweeps" in capsys.readouterr().out
    assert sum(f.entries for f in cache.folders()) == 3
    location = cache.cache_location()
    assert main(["cache", "clear"]) == 0 and "deleted 3 results" in capsys.readouterr().out
    assert os.listdir(location) == [cache.MARKER]
    CALLS.clear()
    assert cache.cached(slow_square)(2) == 4 and CALLS == [2]


@pytest.mark.parametrize("action", ["info", "clear"])
def test_a_bad_companion_cache_is_one_line_and_exit_2(tmp_path, action):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for value in (str(afile), str(tmp_path / ("y" * 300)), "~nouser/x", str(tmp_path / ("z" * 100_000)), "/proc/1/x"):
        run = cli(["cache", action], {"COMPANION_CACHE": value})
        assert run.returncode == 2, (value[:50], run.stderr[-500:])
        assert run.stderr.startswith("error: COMPANION_CACHE=") and run.stderr.count("\n") == 1
        assert len(run.stderr) < 400 and "Traceback" not in run.stderr
    assert afile.read_text() == "x"


def test_a_relative_companion_cache_is_taken_from_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPANION_CACHE", "rel/cache")
    assert cache.cache_location() == tmp_path / "rel" / "cache"
    assert cache.absolute_setting("rel/cache") == str(tmp_path / "rel" / "cache")
    assert [cache.absolute_setting(v) for v in ("", "off", "~/x", "/abs")] == ["", "off", "~/x", "/abs"]
    run = cli(["cache", "info"], {"COMPANION_CACHE": "rel/cache", "CWD": str(tmp_path)})
    assert run.returncode == 0 and str(tmp_path / "rel" / "cache") in run.stdout


def test_the_runner_gives_kernels_an_absolute_companion_cache():
    import inspect

    from companion.tools import runner

    assert "absolute_setting" in inspect.getsource(runner.kernel)
