"""Claims: conditions, margins, never-happened values, the verdict and measured lines, the log."""

import json
import math

import numpy as np
import pytest

from companion.kit.claims import (FAIL_MARK, PASS_MARK, ClaimSpec, compare, count, identity, read_log, show,
                              threshold)

ORDER = ClaimSpec("ch99.order", "图4.7", "low before high")
EXPLORE = ClaimSpec("ch99.explore", "图8.16", "an exploration", kind="exploration")


def test_passing_claim_prints_stable_verdict_and_measured_line_with_margin(capsys):
    show(ORDER.judge(compare("t1", np.int64(20), "<", "t3", np.float64(800.123456)), extra=3))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{PASS_MARK} [图4.7] low before high"
    assert out[1] == "  measured: t1=20 < t3=800.1; extra=3 | margin +0.975 rel (t1)"


def test_failing_claim_prints_a_red_verdict_and_does_not_raise(capsys):
    v = ORDER.judge(compare("t1", 30.0, "<", "t3", 20.0))
    show(v)                                   # no exception: the notebook goes on
    out = capsys.readouterr().out
    assert not v.passed and FAIL_MARK in out and "\033[31m" in out and "✘" in out.splitlines()[1]


@pytest.mark.parametrize("condition, passed, margin, unit", [
    (threshold("acc", 0.99, ">=", 0.9), True, 0.1, "rel"),              # (v − b)/|b|
    (threshold("err", 0.5, "<", 0.4), False, -0.25, "rel"),
    (threshold("S_w", -0.3, "<", 0.0, spread=0.1), True, 3.0, "sd"),      # threshold 0: in spreads
    (compare("a", 1.0, "<", "b", 4.0), True, 0.75, "rel"),               # of the larger magnitude
    (compare("a", 1.0, "<", "b", 4.0, spread=0.5), True, 6.0, "sd"),
    (identity("‖A−B‖/‖B‖", 1e-8, 1e-6), True, 0.99, "rel"),              # 1 − err/tol
    (count("directions", 3, "<=", 4), True, 1.0, "count"),
    (count("directions", 5, "<=", 4), False, -1.0, "count"),
    (threshold("x", 1.0, ">=", 1.0), True, 0.0, "rel"),                  # non-strict at the bound
    (threshold("x", 1.0, ">", 1.0), False, 0.0, "rel"),                  # strict at the bound
])
def test_condition_margins(condition, passed, margin, unit):
    assert condition.passed is passed
    assert condition.unit == unit
    assert condition.margin == pytest.approx(margin)


def test_never_happened_is_not_a_number_that_passes():
    never = float("nan")
    assert not compare("t3", 100.0, "<", "t5", never).passed                 # default: never fails
    assert compare("t3", 100.0, "<", "t5", never, never="pass").passed       # only where the book implies it
    assert math.isinf(compare("t3", 100.0, "<", "t5", never).margin)
    with pytest.raises(ValueError, match="infinite"):
        compare("t3", 100.0, "<", "t5", float("inf"))                        # inf is never a measured value
    v = ORDER.judge(compare("t1", 10.0, "<", "t3", never))
    assert not v.passed and "t3=never" in v.measured_line() and "margin never" in v.measured_line()


def test_the_tightest_condition_sets_the_margin_across_units():
    v = ORDER.judge(threshold("acc", 0.99, ">=", 0.9),                       # 0.1 rel = 2 thin lines
                    count("n", 3, "<=", 4),                                  # 1 count = 1 thin line
                    threshold("S_w", -0.3, "<", 0.0, spread=0.1))            # 3 sd = 6 thin lines
    assert v.tightest.lhs == "n" and v.margin == 1.0 and not v.thin
    thin = ORDER.judge(threshold("acc", 0.91, ">=", 0.9))                    # 1.1 % over the threshold
    assert thin.passed and thin.thin


def test_bad_conditions_name_the_bad_value():
    with pytest.raises(ValueError, match="spread"):
        threshold("S_w", -0.3, "<", 0.0)                   # a 0 threshold needs the quantity's spread
    with pytest.raises(ValueError, match="operator"):
        threshold("x", 1.0, "=>", 0.5)
    with pytest.raises(TypeError, match="number"):
        threshold("x", np.array([1.0, 2.0]), "<", 3.0)
    with pytest.raises(ValueError, match="whole number"):
        count("n", 2.5, "<=", 3)
    with pytest.raises(ValueError, match="chNN"):
        ClaimSpec("order", "图4.7", "no chapter in the id")
    with pytest.raises(ValueError, match="declared twice"):
        ClaimSpec("ch99.order", "图4.7", "another sentence under the same id")
    with pytest.raises(ValueError, match="at least one condition"):
        ORDER.judge()


def test_an_exploration_prints_no_verdict_but_its_outcome(capsys):
    show(EXPLORE.judge(threshold("share", 0.2, ">=", 0.5)))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "◇ EXPLORATION (not a claim) [图8.16] an exploration"
    assert out[1].endswith("this run: does not hold") and "\033[31m" not in out[0]


def test_claims_are_logged(tmp_path, monkeypatch):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("COMPANION_CLAIMS_LOG", str(log))
    monkeypatch.setenv("COMPANION_CHAPTER", "ch99_test")
    show(ORDER.judge(compare("t1", 1.0, "<", "t3", 2.0), steps=np.array([1, 2]), ratio=float("inf")))
    show(ORDER.judge(compare("t1", 1.0, "<", "t3", float("nan"))))
    records = read_log(log)
    assert [(c.id, c.passed, c.chapter) for c in records] == [("ch99.order", True, "ch99_test"),
                                                             ("ch99.order", False, "ch99_test")]
    assert records[0].margin == pytest.approx(0.5) and records[1].margin is None
    first = json.loads(log.read_text().splitlines()[0])
    assert first["measured"] == {"steps": [1, 2], "ratio": "inf"}
    assert first["conditions"][0]["lhs"] == "t1" and first["tightest"] == "t1"


RANK = ClaimSpec("ch99.rank-formula", "(10.14)", "the rank equals the formula", kind="identity")


def test_an_identity_prints_its_own_mark_and_is_not_a_reproduction(capsys, tmp_path, monkeypatch):
    """An identity checks the mathematics: ✔ IDENTITY HOLDS, never ✔ CLAIM HOLDS; a failing one is red (a bug) and is
    judged (it fails the run), but it counts as no reproduced phenomenon."""
    from companion.kit.claims import IDENTITY_FAIL_MARK, IDENTITY_PASS_MARK, VERDICT_LINE

    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("COMPANION_CLAIMS_LOG", str(log))
    show(RANK.judge(identity("rank error", 0.0, 1e-9)))
    show(RANK.judge(identity("rank error", 1.0, 1e-9)))
    show(ORDER.judge(compare("t1", 1.0, "<", "t3", 2.0)))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{IDENTITY_PASS_MARK} [(10.14)] the rank equals the formula"
    assert out[2] == f"\033[31m{IDENTITY_FAIL_MARK} [(10.14)] the rank equals the formula\033[0m"
    assert VERDICT_LINE.match(out[0])["mark"] == IDENTITY_PASS_MARK
    held, failed, phenomenon = read_log(log)
    assert (held.kind, held.identity, held.judged, held.reproduces) == ("identity", True, True, False)
    assert failed.judged and not failed.passed
    assert (phenomenon.kind, phenomenon.reproduces) == ("phenomenon", True)


def test_a_claim_kind_must_be_known_and_old_logs_read_as_before(tmp_path):
    with pytest.raises(ValueError, match="kind='theorem'; choose one of phenomenon, identity, exploration"):
        ClaimSpec("ch99.bad-kind", "图4.7", "x", kind="theorem")
    record = ORDER.judge(compare("t1", 1.0, "<", "t3", 2.0)).record("ch99")
    old = {k: v for k, v in record.items() if k != "kind"} | {"exploration": True}
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
    assert read_log(tmp_path / "old.jsonl")[0].kind == "exploration"


def test_declared_claims_are_read_from_the_code_without_running_it():
    import ast

    from companion.kit.claims import declared_claims

    tree = ast.parse('A = ClaimSpec("ch99.a", "图4.7", "x")\nB = claims.ClaimSpec("ch99.b", "(8.5)", "y", kind="identity")\n'
                     'C = ClaimSpec(name, "图1.1", "z")\n')
    assert declared_claims(tree) == [("ch99.a", "图4.7", "phenomenon"), ("ch99.b", "(8.5)", "identity")]


def test_a_claim_names_the_seeds_that_validate_it(tmp_path):
    from companion.kit.claims import REVALIDATION_SEEDS, VALIDATION_SEEDS

    assert ORDER.validation_seeds == VALIDATION_SEEDS == tuple(range(20))
    redone = ClaimSpec("ch99.redone", "图4.7", "changed after seeds 0-19 were seen", validation_seeds=REVALIDATION_SEEDS)
    record = redone.judge(compare("t1", 1.0, "<", "t3", 2.0)).record("ch99")
    assert record["validation_seeds"] == list(range(500, 520))
    (tmp_path / "log.jsonl").write_text(json.dumps(record) + "\n")
    assert read_log(tmp_path / "log.jsonl")[0].validation_seeds == list(range(500, 520))
    for bad in (range(5), [1] * 20, [-1, *range(19)]):
        with pytest.raises(ValueError, match="validation_seeds=.*at least 20 distinct seeds ≥ 0"):
            ClaimSpec("ch99.few-seeds", "图4.7", "x", validation_seeds=bad)
