import json

import numpy as np
import pytest

from companion.claims import ClaimFailed, claim, read_log


def test_passing_claim_prints_stable_verdict_and_measured_line(capsys):
    claim("图4.7", "low before high", passed=np.bool_(True), t1=20, t3=np.float64(800.123456))
    out = capsys.readouterr().out.splitlines()
    assert out == ["✔ CLAIM HOLDS [图4.7] low before high", "  measured: t1=20, t3=800.1"]


def test_false_claim_raises():
    with pytest.raises(ClaimFailed, match="CLAIM FAILS"):
        claim("图4.7", "high before low", passed=False, t1=1)


def test_claim_requires_a_bool():
    with pytest.raises(TypeError, match="bool"):
        claim("x", "y", passed=np.array([True, False]))


def test_claims_are_logged(tmp_path, monkeypatch):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("COMPANION_CLAIMS_LOG", str(log))
    monkeypatch.setenv("COMPANION_CHAPTER", "ch04")
    claim("图4.12", "U-shaped", passed=True, steps=np.array([1, 2]), ratio=float("inf"))
    with pytest.raises(ClaimFailed):
        claim("图4.13", "chance", passed=False)
    records = read_log(log)
    assert [(c.figure, c.passed, c.chapter) for c in records] == [("图4.12", True, "ch04"), ("图4.13", False, "ch04")]
    assert json.loads(log.read_text().splitlines()[0])["measured"] == {"steps": [1, 2], "ratio": "inf"}
