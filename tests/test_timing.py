"""The notebooks' times that the README and the landing page state come from the quiet measurement
(``benchmarks/reproduce_timing.py`` → ``benchmarks/reproduce_timing.json``, :mod:`companion.tools.timing`), never prose."""

from __future__ import annotations

import re

import pytest

from companion.tools import catalog, fidelity, timing

#: Hand-written time statements that the measured chapter map replaced (issue #43, item 9).
PROSE_TIMES = re.compile(r"(?:under|about|in) (?:a|one|two) minutes?|in under two|不到[一两]分钟|约一分钟|一分钟内")


def test_the_measurement_round_trips(tmp_path) -> None:
    path = timing.write_quiet_times({"ch04_frequency_principle": (41.26, 40.04)}, tmp_path / "t.json")
    times = timing.read_quiet_times(path)
    assert times.wall == {"ch04_frequency_principle": 41.3} and times.cpu == {"ch04_frequency_principle": 40.0}
    assert times.machine and times.torch and re.fullmatch(r"\d{4}-\d\d-\d\d", times.measured_at)


def test_a_notebook_over_its_budget_is_flagged() -> None:
    times = timing.QuietTimes({"ch04_frequency_principle": 61.0, "ch05_multiscale_networks": 59.4,
                               "ch13_complexity_control": 119.0, "icl_papers": 121.0}, {}, "2026-11-29", "abc",
                              "x86_64", "2")
    assert timing.time_cell("ch04_frequency_principle", times) == "61 s (over its 60 s budget)"
    assert timing.time_cell("ch05_multiscale_networks", times) == "59 s"
    assert timing.time_cell("ch13_complexity_control", times) == "119 s"
    assert timing.time_cell("icl_papers", times) == "121 s (over its 120 s budget)"
    assert timing.time_cell("ch06_frequency_mechanism", times) == "—"
    assert "（超出 60 s 预算）" in timing.time_cell("ch04_frequency_principle", times, "zh")


def test_the_chapter_map_states_every_notebooks_measured_time() -> None:
    times = timing.read_quiet_times()
    assert times is not None, "no quiet measurement: run python benchmarks/reproduce_timing.py --cold-only"
    unmeasured = [c.slug for c in catalog.available() if c.slug not in times.wall]
    assert not unmeasured, f"not measured quietly: {unmeasured} (python benchmarks/reproduce_timing.py --cold-only)"
    table = fidelity.chapter_map_markdown()
    for chapter in catalog.available():
        row = next(r for r in table.splitlines() if r.startswith(f"| `{chapter.slug}` |"))
        assert row.rstrip(" |").split("| ")[-1].startswith(f"{times.wall[chapter.slug]:.0f} s"), row
    assert f"commit `{times.commit}`" in table and times.machine in table


@pytest.mark.parametrize("page", ["README.md", "book/intro.md", "book/zh/intro.md"])
def test_no_page_states_a_notebooks_time_of_its_own(page) -> None:
    found = PROSE_TIMES.findall((catalog.ROOT / page).read_text(encoding="utf-8"))
    assert not found, f"{page} states times in prose ({found}): the chapter map gives the measured ones"


def test_measuring_some_notebooks_again_keeps_the_others_and_names_its_commit(tmp_path, monkeypatch) -> None:
    from companion.tools import robustness

    path = tmp_path / "t.json"
    every = {c.slug: (30.0, 29.0) for c in catalog.available()}
    monkeypatch.setattr(robustness, "git_commit", lambda: "aaa")
    timing.write_quiet_times(every, path)
    monkeypatch.setattr(robustness, "git_commit", lambda: "bbb")
    timing.write_quiet_times({"icl_papers": (41.0, 40.0)}, path)
    times = timing.read_quiet_times(path)
    assert times.commit == "aaa" and times.wall["icl_papers"] == 41.0 and times.wall["ch04_frequency_principle"] == 30.0
    assert times.remeasured() == {"bbb": ["icl_papers"]}
    assert "`icl_papers` measured again at commit `bbb`." in timing.times_sentence(times)
    monkeypatch.setattr(robustness, "machine_words", lambda: "another machine")
    with pytest.raises(ValueError, match="measure every notebook here"):
        timing.write_quiet_times({"icl_papers": (41.0, 40.0)}, path)


def test_the_reference_computation_measures_the_machine() -> None:
    seconds = timing.reference_seconds(repeats=1)
    assert 0.05 < seconds < 30


def test_measuring_some_notebooks_again_on_a_machine_running_at_another_speed_is_refused(tmp_path, monkeypatch) -> None:
    from companion.tools import robustness

    path = tmp_path / "t.json"
    slugs = [c.slug for c in catalog.available()]
    monkeypatch.setattr(robustness, "git_commit", lambda: "aaa")
    timing.write_quiet_times({s: (30.0, 29.0) for s in slugs}, path, reference={s: 1.5 for s in slugs})
    times = timing.read_quiet_times(path)
    assert times.reference_median() == 1.5
    assert "took 1.50 s" in timing.times_sentence(times) and "1.50 s" in timing.times_sentence(times, "zh")
    monkeypatch.setattr(robustness, "git_commit", lambda: "bbb")
    timing.write_quiet_times({"icl_papers": (33.0, 32.0)}, path, reference={"icl_papers": 1.6})  # within 1.2×
    assert timing.read_quiet_times(path).reference["icl_papers"] == 1.6
    with pytest.raises(ValueError, match="another speed"):
        timing.write_quiet_times({"icl_papers": (60.0, 59.0)}, path, reference={"icl_papers": 3.0})
    assert timing.read_quiet_times(path).wall["icl_papers"] == 33.0  # nothing written
    without = tmp_path / "old.json"
    timing.write_quiet_times({s: (30.0, 29.0) for s in slugs}, without)  # a measurement that did not record its speed
    with pytest.raises(ValueError, match="do not say the machine's speed"):
        timing.write_quiet_times({"icl_papers": (30.0, 29.0)}, without, reference={"icl_papers": 1.5})


def test_the_committed_measurement_says_the_machines_speed_for_every_notebook() -> None:
    times = timing.read_quiet_times()
    assert set(times.reference) == set(times.wall), "measure again: python benchmarks/reproduce_timing.py --cold-only"
