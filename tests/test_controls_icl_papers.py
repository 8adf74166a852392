"""Negative controls of the papers' notebook (chapters/icl_papers.py; see tests/test_claim_controls.py).

Each control runs a claim's own check on a real run of the setting its paper contrasts it with, and asserts that the
check fails: for Boix-Adserà et al.'s template tasks, the fully connected network against the transformer (their
Appendix I), the transformer against the network, and the plain transformer at the same sample size against the one
with a·I (their Observation 1.2).  The notebook's own run (the same configuration) is the positive twin.
"""

from __future__ import annotations

import pytest

from companion.experiments import icl_papers as papers

SEED = 100  # a design seed


@pytest.fixture(scope="module")
def template() -> papers.TemplateResult:
    """The notebook's template-task configuration, all three variants, on one design seed."""
    return papers.run_template(papers.TemplateConfig(seed=SEED))


@pytest.mark.contrast("a fully connected network instead of the transformer (Boix-Adserà App. I)")
def test_control_chicl_boix_transformer_ood(template):
    v = papers.check_transformer_ood(template, variant="MLP")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the transformer instead of the fully connected network (Boix-Adserà Fig. 2)")
def test_control_chicl_boix_mlp_chance(template):
    v = papers.check_mlp_chance(template, variant="transformer")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the plain transformer, without a·I, at the same sample size (Boix-Adserà Obs. 1.2)")
def test_control_chicl_boix_kq_identity(template):
    v = papers.check_kq_identity(template, variant="transformer")
    assert not v.passed, v.measured_line()


def test_template_positive_twins(template):
    """On the same run the three claims hold for the variants they are about."""
    for verdict in (papers.check_transformer_ood(template), papers.check_mlp_chance(template),
                    papers.check_kq_identity(template)):
        assert verdict.passed, verdict.measured_line()


def test_template_samples_fill_the_templates_with_distinct_symbols():
    import numpy as np

    from companion.kit.seeds import numpy_rng

    x, y = papers.template_samples("variable assignment", 200, np.arange(10, 20), numpy_rng(0))
    assert x.shape == (200, 3) and set(y.tolist()) == {0, 1}
    assert ((x >= 10) & (x < 20)).all() and (x[:, 0] != x[:, 1]).all()
    assert ((x[:, 2] == x[:, 0]) == (y == 1)).all() and ((x[:, 2] == x[:, 1]) == (y == 0)).all()


def test_kq_and_vo_identities_enter_only_where_switched_on():
    """a·I adds a·x_i·x_j to the scores and b·I adds b·attn X to a head's output, for flagged members only."""
    import torch

    from companion.core.transformer import TransformerConfig

    cfg = TransformerConfig(vocab_size=12, max_len=3, d_model=8, n_layers=1, n_heads=2, d_ff=0, d_out=2, norm="none",
                            causal=False)
    plain = papers.SymbolTransformer(cfg, n_members=2, generator=torch.Generator().manual_seed(0),
                                     kq_identity=[False, True], vo_identity=[False, True], identity_init=0.7)
    x = torch.randint(12, (5, 3), generator=torch.Generator().manual_seed(1))
    out = plain(x)
    with torch.no_grad():
        plain.a.zero_(), plain.b.zero_()
    base = plain(x)
    assert torch.equal(out[0], base[0])          # member 0: the flags are off, a and b change nothing
    assert not torch.allclose(out[1], base[1])   # member 1: they enter
