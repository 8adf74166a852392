"""The batched two-layer ensemble equals a loop of ordinary modules, and its trainer's options work."""

import numpy as np
import pytest
import torch

from companion.core.ensemble import (
    TwoLayerEnsemble,
    TwoLayerNet,
    hessian_norms,
    stopped_at,
    train_ensemble,
    train_single,
)
from companion.kit.seeds import generator
from device_support import on_fake_meta


def _data(n=6, dtype=torch.float64):
    x = torch.linspace(-1, 1, n, dtype=dtype).reshape(-1, 1)
    return x, torch.sin(3 * x.ravel() + 1)


def test_batched_training_equals_a_loop_of_modules():
    x, y = _data()
    ens = TwoLayerEnsemble(1, 30, beta1=[1.0, 0.5, 0.1], beta2=1.0, alpha=[5.0, 1.0, 2.0], dtype=torch.float64)
    nets = [ens.member(k) for k in range(3)]
    train_ensemble(ens, x, y, steps=50, lr=[0.05, 0.1, 0.02], record_every=10)
    for k, (net, lr) in enumerate(zip(nets, [0.05, 0.1, 0.02])):
        train_single(net, x, y, steps=50, lr=lr)
        assert torch.allclose(ens.a.detach()[k], net.a.detach(), atol=1e-12)
        assert torch.allclose(ens.w.detach()[k], net.w.detach(), atol=1e-12)
        with torch.no_grad():
            assert torch.allclose(ens(x)[k], net(x), atol=1e-12)


def test_initialisation_scales_and_masks():
    ens = TwoLayerEnsemble(2, [4000, 100], beta1=[0.5, 2.0], beta2=[3.0, 1.0], alpha=1.0, seed=1)
    assert ens.a.shape == (2, 4000) and ens.w.shape == (2, 4000, 3)
    assert ens.a[0].std().item() == pytest.approx(0.5, rel=0.05)
    assert ens.w[0].std().item() == pytest.approx(3.0, rel=0.05)
    assert torch.all(ens.a[1, 100:] == 0) and torch.all(ens.mask[1, 100:] == 0)
    # the padding of the narrow member gets exactly zero gradient, also for sigmoid (σ(0) ≠ 0)
    sig = TwoLayerEnsemble(1, [5, 3], act="sigmoid", n_members=2)
    x, y = _data(dtype=torch.float32)
    before = sig.w.detach().clone()
    train_ensemble(sig, x, y, steps=5, lr=0.1)
    assert torch.equal(sig.w.detach()[1, 3:], before[1, 3:]) and torch.all(sig.a.detach()[1, 3:] == 0)
    assert ens.member(1).a.shape == (100,)


def test_member_initialisation_is_independent_of_the_batch():
    one = TwoLayerEnsemble(1, 10, n_members=1, seed=3)
    many = TwoLayerEnsemble(1, 10, n_members=4, seed=3)
    assert torch.equal(one.a[0], many.a[0])


def test_hessian_norm_matches_the_exact_top_eigenvalue():
    x, y = _data()
    ens = TwoLayerEnsemble(1, 5, beta1=[1.0, 0.3], beta2=1.0, dtype=torch.float64)
    from companion.core.ensemble import _risk
    xt = torch.cat([x, torch.ones_like(x)], 1)

    def loss_sum(a, w):
        return _risk(ens, a, w, ens.alpha, ens.mask, xt, y.reshape(1, -1)).sum()

    est = hessian_norms(loss_sum, ens.a.detach(), ens.w.detach(), iters=200, generator=generator(0))
    for k in range(2):
        def f(theta, k=k):
            a, w = theta[:5].reshape(1, 5), theta[5:].reshape(1, 5, 2)
            return _risk(ens, a, w, ens.alpha[k:k + 1], ens.mask[k:k + 1], xt, y.reshape(1, -1)).sum()
        theta = torch.cat([ens.a.detach()[k], ens.w.detach()[k].ravel()])
        exact = torch.linalg.eigvalsh(torch.autograd.functional.hessian(f, theta)).abs().max()
        assert est[k].item() == pytest.approx(exact.item(), rel=1e-3)


def test_adaptive_lr_stopping_and_snapshots():
    x, y = _data()
    ens = TwoLayerEnsemble(1, 200, beta1=[1.0, 200 ** -0.75], beta2=1.0, alpha=[200 ** 0.5, 200 ** -0.75 * 200 ** 1.75],
                           dtype=torch.float64)
    hist = train_ensemble(ens, x, y, steps=20_000, stop_below=1e-4, record_every=50, snapshot_steps=[0, 125])
    stops = stopped_at(hist)
    assert hist["converged"][-1].all() and stops[0] != stops[1] and np.all(stops >= 0)
    assert np.all(hist["risk"][-1] < 1e-4)
    assert np.allclose(hist["a"][0], ens.a0.numpy())
    assert 125 in hist.steps and 100 in hist.steps and hist["w"].shape[1:] == ens.w.shape
    assert np.all(hist["lr"][-1] > 0)
    rd = ens.relative_distance()
    assert rd[1] > 5 * rd[0]  # the small-init member moves its features far more


def test_adam_and_dropout_run_and_validate():
    x, y = _data(dtype=torch.float32)
    ens = TwoLayerEnsemble(1, 50, n_members=2, alpha=50 ** 0.5)
    hist = train_ensemble(ens, x, y, steps=300, lr=1e-2, optimizer="adam", keep=[1.0, 0.5], record_every=100)
    assert hist["risk"][-1, 0] < hist["risk"][0, 0]
    with pytest.raises(ValueError, match="keep"):
        train_ensemble(ens, x, y, steps=1, lr=0.1, keep=1.5)
    with pytest.raises(ValueError, match="optimizer"):
        train_ensemble(ens, x, y, steps=1, lr=0.1, optimizer="lbfgs")
    with pytest.raises(ValueError, match="hessian"):
        train_ensemble(ens, x, y, steps=1, lr="hessian", optimizer="adam")
    with pytest.raises(ValueError, match="beta1"):
        TwoLayerEnsemble(1, 5, beta1=[1.0, -1.0])
    with pytest.raises(ValueError, match="dtype"):
        TwoLayerEnsemble(1, 5, dtype=torch.int32)
    with pytest.raises(ValueError, match="shape"):
        TwoLayerNet(torch.ones(3), torch.ones(2, 2))


def test_the_run_computes_on_the_settings_device_and_keeps_its_books_on_the_cpu(monkeypatch):
    """Per-member data and weights, Adam, dropout masks drawn on the CPU and snapshots: with the model on another
    device (tests/device_support.py), every operation finds its tensors on that device (the risk's record is
    copied back to the CPU).  The Hessian step size and the stopping thresholds read values (a power iteration's
    convergence, which members are done), which fake tensors do not have; the tests above check them on the CPU."""
    from companion.core import ensemble, train as engine

    monkeypatch.setattr(ensemble, "on_device", on_fake_meta)
    monkeypatch.setattr(engine, "_as_numpy", lambda value: value)  # fake tensors hold no numbers to copy out
    monkeypatch.setattr(engine.History, "from_rows", classmethod(lambda cls, steps, rows: rows))
    model = TwoLayerEnsemble(1, [6, 8], beta1=0.5, alpha=[1.0, 2.0], n_members=2, seed=0)
    x = torch.linspace(-1, 1, 5)[None, :, None].expand(2, 5, 1).clone()
    rows = train_ensemble(model, x, torch.sin(x[..., 0]), steps=3, lr=[0.1, 0.2], optimizer="adam", keep=[0.9, 1.0],
                          record_every=1, snapshot_steps=(2,), progress=False, sample_weight=torch.ones(2, 5))
    assert len(rows) == 4
    assert {name: value.device.type for name, value in rows[-1].items()} == {"risk": "cpu", "lr": "cpu", "a": "meta",
                                                                            "w": "meta"}
