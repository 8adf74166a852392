"""Tests of companion.experiments.ch09_embedding: splitting embeddings, batched GD, critical points, merging."""

import numpy as np
import pytest
import torch

from companion.experiments import ch09_embedding as E
from companion.core import landscape as L
from companion.core.data import digits
from companion.core.nets import MLP
from companion.core.train import History


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


def test_equal_split_negatives_follow_the_stability_matrix():
    """图9.7(a), one output: an equal split adds as many negative eigenvalues as S_s has (α(1 − α) = 1/4 > 0),
    twice as many for three copies; α = 1 (a copy without output weight) adds only zero eigenvalues."""
    _, xa, y = E.sine_task()
    fit, _ = E.strict_minimum(xa, y, 2, seed=0)
    s = int(np.argmax(np.linalg.norm(fit.a, axis=1) * np.linalg.norm(fit.w, axis=1)))
    n_s = int((np.linalg.eigvalsh(E.stability_matrix(fit, xa, y, s)) < 0).sum())
    equal = [c.counts.negative for c in E.split_spectra(fit, xa, y, ks=(1, 2, 3), s=s, alpha=None)]
    assert n_s >= 1 and equal == [0, n_s, 2 * n_s]
    null = E.split_spectra(fit, xa, y, ks=(1, 2, 3), s=s, alpha=1.0)
    assert [c.counts.negative for c in null] == [0, 0, 0]
    assert [c.counts.zero for c in null] == [0, 3, 6]  # c + d + 1 = 3 flat directions per copy


def test_iris_task_and_saddle_check():
    xa, y = E.iris_task()
    assert xa.shape == (150, 5) and y.shape == (150, 3)
    assert torch.allclose(xa[:, :4].mean(0), torch.zeros(4, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(y.sum(0), torch.zeros(3, dtype=torch.float64), atol=1e-12)  # 50 flowers per class
    fit, _ = E.strict_minimum(xa, y, 2, seed=0)
    chain = E.split_spectra(fit, xa, y, ks=(1, 2, 3), alpha=None)
    v = E.check_embedded_saddle(chain, E.SADDLE_IRIS, base_minimum=False)
    assert v.passed, v.measured_line()
    with pytest.raises(ValueError, match="k = 1, 2, 3"):
        E.check_embedded_saddle(chain[:2])


def test_train_batch_and_spectrum():
    _, xa, y = E.three_tanh_target(32)
    g = torch.Generator().manual_seed(0)
    a, w, per = E.init_batch([2, 5], 3, 2, 1, 0.1, g)
    for act in ("tanh", "relu"):
        run = E.train_batch(xa, y, a, w, per, lr=0.2, steps=200, act=act, record_every=50, progress=False)
        assert run.mask.sum(1).tolist() == [2, 2, 2, 5, 5, 5]
        assert run.steps.tolist() == [0, 50, 100, 150, 200]
        assert run.losses.shape == (5, 6) and (run.losses[-1] < run.losses[0]).all()
        assert run.a.shape == (5, 6, 5, 1) and run.w.shape == (5, 6, 5, 2)
        assert np.all(run.a[:, :3, 2:] == 0) and np.all(run.w[:, :3, 2:] == 0)  # padded neurons stay zero
    widths, edges, frac = E.loss_spectrum(run.losses, run.widths, lo=-5.0, hi=1.0)
    assert widths.tolist() == [2, 5] and np.allclose(frac.sum(1), 1)
    with pytest.raises(ValueError, match="activation"):
        E.train_batch(xa, y, a, w, per, lr=0.1, steps=5, act="elu")


def test_train_batch_is_gradient_descent_on_the_half_mse():
    """One engine step equals θ − lr·∇R computed by hand: ∇_a R = h r / N, ∇_w R = ((a rᵀ) ⊙ σ′) x̃ / N."""
    _, xa, y = E.three_tanh_target(16)
    a, w, per = E.init_batch([3], 2, 2, 1, 0.5, torch.Generator().manual_seed(3))
    run = E.train_batch(xa, y, a, w, per, lr=0.1, steps=1, record_every=1, progress=False)
    h = torch.tanh(w @ xa.T)  # (K, M, N)
    r = h.transpose(1, 2) @ a - y  # (K, N, c)
    ga, gw = h @ r / 16, ((a @ r.transpose(1, 2)) * (1 - h * h)) @ xa / 16
    assert np.allclose(run.a[1], (a - 0.1 * ga).numpy(), atol=1e-14)
    assert np.allclose(run.w[1], (w - 0.1 * gw).numpy(), atol=1e-14)
    assert np.allclose(run.losses[0], 0.5 * (r * r).sum((1, 2)).numpy() / 16)


def test_train_batch_adam_is_torch_adam_per_member():
    """optimizer="adam": each member follows torch's Adam on its own loss (autograd, one net at a time), and the
    padded neurons of the narrower members stay zero."""
    _, xa, y = E.three_tanh_target(16)
    a, w, per = E.init_batch([2, 3], 2, 2, 1, 0.3, torch.Generator().manual_seed(4))
    run = E.train_batch(xa, y, a, w, per, lr=0.01, steps=5, record_every=5, progress=False, optimizer="adam")
    for k, m in enumerate(per):
        ak, wk = a[k, :m].clone().requires_grad_(), w[k, :m].clone().requires_grad_()
        opt = torch.optim.Adam([ak, wk], lr=0.01)
        for _ in range(5):
            opt.zero_grad()
            E.half_mse_per_member(ak[None], wk[None], xa, y).sum().backward()
            opt.step()
        assert np.allclose(run.a[-1, k, :m], ak.detach().numpy(), atol=1e-12)
        assert np.allclose(run.w[-1, k, :m], wk.detach().numpy(), atol=1e-12)
        assert np.all(run.a[-1, k, m:] == 0) and np.all(run.w[-1, k, m:] == 0)
    with pytest.raises(ValueError, match="optimizer"):
        E.train_batch(xa, y, a, w, per, lr=0.01, steps=1, optimizer="sgd")


def test_brightest_line_is_the_fullest_bin():
    """Losses that sit at 0.05 for 60 of 100 recorded steps: the brightest bin holds 60 % and its median is 0.05."""
    losses = np.concatenate([np.full(60, 0.05), np.logspace(-1, -4, 40)])[:, None].repeat(2, axis=1)
    batch = E.BatchRun(np.array([4, 4]), History(np.arange(100), series={"loss": losses}))
    line = E.brightest_line(batch)
    assert line.width == 4 and abs(line.fraction - 0.6) < 0.02 and line.loss == 0.05
    with pytest.raises(ValueError, match="one width"):
        E.brightest_line(E.BatchRun(np.array([4, 5]), History(np.arange(100), series={"loss": losses})))


def test_members_and_line_share_of_a_mixed_ensemble():
    """Two widths in one ensemble: members() keeps one width's columns; line_share counts the pairs within one bin."""
    steady = np.full(100, 0.05)
    falling = np.logspace(-1, -4, 100)
    losses = np.stack([steady, steady, falling, falling], axis=1)  # (T, K): width 2 stalls at 0.05, width 8 falls
    batch = E.BatchRun(np.array([2, 2, 8, 8]), History(np.arange(100), series={"loss": losses}))
    assert E.members(batch, 2).losses.shape == (100, 2) and np.all(E.members(batch, 8).widths == 8)
    assert E.line_share(batch, 2, 0.05) == 1.0
    assert E.line_share(batch, 8, 0.05) < 0.05  # 3 decades in 100 steps: ~1.7 steps per bin of 0.025
    with pytest.raises(ValueError, match="width 3"):
        E.members(batch, 3)


def test_ladder_target_has_ten_falling_steps():
    x, xa, y = E.ladder_target()
    assert xa.shape == (80, 2) and y.shape == (80, 1)
    rise = 2 * sum(0.75 ** i for i in range(10))  # each step rises 2·0.75^i (the steps at ±9 reach tanh 2 ≈ 0.96)
    assert abs(float(y[-1, 0] - y[0, 0]) / rise - 1) < 0.01
    with pytest.raises(ValueError, match="n ≥ 2"):
        E.ladder_target(n=1)


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


def test_plateau_sharpness_explains_the_learning_rate():
    """λ_max of the equal-split image of the width-1 optimum: ≈ 10 at width 3, i.e. 2/lr for lr 0.2."""
    _, xa, y = E.three_tanh_target()
    fit = E.best_fits(xa, y, 1, restarts=4, seed=0)[0]
    sharp = E.plateau_sharpness(fit, xa, y, (1, 2, 3, 5, 10))
    assert sharp[2] == pytest.approx(9.97, abs=0.05)
    assert np.all(np.diff(sharp) < 0) and sharp[0] > 20 > sharp[1]
    with pytest.raises(ValueError, match="narrower"):
        E.plateau_sharpness(E.best_fits(xa, y, 2, restarts=1, seed=0)[0], xa, y, (1,))


@pytest.mark.parametrize("seed", [4, 7])
def test_width3_bounces_off_the_plateau_at_lr_02_but_not_at_01(seed):
    """The defect of 图9.1/9.2: at lr 0.2 (2/lr = λ_max of the width-3 plateau) some width-3 nets jump up
    off the plateau; at lr 0.1 none does and every member stalls at L1* condensed (the chapter's check)."""
    _, xa, y = E.three_tanh_target()
    fit = E.best_fits(xa, y, 1, restarts=4, seed=seed)[0]
    out = E.two_layer(torch.as_tensor(fit.a), torch.as_tensor(fit.w), xa).numpy()
    bounced = {}
    for lr, steps in ((0.2, 1200), (0.1, 2400)):
        run = E.run_widths(xa, y, (3,), 16, init_std=1e-3, lr=lr, steps=steps, record_every=1, seed=seed,
                           progress=False)[3]
        bounced[lr] = int((run.losses[1:] > 1.01 * run.losses[:-1]).any(0).sum())
    assert bounced[0.2] >= 1 and bounced[0.1] == 0, bounced
    v = E.check_width_plateau({3: E.plateau_match(run, fit.loss, out, xa)})
    assert v.passed, v.measured_line()


def test_gradient_identity_error_detects_a_jittered_copy(net):
    a, w, xa, y = net
    out_err, grad_err = E.gradient_identity_error(a, w, xa, y, s=2, alpha=0.3, jitter=1e-4)
    assert 1e-7 < out_err < 1e-2 and grad_err > 1e-8


def test_compress_counts_and_references():
    """A condensed run: merged neurons = groups, merge factor = significant / groups, the merged net keeps the
    loss better than dropping; an untrained net has nothing to merge."""
    data = digits(600, None, seed=1)
    run = E.compress(data, width=200, init_std=1e-6, steps=150, lr=1.0, seed=1)
    assert run.n_groups == run.labels.max() + 1 and run.n_significant == int((run.labels >= 0).sum())
    assert run.merge_factor > 1.2 and run.loss_change < run.loss_change_pruned
    assert run.agreement >= 0.95
    raw = E.compress(data, width=200, init_std=1e-6, steps=0, lr=1.0, seed=1)
    assert raw.merge_factor == 1.0 and raw.loss_change == pytest.approx(0.0, abs=1e-6)


def test_checks_reject_empty_selections():
    with pytest.raises(ValueError, match="no width"):
        E.check_width_plateau({2: None})
    with pytest.raises(ValueError, match="two widths"):
        E.check_split_hessian({0.5: [None]})


def test_train_batch_runs_on_the_settings_device(monkeypatch):
    """With the settings' device another one (tests/device_support.py), every step of :func:`train_batch` finds
    its data and parameters there: a tensor left on the CPU fails, as it would on a GPU."""
    from types import SimpleNamespace

    from device_support import META, OneDevicePerCall, steps_only

    records = []
    monkeypatch.setattr(E, "settings", lambda: SimpleNamespace(device=META))
    monkeypatch.setattr(E, "run", steps_only(records))
    _, xa, y = E.three_tanh_target(16)
    a, w, per = E.init_batch([3, 5], 2, 2, 1, 0.5, torch.Generator().manual_seed(3))
    with OneDevicePerCall():
        E.train_batch(xa, y, a, w, per, lr=0.1, steps=2, record_every=1, progress=False)
    assert {name: value.device.type for name, value in records[0].items()} == {"loss": "meta", "a": "meta", "w": "meta"}
