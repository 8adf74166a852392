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


def _python(code: str, **env: str):
    """Run ``code`` in a fresh interpreter with the environment changed by ``env`` ("" deletes a variable)."""
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k not in env}
    environment.update({k: v for k, v in env.items() if v != ""})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120)


def test_openmp_threads_sleep_at_a_barrier_in_every_process_that_imports_companion():
    """Spinning OpenMP threads made a 2-thread loop 11× slower than 1 thread beside two busy processes: the
    passive wait policy must be in the environment before torch loads OpenMP, and kernels inherit it."""
    done = _python("import os, companion, torch; from companion.kit import config; "
                   "print(os.environ['OMP_WAIT_POLICY'], config.WAIT_POLICY_PASSIVE)", OMP_WAIT_POLICY="")
    assert done.stdout.split() == ["PASSIVE", "True"], done.stderr
    # an explicit policy is the user's
    done = _python("import os, companion; print(os.environ['OMP_WAIT_POLICY'])", OMP_WAIT_POLICY="ACTIVE")
    assert done.stdout.strip() == "ACTIVE"


def test_torch_imported_first_with_spinning_threads_lends_no_second_thread():
    code = ("import torch, companion; from companion.kit import config\n"
            "with config.batched_threads(2) as n: print(config.WAIT_POLICY_PASSIVE, n, torch.get_num_threads())")
    done = _python(code, OMP_WAIT_POLICY="", COMPANION_THREADS="", COMPANION_PROFILE="quick")
    assert done.stdout.split() == ["False", "1", "1"], done.stderr
    if config.available_cores() >= 2:  # with the passive policy the second core is lent as before
        done = _python(code.replace("import torch, companion", "import companion, torch"), OMP_WAIT_POLICY="",
                       COMPANION_THREADS="", COMPANION_PROFILE="quick")
        assert done.stdout.split() == ["True", "2", "2"], done.stderr


@pytest.mark.parametrize("raw", ["100000", "512", str(10**40), "-1", "1.5", "２"])
def test_thread_counts_beyond_the_cores_are_refused(raw):
    with pytest.raises(config.ConfigError, match=r"COMPANION_THREADS must be a whole number from 1 to \d+"):
        config.read_threads("quick", raw)
    assert config.read_threads("quick", str(config.available_cores())) == config.available_cores()


def test_a_huge_thread_count_is_one_line_at_the_command_line_and_starts_no_threads():
    done = _python("from companion.tools.cli import main; raise SystemExit(main(['list']))",
                   COMPANION_THREADS="100000")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "COMPANION_THREADS" in done.stderr, done.stderr


@pytest.mark.parametrize("name, default, read", [("COMPANION_PROFILE", "quick", config.read_profile),
                                                 ("COMPANION_LANG", "en", config.read_language),
                                                 ("COMPANION_SEED", 0, config.read_seed)])
def test_an_empty_variable_means_its_default_like_every_other(monkeypatch, name, default, read):
    for empty in ("", "   "):
        monkeypatch.setenv(name, empty)
        assert read() == default


@pytest.mark.parametrize("raw", ["５", "1_000", "+3", " 0x10 "])
def test_a_seed_is_written_in_ascii_digits(raw):
    with pytest.raises(config.ConfigError, match="digits 0-9"):
        config.read_seed(raw)


@pytest.mark.parametrize("read, name", [(config.read_seed, "COMPANION_SEED"), (config.read_profile, "COMPANION_PROFILE"),
                                        (lambda v: config.read_threads("quick", v), "COMPANION_THREADS")])
def test_an_error_line_never_echoes_a_huge_value(read, name):
    with pytest.raises(config.ConfigError, match=name) as error:
        read("9" * 5000 + "x")
    assert len(str(error.value)) < 250 and "5001 characters" in str(error.value)
