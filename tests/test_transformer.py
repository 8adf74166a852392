"""Unit tests of companion.core.transformer: shapes, causality, γ-initialisation, masking, ensembles, AdamW."""

import math

import numpy as np
import pytest
import torch

from companion.core.train import History
from companion.core.transformer import (MemberAdamW, Transformer, TransformerConfig, fit_last_token,
                                        last_token_accuracy, lr_factor)

CFG = TransformerConfig(vocab_size=30, max_len=7, d_model=16, n_layers=2, n_heads=2, d_ff=32)


def tokens(n=5, t=7, seed=0):
    return torch.randint(0, 30, (n, t), generator=torch.Generator().manual_seed(seed))


def test_shapes_and_attention_rows_sum_to_one():
    model = Transformer(CFG, generator=torch.Generator().manual_seed(0))
    logits, maps, hidden = model(tokens(), return_attention=True, return_hidden=True)
    assert logits.shape == (5, 7, 30) and hidden.shape == (5, 7, 16)
    assert len(maps) == 2 and maps[0].shape == (5, 2, 7, 7)
    assert torch.allclose(maps[1].sum(-1), torch.ones(5, 2, 7), atol=1e-5)


def test_causal_mask_hides_the_future():
    model = Transformer(CFG, generator=torch.Generator().manual_seed(0))
    x = tokens()
    y = x.clone()
    y[:, 4:] = (y[:, 4:] + 1) % 30  # change only positions ≥ 4
    a, b = model(x), model(y)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-5)
    assert not torch.allclose(a[:, 4:], b[:, 4:])
    _, maps = model(x, return_attention=True)
    assert float(maps[0][..., 2, 3:].detach().abs().max()) == 0.0


def test_non_causal_model_sees_the_future():
    model = Transformer(TransformerConfig(vocab_size=30, max_len=7, d_model=16, causal=False),
                        generator=torch.Generator().manual_seed(0))
    x = tokens()
    y = x.clone()
    y[:, -1] = (y[:, -1] + 1) % 30
    assert not torch.allclose(model(x)[:, 0], model(y)[:, 0])


@pytest.mark.parametrize("gamma", [0.3, 0.5, 1.0])
def test_init_std_is_d_in_to_minus_gamma(gamma):
    cfg = TransformerConfig(vocab_size=200, max_len=9, d_model=64, d_ff=256)
    model = Transformer(cfg, gamma=gamma, generator=torch.Generator().manual_seed(1))
    layer = model.layers[0]
    for w, d_in in [(model.w_em, 64), (layer.w_q, 64), (layer.w1, 64), (layer.w2, 256)]:
        assert float(w.detach().std()) == pytest.approx(d_in ** -gamma, rel=0.08)
    assert float(layer.b1.detach().abs().max()) == 0.0 and float(layer.ln1_g.detach().min()) == 1.0


def test_ensemble_members_are_independent_models():
    ens = Transformer(CFG, n_members=3, gamma=[0.2, 0.5, 1.0], generator=torch.Generator().manual_seed(0))
    stds = [float(ens.layers[0].w_q[k].std()) for k in range(3)]
    assert stds[0] > stds[1] > stds[2]
    single = Transformer(CFG)
    with torch.no_grad():
        for (_, p), (_, q) in zip(single.named_parameters(), ens.named_parameters()):
            p.copy_(q[1:2])
    x = tokens()
    assert torch.allclose(ens(x)[1], single(x), atol=1e-5)
    per_member = torch.stack([x, tokens(seed=1), tokens(seed=2)])
    assert ens(per_member).shape == (3, 5, 7, 30)


def test_attention_masking_after_softmax_changes_only_masked_paths():
    model = Transformer(CFG, generator=torch.Generator().manual_seed(0))
    x = tokens()
    keep = torch.ones(1, 1, 1, 7)
    keep[..., 2] = 0.0  # nobody may read position 2
    _, maps = model(x, return_attention=True, attn_keep=keep)
    assert float(maps[0][..., 2].abs().max()) == 0.0
    assert not torch.allclose(model(x, attn_keep=keep)[:, -1], model(x)[:, -1])
    assert torch.allclose(model(x, attn_keep=keep)[:, :2], model(x)[:, :2], atol=1e-5)  # earlier positions unaffected



@pytest.mark.parametrize("norm", ["post", "pre", "none"])
@pytest.mark.parametrize("n_members", [None, 3])
def test_last_only_equals_the_last_row_of_the_full_forward(norm, n_members):
    cfg = TransformerConfig(vocab_size=30, max_len=7, d_model=16, n_layers=3, n_heads=2, d_ff=32, norm=norm)
    model = Transformer(cfg, n_members=n_members, generator=torch.Generator().manual_seed(0))
    keep = torch.ones(5, 2, 7, 7)
    keep[..., 2] = 0.0
    full, maps = model(tokens(), return_attention=True, attn_keep=keep)
    last, last_maps = model(tokens(), return_attention=True, attn_keep=keep, last_only=True)
    assert last.shape == full.shape[:-2] + (1, 30)
    assert torch.allclose(last, full[..., -1:, :], atol=1e-5)
    assert torch.allclose(last_maps[-1], maps[-1][..., -1:, :], atol=1e-6)
    assert torch.allclose(last_maps[0], maps[0])  # earlier layers are computed in full

def test_continuous_inputs_pre_ln_and_attention_only():
    cfg = TransformerConfig(vocab_size=None, d_input=3, d_out=1, max_len=11, d_model=8, d_ff=0, norm="pre")
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    assert model(torch.randn(4, 11, 3)).shape == (4, 11, 1)
    bare = Transformer(TransformerConfig(vocab_size=None, d_input=3, d_out=2, d_model=8, norm="none"))
    assert bare(torch.randn(2, 5, 3)).shape == (2, 5, 2)
    assert not any("ln" in name for name, _ in bare.named_parameters())


@pytest.mark.parametrize("kwargs, word", [
    (dict(vocab_size=None), "exactly one"), (dict(d_model=10, n_heads=3), "divisible"),
    (dict(norm="mid"), "norm"), (dict(d_ff=-1), "d_ff"), (dict(activation="tanh"), "activation"),
])
def test_bad_config_raises(kwargs, word):
    with pytest.raises(ValueError, match=word):
        TransformerConfig(**kwargs)


def test_bad_inputs_raise():
    model = Transformer(CFG)
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(2, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="integer"):
        model(torch.zeros(2, 5))
    with pytest.raises(ValueError, match="gamma"):
        Transformer(CFG, gamma=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        Transformer(CFG, n_members=2, gamma=[0.1, 0.2, 0.3])


def test_member_adamw_equals_torch_adamw_and_decays_per_member():
    torch.manual_seed(0)
    p1 = torch.nn.Parameter(torch.randn(1, 4, 3))
    p2 = torch.nn.Parameter(p1.detach().clone())
    a, b = MemberAdamW([p1], lr=0.1, weight_decay=0.3), torch.optim.AdamW([p2], lr=0.1, weight_decay=0.3)
    for _ in range(3):
        for p, opt in ((p1, a), (p2, b)):
            opt.zero_grad()
            (p ** 3).sum().backward()
            opt.step()
    assert torch.allclose(p1, p2, atol=1e-6)
    q = torch.nn.Parameter(torch.ones(2, 3))
    opt = MemberAdamW([q], lr=0.1, weight_decay=[0.0, 1.0])
    q.grad = torch.zeros(2, 3)
    opt.step()
    assert torch.allclose(q[0], torch.ones(3)) and torch.allclose(q[1], torch.full((3,), 0.9))


def test_member_adamw_copies_its_decays_to_the_device_once():
    """The per-member λ_k move once to the parameters' device (here meta, standing in for a GPU), not every step:
    on a GPU each copy of a CPU tensor waits for the queued kernels (benchmarks/host_reads.py)."""
    from torch.overrides import TorchFunctionMode

    class CountCopies(TorchFunctionMode):
        copies = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            CountCopies.copies += getattr(func, "__name__", "") == "to"
            return func(*args, **(kwargs or {}))

    params = [torch.nn.Parameter(torch.ones(2, 3, device="meta")) for _ in range(3)]
    opt = MemberAdamW(params, lr=0.1, weight_decay=[0.0, 1.0])
    with CountCopies():
        for _ in range(4):
            for p in params:
                p.grad = torch.zeros_like(p)
            opt.step()
    assert opt.member_decay.device.type == "meta" and CountCopies.copies == 1


def test_lr_schedule_warms_up_and_decays():
    assert lr_factor(0, 100, warmup=0.1, floor=0.1) == pytest.approx(0.1)
    assert lr_factor(10, 100, warmup=0.1) == pytest.approx(1.0)
    assert lr_factor(100, 100, warmup=0.1, floor=0.1) == pytest.approx(0.1)
    assert lr_factor(55, 100, schedule="constant") == 1.0
    with pytest.raises(ValueError, match="schedule"):
        lr_factor(0, 10, schedule="step")


def test_member_adamw_clips_each_member_like_clip_grad_norm():
    g = torch.Generator().manual_seed(0)
    p = torch.nn.Parameter(torch.randn(2, 4, 3, generator=g))
    singles = [torch.nn.Parameter(p.detach()[k:k + 1].clone()) for k in range(2)]
    grad = torch.randn(2, 4, 3, generator=g) * torch.tensor([10.0, 0.01])[:, None, None]  # member 0 far above 1
    opt = MemberAdamW([p], lr=0.1, weight_decay=0.0, max_grad_norm=1.0)
    p.grad = grad.clone()
    opt.clip_per_member()
    for k, q in enumerate(singles):
        q.grad = grad[k:k + 1].clone()
        torch.nn.utils.clip_grad_norm_([q], 1.0)
        assert torch.allclose(p.grad[k:k + 1], q.grad, atol=1e-6)
    assert float(p.grad[0].norm()) == pytest.approx(1.0, rel=1e-4) and torch.equal(p.grad[1], grad[1])
    with pytest.raises(ValueError, match="max_grad_norm"):
        MemberAdamW([p], lr=0.1, weight_decay=0.0, max_grad_norm=0.0)


def test_fit_learns_a_copy_task_for_every_member():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 30, (400, 4), generator=g)
    y = x[:, 1]  # copy the second token
    model = Transformer(TransformerConfig(vocab_size=30, max_len=4, d_model=16, d_ff=32), n_members=2, generator=g)
    hist = fit_last_token(model, x, y, steps=300, lr=1e-2, batch_size=64, record_every=100,
                          evals={"train": (x, y)}, generator=g, progress=False)
    assert isinstance(hist, History) and list(hist.steps) == [0, 100, 200, 300]
    assert hist["train accuracy"].shape == (4, 2) and hist.train_loss.shape == (4, 2)
    assert (hist["train accuracy"][-1] > 0.9).all() and (hist["train accuracy"][0] < 0.2).all()
    assert np.isnan(hist.train_loss[0]).all() and (hist.train_loss[-1] < hist.train_loss[1]).all()
    assert np.allclose(last_token_accuracy(model, x, y), hist["train accuracy"][-1])
    assert math.isfinite(hist["cpu_seconds"][-1, 0])
    with pytest.raises(ValueError, match="batch_size"):
        fit_last_token(model, x, y, steps=1, lr=1e-3, batch_size=10_000, generator=g, progress=False)


def test_fit_is_reproducible_and_uses_no_global_rng():
    def fit(seed):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(0, 30, (100, 4), generator=g)
        model = Transformer(TransformerConfig(vocab_size=30, max_len=4, d_model=8, d_ff=16), generator=g)
        return fit_last_token(model, x, x[:, 1], steps=20, lr=1e-2, batch_size=16, record_every=10,
                              generator=g, progress=False).train_loss

    torch.manual_seed(123)
    first = fit(0)
    torch.manual_seed(456)  # the global state must not matter
    assert np.array_equal(fit(0), first, equal_nan=True) and not np.array_equal(fit(1), first, equal_nan=True)
    untrained = Transformer(CFG)  # no generator: a fixed stream, never the global one
    torch.manual_seed(7)
    assert torch.equal(Transformer(CFG).w_em, untrained.w_em)


@pytest.mark.parametrize("arch", ["lstm", "fnn"])
def test_baselines_have_the_transformer_interface_and_train(arch):
    from companion.core.sequence_models import make_model

    g = torch.Generator().manual_seed(0)
    model = make_model(arch, vocab_size=30, max_len=5, d_model=8, n_members=3, generator=g)
    x = torch.randint(0, 30, (40, 5), generator=g)
    assert model(x, last_only=True).shape == (3, 40, 1, 30)
    y = x[:, 2]  # copy the token at position 2
    before = last_token_accuracy(model, x, y)
    hist = fit_last_token(model, x, y, steps=150, lr=1e-2, batch_size=20, record_every=50, generator=g,
                          progress=False)
    assert hist.train_loss.shape == (4, 3) and (last_token_accuracy(model, x, y) > before).all()


def test_lstm_is_causal_and_members_are_independent():
    from companion.core.sequence_models import LSTM, SequenceConfig

    model = LSTM(SequenceConfig(vocab_size=30, max_len=7, d_model=8, hidden=12), n_members=2,
                 generator=torch.Generator().manual_seed(0))
    x = tokens()
    out = model(x)
    changed = x.clone()
    changed[:, 5] = (changed[:, 5] + 1) % 30
    assert torch.allclose(model(changed)[:, :, :5], out[:, :, :5])  # the past does not see the future
    assert torch.allclose(model(x, last_only=True)[:, :, 0], out[:, :, -1], atol=1e-6)
    with torch.no_grad():
        model.w_hh[1].zero_()
    assert torch.allclose(model(x)[0], out[0])


def test_make_model_rejects_unknown_architectures():
    from companion.core.sequence_models import make_model

    with pytest.raises(ValueError, match="architecture"):
        make_model("rnn", vocab_size=10, max_len=3, d_model=4, n_members=1, generator=torch.Generator())
