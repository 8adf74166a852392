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
