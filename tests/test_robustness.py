"""The robustness sweep on a tiny chapter whose claim holds for some seeds only."""

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from companion.tools import catalog
from companion.tools import robustness
from companion.__main__ import main
from companion.kit.cache import imported_modules
from companion.kit.config import ConfigError
from companion.tools.runner import ChapterRun, CompanionNotImportable

TINY = '''# %%
import os
from companion.kit.claims import ClaimSpec, threshold, show
SMALL_SEED = ClaimSpec("ch97.small-seed", "图0.2", "the seed is small")
SEED = int(os.environ["COMPANION_SEED"])
# %%
# NBVAL_CHECK_OUTPUT
show(SMALL_SEED.judge(threshold("seed", SEED, "<", 3.5)))
'''


@dataclass(frozen=True)
class TinyChapter:
    slug: str
    source: Path
    seconds: int = 0


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "cache"))
    # the thread count is part of a run's cache key (it can change floating-point sums): fix it, so that runs
    # with --jobs 1 and --jobs 2 share the cache
    monkeypatch.setenv("COMPANION_THREADS", "1")
    source = tmp_path / "ch97_tiny.py"
    source.write_text(TINY)
    return TinyChapter("ch97_tiny", source)


def test_parse_seeds():
    assert robustness.parse_seeds("0-3") == [0, 1, 2, 3]
    assert robustness.parse_seeds("5, 0,2-3") == [0, 2, 3, 5]
    for bad in ("", "a-3", "3-1", "-2", "1.5"):
        with pytest.raises(ConfigError, match="seed"):
            robustness.parse_seeds(bad)


def test_sweep_counts_passes_and_resumes_from_the_cache(tiny, tmp_path):
    report = robustness.robustness([tiny], [0, 2, 4, 6], jobs=2, out=tmp_path / "rep", progress=False)
    claim = report["claims"]["ch97.small-seed"]
    assert (claim["passed"], claim["runs"]) == (2, 4)
    assert claim["seeds"]["2"]["passed"] and not claim["seeds"]["4"]["passed"]
    assert claim["min_margin"]["margin"] == pytest.approx((3.5 - 6) / 3.5)
    assert not claim["meets_standard"] and not robustness.meets_standard(report)
    chapter = report["chapters"]["ch97_tiny"]
    assert (chapter["passed"], chapter["runs"]) == (2, 4) and chapter["digest"] == robustness.chapter_digest(tiny)
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["claims"]["ch97.small-seed"]["passed"] == 2
    # every (chapter, seed) is cached: a rerun starts no kernel, so it cannot fail even with a broken runner
    real = robustness.run_chapter
    robustness.run_chapter = None
    try:
        again = robustness.run_sweep([tiny], [0, 2, 4, 6], progress=False)
    finally:
        robustness.run_chapter = real
    assert [item["seed"] for item in again] == [0, 2, 4, 6]


def test_an_edited_chapter_is_stale_and_recomputed(tiny, tmp_path):
    before = robustness.chapter_digest(tiny)
    tiny.source.write_text(TINY.replace("3.5", "10.5"))
    assert robustness.chapter_digest(tiny) != before
    report = robustness.robustness([tiny], [6], out=tmp_path / "rep", progress=False)
    assert report["claims"]["ch97.small-seed"]["passed"] == 1


def test_rewording_the_text_keeps_the_digest_and_a_code_edit_changes_it(tiny):
    before = robustness.chapter_digest(tiny)
    tiny.source.write_text(TINY.replace("# %%\n# NBVAL", "# %% [markdown]\n# Held on 19 of 20 seeds.\n\n# %%\n# NBVAL"))
    assert "Held on 19" in tiny.source.read_text() and robustness.chapter_digest(tiny) == before
    tiny.source.write_text(TINY.replace("\"<\", 3.5", "\"<=\", 3.5"))
    assert robustness.chapter_digest(tiny) != before


def test_the_digest_follows_the_package_modules_a_chapter_imports():
    ch04 = catalog.find("ch04")
    direct = imported_modules(ch04.source)
    assert {"companion.experiments.ch04_frequency", "companion.kit.config"} <= direct
    assert "companion.core.pde" not in direct


def test_an_interrupted_run_is_never_cached(tiny, tmp_path):
    tiny.source.write_text(TINY + "\n# %%\nraise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        robustness.run_sweep([tiny], [1], progress=False)
    args = (str(tiny.source), 1, "quick", robustness.chapter_digest(tiny), 900, "")
    assert not robustness.sweep_runs().check_call_in_cache(*args)


def test_a_run_is_found_whatever_its_timeout_and_folder_but_not_at_another_thread_count(tiny, tmp_path):
    robustness.robustness([tiny], [0], out=tmp_path / "a", progress=False, timeout=900)
    elsewhere = tmp_path / "worktree" / tiny.source.name  # the same code, in another checkout
    elsewhere.parent.mkdir()
    elsewhere.write_text(tiny.source.read_text())
    copy = TinyChapter(tiny.slug, elsewhere, 5)
    report = robustness.robustness([copy], [0], out=tmp_path / "b", progress=False, cached_only=True, timeout=60)
    assert report["chapters"]["ch97_tiny"]["runs"] == 1
    digest = robustness.chapter_digest(copy)
    assert robustness.sweep_runs().check_call_in_cache(str(elsewhere), 0, "quick", digest, 5, "1")
    assert not robustness.sweep_runs().check_call_in_cache(str(elsewhere), 0, "quick", digest, 5, "2")
    assert not robustness.sweep_runs().check_call_in_cache(str(elsewhere), 1, "quick", digest, 5, "1")


def test_merge_reports_and_bad_input(tiny, tmp_path, capsys):
    robustness.robustness([tiny], [0, 5], out=tmp_path / "a", progress=False)
    merged = robustness.merge_reports([tmp_path / "a"], tmp_path / "all")
    assert merged["claims"]["ch97.small-seed"]["passed"] == 1
    assert main(["robustness", "--merge", str(tmp_path / "nowhere"), "--out", str(tmp_path / "all")]) == 2
    assert "no robustness report" in capsys.readouterr().err
    assert main(["robustness", "--seeds", "x", "--chapters", "ch04"]) == 2
    assert "bad seed range 'x'" in capsys.readouterr().err
    assert main(["robustness", "--jobs", "zero", "--chapters", "ch04"]) == 2
    assert "--jobs must be a positive integer" in capsys.readouterr().err
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(ConfigError, match="cannot write the report"):
        robustness.robustness([tiny], [0], out=blocked / "sub", progress=False)


def test_a_stopped_sweep_is_reported_from_the_cache_as_incomplete(tiny, tmp_path):
    robustness.robustness([tiny], [0, 1], out=tmp_path / "a", progress=False)
    report = robustness.robustness([tiny], [0, 1, 2, 3], out=tmp_path / "b", progress=False, cached_only=True)
    chapter = report["chapters"]["ch97_tiny"]
    assert (chapter["runs"], chapter["complete"], chapter["meets_standard"]) == (2, False, False)
    claim = report["claims"]["ch97.small-seed"]
    assert (claim["passed"], claim["runs"], claim["meets_standard"]) == (2, 2, False)
    assert "incomplete" in robustness.format_summary(report)


def test_restamp_carries_the_report_over_a_claim_neutral_change_only(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(robustness.catalog, "find", lambda name: tiny)
    robustness.robustness([tiny], [4], jobs=1, out=tmp_path / "rep", progress=False)
    assert robustness.restamp([tiny], [4], out=tmp_path / "rep", progress=False) == {}  # nothing stale
    tiny.source.write_text(TINY + "# %%\nunused = SEED * 2\n")  # new code that no claim reads
    assert robustness.stale_chapters(json.loads((tmp_path / "rep" / "report.json").read_text())) == ["ch97_tiny"]
    assert robustness.restamp([tiny], [4], out=tmp_path / "rep", progress=False) == {"ch97_tiny": []}
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert robustness.stale_chapters(report) == [] and report["chapters"]["ch97_tiny"]["restamped"]["seeds"] == [4]
    assert report["claims"]["ch97.small-seed"]["passed"] == 0  # the numbers are the report's, untouched
    tiny.source.write_text(TINY.replace("3.5", "4.5"))  # the claim's margin moves on every seed
    found = robustness.restamp([tiny], [4], out=tmp_path / "rep", progress=False)["ch97_tiny"]
    assert found == ["seed 4 ch97.small-seed: report failed, margin -0.14285714285714285, now passed, margin 0.1111111111111111"]
    assert robustness.stale_chapters(json.loads((tmp_path / "rep" / "report.json").read_text())) == ["ch97_tiny"]
    with pytest.raises(ConfigError, match="not in the report"):
        robustness.restamp([tiny], [7], out=tmp_path / "rep", progress=False)


def test_sweeps_on_a_dask_local_cluster_equal_the_serial_ones(tiny, tmp_path, monkeypatch):
    import numpy as np

    from companion.core.fprinciple import FPConfig, run_fprinciple
    from companion.kit.cache import parallel_backend, sweep

    configs = [{"config": FPConfig(steps=30, record_every=10, hidden=(20, 20)), "seed": s} for s in (0, 1)]
    serial_fits = sweep(run_fprinciple, configs, progress=False)
    serial = robustness.run_sweep([tiny], [5], progress=False)
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "cluster-cache"))  # nothing to read back: all recomputed
    environment = dict(os.environ)
    with parallel_backend("dask", workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        fits = sweep(run_fprinciple, configs, n_jobs=-1, progress=False)
        on_cluster = robustness.run_sweep([tiny], [5], jobs=-1, progress=False)
    assert dict(os.environ) == environment  # dask's OMP_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_ … do not stay behind
    assert all(np.array_equal(a.out_train, b.out_train) for a, b in zip(fits, serial_fits))
    assert not np.array_equal(fits[0].out_train, fits[1].out_train)  # two seeds, two runs
    strip = lambda items: [{k: v for k, v in item.items() if k != "seconds"} for item in items]  # noqa: E731
    assert strip(on_cluster) == strip(serial) and not serial[0]["claims"][0]["passed"]
    assert len(list((tmp_path / "cluster-cache").rglob("result.json"))) == 3  # the workers wrote the cache
    with pytest.raises(ConfigError, match="unknown backend 'ray'"):
        with parallel_backend("ray"):
            pass
    with pytest.raises(ConfigError, match="needs --backend dask"):
        with parallel_backend("local", scheduler="tcp://127.0.0.1:1"):
            pass


def test_a_sweep_runs_the_longest_chapters_first_and_reports_in_catalog_order(tiny, monkeypatch):
    """Chapter × seed runs are handed to the workers longest chapter first (the short ones fill the end); the
    report keeps the catalog's order."""
    started: list[tuple[str, int]] = []

    def stand_in(source, seed, profile, digest, timeout, threads):
        started.append((Path(source).stem, seed))
        return {"chapter": Path(source).stem, "seed": seed, "digest": digest, "seconds": 0.0, "error": None,
                "claims": []}

    monkeypatch.setattr(robustness, "sweep_runs", lambda: stand_in)
    chapters = [TinyChapter("ch97_tiny", tiny.source, 5),
                TinyChapter("ch98_long", tiny.source.with_name("ch98_long.py"), 60)]
    chapters[1].source.write_text(tiny.source.read_text())
    items = robustness.run_sweep(chapters, [0, 1], progress=False)
    assert started == [("ch98_long", 0), ("ch98_long", 1), ("ch97_tiny", 0), ("ch97_tiny", 1)]
    assert [(item["chapter"], item["seed"]) for item in items] == [
        ("ch97_tiny", 0), ("ch97_tiny", 1), ("ch98_long", 0), ("ch98_long", 1)]


@pytest.mark.parametrize("profile, jobs, cuda, explicit, threads", [
    ("full", 1, False, "", "1"),    # 2026-12-07: two --jobs 1 sweeps on a 2-core CPU took every core each
    ("full", 2, False, "", "1"),
    ("full", 1, True, "", ""),      # a GPU run keeps the profile's default
    ("quick", 1, False, "", ""),    # the quick profile's own default (one thread, lent a second when free)
    ("quick", 2, True, "", "1"),
    ("full", 1, False, "2", "2"),   # the caller's COMPANION_THREADS wins
])
def test_a_full_sweep_on_a_cpu_gives_each_run_one_thread_even_with_one_job(monkeypatch, profile, jobs, cuda,
                                                                          explicit, threads):
    """On a CPU the full profile's default is every core, and two sweeps started apart with ``--jobs 1`` slowed each
    other several-fold (图8.13: 69 minutes against 6–12): each run of a full sweep on a CPU gets one thread."""
    monkeypatch.setattr("torch.cuda.is_available", lambda: cuda)
    monkeypatch.setenv("COMPANION_THREADS", explicit)
    assert robustness.sweep_threads(jobs, profile) == threads


def test_the_sweep_hands_each_run_its_thread_count(tiny, monkeypatch):
    """What :func:`~companion.tools.robustness.sweep_threads` chooses is what each run is given (and cached under)."""
    given: list[str] = []

    def stand_in(source, seed, profile, digest, timeout, threads):
        given.append(threads)
        return {"chapter": Path(source).stem, "seed": seed, "digest": digest, "seconds": 0.0, "error": None,
                "claims": []}

    monkeypatch.setattr(robustness, "sweep_runs", lambda: stand_in)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    robustness.run_sweep([TinyChapter("ch97_tiny", tiny.source, 5)], [0, 1], profile="full", progress=False)
    assert given == ["1", "1"]


def test_parse_seeds_is_bounded_before_any_range_is_spelled_out():
    """Probes 1.18, 1.19: ``--seeds 0-100000000000`` built a set of 10^11 ints; 4294967296 failed only in the sweep."""
    assert len(robustness.parse_seeds(f"0-{robustness.MAX_SEEDS - 1}")) == robustness.MAX_SEEDS
    for bad, message in (("4294967296", "2\\*\\*32"), ("0-100000000000", "2\\*\\*32"),
                         (f"0-{robustness.MAX_SEEDS}", "more than"), ("0-5000,6000-11000", "more than")):
        with pytest.raises(ConfigError, match=message):
            robustness.parse_seeds(bad)


def second_chapter(tiny, slug="ch98_other"):
    other = TinyChapter(slug, tiny.source.with_name(f"{slug}.py"))
    other.source.write_text(TINY.replace("ch97.small-seed", "ch98.small-seed"))
    return other


def test_a_sweep_merges_into_the_report_and_never_shrinks_it(tiny, tmp_path):
    """Probe 3.11: ``robustness --seeds 0-1 --chapters ch09`` replaced the committed 20-seed, 12-chapter report with
    a 1-chapter, 2-seed one (merge() dropped the old report when the seeds differed)."""
    other = second_chapter(tiny)
    rep = tmp_path / "rep"
    robustness.robustness([tiny, other], [0, 1], out=rep, progress=False)
    report = robustness.robustness([tiny], [4], out=rep, progress=False)  # other seeds, one chapter
    assert report["seeds"] == [0, 1, 4]
    assert sorted(report["chapters"]["ch97_tiny"]["seeds"]) == ["0", "1", "4"]
    assert report["claims"]["ch97.small-seed"]["passed"] == 2 and report["claims"]["ch97.small-seed"]["runs"] == 3
    assert sorted(report["chapters"]["ch98_other"]["seeds"]) == ["0", "1"]  # kept, though not rerun
    assert report["claims"]["ch98.small-seed"]["runs"] == 2 and not report["chapters"]["ch98_other"]["complete"]
    assert json.loads((rep / "report.json").read_text()) == report
    again = robustness.robustness([tiny], [1], out=rep, progress=False)  # a seed it has (cached): nothing lost
    assert sorted(again["chapters"]["ch97_tiny"]["seeds"]) == ["0", "1", "4"]


def test_a_sweep_keeps_what_another_wrote_into_the_report_while_it_ran(tiny, tmp_path, monkeypatch):
    """A sweep of hours and a --restamp or another sweep meanwhile: the later writer used to merge into the copy of
    the report it had read at its start, and undo the other's results."""
    other = second_chapter(tiny)
    rep = tmp_path / "rep"
    robustness.robustness([tiny], [0], out=rep, progress=False)
    run_sweep = robustness.run_sweep

    def meanwhile(*args, **kwargs):
        items = run_sweep(*args, **kwargs)
        monkeypatch.setattr(robustness, "run_sweep", run_sweep)
        robustness.robustness([other], [0], out=rep, progress=False)  # written while this sweep "ran"
        return items

    monkeypatch.setattr(robustness, "run_sweep", meanwhile)
    report = robustness.robustness([tiny], [1], out=rep, progress=False)
    assert sorted(report["chapters"]) == ["ch97_tiny", "ch98_other"]
    assert sorted(report["chapters"]["ch97_tiny"]["seeds"]) == ["0", "1"]
    assert json.loads((rep / "report.json").read_text()) == report


def test_a_report_that_cannot_take_the_results_is_refused_before_anything_runs(tiny, tmp_path, monkeypatch, capsys):
    rep = tmp_path / "rep"
    robustness.robustness([tiny], [0, 1], out=rep, progress=False)
    before = (rep / "report.json").read_text()

    def no_sweep(*args, **kwargs):
        raise AssertionError("the sweep ran")

    tiny.source.write_text(TINY.replace("3.5", "4.5"))  # the chapter's code changed
    with monkeypatch.context() as m:
        m.setattr(robustness, "run_sweep", no_sweep)
        with pytest.raises(ConfigError, match="ch97_tiny's code changed since its 2 seeds there.*give --out another"):
            robustness.robustness([tiny], [0], out=rep, progress=False)
        (rep / "report-full.json").write_text(before)  # a quick report where the full one belongs
        with pytest.raises(ConfigError, match="holds the quick profile, this is full"):
            robustness.robustness([tiny], [0, 1], out=rep, profile="full", progress=False)
    assert (rep / "report.json").read_text() == before == (rep / "report-full.json").read_text()
    report = robustness.robustness([tiny], [0, 1], out=rep, progress=False)  # covers its seeds: replaced
    assert report["chapters"]["ch97_tiny"]["digest"] == robustness.chapter_digest(tiny)
    assert report["claims"]["ch97.small-seed"]["seeds"]["0"]["margin"] == pytest.approx(4.5 / 4.5)


def test_cached_only_with_nothing_cached_is_an_error_and_writes_nothing(tiny, tmp_path, capsys, monkeypatch):
    """Probes 1.20, 3.12: ``--cached-only`` with an empty cache wrote an empty report over the old one, exit 0."""
    rep = tmp_path / "rep"
    robustness.robustness([tiny], [0], out=rep, progress=False)
    before = (rep / "report.json").read_text()
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ConfigError, match="holds no run"):
        robustness.robustness([tiny], [0], out=rep, progress=False, cached_only=True)
    assert (rep / "report.json").read_text() == before
    with pytest.raises(ConfigError, match="holds no run"):
        robustness.robustness([tiny], [0], out=tmp_path / "fresh", progress=False, cached_only=True)
    assert not (tmp_path / "fresh").exists()
    assert not robustness.meets_standard({"chapters": {}, "claims": {}})  # a report of nothing meets nothing


def test_the_report_is_written_atomically(tiny, tmp_path, monkeypatch):
    """Probe 3.13: a kill during the plain write_text left a truncated report.json."""
    rep = tmp_path / "rep"
    robustness.robustness([tiny], [0], out=rep, progress=False)
    before = (rep / "report.json").read_text()

    def killed(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        robustness.robustness([tiny], [0], out=rep, progress=False)  # read back from the cache, then written
    assert (rep / "report.json").read_text() == before and sorted(p.name for p in rep.iterdir()) == ["report.json"]


CLAIM = {"chapter": "ch97_tiny", "figure": "图0.2", "text": "t", "exploration": False,
         "seeds": {"0": {"passed": True, "margin": 0.5, "unit": "rel", "thin": False, "tightest": "seed"}}}
CHAPTER = {"digest": "abc", "seeds": {"0": {"seconds": 1.0, "error": None, "ok": True, "claims": 1}}}
GOOD = {"profile": "quick", "seeds": [0], "chapters": {"ch97_tiny": CHAPTER}, "claims": {"ch97.x": CLAIM}}
MALFORMED = [
    ("{}", "it has no 'profile'"),
    ("[1,2]", "the report must be a JSON object, not list"),
    ('{"seeds": [0, 1], "profile": "quick"}', "it has no 'chapters'"),
    (json.dumps({**GOOD, "seeds": "0-19"}), "'seeds' must be a list"),
    (json.dumps({**GOOD, "chapters": {"ch97_tiny": {**CHAPTER, "seeds": [1]}}}), "must be an object keyed by seed"),
    (json.dumps({**GOOD, "claims": {"ch97.x": {**CLAIM, "seeds": {"0": {**CLAIM["seeds"]["0"], "passed": "yes"}}}}}),
     "claim 'ch97.x' seed 0 'passed' must be true or false, not str"),
    (json.dumps({**GOOD, "claims": {"ch97.x": {**CLAIM, "seeds": {"0": {**CLAIM["seeds"]["0"], "margin": "1"}}}}}),
     "'margin' must be a number or null"),
    (json.dumps({**GOOD, "claims": {"ch97.x": {**CLAIM, "chapter": "ch50_none"}}}), "which the report does not have"),
    ("{garbage", "cannot read the robustness report"),
    ("\xff\xfe", "cannot read the robustness report"),
]


@pytest.mark.parametrize("text, problem", MALFORMED)
def test_merge_accepts_only_well_formed_reports_and_names_what_it_rejects(text, problem, tmp_path, capsys):
    """Probes 3.14, 3.15: ``--merge`` of ``{}`` or ``[1,2]`` gave TypeError/KeyError tracebacks, and a file that is
    not JSON was not named."""
    assert robustness.report_problem(GOOD) is None
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode("latin-1"))
    assert main(["robustness", "--merge", str(bad), "--out", str(tmp_path / "all")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and problem in err[0], err
    assert not (tmp_path / "all" / "report.json").exists()


def test_a_broken_report_in_out_is_named_before_the_sweep(tiny, tmp_path, monkeypatch):
    """Probe 3.13: a truncated report.json in --out gave "Unterminated string …" after the whole sweep."""
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "report.json").write_text('{"profile": "quick", "seeds": [0, 1], "chapt')
    monkeypatch.setattr(robustness, "run_sweep", lambda *a, **k: pytest.fail("the sweep ran"))
    with pytest.raises(ConfigError, match=f"cannot read the robustness report '{rep / 'report.json'}'"):
        robustness.robustness([tiny], [0], out=rep, progress=False)


def test_merge_reports_joins_other_seeds_and_refuses_another_profile(tiny, tmp_path):
    robustness.robustness([tiny], [0], out=tmp_path / "a", progress=False)
    robustness.robustness([tiny], [4], out=tmp_path / "b", progress=False)
    merged = robustness.merge_reports([tmp_path / "a", tmp_path / "b"], tmp_path / "all")
    assert merged["seeds"] == [0, 4] and merged["claims"]["ch97.small-seed"]["passed"] == 1
    # each run says where it was made; runs from another machine (a GPU window's) keep theirs, and the report names both
    assert merged["chapters"]["ch97_tiny"]["seeds"]["0"]["device"] == robustness.device_words()
    assert merged["chapters"]["ch97_tiny"]["seeds"]["0"]["machine"] == robustness.machine_words()
    window = json.loads((tmp_path / "b" / "report.json").read_text())
    window["machine"], window["torch"] = "x86_64, 16 cores, Xeon", "2.11.0+cu130"
    window["chapters"]["ch97_tiny"]["seeds"]["4"].update(machine="x86_64, 16 cores, Xeon", device="NVIDIA H200",
                                                         torch="2.11.0+cu130")
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "report.json").write_text(json.dumps(window))
    joined = robustness.merge_reports([tmp_path / "a", tmp_path / "gpu"], tmp_path / "joined")
    assert joined["machine"] == robustness.machine_words() + " + x86_64, 16 cores, Xeon"
    assert robustness.run_on_text(joined["chapters"]["ch97_tiny"]["seeds"]) == f"{robustness.device_words()} 0 · NVIDIA H200 4"
    assert robustness.run_on_text({"0": {}, "1": {}}) == "—"  # runs made before the place was recorded
    other = json.loads((tmp_path / "b" / "report.json").read_text())
    (tmp_path / "full.json").write_text(json.dumps({**other, "profile": "full"}))
    with pytest.raises(ConfigError, match="cannot merge .*full.json.*holds the quick profile, this is full"):
        robustness.merge_reports([tmp_path / "full.json"], tmp_path / "all")


def test_merging_an_older_copy_keeps_the_later_dates(tiny, tmp_path):
    robustness.robustness([tiny], [0], out=tmp_path / "a", progress=False)
    older = json.loads((tmp_path / "a" / "report.json").read_text())
    robustness.robustness([tiny], [4], out=tmp_path / "a", progress=False)
    newer = json.loads((tmp_path / "a" / "report.json").read_text())
    for report, when in ((older, "2026-12-04T11:18:01+00:00"), (newer, "2026-12-07T09:00:00+00:00")):
        report["made_at"] = report["chapters"]["ch97_tiny"]["made_at"] = when
    merged = robustness.merge(newer, older)  # the sweep's folder copied before its last seed, merged in late
    assert merged["made_at"] == merged["chapters"]["ch97_tiny"]["made_at"] == "2026-12-07T09:00:00+00:00"
    assert robustness.merge(older, newer)["chapters"]["ch97_tiny"]["made_at"] == "2026-12-07T09:00:00+00:00"
    assert sorted(merged["chapters"]["ch97_tiny"]["seeds"]) == ["0", "4"]
    changed = {**older, "chapters": {"ch97_tiny": {**older["chapters"]["ch97_tiny"], "digest": "other"}}}
    changed["chapters"]["ch97_tiny"]["seeds"] = newer["chapters"]["ch97_tiny"]["seeds"]  # new code on every seed
    assert robustness.merge(newer, changed)["chapters"]["ch97_tiny"]["made_at"] == "2026-12-04T11:18:01+00:00"


def _reported(claims: dict[str, tuple[list[int], dict[int, bool]]], ran: list[int], profile: str = "quick") -> dict:
    """A report by hand: per claim its validation seeds and its verdict per seed; one chapter that ran ``ran``."""
    seeds = {str(s): {"seconds": 1.0, "error": None, "ok": all(v.get(s, False) for _, v in claims.values()),
                      "claims": len(claims)} for s in ran}
    return robustness.tally({
        "profile": profile, "seeds": ran, "chapters": {"ch97_tiny": {"digest": "d", "seeds": seeds}},
        "claims": {cid: {"chapter": "ch97_tiny", "figure": "图0.2", "text": "t", "exploration": False,
                         "validation_seeds": validation,
                         "seeds": {str(s): {"passed": ok, "margin": 0.5 if ok else -0.5, "unit": "rel", "thin": False,
                                            "tightest": "x"} for s, ok in verdicts.items()}}
                   for cid, (validation, verdicts) in claims.items()}})


def test_a_claim_is_judged_on_its_validation_seeds_and_its_other_seeds_are_counted_apart():
    first, again = list(range(20)), list(range(500, 520))
    usual = {s: True for s in first + again}
    redone = {**{s: s != 3 for s in first}, **{s: s not in (501, 502) for s in again}}  # 19/20 in-sample, 18/20 after
    report = _reported({"ch97.usual": (first, usual), "ch97.redone": (again, redone)}, first + again)
    usual_entry, redone_entry = report["claims"]["ch97.usual"], report["claims"]["ch97.redone"]
    assert (usual_entry["passed"], usual_entry["runs"], usual_entry["other_seeds"]) == (20, 20, {"passed": 20, "runs": 20})
    assert (redone_entry["passed"], redone_entry["runs"]) == (18, 20) and not redone_entry["meets_standard"]
    assert redone_entry["other_seeds"] == {"passed": 19, "runs": 20}  # its in-sample seeds never validate it
    # a claim changed after 0-19 was seen is not validated until its chapter has run 500-519
    only_first = _reported({"ch97.redone": (again, {s: True for s in first})}, first)
    entry, chapter = only_first["claims"]["ch97.redone"], only_first["chapters"]["ch97_tiny"]
    assert (entry["runs"], entry["complete"], entry["meets_standard"], chapter["complete"]) == (0, False, False, False)
    assert "incomplete" in robustness.format_summary(only_first).splitlines()[1]
    # the usual claims are judged on the 0-19 seeds the report holds, as before
    few = _reported({"ch97.usual": (first, {0: True, 1: True, 2: True})}, [0, 1, 2])
    assert (few["claims"]["ch97.usual"]["runs"], few["claims"]["ch97.usual"]["meets_standard"]) == (3, True)


def test_the_full_profile_judges_a_claim_on_the_validation_seeds_it_ran_at_least_five():
    first, again = list(range(20)), list(range(500, 520))
    fresh = {**{s: s != 3 for s in range(5)}, **{s: True for s in range(500, 505)}}  # failed in-sample, holds after
    report = _reported({"ch97.usual": (first, {s: True for s in fresh}), "ch97.redone": (again, fresh)},
                       [0, 1, 2, 3, 4, 500, 501, 502, 503, 504], profile="full")
    usual, redone = report["claims"]["ch97.usual"], report["claims"]["ch97.redone"]
    assert (usual["passed"], usual["runs"], usual["complete"], usual["meets_standard"]) == (5, 5, True, True)
    assert (redone["passed"], redone["runs"], redone["complete"], redone["meets_standard"]) == (5, 5, True, True)
    assert redone["other_seeds"] == {"passed": 4, "runs": 5}  # seeds 0-4 were seen before it changed
    assert report["chapters"]["ch97_tiny"]["complete"]
    # one failure among them and it does not hold at the full profile (every measured seed)
    failing = _reported({"ch97.redone": (again, {**fresh, 502: False})}, [500, 501, 502, 503, 504], profile="full")
    assert (failing["claims"]["ch97.redone"]["passed"], failing["claims"]["ch97.redone"]["meets_standard"]) == (4, False)
    # fewer than five of its validation seeds, or none, and it is incomplete; its chapter, needing them, too
    for ran in ([0, 1, 2, 3, 4, 500, 501, 502], [0, 1, 2, 3, 4]):
        short = _reported({"ch97.redone": (again, fresh)}, ran, profile="full")
        assert not short["claims"]["ch97.redone"]["complete"] and not short["claims"]["ch97.redone"]["meets_standard"]
    # the quick profile still asks all of 500-519
    quick = _reported({"ch97.redone": (again, fresh)}, [0, 1, 2, 3, 4, 500, 501, 502, 503, 504])
    assert not quick["claims"]["ch97.redone"]["complete"]


def test_a_claim_not_yet_judged_names_the_seeds_it_waits_for():
    again = list(range(500, 520))
    fresh = {s: True for s in [*range(5), *range(500, 505)]}
    # the report holds 500-504 (another chapter ran them), this chapter only 0-4: it waits for 500-504
    report = _reported({"ch97.redone": (again, fresh)}, [0, 1, 2, 3, 4], profile="full")
    report["seeds"] = [0, 1, 2, 3, 4, 500, 501, 502, 503, 504]
    robustness.tally(report)
    assert robustness.unjudged_seeds(report["claims"]["ch97.redone"], report) == [500, 501, 502, 503, 504]
    # a report holding none of them: the first five of its validation seeds; part of them: the rest up to five
    report["seeds"] = [0, 1, 2, 3, 4]
    assert robustness.unjudged_seeds(report["claims"]["ch97.redone"], report) == [500, 501, 502, 503, 504]
    report["seeds"] = [0, 1, 2, 3, 4, 500, 501]
    report["chapters"]["ch97_tiny"]["seeds"].update({"500": {}, "501": {}})
    assert robustness.unjudged_seeds(report["claims"]["ch97.redone"], report) == [502, 503, 504]
    # the quick profile: every one of 500-519 it has not run
    quick = _reported({"ch97.redone": (again, fresh)}, [0, 1, 2, 3, 4, 500, 501, 502, 503, 504])
    assert robustness.unjudged_seeds(quick["claims"]["ch97.redone"], quick) == list(range(505, 520))


def test_a_chapter_of_explorations_only_is_complete_on_the_usual_seeds():
    report = _reported({"ch97.explored": (list(range(20)), {s: False for s in range(5)})}, [0, 1, 2, 3, 4],
                       profile="full")
    report["seeds"] = [0, 1, 2, 3, 4, 500, 501]  # another chapter of the report ran fresh seeds
    report["claims"]["ch97.explored"]["exploration"] = True
    robustness.tally(report)
    assert report["chapters"]["ch97_tiny"]["complete"]


def test_a_report_names_bad_validation_seeds():
    report = _reported({"ch97.usual": (list(range(20)), {0: True})}, [0])
    report["claims"]["ch97.usual"]["validation_seeds"] = [0, 0]
    assert "'validation_seeds' must list at least 20 distinct" in robustness.report_problem(report)


def test_restamp_drops_a_removed_claim_and_takes_the_new_words_of_the_others(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(robustness.catalog, "find", lambda name: tiny)
    extra = ('# %%\nBIG_SEED = ClaimSpec("ch97.big-seed", "图0.3", "the seed is big")\n'
             'show(BIG_SEED.judge(threshold("seed", SEED, ">", 3.5)))\n')
    tiny.source.write_text(TINY + extra)
    robustness.robustness([tiny], [4], jobs=1, out=tmp_path / "rep", progress=False)
    tiny.source.write_text(TINY.replace('"the seed is small"', '"the seed is small (reworded)"'))
    assert robustness.restamp([tiny], [4], out=tmp_path / "rep", progress=False) == {"ch97_tiny": []}
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert list(report["claims"]) == ["ch97.small-seed"]
    assert report["chapters"]["ch97_tiny"]["restamped"]["removed"] == ["ch97.big-seed"]
    assert report["claims"]["ch97.small-seed"]["text"] == "the seed is small (reworded)"
    assert robustness.stale_chapters(report) == []


def test_an_exploration_validated_on_other_seeds_holds_no_chapter_back():
    first, again = list(range(20)), list(range(500, 520))
    report = _reported({"ch97.usual": (first, {s: True for s in first}),
                        "ch97.explored": (again, {s: False for s in first})}, first)
    report["claims"]["ch97.explored"]["exploration"] = True
    robustness.tally(report)
    assert report["chapters"]["ch97_tiny"]["complete"] and not report["claims"]["ch97.explored"]["complete"]


def test_a_chapter_counts_its_runs_by_the_claims_kinds_of_now():
    first = list(range(20))
    report = _reported({"ch97.usual": (first, {s: True for s in first}),
                        "ch97.shaky": (first, {s: s not in (2, 11, 18) for s in first})}, first)
    chapter = report["chapters"]["ch97_tiny"]
    assert chapter["passed"] == 17 and not chapter["meets_standard"]
    report["claims"]["ch97.shaky"]["exploration"] = True  # what --restamp does when the claim became an exploration
    robustness.tally(report)
    assert chapter["passed"] == 20 and chapter["meets_standard"]
    report["claims"]["ch97.shaky"]["exploration"] = False  # and back: its failures count again
    robustness.tally(report)
    assert chapter["passed"] == 17 and not chapter["seeds"]["2"]["ok"]



def test_the_full_profile_has_a_report_of_its_own_and_merges_only_with_its_own(tiny, tmp_path):
    robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    full = robustness.robustness([tiny], [4], out=tmp_path / "rep", profile="full", progress=False)
    assert full["profile"] == "full" and (tmp_path / "rep" / "report-full.json").exists()
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["seeds"] == [0]  # the quick one untouched
    robustness.robustness([tiny], [0], out=tmp_path / "window", profile="full", progress=False)  # cached: no kernel
    merged = robustness.merge_reports([tmp_path / "window"], tmp_path / "rep", profile="full")
    assert merged["seeds"] == [0, 4] and merged["claims"]["ch97.small-seed"]["passed"] == 1
    with pytest.raises(ConfigError, match="profile must be one of quick, full"):
        robustness.report_path(tmp_path, "fast")
    assert main(["robustness", "--chapters", "ch04", "--profile", "fast"]) == 2


def test_a_budget_starts_no_run_after_it_and_the_report_is_written_after_each_run(tiny, tmp_path, monkeypatch):
    written, real = [], robustness.write_report
    monkeypatch.setattr(robustness, "write_report", lambda file, report: (written.append(sorted(
        report["chapters"]["ch97_tiny"]["seeds"])), real(file, report)))
    report = robustness.robustness([tiny], [0, 2, 4], out=tmp_path / "rep", profile="full", budget=0.01,
                                   progress=False)
    assert written and all(w == ["0"] for w in written)  # the first run started at once, none after the budget;
    assert len(written) == 2  # written after that run, as it came, and at the end
    chapter = report["chapters"]["ch97_tiny"]
    assert list(chapter["seeds"]) == ["0"] and not chapter["complete"] and not robustness.meets_standard(report)
    with pytest.raises(ConfigError, match="no run finished within the budget"):
        robustness.robustness([tiny], [8], out=tmp_path / "rep", profile="full", budget=1e-9, progress=False)


def test_missing_runs_only_the_runs_the_report_lacks_for_the_current_code(tiny, tmp_path, monkeypatch):
    robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "fresh-cache"))  # a new machine: nothing cached
    ran, real = [], robustness.run_chapter
    monkeypatch.setattr(robustness, "run_chapter", lambda source, out, **kw: (ran.append(kw["seed"]),
                                                                               real(source, out, **kw))[1])
    report = robustness.robustness([tiny], [0, 4], out=tmp_path / "rep", missing=True, progress=False)
    assert ran == [4] and sorted(report["chapters"]["ch97_tiny"]["seeds"], key=int) == ["0", "4"]
    assert robustness.robustness([tiny], [4], out=tmp_path / "rep", missing=True, progress=False) == report
    assert ran == [4]  # everything asked for is there: nothing runs, the report stays
    tiny.source.write_text(TINY.replace("3.5", "10.5"))  # new code: the old runs no longer count
    robustness.robustness([tiny], [0, 4], out=tmp_path / "rep", missing=True, progress=False)
    assert sorted(ran) == [0, 4, 4]


@pytest.mark.parametrize("value, words", [("x", "--budget must be a number of seconds, got 'x'"),
                                          ("0", "--budget must lie between 1 and 86400 seconds"),
                                          ("nan", "--budget must lie between 1 and 86400 seconds")])
def test_a_bad_budget_is_one_line_naming_it(value, words, capsys):
    assert main(["robustness", "--chapters", "ch04", "--budget", value]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1


def test_a_budget_sweep_adds_a_changed_chapter_only_once_it_covers_the_reports_seeds(tiny, tmp_path, monkeypatch):
    robustness.robustness([tiny], [0, 4], out=tmp_path / "rep", progress=False)
    tiny.source.write_text(TINY.replace("3.5", "4.5"))  # the code changed: its two old seeds must not be lost
    written, real = [], robustness.write_report
    monkeypatch.setattr(robustness, "write_report", lambda file, report: (written.append(sorted(
        report["chapters"]["ch97_tiny"]["seeds"], key=int)), real(file, report)))
    report = robustness.robustness([tiny], [0, 4], out=tmp_path / "rep", budget=3600, progress=False)
    assert written == [["0", "4"], ["0", "4"]]  # nothing written after the first run; then both, new code
    assert report["chapters"]["ch97_tiny"]["digest"] == robustness.chapter_digest(tiny)
    assert report["claims"]["ch97.small-seed"]["seeds"]["4"]["passed"]  # 4 < 4.5 now


def test_a_kernel_without_the_companion_is_not_a_result_and_not_cached(tiny, tmp_path, monkeypatch):
    # A broken install makes every chapter fail in its first cell: that measures the machine, not the code, so it
    # must neither be cached (a later sweep would read the failure back) nor enter the report.
    real = robustness.run_chapter
    monkeypatch.setattr(robustness, "run_chapter", lambda source, out, **kw: ChapterRun(
        slug=source.stem, seconds=1.0, error="ModuleNotFoundError: No module named 'companion'"))
    with pytest.raises(CompanionNotImportable, match="cannot import the companion.*pip install -e"):
        robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    assert not (tmp_path / "rep" / "report.json").exists()
    ran = []
    monkeypatch.setattr(robustness, "run_chapter", lambda source, out, **kw: (ran.append(kw["seed"]),
                                                                               real(source, out, **kw))[1])
    report = robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    assert ran == [0] and report["chapters"]["ch97_tiny"]["seeds"]["0"]["error"] is None


def test_an_install_cell_that_raises_is_not_a_result_and_not_cached(tiny, tmp_path):
    # The install cell (tagged launch-install) runs only where the kernel cannot import the companion; when its
    # `pip install` fails (two kernels installing at once did), that is the machine's state, not the chapter's result:
    # a sweep cached it as the chapter's error before, and every later sweep read the failure back.
    tiny.source.write_text('# %% tags=["launch-install"]\nraise RuntimeError("pip install -e failed")\n\n' + TINY)
    with pytest.raises(CompanionNotImportable, match="cannot import the companion.*pip install -e failed"):
        robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    assert not (tmp_path / "rep" / "report.json").exists()
    tiny.source.write_text(TINY)  # installed now; the install cell is outside the digest, so this is the same code
    report = robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    assert report["chapters"]["ch97_tiny"]["seeds"]["0"]["error"] is None


def test_an_error_in_another_cell_is_a_result(tiny, tmp_path):
    # Negative control of the test above: the same error raised by a chapter's own cell is what its code does.
    tiny.source.write_text('# %%\nraise RuntimeError("pip install -e failed")\n\n' + TINY)
    report = robustness.robustness([tiny], [0], out=tmp_path / "rep", progress=False)
    assert report["chapters"]["ch97_tiny"]["seeds"]["0"]["error"].startswith("RuntimeError: pip install -e failed")
