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
