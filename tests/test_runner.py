"""The command line and the headless runner, on tiny notebooks written for the test."""

import os
import subprocess
import sys

import pytest

from companion.tools import catalog, reproduction, runner
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


def test_run_chapter_collects_claims_figures_and_times(tmp_path, capfd):
    source = tmp_path / "ch99_tiny.py"
    source.write_text(TINY)
    run = runner.run_chapter(source, tmp_path / "out", seed=3)
    # the kernel talks over IPC sockets: no "running over TCP without encryption" warning per chapter
    assert "without encryption" not in capfd.readouterr().err
    assert run.ok and run.error is None
    assert [(c.id, c.figure, c.passed, c.chapter) for c in run.claims] == [("ch99.one-two", "图0.1", True, "ch99_tiny")]
    assert len(run.figures) == 1 and run.figures[0].path.stat().st_size > 0
    assert (tmp_path / "out" / "ch99_tiny.ipynb").exists()
    report = runner.format_report([run])
    assert "PASS" in report and "1/1 claims hold" in report and "margin +0.5 rel" in report


def test_a_finished_kernel_is_asked_to_shut_down_not_interrupted(tmp_path, monkeypatch):
    """jupyter_client's shutdown_kernel sends SIGINT first, which a kernel handling a late message reports as an
    ERROR line in the reproduce output; the runner shuts a finished kernel down without it."""
    from jupyter_client.manager import AsyncKernelManager

    interrupts = []
    original = AsyncKernelManager._async_interrupt_kernel

    async def counted(self):
        interrupts.append(self)
        await original(self)

    monkeypatch.setattr(AsyncKernelManager, "_async_interrupt_kernel", counted)
    source = tmp_path / "ch97_short.py"
    source.write_text("# %%\nprint('done')\n")
    run = runner.run_chapter(source, tmp_path / "out")
    assert run.error is None and interrupts == []


def test_a_missed_wake_up_delays_a_message_by_at_most_the_polling_interval(monkeypatch):
    """zmq's asyncio wait can miss a message's wake-up and read it only when the wait times out (a cell's reply:
    after the whole cell timeout); the runner's channel waits in slices, so the message is read after one slice."""
    import asyncio
    import time
    from queue import Empty

    from jupyter_client.channels import AsyncZMQSocketChannel

    waits, pending = [], [{"msg_type": "execute_reply"}]

    async def missed_wake_up(self, timeout=None):  # a message that is there is read only when the wait times out
        waits.append(timeout)
        await asyncio.sleep(5 if timeout is None else timeout)  # (a missed wake-up with no timeout: forever)
        if not pending:
            raise Empty
        return pending[0]

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", missed_wake_up)
    monkeypatch.setattr(runner, "WAKE_UP", 0.05)
    channel = runner.PolledChannel.__new__(runner.PolledChannel)
    start = time.monotonic()
    assert asyncio.run(channel.get_msg(timeout=5)) == {"msg_type": "execute_reply"}  # not after 5 s
    assert time.monotonic() - start < 1 and waits == [0.05]
    assert asyncio.run(channel.get_msg())["msg_type"] == "execute_reply" and waits[1:] == [0.05]  # no timeout
    pending.clear()                                                   # from now on no message comes
    waits.clear()
    start = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(channel.get_msg(timeout=0.12))
    assert 0.12 <= time.monotonic() - start < 0.5 and waits[:2] == [0.05, 0.05] and len(waits) == 3  # the timeout holds


def test_the_runners_kernel_client_reads_replies_and_outputs_through_polled_channels(tmp_path, monkeypatch):
    calls = []
    original = runner.PolledChannel.get_msg

    async def counted(self, timeout=None):
        calls.append(self.socket.socket_type)
        return await original(self, timeout)

    monkeypatch.setattr(runner.PolledChannel, "get_msg", counted)
    source = tmp_path / "ch96_short.py"
    source.write_text("# %%\nprint('done')\n")
    assert runner.run_chapter(source, None).error is None
    import zmq
    assert {zmq.DEALER, zmq.SUB} <= set(calls)  # the shell's replies and the IOPub outputs


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


SECTIONS = '''# %% [markdown]
# ## 1. A line (图3.2, 图3.3)
# The heading names the figures.

# %%
import matplotlib.pyplot as plt
from companion.kit.claims import ClaimSpec, compare, show
plt.plot([0, 1], [0, 1]); plt.show()
plt.plot([1, 0], [0, 1]); plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(ClaimSpec("ch96.line", "图3.3", "a line is a line").judge(compare("one", 1, "<", "two", 2)))

# %% [markdown]
# ## 2. A table
# The text says which: 表3.1.

# %%
plt.bar([0, 1], [1, 2]); plt.show()

# %% [markdown]
# ## 3. Nothing from the book

# %%
plt.plot([0, 1], [1, 1]); plt.show()
'''


def test_reproduce_names_figures_after_the_book_and_writes_a_report_page(tmp_path):
    source = tmp_path / "ch96_sections.py"
    source.write_text(SECTIONS)
    run = runner.run_chapter(source, tmp_path / "out", seed=0)
    names = sorted(f.path.name for f in run.figures)
    assert names == ["ch96_sections-cell06.png", "fig3.2_3.3-2.png", "fig3.2_3.3.png", "tab3.1.png"]
    assert all(f.path.parent == tmp_path / "out" / "ch96_sections" for f in run.figures)
    index = reproduction.write_index([run], tmp_path / "out", "quick", 0)
    page = index.read_text()
    assert "1 of 1 claims hold" in page and "ch96.line" in page and "one = 1 &lt; two = 2" in page
    # the claim shows the figures of its section inline, the others are listed after the claims
    claim_block = page.split("data-claim='ch96.line'")[1].split("</div>")[0]
    assert claim_block.count("<img") == 2 and "ch96_sections/fig3.2_3.3.png" in claim_block
    assert page.count("<img") == 4 and "torch" in page and "profile" in page


def test_reproduce_refuses_an_unwritable_output_folder_before_running(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["reproduce", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cannot write to the output folder" in err and "sub" in err


def test_chapters_run_in_parallel_each_kernel_with_its_own_environment(tmp_path, monkeypatch, capsys):
    import os
    from dataclasses import dataclass
    from pathlib import Path

    @dataclass(frozen=True)
    class Chapter:
        slug: str
        source: Path
        seconds: int = 0

    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    chapters = []
    for slug, sign in (("ch91_a", "<"), ("ch92_b", ">")):
        (tmp_path / f"{slug}.py").write_text(TINY.replace('"<", "two"', f'"{sign}", "two"').replace(
            "ch99.one-two", f"{slug[:4]}.one-two") + "\n# %%\nimport os; print('threads', os.environ['COMPANION_THREADS'])\n")
        chapters.append(Chapter(slug, tmp_path / f"{slug}.py"))
    before = dict(os.environ)
    runs = runner.run_chapters(chapters, tmp_path / "out", profile="quick", seed=0, jobs=2, progress=False)
    assert dict(os.environ) == before  # nothing leaked into this process
    assert [r.slug for r in runs] == ["ch91_a", "ch92_b"] and [r.ok for r in runs] == [True, False]
    assert [[c.id for c in r.claims] for r in runs] == [["ch91.one-two"], ["ch92.one-two"]]  # each its own log
    assert all("threads 2" in (tmp_path / "out" / f"{c.slug}.ipynb").read_text() for c in chapters)
    assert main(["reproduce", "--jobs", "two"]) == 2 and "--jobs must be a positive integer" in capsys.readouterr().err


def test_side_by_side_the_longest_chapters_start_first_and_results_keep_the_catalog_order(tmp_path, monkeypatch):
    """With --jobs 2 the kernels start longest first (a long chapter left to run alone at the end keeps one core idle);
    one at a time, the catalog's order; either way the results come back in the catalog's order."""
    from dataclasses import dataclass
    from pathlib import Path

    @dataclass(frozen=True)
    class Chapter:
        slug: str
        source: Path
        seconds: int

    started: list[str] = []

    async def stand_in(source, out_dir, **kwargs):
        started.append(source.stem)
        return runner.ChapterRun(source.stem, 0.0, [], [], None, None)

    monkeypatch.setattr(runner, "chapter_run", stand_in)
    chapters = [Chapter(slug, tmp_path / f"{slug}.py", seconds) for slug, seconds in
                (("ch91_short", 10), ("ch92_long", 80), ("ch93_middle", 30), ("ch94_long_too", 80))]
    for jobs, expected in ((2, ["ch92_long", "ch94_long_too", "ch93_middle", "ch91_short"]),
                           (1, [c.slug for c in chapters])):
        started.clear()
        runs = runner.run_chapters(chapters, tmp_path / "out", profile="quick", seed=0, jobs=jobs, progress=False)
        assert started == expected, jobs
        assert [r.slug for r in runs] == [c.slug for c in chapters]
    assert [c.slug for c in catalog.longest_first(catalog.CHAPTERS)][:3] == [
        "ch13_complexity_control", "ch12b_composite_tasks", "ch12_anchor_functions"]  # ch12b: 图12.8's depth runs


BAD_ENVIRONMENT = [("COMPANION_PROFILE", "Fast", "unknown profile 'Fast'"), ("COMPANION_SEED", "-3", "COMPANION_SEED"),
                   ("COMPANION_THREADS", "x", "COMPANION_THREADS"), ("COMPANION_LANG", "fr", "unknown language 'fr'")]


def test_a_bad_environment_value_does_not_stop_the_import_of_the_command_line():
    """In a fresh process, as a user types it: the package import (which reads the settings) must not raise before
    the command line's handler names the value."""
    done = subprocess.run([sys.executable, "-m", "companion", "list"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COMPANION_PROFILE": "Fast"})
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: unknown profile 'Fast': COMPANION_PROFILE must be one of quick, full"], done.stderr


@pytest.mark.parametrize("variable, value, message", BAD_ENVIRONMENT)
def test_a_bad_environment_value_is_named_by_every_subcommand(variable, value, message, monkeypatch, capsys):
    from companion.kit import config

    monkeypatch.setenv(variable, value)
    try:
        for command in (["list"], ["coverage"], ["translate", "ch04"], ["cache", "info"], ["run", "ch04"],
                        ["reproduce"], ["robustness", "--chapters", "ch04"], ["precompute", "ch07"], ["book"]):
            assert main(command) == 2, command
            err = capsys.readouterr().err
            assert message in err and len(err.strip().splitlines()) == 1, (command, err)
    finally:
        monkeypatch.undo()
        config.reset_settings()
        config.settings()


def test_bad_options_name_the_value(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for argv, message in ((["book", "--out", str(blocker / "sub")], "cannot write to the output folder"),
                          (["run", "ch04", "--lang", "fr"], "unknown language 'fr'"),
                          (["reproduce", "--seed", "minus"], "COMPANION_SEED"),
                          (["translate", "ch99"], "unknown chapter 'ch99'")):
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv


PRELOAD_PROBE = '''# %%
import sys, time
print("preloaded", all(name in sys.modules for name in ("torch", "matplotlib.pyplot", "ipywidgets")))
print("started", time.time())
'''


def test_the_next_chapters_kernel_starts_ahead_with_torch_and_pyplot_imported(tmp_path):
    """run_chapters starts chapter k+1's kernel (which imports runner.PRELOAD as it starts) while chapter k runs: the
    second notebook finds the modules there, its first cell still has execution count 1, and it runs after the
    first notebook (one at a time, in order)."""
    from dataclasses import dataclass
    from pathlib import Path

    import nbformat

    @dataclass(frozen=True)
    class Chapter:
        slug: str
        source: Path
        seconds: int = 0

    chapters = []
    for slug, pause in (("ch93_slow", 3), ("ch94_next", 0)):
        (tmp_path / f"{slug}.py").write_text(PRELOAD_PROBE + f"\n# %%\ntime.sleep({pause}); print('ended', time.time())\n")
        chapters.append(Chapter(slug, tmp_path / f"{slug}.py"))
    runs = runner.run_chapters(chapters, tmp_path / "out", profile="quick", seed=0, jobs=1, progress=False)
    assert [r.error for r in runs] == [None, None]
    notebooks = [nbformat.read(tmp_path / "out" / f"{c.slug}.ipynb", as_version=4) for c in chapters]
    texts = [nb.cells[0].outputs[0]["text"] for nb in notebooks]
    assert all("preloaded True" in text for text in texts)
    assert [nb.cells[0].execution_count for nb in notebooks] == [1, 1]
    first_ended = float(notebooks[0].cells[1].outputs[0]["text"].split()[1])
    second_started = float(texts[1].split("started")[1].split()[0])
    assert second_started > first_ended  # in order, one at a time
    assert runs[1].seconds < 3  # its kernel was ready: no start-up and no torch import left in its time


def test_kernels_side_by_side_split_the_cores_unless_the_count_is_set(monkeypatch) -> None:
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 16)
    assert runner.threads_side_by_side(1) == {}, "alone, a kernel keeps the profile's own count"
    assert runner.threads_side_by_side(12) == {"COMPANION_THREADS": "1"}
    assert runner.threads_side_by_side(6) == {"COMPANION_THREADS": "2"}
    assert runner.threads_side_by_side(32) == {"COMPANION_THREADS": "1"}, "never below one thread"
    monkeypatch.setenv("COMPANION_THREADS", "3")
    assert runner.threads_side_by_side(6) == {}, "an explicit count wins"


DIES = '''# %%
from companion.kit.claims import ClaimSpec, compare, show
BEFORE = ClaimSpec("ch95.before", "图0.1", "one is less than two")
AFTER = ClaimSpec("ch95.after", "图0.1", "two is less than three")
LOOKED_AT = ClaimSpec("ch95.looked-at", "图0.1", "an exploration", kind="exploration")

# %%
show(BEFORE.judge(compare("one", 1, "<", "two", 2)))

# %%
import os, signal
os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would

# %%
show(AFTER.judge(compare("two", 2, "<", "three", 3)))
'''


def test_a_dead_kernel_fails_its_chapter_with_a_report_and_the_other_chapters_go_on(tmp_path):
    """Probe 3.8: a kernel killed mid-chapter gave a DeadKernelError traceback, no notebook, and in reproduce
    cancelled every other chapter.  Now the chapter fails with "kernel died", its notebook of what ran is written,
    the claims it never reached count as not run, and the next chapter runs."""
    from dataclasses import dataclass
    from pathlib import Path

    @dataclass(frozen=True)
    class Chapter:
        slug: str
        source: Path
        seconds: int = 0

    dies, fine = tmp_path / "ch95_dies.py", tmp_path / "ch99_tiny.py"
    dies.write_text(DIES)
    fine.write_text(TINY)
    runs = runner.run_chapters([Chapter("ch95_dies", dies), Chapter("ch99_tiny", fine)], tmp_path / "out",
                               profile="quick", seed=0, progress=False)
    died, ok = runs
    assert died.stopped == "kernel died" and "kernel died" in died.error and not died.ok
    assert [c.id for c in died.claims] == ["ch95.before"] and died.not_run == ["ch95.after"]
    assert died.notebook.exists() and ok.ok and ok.notebook.exists()
    report = runner.format_report(runs)
    assert "2/3 claims hold; 1 not run (ch95_dies kernel died); 1/2 chapters ran clean" in report
    page = reproduction.write_index(runs, tmp_path / "out", "quick", 0).read_text()
    assert "2 of 3 claims hold; 1 of 2 chapters ran clean. 1 not run (ch95_dies kernel died)." in page


def test_a_timed_out_chapter_counts_its_claims_as_not_run(tmp_path):
    source = tmp_path / "ch95_slow.py"
    source.write_text(DIES.replace("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "import time\ntime.sleep(30)"))
    run = runner.run_chapter(source, None, timeout=2)
    assert run.stopped == "timed out" and run.not_run == ["ch95.after"]
    assert "1/2 claims hold; 1 not run (ch95_slow timed out)" in runner.format_report([run])


def test_expected_claims_reads_the_chapter_and_its_experiments_module():
    ids = runner.expected_claims(catalog.find("ch10").source)
    assert len(ids) == 13 and "ch10.fl-vs-fnl" in ids and "ch10.width-free-cnn" in ids  # 图10.3(b)–(d) added three
    assert "ch10.completion-order" in ids  # 图10.2 in the book's setting (stop 53) added the twelfth
    assert "ch10.completion-exact" in ids  # 图10.2 on the book's cross order: a phenomenon since stop 56
    ch12 = runner.expected_claims(catalog.find("ch12").source)  # `from companion.experiments import ch12_anchors`
    assert len(ch12) == 11 and "ch12.transformer-vs-lstm" not in ch12  # an exploration is not counted
    assert {"ch12.statistical-type2", "ch12.recitation"} <= set(ch12)  # phenomena since they judge several models each
    assert "ch12.working-memory" in ch12  # a phenomenon since its five models have their own run, batches of 200
    assert "ch12.classification-order" in ch12  # 图12.7 on the book's classification task
    # chapter 12's second part: its own prefix, though both parts' modules share companion.core.anchor_tasks
    ch12b = runner.expected_claims(catalog.find("ch12b").source)  # `from companion.experiments import ch12b_composite`
    assert set(ch12b) == {"ch12b.task-harder", "ch12b.synonym", "ch12b.multi-anchor", "ch12b.multi-anchor-most",
                          "ch12b.per-position"}  # 图12.8: a phenomenon since it judges seven 4-layer nets
    assert not set(ch12b) & set(ch12)


def test_stale_kernel_folders_of_a_killed_process_are_removed(tmp_path):
    """Probe 3.7: after SIGKILL a run's companion-kernel-* folder (sockets, connection file with its key) stayed in the
    temporary directory; the next run removes those whose process is gone, and only those."""
    gone = tmp_path / f"{runner.KERNEL_DIR_PREFIX}999999999-abc"  # above any pid_max: no such process
    alive = tmp_path / f"{runner.KERNEL_DIR_PREFIX}{os.getppid()}-abc"
    other = tmp_path / f"{runner.KERNEL_DIR_PREFIX}abc"
    for folder in (gone, alive, other):
        folder.mkdir()
        (folder / "kernel.json").write_text("{}")
    assert runner.remove_stale_kernel_dirs(tmp_path) == [gone]
    assert not gone.exists() and alive.exists() and other.exists()


def test_the_report_page_escapes_the_chapter_slug(tmp_path):
    """Probe 6.3: run.slug went into index.html raw in three places."""
    evil = "'><script>alert(1)</script>"
    run = runner.ChapterRun(evil, 1.0)
    page = reproduction.write_index([run], tmp_path, "quick", 0).read_text()
    assert "<script>" not in page and "&#x27;&gt;&lt;script&gt;" in page


def test_a_kernel_in_a_long_temporary_folder_talks_over_tcp(tmp_path):
    """A Unix socket's path holds about 104 bytes: under a long TMPDIR (pytest's own folders under xdist) the IPC
    sockets failed with "File name too long" and the chapter with them; such a kernel talks over the loopback."""
    from pathlib import Path

    from companion.tools.runner import SOCKET_PATH_MAX, kernel_transport

    assert kernel_transport(Path("/tmp/companion-kernel-1-abc")) == ("ipc", "/tmp/companion-kernel-1-abc/kernel")
    long = tmp_path / ("x" * (SOCKET_PATH_MAX - len(str(tmp_path))))
    assert kernel_transport(long) == ("tcp", "127.0.0.1")


def test_identities_are_counted_apart_from_the_claims(tmp_path):
    """An identity checks the mathematics: the summary counts it apart, never among the claims that hold, and an
    identity a chapter never reached counts as a not-run identity."""
    from companion.kit.claims import ClaimSpec, compare, identity, read_log

    log = tmp_path / "log.jsonl"
    spec = ClaimSpec("ch94.order", "图0.1", "one is less than two")
    rank = ClaimSpec("ch94.rank", "(0.1)", "the rank equals the formula", kind="identity")
    for verdict in (spec.judge(compare("one", 1, "<", "two", 2)), rank.judge(identity("error", 0.0, 1e-9))):
        log.open("a").write(__import__("json").dumps(verdict.record("ch94_x")) + "\n")
    claims = read_log(log)
    whole = runner.ChapterRun("ch94_x", 1.0, claims, expected=("ch94.order", "ch94.rank"), identities=("ch94.rank",))
    assert runner.summary_line([whole]).startswith("1/1 claims hold; 1/1 chapters ran clean; 1 s in all; "
                                                   "1/1 identities hold (checks of the mathematics")
    stopped = runner.ChapterRun("ch94_x", 1.0, claims[:1], error="raised", expected=("ch94.order", "ch94.rank"),
                                identities=("ch94.rank",), stopped="raised")
    line = runner.summary_line([stopped])
    assert line.startswith("1/1 claims hold; 1 not run (ch94_x raised)") and "0/1 identities hold" in line
    assert "identity holds" in runner.format_report([whole])
