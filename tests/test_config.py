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


def test_batched_threads_lends_a_free_core_and_restores(monkeypatch):
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    before = torch.get_num_threads()
    quiet = FakeWatch([0.0])
    with config.batched_threads() as lender:
        lender.watch = quiet if lender.watch is not None else None
        lender.looked -= config.ThreadLender.INTERVAL
        assert lender.update() == torch.get_num_threads() == max(before, min(2, config.available_cores()))
    assert torch.get_num_threads() == before
    monkeypatch.setenv("COMPANION_THREADS", str(before))
    with config.batched_threads() as lender:  # an explicit setting wins
        lender.looked -= config.ThreadLender.INTERVAL
        assert lender.update() == before and lender.watch is None


class FakeWatch:
    """A :class:`config.CoreWatch` that reports the other programs' load it is given, one value per look."""

    def __init__(self, loads):
        self.loads = list(loads)

    def age(self):
        return 0.0

    def others(self):
        return self.loads.pop(0) if len(self.loads) > 1 else self.loads[0]


def test_the_lender_follows_the_free_cores(monkeypatch):
    """Spinning OpenMP threads made a 2-thread loop 11× slower than 1 thread beside two busy processes: a second
    thread is lent only while other programs leave a core free, and taken back at the next look when they don't."""
    monkeypatch.setattr(config, "available_cores", lambda: 2)
    before = torch.get_num_threads()
    try:
        lender = config.ThreadLender(1, 2, lend=True, watch=FakeWatch([0.05, 1.0, 2.0, 0.6, 0.2, None]))
        seen = []
        for _ in range(6):
            lender.looked -= config.ThreadLender.INTERVAL  # as if half a second had passed
            seen.append((lender.update(), torch.get_num_threads()))
        assert seen == [(2, 2), (1, 1), (1, 1), (1, 1), (2, 2), (1, 1)]  # unknown load (None): nothing lent
        assert lender.update() == 1  # no second look within the interval
        waited = FakeWatch([0.0])
        waited.age = lambda: config.ThreadLender.INTERVAL  # a look half a second ago: the first update looks at once
        assert config.ThreadLender(1, 2, lend=True, watch=waited).update() == 2
    finally:
        torch.set_num_threads(before)
    on_four = config.ThreadLender(1, 2, lend=True, watch=FakeWatch([1.0]))
    on_four.cores = 4
    assert on_four.lendable(1.0) == 2 and on_four.lendable(3.0) == 1


def test_the_core_watch_counts_other_programs_not_this_one(tmp_path):
    """Busy time of this process's cores from /proc/stat, less this process's own CPU time."""
    import os

    cpus = sorted(os.sched_getaffinity(0))
    stat = tmp_path / "stat"

    def write(busy_ticks):
        lines = ["cpu  1 1 1 1 1 1 1 1 0 0"] + [f"cpu{n} {busy_ticks} 0 0 500 0 0 0 0 0 0" for n in cpus]
        stat.write_text("\n".join(lines) + "\nintr 0\n")

    write(0)
    watch = config.CoreWatch(str(stat))
    write(watch.tick)  # each core one second busier, this process idle meanwhile
    others = watch.others()
    assert others == pytest.approx(len(cpus), abs=0.05)
    stat.write_text("garbage\n")
    assert watch.others() is None and watch.others() is None  # unreadable: unknown, so nothing is lent
    # A busy loop of this process counts as its own, not as another program's: the counters rise by exactly the CPU
    # time it used.  (On the real /proc/stat they would also rise by whatever else runs — the suite's other xdist
    # worker, say — which is what others() is for, so the real file cannot test this part.)
    import time

    first, *rest = cpus
    write(0)
    watch = config.CoreWatch(str(stat))
    start = time.process_time()
    while time.process_time() < start + 0.3:
        pass
    ticks = round((time.process_time() - start) * watch.tick)
    stat.write_text("\n".join(["cpu  1 1 1 1 1 1 1 1 0 0", f"cpu{first} {ticks} 0 0 500 0 0 0 0 0 0"]
                              + [f"cpu{n} 0 0 0 500 0 0 0 0 0 0" for n in rest]) + "\nintr 0\n")
    assert watch.others() < 0.2
    real = config.CoreWatch()
    assert real.last is None or real.others() >= 0  # Linux: the real counters read, whatever else runs


def _python(code: str, **env: str):
    """Run ``code`` in a fresh interpreter with the environment changed by ``env`` ("" deletes a variable)."""
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k not in env}
    environment.update({k: v for k, v in env.items() if v != ""})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120)


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
