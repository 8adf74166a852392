import os

import pytest
import torch

import numpy as np

from companion.kit import config, seeds


def test_unknown_profile_names_allowed_ones(monkeypatch):
    monkeypatch.setenv("COMPANION_PROFILE", "fast")
    with pytest.raises(config.ConfigError, match="'fast'.*quick, full"):
        config.read_profile()


@pytest.mark.parametrize("raw", ["-1", "abc", "1.5"])
def test_bad_seed_is_rejected(monkeypatch, raw):
    monkeypatch.setenv("COMPANION_SEED", raw)
    with pytest.raises(config.ConfigError, match="COMPANION_SEED"):
        config.read_seed()


def test_defaults_and_pick(monkeypatch):
    monkeypatch.delenv("COMPANION_PROFILE", raising=False)
    monkeypatch.delenv("COMPANION_SEED", raising=False)
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    config.reset_settings()
    try:
        s = config.settings()
        assert (s.profile, s.seed, s.threads, s.device.type) == ("quick", 0, 1, "cpu")
        assert torch.get_num_threads() == 1
        assert config.pick(quick=1, full=2) == 1
    finally:
        config.reset_settings()
        config.settings()


@pytest.mark.parametrize("threads", [2, 1])
def test_the_thread_count_limits_numpys_and_scipys_blas_too(monkeypatch, threads):
    """Two notebooks side by side must not start one OpenBLAS thread per core each (oversubscription)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    monkeypatch.setenv("COMPANION_THREADS", str(threads))
    config.reset_settings()
    try:
        threadpool_limits(limits=3 - threads, user_api="blas")  # the other count, so that settings() must set it
        config.settings()
        blas = {info["filepath"]: info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}
        assert len(blas) >= 2, f"NumPy's and SciPy's BLAS should both be loaded and limited; found {blas}"
        assert set(blas.values()) == {threads}, blas
    finally:
        monkeypatch.delenv("COMPANION_THREADS")
        config.reset_settings()
        config.settings()


def test_full_profile_uses_all_cores_and_pick(monkeypatch):
    monkeypatch.setenv("COMPANION_PROFILE", "FULL")
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    config.reset_settings()
    try:
        assert config.settings().profile == "full"
        assert config.pick(quick=1, full=2) == 2
    finally:
        monkeypatch.delenv("COMPANION_PROFILE")
        config.reset_settings()
        config.settings()


def test_bad_thread_count(monkeypatch):
    with pytest.raises(config.ConfigError, match="COMPANION_THREADS"):
        config.read_threads("quick", "0")


def test_seeds_make_independent_reproducible_streams():
    assert torch.equal(torch.randn(2, generator=seeds.generator(7, 1)), torch.randn(2, generator=seeds.generator(7, 1)))
    assert not torch.equal(torch.randn(2, generator=seeds.generator(7, 0)), torch.randn(2, generator=seeds.generator(7, 1)))
    # stream 0 is the plain seed: the draws of torch.Generator().manual_seed(7) and np.random.default_rng(7)
    assert torch.equal(torch.randn(3, generator=seeds.generator(7)), torch.randn(3, generator=torch.Generator().manual_seed(7)))
    assert seeds.numpy_rng(7).integers(1000) == np.random.default_rng(7).integers(1000)


@pytest.mark.parametrize("seed, stream", [(-1, 0), (1.5, 0), ("3", 0), (True, 0), (0, -2)])
def test_bad_seed_or_stream_names_the_value(seed, stream):
    with pytest.raises(ValueError, match="must be an integer ≥ 0, got"):
        seeds.generator(seed, stream)


def test_batched_threads_lends_two_threads_and_restores(monkeypatch):
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    before = torch.get_num_threads()
    with config.batched_threads() as n:
        assert n == torch.get_num_threads() == max(before, min(2, os.cpu_count() or 1))
    assert torch.get_num_threads() == before
    monkeypatch.setenv("COMPANION_THREADS", str(before))
    with config.batched_threads() as n:  # an explicit setting wins
        assert n == before
