"""Tests of companion.experiments.ch11_flatness: quadratic GD, tracked sharpness, profiles, dropout, ReLU
rescaling, SGD-noise covariance, alignment and Feng–Tu flatness."""

import contextlib
import math
import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from companion.core import landscape as L
from companion.core.data import digits
from companion.core.train import History
from companion.experiments import ch11_flatness as fl
from companion.kit.seeds import generator


def standardised_digits(n: int) -> SimpleNamespace:
    """The chapter's data: the first n digits, standardised per pixel, with one-hot targets."""
    d = digits(n, standardise=True)
    return SimpleNamespace(x=d.x, y=d.one_hot(), labels=d.labels)


# ---------------------------------------------------------------- quadratic (11.8)–(11.11)
def test_gd_on_quadratic_follows_11_9():
    xs = fl.gd_on_quadratic(4.0, 0.3, x0=2.0, steps=5)
    assert np.allclose(xs, 2.0 * (1 - 1.2) ** np.arange(6))


@pytest.mark.parametrize("eta_lam,regime", [(0.5, "monotone"), (1.0, "monotone"), (1.5, "oscillating"),
                                            (2.0, "marginal"), (2.5, "diverging")])
def test_gd_regime(eta_lam, regime):
    assert fl.gd_regime(10.0, eta_lam / 10.0) == regime


def test_heavy_ball_moves_the_stability_limit():
    """With momentum β the limit is 2(1 + β)/λ: ηλ = 2.5 converges at β = 0.5 but not at β = 0."""
    assert abs(fl.gd_on_quadratic(10.0, 0.25, steps=400, momentum=0.5)[-1]) < 1e-3
    assert abs(fl.gd_on_quadratic(10.0, 0.25, steps=400)[-1]) > 1e3
    assert abs(fl.gd_on_quadratic(10.0, 0.31, steps=400, momentum=0.5)[-1]) > 1e3
    with pytest.raises(ValueError, match="momentum=1"):
        fl.gd_on_quadratic(1.0, 0.1, momentum=1)


def test_quadratic_sweep_matches_11_10():
    sweep = fl.quadratic_sweep((2.0, 10.0), (0.5, 1.5, 2.5))
    assert sweep.lam.tolist() == [2.0] * 3 + [10.0] * 3
    assert np.allclose(sweep.eta_lambda, [0.5, 1.5, 2.5] * 2)
    assert sweep.converged.tolist() == [True, True, False] * 2
    assert sweep.flipped.tolist() == [False, True, True] * 2
    v = fl.check_quadratic_stability(sweep)
    assert v.passed and v.margin == 1 and v.measured["n_converged"] == 4
    short = fl.quadratic_sweep((10.0,), (1.9,), steps=10)      # 0.9^10 ≈ 0.35: not converged yet
    assert not fl.check_quadratic_stability(short).passed


def test_quadratic_bad_input():
    with pytest.raises(ValueError, match=r"lam=\[-1"):
        fl.gd_on_quadratic(-1.0, 0.1)
    with pytest.raises(ValueError, match="eta=0"):
        fl.gd_regime(1.0, 0)
    with pytest.raises(ValueError, match="hdiag"):
        fl.gd_path_2d(0.1, hdiag=(1.0, 2.0, 3.0))


def test_gd_path_2d_stable_iff_eta_below_2_over_lambda_max():
    assert np.abs(fl.gd_path_2d(0.19, steps=300)[-1]).max() < 1e-3   # 2/λ_max = 0.2 for H = diag(10, 2)
    assert np.abs(fl.gd_path_2d(0.21, steps=300)[-1]).max() > 10


# ---------------------------------------------------------------- data, model
def test_the_bundled_digits_are_scikit_learns_without_importing_it():
    from sklearn.datasets import load_digits

    from companion.core.data import bundled_digits

    images, labels = bundled_digits()
    expected_images, expected_labels = load_digits(return_X_y=True)
    assert np.array_equal(images, expected_images) and np.array_equal(labels, expected_labels)


def test_digits_standardised_and_split():
    d = digits(100, 50, standardise=True)
    assert d.x.shape == (100, 64) and d.one_hot().shape == (100, 10) and d.x_test.shape == (50, 64)
    assert torch.equal(d.one_hot().argmax(1), d.labels)
    assert d.x.mean(0).abs().max() < 1e-5


def test_dropout_mlp_drops_only_while_training():
    x = torch.randn(7, 3, generator=generator(1))

    def net(masks: int) -> fl.DropoutMLP:
        return fl.DropoutMLP([3, 50, 2], "relu", keep=0.5, generator=generator(0), mask_generator=generator(masks))

    a = net(2)
    a.eval()
    assert torch.equal(a(x), a(x))
    a.train()
    assert not torch.allclose(a(x), a.eval()(x))
    one, same, other = net(2).train(), net(2).train(), net(3).train()
    assert torch.equal(one(x), same(x)) and not torch.equal(one(x), other(x))   # masks from the mask generator
    with pytest.raises(ValueError, match="keep probability"):
        fl.DropoutMLP([3, 5, 2], keep=0.0, generator=generator(0))


def test_loss_fn_values():
    out = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    y = torch.tensor([[0.0, 0.0], [0.0, 2.0]])
    assert float(fl.loss_fn("mse")(out, y)) == pytest.approx(0.5 * (1 + 4) / 2)
    logits = torch.zeros(2, 2)
    assert float(fl.loss_fn("ce")(logits, torch.eye(2))) == pytest.approx(np.log(2))
    with pytest.raises(ValueError, match="'l1'"):
        fl.loss_fn("l1")


# ---------------------------------------------------------------- training and sharpness
def small_problem(n=40, width=16):
    d = standardised_digits(n)
    net = fl.DropoutMLP([64, width, 10], "tanh", generator=generator(0))
    return d, net


def test_sharpness_matches_dense_hessian():
    d, net = small_problem(20, 3)
    theta, _ = L.flatten_params(net)
    dense = L.hessian_spectrum(fl.full_loss(net, d.x, d.y), theta.double()).max()
    lam, v = fl.sharpness(net, d.x, d.y, iters=500, seed=1)
    assert lam == pytest.approx(dense, rel=1e-3)
    assert v.shape == theta.shape


def test_train_tracked_gd_records_and_lowers_loss():
    d, net = small_problem()
    run = fl.train_tracked(net, d.x, d.y, eta=0.1, steps=60, track_every=20, generator=generator(0))
    assert list(run.sharp_steps) == [0, 20, 40, 60]
    assert len(run.steps) == 61 and run.loss[-1] < 0.5 * run.loss[0]
    theta, _ = L.flatten_params(net)
    assert torch.equal(run.theta, theta)
    assert run.final_sharpness == pytest.approx(fl.sharpness(net, d.x, d.y)[0], rel=1e-2)
    assert np.array_equal(run.tail(0.5), run.sharpness[2:])


def test_train_tracked_edge_of_stability_caps_sharpness():
    """A large step on a sharpening net: λ_max ends near 2/η, not far above it."""
    d, net = small_problem(64, 32)
    run = fl.train_tracked(net, d.x, d.y, eta=0.5, steps=300, track_every=10, generator=generator(0))
    assert run.sharpness[-10:].max() < 1.3 * 2 / 0.5


def test_train_tracked_stops_at_a_matched_loss():
    d, net = small_problem()
    full = fl.train_tracked(copy_net(net), d.x, d.y, eta=0.1, steps=60, track_every=20, generator=generator(0))
    target = float(full.loss[25])
    run = fl.train_tracked(net, d.x, d.y, eta=0.1, steps=60, track_every=20, stop_at_loss=target,
                           generator=generator(0))
    first = int(np.argmax(full.loss <= target))
    assert run.steps[-1] == first and run.loss[-1] == pytest.approx(full.loss[first])
    assert run.sharp_steps[-1] == first                         # λ_max measured where it stopped
    assert run.final_sharpness == pytest.approx(fl.sharpness(net, d.x, d.y)[0], rel=1e-2)


def copy_net(net):
    return copy.deepcopy(net)


def edge_test_run(sharpness, loss, eta=0.5):
    """A Run with the loss at every step and λ_max at every second step."""
    every_second = np.full(len(loss), np.nan)
    every_second[: 2 * len(sharpness): 2] = sharpness
    history = History(np.arange(len(loss)), series={"loss": np.asarray(loss, float), "sharpness": every_second})
    return fl.Run(eta, None, 1.0, history, torch.zeros(1), None)


def test_edge_phase_start_increases_and_never():
    # sharpness per 2 steps, edge 2/η = 4: reached (≥ 3.8) at step 4, loss rises twice after it
    run = edge_test_run([2.0, 3.0, 3.9, 4.1, 4.0], [5.0, 4.0, 3.0, 2.0, 2.5, 1.5, 1.8, 1.0, 1.2, 0.8])
    phase = fl.edge_phase(run)
    assert phase.start == 4 and phase.increases == 2 and phase.loss_start == 2.5 and phase.loss_end == 0.8
    at_edge = edge_test_run([4.5, 4.0, 3.9, 4.1, 4.0], [5.0] * 10)   # never below 0.95·2/η: the edge from step 0
    assert fl.edge_phase(at_edge).start == 0
    catapult = edge_test_run([6.0, 3.0, 3.9, 4.1, 4.0], [5.0] * 10)   # starts above, drops, returns at step 4
    assert fl.edge_phase(catapult).start == 4
    never = edge_test_run([1.0, 2.0, 3.0, 3.5, 3.6], np.linspace(5, 1, 10))
    phase = fl.edge_phase(never)
    assert np.isnan(phase.start) and np.isnan(phase.loss_start)
    v = fl.check_eos_loss_nonmonotone([never])
    assert not v.passed and v.margin == -np.inf


def test_train_tracked_minibatch_and_noise_hook():
    d, net = small_problem()
    calls = []

    def hook(model, step):
        calls.append(step)
        return torch.zeros(sum(p.numel() for p in model.parameters()))

    run = fl.train_tracked(net, d.x, d.y, eta=0.1, steps=20, batch_size=8, loss_every=5, noise=hook,
                           generator=generator(0))
    assert calls == list(range(20)) and list(run.steps) == [0, 5, 10, 15, 20] and run.batch_size == 8


def test_train_tracked_bad_input():
    d, net = small_problem()
    with pytest.raises(ValueError, match="batch_size"):
        fl.train_tracked(net, d.x, d.y, eta=0.1, steps=5, batch_size=1000, generator=generator(0))
    with pytest.raises(ValueError, match="eta=-0.1"):
        fl.train_tracked(net, d.x, d.y, eta=-0.1, steps=5, generator=generator(0))
    with pytest.raises(ValueError, match="'lbfgs'"):
        fl.train_tracked(net, d.x, d.y, eta=0.1, steps=5, optimizer="lbfgs", generator=generator(0))


# ---------------------------------------------------------------- profiles
def test_losses_at_and_interpolation_endpoints():
    d, net = small_problem()
    theta_a, _ = L.flatten_params(net)
    theta_b = theta_a + 0.1 * torch.randn(theta_a.shape, generator=generator(2))
    losses, acc = fl.interpolation_profile(net, theta_a, theta_b, np.array([0.0, 1.0]), d.x, d.y, labels=d.labels)
    f = fl.full_loss(net, d.x, d.y)
    assert losses[0] == pytest.approx(float(f(theta_a)), rel=1e-5)
    assert losses[1] == pytest.approx(float(f(theta_b)), rel=1e-5)
    assert acc[0] == pytest.approx(fl.accuracy(net, d.x, d.labels))
    with pytest.raises(ValueError, match="shape"):
        fl.losses_at(net, torch.zeros(2, 3), d.x, d.y)


def test_filter_normalized_direction_matches_neuron_norms():
    _, net = small_problem()
    d = fl.filter_normalized_direction(net, generator(0))
    _, unflatten = L.flatten_params(net)
    parts = unflatten(d)
    w, b = net.layers[0].weight.detach(), net.layers[0].bias.detach()
    dw, db = parts["layers.0.weight"], parts["layers.0.bias"]
    own = torch.cat([w, b[:, None]], 1).norm(dim=1)
    new = torch.cat([dw, db[:, None]], 1).norm(dim=1)
    assert torch.allclose(own, new, rtol=1e-5)


def test_loss_profile_is_quadratic_near_minimum_of_quadratic_curvature():
    d, net = small_problem()
    direction = fl.filter_normalized_direction(net, generator(0))
    prof = fl.loss_profile(net, direction, np.array([-1e-2, 0.0, 1e-2]), d.x, d.y)
    theta, _ = L.flatten_params(net)
    f = fl.full_loss(net, d.x, d.y)
    assert prof[1] == pytest.approx(float(f(theta)), rel=1e-5)
    with pytest.raises(ValueError, match="direction"):
        fl.loss_profile(net, torch.zeros(3), np.zeros(1), d.x, d.y)


# ---------------------------------------------------------------- dropout 1-D and rescaling
def test_dropout_flatness_matches_the_loss():
    res = fl.dropout_flatness((1.0, 0.5), width=60, steps=200, lr=3e-3, n_dirs=2, seed=0)
    assert set(res.runs) == {1.0, 0.5} and res.dropout_keep == 0.5
    target = res.runs[0.5].loss[-1]
    assert res.matched is not None and res.matched.loss[-1] <= target
    assert (res.matched.loss[:-1] > target).all()               # stopped at the *first* step below
    assert len(res.matched.loss) < len(res.runs[1.0].loss) * 5  # a prefix of the plain run (loss every step)
    assert res.profiles[0.5].shape == res.alphas.shape == res.matched_profile.shape
    assert res.rise(np.where(np.abs(res.alphas) < 1e-9, 1.0, 3.0)) == pytest.approx(2.0)
    assert np.isnan(res.rise(None))
    with pytest.raises(ValueError, match="keeps"):
        fl.dropout_flatness((0.5, 0.8), width=10, steps=5)


def test_dropout_flatter_fails_when_a_profile_does_not_rise():
    """A profile that falls at α = ±0.1 is no minimum along those directions (图11.6 compares minima): a negative
    rise of the plain network must not turn into a negative ratio that passes "< 0.5", nor a falling dropout
    profile into a small one."""
    import dataclasses
    res = fl.dropout_flatness((1.0, 0.5), width=200, steps=1000, lr=6e-3, n_dirs=2, seed=1)  # as the positive twin
    assert fl.check_dropout_flatter(res).passed and res.rise(res.matched_profile) > 0
    plain_falls = dataclasses.replace(res, matched_profile=2 * res.matched_profile[res.alphas == 0] - res.matched_profile)
    assert plain_falls.rise(plain_falls.matched_profile) < 0
    v = fl.check_dropout_flatter(plain_falls)
    assert not v.passed, v.measured_line()
    drop_falls = dataclasses.replace(res, profiles={**res.profiles, 0.5: 2 * res.profiles[0.5][res.alphas == 0]
                                                    - res.profiles[0.5]})
    v = fl.check_dropout_flatter(drop_falls)
    assert not v.passed, v.measured_line()


def test_dropout_1d_runs_and_fits():
    run = fl.train_dropout_1d(1.0, width=50, steps=200, lr=3e-3, seed=0)
    assert run.loss[-1] < 0.2 * run.loss[0] and run.keep == 1.0
    assert float(fl.dropout_target(torch.tensor([0.0]))) == 0.0
    assert float(fl.dropout_target(torch.tensor([1.0]))) == pytest.approx(1 / 3)


def test_rescale_relu_keeps_function_changes_sharpness():
    x = torch.linspace(-1, 1, 30)[:, None]
    y = fl.dropout_target(x)
    net = fl.DropoutMLP([1, 40, 1], "relu", generator=generator(0))
    eff = fl.rescaling_effect(net, x, y, [0.2, 1.0, 5.0])
    assert eff.output_change.max() < 1e-4
    change = eff.sharpness / eff.sharpness[1]
    assert max(change[0], 1 / change[0]) > 1.5 and max(change[2], 1 / change[2]) > 1.5
    v = fl.check_rescaling_invariance(eff)
    assert len(v.conditions) == 3 and v.conditions[0].passed
    with pytest.raises(ValueError, match="c = 1"):
        without_one = [0, 2]
        fl.check_rescaling_invariance(fl.RescalingEffect(eff.c[without_one], eff.sharpness[without_one],
                                                         eff.output_change[without_one]))
    with pytest.raises(ValueError, match="c must be positive"):
        fl.rescale_relu(net, 0, -1.0)
    with pytest.raises(ValueError, match="layer"):
        fl.rescale_relu(net, 1, 2.0)


def test_exercise_checks(capsys):
    assert fl.check_stability_limit(0.2, lam=10.0)
    assert not fl.check_stability_limit(0.3, lam=10.0)
    assert not fl.check_stability_limit(None)
    x = torch.linspace(-1, 1, 20)[:, None]
    net = fl.DropoutMLP([1, 20, 1], "relu", generator=generator(0))
    assert fl.check_rescaling(lambda m, c: fl.rescale_relu(m, 0, c), net, x, fl.dropout_target(x))
    assert not fl.check_rescaling(lambda m, c: m, net, x, fl.dropout_target(x))
    assert "✔" in capsys.readouterr().out


def test_quadratic_animation_frames():
    anim = fl.quadratic_animation((0.1, 0.21), steps=3)
    lines = anim._func(3)
    assert len(lines) == 2 and all(len(line.get_xdata()) == 4 for line in lines)


# ---------------------------------------------------------------- SGD noise
def test_per_sample_gradients_average_to_full_gradient():
    d, net = small_problem(20, 8)
    g = fl.per_sample_gradients(net, d.x, d.y)
    theta, _ = L.flatten_params(net)
    full = L.gradient(fl.full_loss(net, d.x, d.y), theta)
    assert g.shape == (20, theta.numel())
    assert torch.allclose(g.mean(0), full, atol=1e-6)


def test_noise_factor_gives_sgd_covariance():
    g = torch.randn(12, 5, generator=generator(0), dtype=torch.float64)
    c = fl.noise_factor(g, 3)
    centred = g - g.mean(0)
    sigma = centred.T @ centred / 12 / 3
    assert torch.allclose(c.T @ c, sigma)
    with pytest.raises(ValueError, match="batch_size"):
        fl.noise_factor(g, 0)


def test_alignment_trace_identity():
    """Tr(HΣ) from n HVPs equals the dense trace; the isotropic value uses the same Tr(Σ)."""
    d, net = small_problem(16, 4)
    a = fl.noise_alignment(net, d.x, d.y, batch_size=4, n_probes=400, generator=generator(0))
    theta, _ = L.flatten_params(net)
    h = L.full_hessian(fl.full_loss(net, d.x, d.y), theta.double())
    c = fl.noise_factor(fl.per_sample_gradients(net, d.x, d.y), 4).double().numpy()
    assert a.tr_h_sigma == pytest.approx(np.trace(h @ c.T @ c), rel=1e-3)
    assert a.tr_sigma == pytest.approx((c * c).sum(), rel=1e-4)
    assert a.tr_h == pytest.approx(np.trace(h), rel=0.15)
    assert a.ratio == pytest.approx(a.tr_h_sigma * a.dim / (a.tr_h * a.tr_sigma))
    # the span baseline: Π projects on the span of the centred gradients (rank n − 1)
    u, s, vt = np.linalg.svd(c, full_matrices=False)
    q = vt[s > s[0] * 1e-6]
    assert a.rank == q.shape[0] == 15
    assert a.tr_h_span == pytest.approx(np.trace(q @ h @ q.T), rel=1e-3)
    assert a.span_ratio == pytest.approx(a.tr_h_sigma * a.rank / (a.tr_h_span * a.tr_sigma))


def test_directional_flatness_on_known_quadratic_loss():
    """For L = ½θᵀHθ + L0 along an eigen-direction of curvature h, L = e·L0 at δ = ±√(2(e−1)L0/h)."""

    class Quad(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(2))

        def forward(self, x):
            return (self.w * torch.tensor([2.0, 1.0]) * x[:, :2]).sum(1, keepdim=True)

    net = Quad()
    x = torch.tensor([[1.0, 1.0], [1.0, 1.0]])
    y = torch.tensor([[1.0], [1.0]])   # L(w) = ½(2w₀ + w₁ − 1)²: L0 = ½ at w = 0
    dirs = torch.eye(2)
    F = fl.directional_flatness(net, dirs, x, y)
    # along w₀: ½(2δ − 1)² = e/2 → δ = (1 ± √e)/2; along w₁: (1 ± √e)
    assert F[0] == pytest.approx(np.sqrt(np.e), rel=1e-4)
    assert F[1] == pytest.approx(2 * np.sqrt(np.e), rel=1e-4)
    with pytest.raises(ValueError, match="factor"):
        fl.directional_flatness(net, dirs, x, y, factor=0.5)
    with pytest.raises(ValueError, match="directions"):
        fl.directional_flatness(net, torch.eye(3), x, y)


@pytest.mark.parametrize("seed", [1, 2])
def test_feng_tu_noise_largest_along_sharp_directions(seed):
    """After SGD the top noise directions are the sharpest: σ_i² falls steeply with F_i; isotropic noise of
    the same size has nearly equal variances along its directions, whatever their flatness."""
    d = standardised_digits(64)
    net = fl.DropoutMLP([64, 32, 10], "tanh", generator=generator(seed))
    fl.train_tracked(net, d.x, d.y, eta=0.25, steps=300, batch_size=8, track_every=300,
                     generator=generator(seed))
    ft = fl.feng_tu(net, d.x, d.y, 8, k=20)
    assert ft.variances.shape == (20,) and np.all(np.diff(ft.variances) <= 1e-12) and np.all(ft.flatness > 0)
    c = fl.noise_factor(fl.per_sample_gradients(net, d.x, d.y), 8).double()
    assert ft.variances[0] == pytest.approx(float(torch.linalg.matrix_norm(c, 2)) ** 2, rel=1e-5)
    assert ft.slope < -1 and ft.spearman < -0.6
    iso = fl.isotropic_factor(net, d.x, d.y, 8, generator=generator(seed))
    ft_iso = fl.feng_tu(net, d.x, d.y, 8, k=20, factor=iso)
    assert ft_iso.variances[0] / ft_iso.variances[-1] < 3 and abs(ft_iso.slope) < 1


def test_feng_tu_and_isotropic_noise_size():
    d, net = small_problem(30, 8)
    fl.train_tracked(net, d.x, d.y, eta=0.2, steps=100, batch_size=4, track_every=100,
                     generator=generator(0))
    iso = fl.isotropic_factor(net, d.x, d.y, 4, m=200, generator=generator(0))
    c = fl.noise_factor(fl.per_sample_gradients(net, d.x, d.y), 4)
    assert iso.shape == (200, c.shape[1])
    assert float((iso ** 2).sum()) == pytest.approx(float((c * c).sum()), rel=0.05)
    hook = fl.isotropic_noise(d.x, d.y, 4, refresh_every=5, generator=generator(0))
    eps = torch.stack([hook(net, s) for s in range(1, 5)] + [hook(net, 5)])
    c = fl.noise_factor(fl.per_sample_gradients(net, d.x, d.y), 4)
    # ‖ε‖² ≈ D σ² = Tr(Σ): isotropic noise of the SGD noise's total size
    assert float((eps[-1] ** 2).sum()) == pytest.approx(float((c * c).sum()), rel=0.1)
    with pytest.raises(ValueError, match="refresh_every"):
        fl.isotropic_noise(d.x, d.y, 4, refresh_every=0, generator=generator(0))


# ---------------------------------------------------------------- the settings' device
@pytest.fixture
def on_meta_device(monkeypatch):
    """The trainers' model on the meta device (tests/device_support.py), two steps and one record per run, numbers
    read there as zero; while the model is there no torch call may mix devices (the networks are built on the CPU
    before, through meta tensors of their own): a tensor left on the CPU fails, as it would on a GPU.  Yields the
    records."""
    from device_support import MetaReadsAsZeros, OneDevicePerCall, on_meta, steps_only

    @contextlib.contextmanager
    def checked_on_meta(model):
        with on_meta(model) as device, OneDevicePerCall():
            yield device

    records = []
    monkeypatch.setattr(fl.engine, "on_device", checked_on_meta)
    monkeypatch.setattr(fl.engine, "run", steps_only(records))
    with MetaReadsAsZeros():
        yield records


def test_train_tracked_with_mini_batches_and_langevin_noise_runs_on_the_settings_device(on_meta_device):
    """train_fresh → train_tracked: mini-batches, the GLD hook (per-sample gradients, noise) and the power
    iteration's cold start all where the model is; the model and θ come back to the CPU."""
    d = standardised_digits(12)
    run = fl.train_fresh.__wrapped__([64, 8, 10], d.x, d.y, seed=0, batches=2, eta=0.1, steps=2, batch_size=4,
                                     gld_batch=4, progress=False)
    assert on_meta_device == [{"loss": 0.0, "sharpness": 0.0}]   # both read from the meta device
    assert run.theta.device.type == "cpu" and not run.theta.any()  # the meta parameters came back as zeros
    assert {p.device.type for p in run.model.parameters()} == {"cpu"}


def test_dropout_flatness_trains_on_the_settings_device(on_meta_device):
    """The 1-D ReLU nets (Adam, dropout masks drawn on the CPU) train where the model is; the profiles read the
    models back on the CPU."""
    res = fl.dropout_flatness.__wrapped__((1.0, 0.5), width=8, n=6, steps=2, n_dirs=1)
    assert len(on_meta_device) == 3 and all(row == {"loss": 0.0, "sharpness": 0.0} for row in on_meta_device)
    assert {p.device.type for run in (*res.runs.values(), res.matched) for p in run.model.parameters()} == {"cpu"}


def test_ensembles_train_on_the_settings_device(on_meta_device):
    """SGD (each member its own mini-batches), then GD and the three GLDs of 表11.2 as one network (noise trace and
    diagonal, noise drawn on the CPU), then the two Hessian-aligned GLDs as a third (subspace iteration, divergence
    check) of train_ensembles."""
    data = digits(12, 6, standardise=True)
    res = fl.train_ensembles.__wrapped__([64, 8, 10], data, members=2, eta=0.1, steps=2, batch_size=4,
                                         refresh_every=1)
    assert len(on_meta_device) == 3 and res.test_accuracy.shape == (7, 2)


def test_explorer_run_is_on_the_settings_device(on_meta_device):
    """explore_training: mini-batches, dropout and the explorer's power iteration where the model is."""
    run = fl.explore_training.__wrapped__(0.3, 16, 0.8, 8, steps=2)
    assert on_meta_device == [{"loss": 0.0, "sharpness": 0.0}]
    assert run.theta.device.type == "cpu" and not run.theta.any()


def test_the_noise_and_flatness_analyses_run_on_the_settings_device(on_meta_device, monkeypatch):
    """§11.3's analyses of a trained model — Tr(HΣ), Tr(HΠ) and Hutchinson's Tr(H); the Feng–Tu noise directions
    and their flatness; the loss profiles of 图11.3 and 图11.6 — where the model is; the model comes back to the
    CPU.  What the meta device reads as zeros has no ratio or slope: those few lines of arithmetic are stubbed."""
    d = standardised_digits(12)
    model = fl.train_fresh.__wrapped__([64, 8, 10], d.x, d.y, seed=0, batches=1, eta=0.1, steps=1, progress=False).model
    monkeypatch.setattr(fl, "Alignment", lambda *values: values)
    monkeypatch.setattr(fl.np, "polyfit", lambda *args, **kwargs: np.zeros(2))
    monkeypatch.setattr(fl, "spearmanr", lambda *args: (0.0, 1.0))
    alignment = fl.noise_alignment.__wrapped__(model, d.x, d.y, 4, n_probes=2, generator=generator(0))
    ft = fl.feng_tu.__wrapped__(model, d.x, d.y, 4, k=2)
    theta = torch.zeros(sum(p.numel() for p in model.parameters()))
    isotropic = torch.randn(3, len(theta), generator=generator(1))  # a noise factor given on the CPU
    fl.noise_alignment.__wrapped__(model, d.x, d.y, 4, n_probes=1, generator=generator(0), factor=isotropic)
    fl.feng_tu.__wrapped__(model, d.x, d.y, 4, k=2, factor=isotropic)
    loss, accuracy = fl.interpolation_profile(model, theta, theta, np.array([0.0, 1.0]), d.x, d.y, labels=d.labels)
    assert alignment[:3] == (0.0, 0.0, 0.0) and not ft.flatness.any() and not loss.any()  # read from the meta device
    assert {p.device.type for p in model.parameters()} == {"cpu"}


# ---------------------------------------------------------------- dropout on digits (表11.3, 图11.7(a))
def test_batched_dropout_mlp_drops_per_member_only_while_training():
    """Member k keeps units with probability keep[k]: a keep-1 member is the plain BatchedMLP, a keep < 1 member
    differs while training, and in evaluation mode no member drops anything."""
    x = torch.randn(5, 4, generator=generator(1))
    net = fl.BatchedDropoutMLP([4, 30, 3], [1.0, 0.5], "relu", 0.5, generator=generator(0),
                               mask_generator=generator(2))
    plain = fl.BatchedMLP([4, 30, 3], 2, "relu", init_std=0.5, generator=generator(0))
    net.train()
    out = net(x)
    assert torch.allclose(out[0], plain(x)[0]) and not torch.allclose(out[1], plain(x)[1])
    assert torch.allclose(net.eval()(x), plain(x))
    with pytest.raises(ValueError, match="keep"):
        fl.BatchedDropoutMLP([4, 3, 2], [1.0, 0.0], generator=generator(0), mask_generator=generator(1))


def test_batched_filter_direction_matches_each_members_neuron_norms():
    net = fl.BatchedMLP([4, 6, 3], 3, "relu", init_std=torch.tensor([0.1, 1.0, 3.0]), generator=generator(0))
    dw, db = fl.batched_filter_direction(net, generator(1))
    for w, b, d, e in zip(net.weights, net.biases, dw, db):
        assert d.shape == w.shape and e.shape == b.shape
        own = torch.cat([w.detach(), b.detach()], 1).norm(dim=1)            # (K, m_{l+1})
        assert torch.allclose(torch.cat([d, e], 1).norm(dim=1), own, rtol=1e-5)


def test_dropout_digits_pairs_the_initialisations_and_profiles_start_at_the_training_loss():
    res = fl.dropout_digits.__wrapped__(0.8, members=2, widths=(64, 16, 10), n_train=64, steps=30, batch_size=16,
                                        n_dirs=2, alphas=np.array([-0.5, 0.0, 0.5]), seed=0)
    acc = res.accuracy
    assert acc.dynamics == ("dropout", "plain") and acc.test_accuracy.shape == (2, 2) and acc.n_test == 1797 - 64
    assert res.profiles.shape == (2, 2, 3)
    assert np.allclose(res.profiles[:, :, 1], acc.train_loss, rtol=1e-4)   # L(0) is the training loss
    assert res.rise(0.5).shape == (2, 2)
    with pytest.raises(ValueError, match="keep"):
        fl.dropout_digits.__wrapped__(0.0, members=2)


def test_dropout_landscape_fails_when_a_landscape_does_not_rise():
    """A mean rise ≤ 0 is no minimum along the probed directions: the ratio is undefined and the claim fails, for
    either arm, instead of a ratio ≤ 0 passing "< 0.5"."""
    import dataclasses
    res = fl.dropout_digits.__wrapped__(0.8, members=2, widths=(64, 16, 10), n_train=64, steps=30, batch_size=16,
                                        n_dirs=1, alphas=np.array([-0.2, 0.0, 0.2]), seed=0)
    bowl = np.array([[[1.0, 0.0, 1.0]] * 2, [[4.0, 0.0, 4.0]] * 2])      # (arm, member, alpha): rises 1 and 4
    assert fl.check_dropout_landscape(dataclasses.replace(res, profiles=bowl)).conditions[1].value == 0.25
    for arm in (0, 1):
        profiles = bowl.copy()
        profiles[arm] = -profiles[arm]                                      # falls on both sides
        v = fl.check_dropout_landscape(dataclasses.replace(res, profiles=profiles))
        assert math.isnan(v.conditions[1].value) and not v.passed, v.measured_line()


def test_dropout_digits_trains_on_the_settings_device(on_meta_device):
    """Each net's mini-batches (drawn on the CPU) and the dropout masks where the model is; evaluation on the CPU."""
    res = fl.dropout_digits.__wrapped__(0.8, members=2, widths=(64, 8, 10), n_train=12, steps=2, batch_size=4,
                                        n_dirs=1, alphas=np.array([0.0]), seed=0)
    assert res.accuracy.test_accuracy.shape == (2, 2)


def test_edge_span_trains_on_the_settings_device(on_meta_device):
    """表11.4 over a span: every η's members (MemberwiseStep), their mini-batches (SGD) and the batched power
    iteration where the model is."""
    for batch_size in (None, 4):
        span = fl.edge_span.__wrapped__((0.01, 0.1), inits=2, steps=2, track_every=1, batch_size=batch_size,
                                        widths=(64, 8, 10), n=12)
        assert span.sharpness.shape[1:] == (2, 2)
    assert len(on_meta_device) == 2
