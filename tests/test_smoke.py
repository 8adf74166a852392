"""The smoke run of the full profile (``run chNN --profile full --smoke``): every full-profile code path on a CPU.

A smoke run keeps the full profile's shapes, widths and recording cadence but cuts every step count to a few
recording intervals (:func:`companion.kit.config.pick_steps`); its claims are evaluated and shown as smoke, never
judged, while an exception in any cell still fails the run.
"""

import pytest

from companion.__main__ import main
from companion.kit import config
from companion.kit.claims import SMOKE_MARK
from companion.tools import catalog, runner

FAILING_CLAIM = '''# %%
from companion.kit.claims import ClaimSpec, compare, show
TWO_ONE = ClaimSpec("ch98.two-one", "图0.2", "two is less than one")

# %%
show(TWO_ONE.judge(compare("two", 2, "<", "one", 1)))
'''


@pytest.fixture
def settings_env(monkeypatch):
    """Set COMPANION_PROFILE / COMPANION_SMOKE for one test and restore the cached settings afterwards."""

    def use(profile: str, smoke: str) -> config.Settings:
        monkeypatch.setenv("COMPANION_PROFILE", profile)
        monkeypatch.setenv("COMPANION_SMOKE", smoke)
        config.reset_settings()
        return config.settings()

    yield use
    monkeypatch.undo()
    config.reset_settings()
    config.settings()


def test_pick_steps_cuts_only_in_a_smoke_run(settings_env):
    settings_env("quick", "0")
    assert config.pick_steps(quick=1000, full=10_000, every=50) == 1000
    settings_env("full", "0")
    assert config.pick_steps(quick=1000, full=10_000, every=50) == 10_000
    assert config.pick_steps(quick=1000, full=10_000, every=50, smoke=20) == 10_000
    assert settings_env("full", "1").smoke
    assert config.pick_steps(quick=1000, full=10_000, every=50) == config.SMOKE_INTERVALS * 50
    assert config.pick_steps(quick=1000, full=10_000, every=50, smoke=20) == 20
    assert config.pick_steps(quick=10, full=30, every=50) == 30           # never more than the full count
    assert config.pick(quick=8, full=100, smoke=4) == 4 and config.pick(quick=8, full=100) == 100
    settings_env("full", "0")
    assert config.pick(quick=8, full=100, smoke=4) == 100
    settings_env("quick", "0")
    assert config.pick(quick=8, full=100, smoke=4) == 8
    with pytest.raises(ValueError, match="every"):
        config.pick_steps(quick=10, full=30, every=0)


def test_smoke_needs_the_full_profile(settings_env):
    with pytest.raises(config.ConfigError, match="needs --profile full"):
        settings_env("quick", "1")
    with pytest.raises(config.ConfigError, match="COMPANION_SMOKE must be 1 or 0"):
        config.read_smoke("full", "maybe")


@pytest.mark.parametrize("argv", [["run", "ch04", "--smoke"], ["reproduce", "--smoke"],
                                  ["run", "ch04", "--profile", "quick", "--smoke"]])
def test_smoke_without_the_full_profile_is_refused(argv, monkeypatch, capsys):
    monkeypatch.delenv("COMPANION_PROFILE", raising=False)
    monkeypatch.delenv("COMPANION_SMOKE", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs --profile full" in err[0], err


def test_a_smoke_run_shows_claims_without_judging_them(tmp_path):
    source = tmp_path / "ch98_claim.py"
    source.write_text(FAILING_CLAIM)
    run = runner.run_chapter(source, None, profile="full", smoke=True)
    assert run.error is None and run.ok                       # the failing claim is not judged
    assert [(c.id, c.smoke, c.judged) for c in run.claims] == [("ch98.two-one", True, False)]
    report = runner.format_report([run])
    assert "0/0 claims hold; 1/1 chapters ran clean" in report and "1 claims of a smoke run" in report
    source.write_text(FAILING_CLAIM + "\n# %%\nraise RuntimeError('a full-profile bug')\n")
    assert not runner.run_chapter(source, None, profile="full", smoke=True).ok   # an exception still fails


def test_the_full_profile_of_every_chapter_runs(tmp_path, monkeypatch):
    """Every chapter's full profile, cut to a few recording intervals, runs to its end (one thread, fresh cache), as
    ``reproduce --profile full --smoke`` runs it: the configuration bugs of the full profile surface here, on a CPU."""
    monkeypatch.setenv("COMPANION_THREADS", "1")
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "cache"))
    runs = runner.run_chapters(catalog.CHAPTERS, tmp_path / "out", profile="full", seed=0, timeout=300, smoke=True,
                               progress=False)
    assert [f"{run.slug}: {run.error}" for run in runs if run.error] == []
    assert all(run.claims and all(c.smoke for c in run.claims) for run in runs)
    assert all(SMOKE_MARK in run.notebook.read_text(encoding="utf-8") for run in runs)


def test_a_cell_that_runs_too_long_is_reported_not_raised(tmp_path):
    source = tmp_path / "ch98_slow.py"
    source.write_text("# %%\nimport time\ntime.sleep(30)\n")
    run = runner.run_chapter(source, None, timeout=2)
    assert not run.ok and "longer than the 2 s allowed" in run.error


def test_an_error_while_a_cell_shows_its_output_fails_the_run(tmp_path):
    """An exception raised after a cell ran — while its figure is drawn — does not fail the cell in nbclient; the
    runner still reports it (a full-profile figure that cannot be drawn is a bug like any other)."""
    source = tmp_path / "ch98_draw.py"
    source.write_text("# %%\nget_ipython().events.register('post_execute', lambda: 1 / 0)\n\n# %%\nx = 1\n")
    run = runner.run_chapter(source, None)
    assert not run.ok and "ZeroDivisionError" in run.error and "showing its output" in run.error
