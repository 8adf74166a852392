"""Tests of companion.embedding: splitting embeddings, batched GD, critical points, merging."""

import numpy as np
import pytest
import torch

from companion import embedding as E
from companion import landscape as L
from companion.nets import MLP


@pytest.fixture
def net():
    g = torch.Generator().manual_seed(0)
    x = torch.linspace(-2, 2, 15, dtype=torch.float64)
    return (torch.randn(4, 2, generator=g, dtype=torch.float64), torch.randn(4, 2, generator=g, dtype=torch.float64),
            E.augment(x), torch.stack([torch.sin(x), torch.cos(x)], 1))


@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0, -0.7, 2.3])
def test_split_preserves_output_and_gradient(net, alpha):
    a, w, xa, y = net
    out_err, grad_err = E.gradient_identity_error(a, w, xa, y, s=2, alpha=alpha)
    assert out_err < 1e-12 and grad_err < 1e-12
    a2, w2 = E.split_neuron(a, w, 2, alpha)
    assert a2.shape == (5, 2) and torch.equal(w2[4], w[2])
    assert torch.allclose(a2[2] + a2[4], a[2])


def test_split_k_shares_and_errors(net):
    a, w, xa, _ = net
    a3, w3 = E.split_k(a, w, 1, 3, shares=[0.2, -0.5, 1.3])
    assert a3.shape[0] == 6
    assert torch.allclose(E.two_layer(a3, w3, xa), E.two_layer(a, w, xa), atol=1e-12)
    assert torch.allclose(a3[[1, 4, 5]].sum(0), a[1])
    with pytest.raises(ValueError, match="summing to 1"):
        E.split_k(a, w, 1, 2, shares=[0.5, 0.6])
    with pytest.raises(ValueError, match="out of range"):
        E.split_neuron(a, w, 7, 0.5)


def test_split_mlp_keeps_function():
    torch.manual_seed(0)
    deep = MLP([3, 4, 5, 2], act="tanh", init_std=1.0).double()
    x = torch.randn(10, 3, dtype=torch.float64)
    for layer in (1, 2):
        wide = E.split_mlp(deep, layer, 1, -0.3)
        assert wide.widths[layer] == deep.widths[layer] + 1
        assert torch.allclose(wide(x), deep(x), atol=1e-12)
    with pytest.raises(ValueError, match="layer"):
        E.split_mlp(deep, 3, 0, 0.5)


def test_split_of_critical_point_adds_zero_eigenvalues():
    _, xa, y = E.sine_task()
    fits = E.best_fits(xa, y, 2, restarts=16, seed=0)
    strict = [f for f in fits if E.is_strict_minimum(f, xa, y)]
    assert strict, "no strict minimum found"
    chain = E.split_spectra(strict[0], xa, y, ks=(1, 2, 3))
    counts = [c.counts.as_tuple() for c in chain]
    assert counts[0] == (0, 0, 6)
    assert all(z2 > z1 and n2 >= n1 for (n1, z1, _), (n2, z2, _) in zip(counts, counts[1:]))
    assert max(c.out_diff for c in chain) < 1e-12 and max(c.grad_norm for c in chain) < 1e-11


def test_train_batch_and_spectrum():
    _, xa, y = E.three_tanh_target(32)
    g = torch.Generator().manual_seed(0)
    a, w, mask, per = E.init_batch([2, 5], 3, 2, 1, 0.1, g)
    assert mask.sum(1).tolist() == [2, 2, 2, 5, 5, 5]
    run = E.train_batch(xa, y, a, w, mask, per, lr=0.2, steps=200, snap_every=50)
    assert run.losses.shape == (201, 6) and (run.losses[-1] < run.losses[0]).all()
    assert np.all(run.a[:, :3, 2:] == 0)  # padded neurons stay zero
    widths, edges, frac = E.loss_spectrum(run.losses, run.widths, lo=-5.0, hi=1.0)
    assert widths.tolist() == [2, 5] and np.allclose(frac.sum(1), 1)
    with pytest.raises(ValueError, match="activation"):
        E.train_batch(xa, y, a, w, mask, per, lr=0.1, steps=5, act="elu")


def test_group_and_merge_inverts_splitting():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(3, 2, generator=g, dtype=torch.float64)
    w = torch.randn(3, 4, generator=g, dtype=torch.float64)
    a2, w2 = E.split_k(a, w, 0, 3, shares=[0.3, 0.3, 0.4])
    a2, w2 = E.split_neuron(a2, w2, 2, 0.5)
    labels = E.group_neurons(a2.numpy(), w2.numpy(), cos_threshold=0.999, amp_cutoff=0.0)
    assert labels.max() + 1 == 3
    x = E.augment(torch.randn(20, 3, generator=g, dtype=torch.float64))
    for act in ("relu", "tanh"):
        am, wm = E.merge_groups(a2.numpy(), w2.numpy(), labels, act=act)
        assert am.shape == (3, 2)
        assert torch.allclose(E.two_layer(torch.as_tensor(am), torch.as_tensor(wm), x, act),
                              E.two_layer(a, w, x, act), atol=1e-10)
    with pytest.raises(ValueError, match="cos_threshold"):
        E.group_neurons(a2.numpy(), w2.numpy(), cos_threshold=1.5)


def test_best_fits_width_one_optimum():
    _, xa, y = E.three_tanh_target()
    fit = E.best_fits(xa, y, 1, restarts=4, seed=0)[0]
    assert fit.loss == pytest.approx(0.0230166, rel=1e-4)
    assert fit.grad_norm < 1e-12
    risk = E.half_mse_loss(xa, y, 1)
    assert float(risk(E.pack(torch.as_tensor(fit.a), torch.as_tensor(fit.w)))) == pytest.approx(fit.loss, rel=1e-12)
    assert L.inertia(L.hessian_spectrum(risk, E.pack(torch.as_tensor(fit.a), torch.as_tensor(fit.w))), 1e-9).negative == 0
