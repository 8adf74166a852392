"""Neuron features, RD, cosine heat maps, cluster and kink counts, and the dropout regulariser (8.5)."""

import math

import numpy as np
import pytest
import torch

from companion.core import neurons as cond
from companion.experiments import ch08_condensation as ch08


def test_amplitude_and_orientation_follow_the_book():
    a = np.array([2.0, -1.0])
    w = np.array([[3.0, 4.0], [0.0, -1.0]])
    assert np.allclose(cond.amplitude(a, w), [10.0, 1.0])
    assert np.allclose(cond.orientation(w), [math.atan2(4, 3), -math.pi / 2])
    assert np.all(cond.orientation(np.array([[-1.0, 0.0]])) < math.pi)  # [−π, π)
    with pytest.raises(ValueError, match="shape"):
        cond.amplitude(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="1-D input"):
        cond.orientation(np.ones((4, 3)))


def test_projection_on_the_diagonal():
    w = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 0.0, 0.0]])
    assert np.allclose(cond.projection(w), [1.0, 0.0])


def test_relative_distance_single_and_batched():
    w0 = np.ones((3, 2))
    assert cond.relative_distance(w0 * 1.5, w0) == pytest.approx(0.5)
    batch0 = np.stack([w0, 2 * w0])
    rd = cond.relative_distance(np.stack([w0, 3 * w0]), batch0)
    assert np.allclose(rd, [0.0, 0.5])
    with pytest.raises(ValueError, match="share a shape"):
        cond.relative_distance(w0, np.ones((2, 2)))


def test_cosine_matrix_sorted_by_leading_eigenvector_groups_blocks():
    rng = np.random.default_rng(0)
    u1, u2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    rows = np.array([u1, u2, u1, u2, u1]) + 1e-3 * rng.standard_normal((5, 3))
    d = cond.cosine_similarity_matrix(rows)
    assert np.allclose(np.diag(d), 1.0) and d[0, 1] == pytest.approx(0.0, abs=1e-2)
    d_sorted, order = cond.sorted_cosine_matrix(rows)
    groups = [set(order[:3]), set(order[3:])] if len(set(order[:3]) & {0, 2, 4}) == 3 else [set(order[2:]), set(order[:2])]
    assert {0, 2, 4} in groups and {1, 3} in groups
    assert np.allclose(d_sorted, d_sorted.T)


def test_alignment_eigenvalue_one_line_vs_spread():
    line = np.outer([1, -2, 3, -1], [0.6, 0.8])  # ±ŵ on one line
    assert cond.alignment_eigenvalue(line) == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    spread = rng.standard_normal((2000, 4))
    assert cond.alignment_eigenvalue(spread) < 0.35


def test_cluster_counts_and_occupied_fraction():
    rng = np.random.default_rng(2)
    angles = np.concatenate([0.5 + 0.01 * rng.standard_normal(20), -2.0 + 0.01 * rng.standard_normal(20)])
    assert cond.count_angle_clusters(angles) == 2
    # near ±π the wrap-around keeps one cluster
    assert cond.count_angle_clusters(np.array([math.pi - 0.01, -math.pi + 0.01])) == 1
    amp = np.concatenate([np.ones(40), 1e-6 * np.ones(10)])
    with_noise = np.concatenate([angles, np.linspace(-3, 3, 10)])
    assert cond.count_angle_clusters(with_noise, amp) == 2  # the tiny-amplitude neurons do not count
    uniform = np.linspace(-math.pi, math.pi, 360, endpoint=False)
    assert cond.occupied_fraction(uniform) == 1.0 and cond.occupied_fraction(angles) < 0.1
    # a uniform spread is not one cluster: with no gap above `gap` (a ring) or with a single one
    assert cond.count_angle_clusters(uniform) == 63 and cond.count_angle_clusters(uniform, gap=0.3) == 21
    one_gap = uniform[(uniform < 0) | (uniform > 0.5)]
    assert cond.count_angle_clusters(one_gap) > 50
    assert cond.cluster_widths(one_gap)[0] == pytest.approx(2 * math.pi - 0.5 - 2 * math.pi / 360, abs=0.02)
    gaps = cond.angle_gaps(angles)
    assert gaps.sum() == pytest.approx(2 * math.pi) and gaps[1] > 2.0 and gaps[2] < 0.1  # two clusters
    assert np.all(cond.cluster_widths(angles) < 0.1)
    w = np.array([[1.0, 0.0], [1.0, 0.01], [-1.0, 0.0], [0.0, 1.0]])
    assert cond.count_direction_clusters(w) == 3


def test_kink_count_of_piecewise_linear_and_smooth_curves():
    x = np.linspace(-1, 1, 2001)
    assert cond.count_kinks(x, np.abs(x - 0.1) + np.maximum(x - 0.5, 0)) == 2
    assert cond.count_kinks(x, 0.3 * x + 1) == 0
    rng = np.random.default_rng(0)
    breaks = np.sort(rng.uniform(-0.95, 0.95, 60))
    jagged = sum(s * np.maximum(x - c, 0) for s, c in zip(rng.choice([-1.0, 1.0], 60), breaks))
    assert 50 <= cond.count_kinks(x, jagged) <= 60  # breakpoints closer than the grid merge
    with pytest.raises(ValueError, match="increasing"):
        cond.count_kinks(x[::-1], x)


def test_dropout_regulariser_matches_monte_carlo_and_the_book_formula():
    rng = np.random.default_rng(3)
    a, hidden, y = rng.standard_normal(6), np.abs(rng.standard_normal((5, 6))), rng.standard_normal(5)
    p = 0.8
    r1 = cond.dropout_regulariser(a, hidden, p)
    assert r1 == pytest.approx((1 - p) / (2 * 5 * p) * ((hidden * a) ** 2).sum())
    r_s = 0.5 * np.mean((hidden @ a - y) ** 2)
    mean, se = cond.dropout_risk_monte_carlo(a, hidden, y, p, n_masks=100_000, seed=0)
    assert abs(mean - (r_s + r1)) < 4 * se
    assert cond.dropout_regulariser(a, hidden, 1.0) == 0.0
    with pytest.raises(ValueError, match="keep probability"):
        cond.dropout_regulariser(a, hidden, 0.0)


def test_dead_neurons_and_first_plateau():
    w = np.array([[1.0, -2.0], [1.0, 0.0], [-1.0, -1.5]])
    assert ch08.dead_neurons(w, np.linspace(-1, 1, 5)).tolist() == [True, False, True]
    steps = np.arange(10) * 10
    loss = np.array([1.0, 0.4, 0.3, 0.3, 0.3, 0.29, 0.29, 0.1, 0.05, 0.05])
    assert ch08.first_plateau(steps, loss, window=0.2) == (20, 70)
    with pytest.raises(ValueError, match="never fell"):
        ch08.first_plateau(steps, np.ones(6))


def test_target_8_2_values():
    x = torch.tensor([-1.0, 0.0, 1.0])
    assert torch.allclose(ch08.target_8_2(x), torch.tensor([0.0, 0.6, 0.8]), atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_condensation_run_condenses_on_the_plateau(seed):
    res = ch08.run_condensation(width=40, init_std=1e-3, steps=1500, n_snapshots=4, seed=seed)
    assert res.outputs.shape == (4, 401) and res.w.shape == (4, 40, 2)
    assert ch08.clusters_at(res, 0) > 5  # random initial orientations
    assert ch08.clusters_at(res, 1000) == 1  # one cluster on the plateau
    assert cond.angle_gaps(cond.orientation(res.w[2]), cond.amplitude(res.a[2], res.w[2]))[1] < 0.1


def test_a_dense_non_condensed_net_is_not_one_cluster():
    # 2000 neurons at a large initialisation, untrained: orientations uniform round the circle with no gap
    # above 0.1 rad among the amplitude-carrying ones — a ring, which an earlier version counted as 1
    res = ch08.run_condensation(width=2000, init_std=1.0, steps=1, n_snapshots=2, seed=3)
    amp, ang = cond.amplitude(res.a[0], res.w[0]), cond.orientation(res.w[0])
    assert cond.angle_gaps(ang, amp)[0] < 0.1
    assert cond.count_angle_clusters(ang, amp) >= 50
    assert cond.occupied_fraction(ang, amp) == 1.0
    with pytest.raises(ValueError, match="width"):
        ch08.run_condensation(width=0)


def test_target_8_13_and_total_variation():
    x = torch.tensor([-6.0, 0.0, 6.0])
    assert torch.allclose(ch08.target_8_13(x), torch.tensor([-math.tanh(12), 0.0, math.tanh(12)]), atol=1e-6)
    grid = np.linspace(-10, 10, 2001)
    assert ch08.total_variation(np.tanh(grid - 6) + np.tanh(grid + 6)) == pytest.approx(4.0, abs=0.01)
    curves = np.stack([grid, np.sin(np.pi * grid)])  # monotone: TV = 20; 20 half-waves: TV = 40
    assert np.allclose(ch08.total_variation(curves), [20.0, 40.0], atol=1e-3)
    with pytest.raises(ValueError, match="2 grid points"):
        ch08.total_variation(np.ones(1))


def test_dropout_fit_orders_members_and_keeps_linear_regime_init():
    x = torch.linspace(-10, 10, 6).reshape(-1, 1)
    grid = torch.linspace(-10, 10, 50).reshape(-1, 1)
    fit = ch08.run_dropout_fit(x, ch08.target_8_13(x).ravel(), keeps=(1.0, 0.8), trials=2, width=30,
                               steps=200, grid=grid, seed=0)
    assert fit.keep.tolist() == pytest.approx([1.0, 0.8, 1.0, 0.8])
    assert fit.outputs.shape == (4, 50) and fit.w.shape == (4, 30, 2) and fit.rd.shape == (4,)
    assert np.allclose(fit.rd, cond.relative_distance(fit.w, fit.w0), rtol=1e-5)  # RD (7.3) of w
    assert np.all(fit.rd > 1e-3)  # every member's input weights moved measurably
    assert np.all(fit.risk[-1] < 0.5 * fit.risk[0])  # and every member's risk fell, dropout or not
    assert np.std(fit.a0) == pytest.approx(1.0, rel=0.3)  # a ~ N(0, 1): the linear regime
    with pytest.raises(ValueError, match="keep"):
        ch08.run_dropout_fit(x, x.ravel(), keeps=(1.2,))
    with pytest.raises(ValueError, match="width"):
        ch08.run_dropout_fit(x, x.ravel(), width=0)


def test_dropout_fit_shared_init_starts_each_trial_from_one_point():
    x = torch.linspace(-10, 10, 6).reshape(-1, 1)
    y = ch08.target_8_13(x).ravel()
    fit = ch08.run_dropout_fit(x, y, keeps=(1.0, 0.8, 1.0), trials=2, width=20, steps=50, shared_init=True, seed=0)
    for name in ("a0", "w0"):
        start = getattr(fit, name)
        assert np.array_equal(start[0], start[1]) and np.array_equal(start[0], start[2])  # one start per trial
        assert np.array_equal(start[3], start[5]) and not np.array_equal(start[0], start[3])  # trials differ
    assert np.allclose(fit.a[0], fit.a[2], atol=1e-6) and np.allclose(fit.w[0], fit.w[2], atol=1e-6)  # p = 1 twice
    assert not np.allclose(fit.w[0], fit.w[1], atol=1e-3)  # dropout alone changes the run
    unshared = ch08.run_dropout_fit(x, y, keeps=(1.0, 0.8), width=20, steps=1, seed=0)
    assert not np.array_equal(unshared.a0[0], unshared.a0[1])  # by default each member has its own start
    with pytest.raises(ValueError, match="shared_init"):
        ch08.run_dropout_fit(x, y, small=ch08.SMALL_INIT, shared_init=True)


@pytest.mark.parametrize("seed", [3, 4])
def test_dropout_sample_size_shape_and_more_data_helps(seed):
    err = ch08.run_dropout_sample_size((2, 12), keeps=(1.0, 0.9), trials=1, width=40, steps=600, seed=seed)
    assert err.shape == (2, 2)
    grid = torch.linspace(-10, 10, 401)
    zero_error = 0.5 * float((ch08.target_8_13(grid) ** 2).mean())  # test error of the zero function
    assert np.all(err[1] < 0.5 * zero_error)  # 12 samples pin the teacher down, with or without dropout
    assert err[1, 0] < 0.5 * err[0, 0]  # 12 samples of the teacher beat 2 by far
    with pytest.raises(ValueError, match="sample sizes"):
        ch08.run_dropout_sample_size((0, 4))


def test_batched_conv_net_matches_conv2d_and_keeps_members_apart():
    from companion.core.nets import BatchedConvNet
    from companion.kit.seeds import generator

    net = BatchedConvNet(8, 4, 10, 2, conv_std=[0.5, 1e-3], fc_std=0.1, generator=generator(0))
    images = torch.rand(5, 8, 8, generator=generator(1))
    feats = net.features(images)  # (K, N, P, C)
    assert feats.shape == (2, 5, 36, 4)
    for k in range(2):  # member k's layer is an ordinary 3×3 convolution followed by tanh
        conv = torch.nn.functional.conv2d(images[:, None], net.kernels[k].reshape(4, 1, 3, 3), net.conv_bias[k])
        assert torch.allclose(feats[k], torch.tanh(conv).flatten(2).transpose(1, 2), atol=1e-6)
    assert net(images).shape == (2, 5, 10)
    assert net.kernels[1].abs().max() < 0.01 < net.kernels[0].abs().max()  # one std per member
    net(images)[0].sum().backward()
    assert net.kernels.grad[1].abs().max() == 0  # member 1 gets no gradient from member 0's output


def test_line_share_of_one_line_and_of_random_directions():
    u = np.outer(np.where(np.arange(32) % 2, 1.0, -1.0), np.arange(1.0, 10.0))  # ±one vector: one line
    assert ch08.line_share(cond.cosine_similarity_matrix(u)) == pytest.approx(1.0)
    spread = np.random.default_rng(0).normal(size=(400, 9))
    assert ch08.line_share(cond.cosine_similarity_matrix(spread)) < 0.2
    outputs = np.random.default_rng(1).normal(size=(7, 5, 3))
    assert ch08.channel_cosines(outputs).shape == (3, 3)


def test_line_sides_counts_the_two_opposite_directions_and_upsampled_keeps_the_digits():
    signs = np.where(np.arange(32) < 9, -1.0, 1.0)  # 9 kernels on −û, 23 on +û
    u = np.outer(signs, np.arange(1.0, 10.0)) * np.linspace(0.5, 2, 32)[:, None]
    assert ch08.line_sides(cond.cosine_similarity_matrix(u)) == (23, 9)
    assert ch08.line_sides(cond.cosine_similarity_matrix(np.abs(u))) == (32, 0)  # one direction, not two
    with pytest.raises(ValueError, match="square"):
        ch08.line_sides(np.ones((2, 3)))
    x = torch.rand(5, 64)
    assert torch.equal(ch08.upsampled(x, 8), x.reshape(5, 8, 8))
    big = ch08.upsampled(x, 12)
    assert big.shape == (5, 12, 12) and big.min() >= x.min() - 1e-6 and big.max() <= x.max() + 1e-6
    with pytest.raises(ValueError, match="image_size"):
        ch08.run_cnn_condensation.__wrapped__(n_train=20, n_test=10, channels=2, steps=10, image_size=6)


def test_ramp_distance_is_zero_for_one_neuron_and_positive_for_the_target():
    x = np.linspace(-1, 1, 401)
    assert ch08.ramp_distance(x, 0.7 * np.maximum(x - 0.2, 0)) < 1e-3  # one neuron, kink inside
    assert ch08.ramp_distance(x, -2.0 * np.maximum(0.3 - x, 0)) < 1e-3  # the other sign
    assert ch08.ramp_distance(x, 1.5 * (x + 1.5)) < 1e-3  # kink outside [−1, 1]: a straight line
    target = ch08.target_8_2(torch.as_tensor(x)).numpy()
    assert ch08.ramp_distance(x, target) == pytest.approx(0.266, abs=0.005)
    with pytest.raises(ValueError, match="identically zero"):
        ch08.ramp_distance(x, np.zeros_like(x))


def test_stall_witness_finds_two_stalls_separated_by_falls():
    steps = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048])
    loss = np.array([1.0, 1.0, 1.0, 0.999, 0.998, 0.99, 0.6, 0.1, 0.099, 0.098, 0.097, 0.02, 0.004])
    t1, t2 = ch08.stall_witness(steps, loss)
    assert t1 <= 8 and 64 <= t2 <= 256
    smooth = np.concatenate([[1.0], 0.7 ** np.arange(1, 13)])  # falls by 30% every record: no stall at all
    t1, t2 = ch08.stall_witness(steps, smooth)
    assert 1 - smooth[list(steps).index(2 * t1)] / smooth[list(steps).index(t1)] > ch08.STALL_FALL


def test_per_member_data_and_sample_weights_train_like_separate_runs():
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    x1, x2 = torch.linspace(-1, 1, 5, dtype=torch.float64), torch.linspace(-1, 1, 3, dtype=torch.float64)
    y1, y2 = torch.sin(3 * x1), torch.cos(2 * x2)
    x = torch.zeros(2, 5, 1, dtype=torch.float64)
    x[0, :, 0], x[1, :3, 0] = x1, x2
    y = torch.zeros(2, 5, dtype=torch.float64)
    y[0], y[1, :3] = y1, y2
    weight = torch.tensor([[1.0] * 5, [1.0] * 3 + [0.0] * 2])
    both = TwoLayerEnsemble(1, 20, n_members=2, dtype=torch.float64, seed=4)
    one = [TwoLayerEnsemble(1, 20, n_members=2, dtype=torch.float64, seed=4) for _ in range(2)]
    for opt, lr in (("gd", 0.05), ("adam", 1e-2)):
        train_ensemble(both, x, y, steps=40, lr=lr, optimizer=opt, sample_weight=weight, progress=False)
        for k, (xk, yk) in enumerate(((x1, y1), (x2, y2))):
            train_ensemble(one[k], xk[:, None], yk, steps=40, lr=lr, optimizer=opt, progress=False)
            assert torch.allclose(both.w.detach()[k], one[k].w.detach()[k], atol=1e-10)
            assert torch.allclose(both.a.detach()[k], one[k].a.detach()[k], atol=1e-10)
    with pytest.raises(ValueError, match="per-member data"):
        train_ensemble(both, x, y[:, :4], steps=1, lr=0.1)
    with pytest.raises(ValueError, match="sample_weight"):
        train_ensemble(both, x, y, steps=1, lr=0.1, sample_weight=torch.zeros(2, 5))


def test_memberwise_adam_equals_torch_adam():
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(-1, 1)
    y = torch.sin(3 * x.ravel())
    ens = TwoLayerEnsemble(1, 15, beta1=[1.0, 0.1], beta2=1.0, alpha=[4.0, 1.0], dtype=torch.float64, seed=2)
    nets = [ens.member(k) for k in range(2)]
    train_ensemble(ens, x, y, steps=60, lr=[1e-2, 3e-3], optimizer="adam", progress=False)
    for k, (net, lr) in enumerate(zip(nets, [1e-2, 3e-3])):
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        for _ in range(60):
            opt.zero_grad()
            net.risk(x, y).backward()
            opt.step()
        assert torch.allclose(ens.a.detach()[k], net.a.detach(), atol=1e-10)
        assert torch.allclose(ens.w.detach()[k], net.w.detach(), atol=1e-10)


def test_the_residual_and_convolutional_runs_train_on_the_settings_device(monkeypatch):
    """图8.11's residual net (raw tensors on the settings' device) and 图8.5's CNN (the module through on_device), with
    the device another one (tests/device_support.py): a tensor left on the CPU fails, as it would on a GPU."""
    from types import SimpleNamespace

    from device_support import META, OneDevicePerCall, on_meta, steps_only

    records = []
    monkeypatch.setattr(ch08, "settings", lambda: SimpleNamespace(device=META))
    monkeypatch.setattr(ch08, "on_device", on_meta)
    monkeypatch.setattr(ch08, "run", steps_only(records))
    with OneDevicePerCall(), np.errstate(invalid="ignore", divide="ignore"):  # the stand-ins' zeros: 0/0
        ch08.run_residual_condensation.__wrapped__(n_members=2, n=10, epochs=(1, 1, 1, 1, 2))
        ch08.run_cnn_condensation.__wrapped__(n_train=20, n_test=10, channels=2, steps=10, record_every=5)
    assert {value.device.type for row in records for value in row.values()} == {"meta"}
    assert len(records) == 2 and set(records[1]) == {"loss", "accuracy", "kernels", "bias", "fc", "fc_bias"}
