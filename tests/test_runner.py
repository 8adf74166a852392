"""The command line and the headless runner, on tiny notebooks written for the test."""

import subprocess
import sys

from companion.tools import runner
from companion.__main__ import main

TINY = '''# %%
from companion.kit.claims import ClaimSpec, compare, show
import matplotlib.pyplot as plt
plt.plot([0, 1], [0, 1]); plt.show()
ONE_TWO = ClaimSpec("ch99.one-two", "图0.1", "one is less than two")

# %%
# NBVAL_CHECK_OUTPUT
show(ONE_TWO.judge(compare("one", 1, "<", "two", 2)))

# %%
print("the notebook went on")
'''


def test_run_chapter_collects_claims_figures_and_times(tmp_path):
    source = tmp_path / "ch99_tiny.py"
    source.write_text(TINY)
    run = runner.run_chapter(source, tmp_path / "out", seed=3)
    assert run.ok and run.error is None
    assert [(c.id, c.figure, c.passed, c.chapter) for c in run.claims] == [("ch99.one-two", "图0.1", True, "ch99_tiny")]
    assert len(run.figures) == 1 and run.figures[0].stat().st_size > 0
    assert (tmp_path / "out" / "ch99_tiny.ipynb").exists()
    report = runner.format_report([run])
    assert "PASS" in report and "1/1 claims hold" in report and "margin +0.5 rel" in report


def test_a_failing_claim_lets_the_notebook_go_on_and_marks_the_chapter_failed(tmp_path):
    source = tmp_path / "ch98_bad.py"
    source.write_text(TINY.replace('compare("one", 1, "<", "two", 2)', 'compare("one", 1, ">", "two", 2)'))
    run = runner.run_chapter(source, tmp_path / "out")
    assert run.error is None and not run.ok           # no exception: every cell ran
    nb_text = (tmp_path / "out" / "ch98_bad.ipynb").read_text()
    assert "the notebook went on" in nb_text and "CLAIM FAILS" in nb_text
    assert "FAIL" in runner.format_report([run]) and "0/1 claims hold" in runner.format_report([run])


def test_cli_list_and_errors(capsys):
    assert main(["list"]) == 0
    assert "ch04_frequency_principle" in capsys.readouterr().out
    assert main(["run", "ch99"]) == 2
    assert "unknown chapter 'ch99'" in capsys.readouterr().err
    assert main(["reproduce", "--profile", "huge"]) == 2
    assert "unknown profile 'huge'" in capsys.readouterr().err


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "companion", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "reproduce" in out.stdout and "robustness" in out.stdout
