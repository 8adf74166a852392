"""The command line's bounds, messages and interruptions (issue 37; probes of the 2026-11 reliability review)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.__main__ import main
from companion.tools import cli, robustness, runner, site


def one_error_line(capsys) -> str:
    """The one line a refused command printed on stderr."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("argv, message", [
    (["robustness", "--seeds", "0-100000000000", "--chapters", "ch09"], "seeds lie in [0, 2**32)"),  # 1.18
    (["robustness", "--seeds", "0-20000", "--chapters", "ch09"], "more than 10000 seeds"),
    (["robustness", "--seeds", "4294967296", "--chapters", "ch09"], "seeds lie in [0, 2**32)"),  # 1.19
    (["robustness", "--seeds", "0", "--chapters", ","], "names no chapter"),  # 1.21
    (["robustness", "--seeds", "0", "--chapters", ""], "names no chapter"),
    (["robustness", "--seeds", "0", "--chapters", "ch09", "--timeout", "0"], "--timeout must lie between 1"),
    (["robustness", "--seeds", "0", "--chapters", "ch09", "--out", ""], "--out must name a folder"),
    (["run", "ch10", "--timeout", "0"], "--timeout must lie between 1"),  # 1.23
    (["run", "ch10", "--timeout", "-5"], "--timeout must lie between 1"),
    (["run", "ch10", "--timeout", "1e9"], "--timeout must be a whole number"),
    (["reproduce", "--timeout", "100000"], "--timeout must lie between 1 and 86400"),
    (["reproduce", "--jobs", "1000"], "--jobs must be at most"),  # 1.11
    (["robustness", "--jobs", "1000", "--chapters", "ch09"], "--jobs must be at most"),
    (["run", "ch10", "--out", ""], "--out must name a folder"),  # 1.16
    (["run", "ch1"], "ambiguous chapter 'ch1': ch10_optimistic_estimate, ch11_flatness"),  # 1.4
    (["slides", "ch99"], "unknown chapter 'ch99'"),
    (["slides", "ch10", "--lang", "fr"], "fr"),
])
def test_bad_options_are_refused_at_once_in_one_line(argv, message, monkeypatch, capsys, tmp_path):
    def no_sweep(*args, **kwargs):
        raise AssertionError("the sweep started before the options were checked")

    monkeypatch.setattr(robustness, "run_sweep", no_sweep)
    monkeypatch.setattr(cli, "run_chapters", no_sweep)
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    assert main(argv) == 2
    assert message in one_error_line(capsys)
    assert time.perf_counter() - start < 10  # 1.18 built a set of 10^11 seeds (MemoryError or the OOM killer)
    assert list(tmp_path.iterdir()) == []  # nothing made: no output folder


def test_the_output_folder_is_not_made_before_the_options_are_checked(tmp_path, capsys):
    """Probe 1.9: ``reproduce --jobs 0 --out new`` made ``new`` before refusing --jobs."""
    for argv in (["reproduce", "--jobs", "0"], ["run", "ch10", "--timeout", "0"], ["run", "ch10", "--lang", "fr"]):
        assert main([*argv, "--out", str(tmp_path / "new" / "out")]) == 2, argv
        one_error_line(capsys)
        assert not (tmp_path / "new").exists(), argv


def test_error_lines_shorten_huge_values(monkeypatch, capsys):
    """Probes 1.8, 1.26: a 5,000-digit seed or a 100 KB environment value was echoed in full."""
    assert main(["run", "ch10", "--seed", "9" * 5000]) == 2
    line = one_error_line(capsys)
    assert "must lie in [0, 2**32)" in line and "(5000 characters)" in line and len(line) < 200
    monkeypatch.setenv("COMPANION_PROFILE", "x" * 100_000)
    try:
        assert main(["list"]) == 2
        line = one_error_line(capsys)
        assert "COMPANION_PROFILE" in line and "100000 characters" in line and len(line) < 300
    finally:
        monkeypatch.undo()
        from companion.kit import config
        config.reset_settings()
        config.settings()
    assert cli.shorten("short values stay") == "short values stay"
    path = "/tmp/pytest-of-root/pytest-27/popen-gw0/test_merge_accepts_only_well_f9/a-longer-folder-name/bad.json"
    assert cli.shorten(f"cannot read {path}") == f"cannot read {path}"  # a path is shown whole
    assert len(cli.shorten("x" * 100_000)) < 500


def test_ctrl_c_in_any_command_ends_with_one_line_and_exit_130(monkeypatch, capsys, tmp_path):
    """Probes 3.1, 3.2, 3.9: Ctrl-C printed a KeyboardInterrupt traceback (exit 130 was right)."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("ch10_optimistic_estimate was not finished; nothing was written")

    monkeypatch.setattr(cli, "run_chapters", interrupted)
    monkeypatch.setattr(robustness, "run_sweep", interrupted)
    before = signal.getsignal(signal.SIGTERM)
    unfinished = "interrupted: ch10_optimistic_estimate was not finished; nothing was written"
    for argv, line in ((["run", "ch10"], unfinished), (["reproduce"], unfinished),
                       (["robustness", "--seeds", "0", "--chapters", "ch10"],
                        "interrupted: the sweep stopped before its end; its finished runs are cached (run it again to "
                        "resume); the report was not written")):
        assert main([*argv, "--out", str(tmp_path / "out")]) == 130, argv
        assert one_error_line(capsys) == line
    assert not (tmp_path / "out" / "report.json").exists()
    assert signal.getsignal(signal.SIGTERM) is before  # main() put back the SIGTERM handler it replaced


def test_run_writes_into_its_own_folder_and_says_where_the_page_is(monkeypatch, tmp_path, capsys):
    """Issue 37: ``run ch07 --seed 5`` after ``reproduce`` replaced reproduced/index.html and the reproduced ch07
    notebook; a run without --out now writes under reproduced/runs/<chapter>-seed<N>-<profile>/."""
    written = []

    def stand_in(chapters, out, **kwargs):
        written.append(out)
        return []

    monkeypatch.setattr(cli, "run_chapters", stand_in)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reproduced").mkdir()
    (tmp_path / "reproduced" / "index.html").write_text("the reproduce page")
    main(["run", "ch07", "--seed", "5"])
    assert written == [Path("reproduced/runs/ch07-seed5-quick")]
    main(["run", "ch07", "--out", "elsewhere"])
    main(["reproduce"])
    assert written[1:] == [Path("elsewhere"), Path("reproduced")]
    assert (tmp_path / "reproduced" / "index.html").read_text() == "the reproduce page"
    capsys.readouterr()


def test_a_run_prints_where_its_page_is(tmp_path, monkeypatch, capsys):
    def one_run(chapters, out, **kwargs):
        return [runner.ChapterRun(chapters[0].slug, 1.0)]

    monkeypatch.setattr(cli, "run_chapters", one_run)
    monkeypatch.setattr(cli, "write_index", lambda runs, out, *args: out / "index.html")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "ch07"]) == 0
    assert f"report with figures: {Path('reproduced/runs/ch07-seed0-quick/index.html')}" in capsys.readouterr().out


def test_explorer_control_names_are_escaped():
    """Probe 6.4: a control name from grid.json went into data-control="…" raw."""
    evil = '"><script>alert(1)</script>'
    grid = {"start": "0", "controls": {evil: {"values": [1, 2], "label": "a"}}, "defaults": {}, "points": [],
            "title": "t"}
    page = site.explorer_html(grid, "base")
    assert "<script>alert" not in page.split('<script type="application/json">')[0]


DRIVER = '''
import sys
from dataclasses import dataclass
from pathlib import Path
from companion.tools import catalog, cli

@dataclass(frozen=True)
class Tiny:
    slug: str
    source: Path
    seconds: int = 0
    available: bool = True

tiny = Tiny(Path(sys.argv[1]).stem, Path(sys.argv[1]))
catalog.find = lambda name: tiny
sys.exit(cli.main(sys.argv[2:]))
'''

SLOW = '''# %%
import os, time
from pathlib import Path
Path(os.environ["KERNEL_PID_FILE"]).write_text(str(os.getpid()))
time.sleep(120)
'''


def _like_a_terminal() -> None:
    """Ctrl-C's default action in the child, as in a terminal: a suite started in the background by a shell without job
    control (``cmd &``, as CI scripts may) inherits SIGINT ignored, and the run would never see the Ctrl-C sent to it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_ends_in_one_line_and_leaves_no_kernel_litter(signum, status, tmp_path):
    """Probes 3.1–3.2 (Ctrl-C: a KeyboardInterrupt traceback) and 3.7 (SIGTERM left the kernel's IPC sockets and its
    connection file with its key in the temporary directory): one line, exit 130 or 143, the kernel ended, nothing
    left in the temporary directory."""
    (tmp_path / "tmp").mkdir()
    driver, source = tmp_path / "driver.py", tmp_path / "ch95_slow.py"
    driver.write_text(DRIVER)
    source.write_text(SLOW)
    pid_file = tmp_path / "kernel.pid"
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "KERNEL_PID_FILE": str(pid_file),
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, str(driver), str(source), "run", "ch95", "--out", str(tmp_path / "out")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_like_a_terminal)
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pid_file.exists(), process.communicate(timeout=5)
        assert list((tmp_path / "tmp").glob("companion-kernel-*"))  # the kernel's folder while it runs
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == \
        "interrupted: ch95_slow was not finished; nothing was written", err
    kernel = Path(f"/proc/{pid_file.read_text()}/stat")
    deadline = time.monotonic() + 10
    while kernel.exists() and kernel.read_text().split(")")[-1].split()[0] != "Z" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not kernel.exists() or kernel.read_text().split(")")[-1].split()[0] == "Z"  # ended (a zombie at most)
    assert list((tmp_path / "tmp").iterdir()) == []  # no companion-kernel-* folder, no tmp* claims log
    assert not (tmp_path / "out" / "ch95_slow.ipynb").exists()
