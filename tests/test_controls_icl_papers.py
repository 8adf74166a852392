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


@pytest.fixture(scope="module")
def copying() -> papers.CopyResult:
    """The notebook's copying configuration, plain and with b·I, on one design seed."""
    return papers.run_copy(papers.CopyConfig(seed=SEED))


@pytest.mark.contrast("the network with b·I added to W_V W_Oᵀ (Boix-Adserà Thm 4.2)")
def test_control_chicl_boix_copy_width(copying):
    v = papers.check_copy_width(copying, variant="transformer + b·I")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the plain network, without b·I (Boix-Adserà Thm 4.1)")
def test_control_chicl_boix_copy_vo_identity(copying):
    v = papers.check_copy_vo_identity(copying, variant="transformer")
    assert not v.passed, v.measured_line()


def test_copy_positive_twins(copying):
    for verdict in (papers.check_copy_width(copying), papers.check_copy_vo_identity(copying)):
        assert verdict.passed, verdict.measured_line()


def test_the_copying_network_has_no_position_vector_and_a_tied_readout():
    """logits = Attn(X) W^emᵀ with one token: the softmax is 1, so a head is x W_V W^attn (+ b x), read by W^em."""
    import torch

    from companion.core.transformer import TransformerConfig

    cfg = TransformerConfig(vocab_size=10, max_len=1, d_model=8, n_layers=1, n_heads=2, d_ff=0, norm="none",
                            causal=False)
    net = papers.SymbolTransformer(cfg, n_members=1, generator=torch.Generator().manual_seed(0), vo_identity=True,
                                   attention_only=True, identity_init=0.3)
    x = torch.arange(10)[:, None]
    e, layer = net.w_em[0], net.layers[0]
    expected = (e @ layer.w_v[0] @ layer.w_attn[0] + 2 * 0.3 * e) @ e.T  # two heads, each adding b·x
    assert torch.allclose(net(x)[0, :, 0], expected, atol=1e-5)
    assert not net.x_pos.requires_grad and float(net.x_pos.abs().max()) == 0.0
