"""The command line and the headless runner, on tiny notebooks written for the test."""

import subprocess
import sys

from companion import runner
from companion.__main__ import main

TINY = '''# %%
from companion.claims import claim
import matplotlib.pyplot as plt
plt.plot([0, 1], [0, 1]); plt.show()

# %%
# NBVAL_CHECK_OUTPUT
claim("图0.1", "one is less than two", passed=bool(1 < 2), one=1)
'''


def test_run_chapter_collects_claims_figures_and_times(tmp_path):
    source = tmp_path / "ch99_tiny.py"
    source.write_text(TINY)
    run = runner.run_chapter(source, tmp_path / "out", seed=3)
    assert run.ok and run.error is None
    assert [(c.figure, c.passed, c.chapter) for c in run.claims] == [("图0.1", True, "ch99_tiny")]
    assert len(run.figures) == 1 and run.figures[0].stat().st_size > 0
    assert (tmp_path / "out" / "ch99_tiny.ipynb").exists()
    report = runner.format_report([run])
    assert "PASS" in report and "1/1 claims hold" in report


def test_failing_claim_marks_the_chapter_failed(tmp_path):
    source = tmp_path / "ch98_bad.py"
    source.write_text(TINY.replace("1 < 2", "2 < 1"))
    run = runner.run_chapter(source, tmp_path / "out")
    assert not run.ok and "ClaimFailed" in run.error
    assert "FAIL" in runner.format_report([run])


def test_cli_list_and_errors(capsys):
    assert main(["list"]) == 0
    assert "ch04_frequency_principle" in capsys.readouterr().out
    assert main(["run", "ch99"]) == 2
    assert "unknown chapter 'ch99'" in capsys.readouterr().err
    assert main(["reproduce", "--profile", "huge"]) == 2
    assert "unknown profile 'huge'" in capsys.readouterr().err


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "companion", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "reproduce" in out.stdout
