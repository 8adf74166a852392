import pytest

from companion import cache

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
