"""Each figure's fidelity is computed from the catalog, the claims in the code, the reports and the controls."""

from __future__ import annotations

import json

import pytest

from companion.tools import catalog, cli, fidelity

FIG = catalog.Figure("图4.7", "ch04", catalog.COMP, catalog.CLAIM, "caption", claims=("ch04.fp-order",))
CLAIMS = {"ch04.fp-order": ("图4.7", "phenomenon"), "ch04.rank": ("图4.7", "identity")}
CONTRAST = {"test_control_ch04_fp_order": "large initialisation"}


def report(passed: int, runs: int = 20, meets: bool | None = None) -> dict:
    meets = passed >= 19 if meets is None else meets
    return {"seeds": list(range(runs)), "claims": {"ch04.fp-order": {"passed": passed, "runs": runs, "meets_standard": meets}}}


def waiting(ran: tuple[int, ...]) -> dict:
    """A full-profile report whose claim, changed after its seeds 0–19 were seen, is judged on 500–504, of which its
    chapter has run ``ran`` (each passed) beside the in-sample 0–4."""
    chapter_seeds = [*map(str, range(5)), *map(str, ran)]
    entry = {"chapter": "ch04_frequency_principle", "validation_seeds": list(range(500, 520)), "meets_standard": False,
             "complete": False, "passed": len(ran), "runs": len(ran),
             "seeds": {s: {"passed": True, "margin": 0.1, "unit": "rel"} for s in chapter_seeds}}
    return {"profile": "full", "seeds": [*range(5), *range(500, 505)], "claims": {"ch04.fp-order": entry},
            "chapters": {"ch04_frequency_principle": {"seeds": chapter_seeds}}}


def judged(figure: catalog.Figure = FIG, quick: dict | None = None, full: dict | None = None,
           controls: dict | None = None) -> fidelity.FigureFidelity:
    return fidelity.figure_fidelity(figure, {"quick": report(20) if quick is None else quick, "full": full}, CLAIMS,
                                    CONTRAST if controls is None else controls)


def test_a_robust_phenomenon_claim_with_a_contrast_control_makes_a_figure_faithful() -> None:
    item = judged()
    assert (item.fidelity, item.claims, item.why) == ("faithful", ("ch04.fp-order",), "")


@pytest.mark.parametrize("change, fidelity_, why", [
    (dict(controls={}), "partial", "negative control is not a run of the setting the book contrasts"),
    (dict(quick=report(18)), "partial", "below the standard in the quick profile (18/20)"),
    (dict(quick=report(18), full=report(5, runs=5, meets=True)), "faithful-full", "only at the full profile (5 seeds)"),
    (dict(quick={"seeds": list(range(20)), "claims": {}},
          full={"seeds": list(range(5)), "claims": {"ch04.fp-order": {
              "passed": 5, "runs": 5, "meets_standard": False, "median_margin": {"margin": 0.0, "unit": "rel"}}}}),
     "partial", "judged at the full profile only, and below the standard there (5/5, median margin +0 rel)"),
    (dict(quick={"seeds": list(range(20)), "claims": {}}), "partial", "in neither robustness report yet"),
    (dict(quick={"seeds": list(range(20)), "claims": {}}, full=waiting(ran=())), "partial",
     "judged at the full profile only, on seeds 500-504, which have not run yet"),
    (dict(quick={"seeds": list(range(20)), "claims": {}}, full=waiting(ran=(500, 501))), "partial",
     "judged at the full profile only, where seeds 502-504 have not run yet (2 of 2 passed so far)"),
    (dict(figure=catalog.Figure("图4.7", "ch04", catalog.COMP, catalog.CLAIM, "c", claims=("ch04.fp-order",),
                                unchecked="panel (b) is not checked")), "partial", "panel (b) is not checked"),
    (dict(figure=catalog.Figure("图4.7", "ch04", catalog.COMP, catalog.CLAIM, "c", claims=("ch04.rank",))),
     "partial", "`ch04.rank` is not a phenomenon claim (identity)"),
    (dict(figure=catalog.Figure("图4.7", "ch04", catalog.COMP, catalog.SHOWN, "c")), "drawn", "no phenomenon claim"),
    (dict(figure=catalog.Figure("图4.7", "ch04", catalog.COMP, catalog.GPU, "c", "needs ImageNet")), "gpu", "ImageNet"),
    (dict(figure=catalog.Figure("图4.7", "ch04", catalog.ILLUS, catalog.ILLUS, "c")), "illustrative", ""),
])
def test_what_keeps_a_figure_from_being_faithful_is_named(change, fidelity_, why) -> None:
    item = judged(**change)
    assert item.fidelity == fidelity_ and why in item.why


def test_a_figure_printed_twice_counts_once() -> None:
    items = fidelity.fidelities()
    twice = {i.figure: i for i in items if i.figure in ("图5.3", "图15.2")}
    assert twice["图15.2"].same_as == "图5.3" and twice["图5.3"].same_as is None
    total = fidelity.counts(items)
    assert total.cpu_feasible == fidelity.counts([i for i in items if i.figure != "图15.2"]).cpu_feasible


def test_coverage_json_prints_every_figure_with_its_computed_fidelity(capsys) -> None:
    assert cli.main(["coverage", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert [i["figure"] for i in items] == [f.id for f in catalog.FIGURES]
    assert all(i["fidelity"] in fidelity.FIDELITIES and set(i) >= {"figure", "chapter", "kind", "claims", "why"}
               for i in items)
    faithful = [i for i in items if i["fidelity"] == "faithful"]
    assert faithful and all(i["claims"] and not i["why"] for i in faithful)


def test_every_claim_the_catalog_names_is_a_phenomenon_claim_that_names_its_figure() -> None:
    claims = fidelity.declarations()
    for f in catalog.FIGURES:
        for cid in f.claims:
            assert cid in claims, f"{f.id} names {cid}, which no code declares"
            label, kind = claims[cid]
            assert kind == "phenomenon", f"{f.id} names {cid}, a {kind}: only phenomenon claims test a figure"
            assert f.named_by(label), f"{f.id} names {cid}, whose label {label!r} is about another figure"


def test_the_contrast_controls_are_found_in_the_tests() -> None:
    controls = fidelity.contrast_controls()
    assert all(name.startswith("test_control_") and setting for name, setting in controls.items())


def test_a_figure_whose_report_rows_predate_the_code_is_flagged() -> None:
    quick = {"seeds": list(range(20)), "claims": {"ch04.fp-order": {"chapter": "ch04_frequency_principle", "passed": 20,
                                                                     "runs": 20, "meets_standard": True}}}
    fresh = fidelity.figure_fidelity(FIG, {"quick": quick, "full": None}, CLAIMS, CONTRAST)
    stale = fidelity.figure_fidelity(FIG, {"quick": quick, "full": None}, CLAIMS, CONTRAST,
                                     stale=frozenset({"ch04_frequency_principle"}))
    assert (fresh.stale, fresh.record()["report_stale"]) == (False, False)
    assert (stale.fidelity, stale.stale, stale.record()["report_stale"]) == ("faithful", True, True)
    report = {"chapters": {"ch04_frequency_principle": {"digest": "not the code's"}}}
    assert fidelity.stale_report_chapters(report) == {"ch04_frequency_principle"}


def test_a_coverage_note_is_closed_as_a_sentence_before_what_is_not_yet_faithful():
    assert fidelity.sentence("§3, the quick run is an analogue") == "§3, the quick run is an analogue."
    assert fidelity.sentence("§2 (ch13.a)") == "§2 (ch13.a)."
    assert [fidelity.sentence(n) for n in ("§3", "ends.", "")] == ["§3", "ends.", ""]
    assert fidelity.sentence("第3节，快速配置的实验是类比实验", "zh") == "第3节，快速配置的实验是类比实验。"
    assert fidelity.sentence("是类比实验。", "zh") == "是类比实验。"
