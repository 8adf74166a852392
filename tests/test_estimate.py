"""Tests of companion.experiments.ch10_estimate: model ranks, optimistic sizes, batched recovery experiments."""

import numpy as np
import pytest
import torch

from companion.experiments import ch10_estimate as S


def test_model_rank_f_nl_and_matrix():
    x = torch.randn(200, 2, dtype=torch.float64)
    assert S.model_rank(S.f_nonlinear, torch.tensor([1.0, 2.0, 0.0, 0.0], dtype=torch.float64), x) == 2
    assert S.model_rank(S.f_linear, torch.zeros(3, dtype=torch.float64), x) == 3
    generic = torch.randn(32, dtype=torch.float64)
    assert S.model_rank(S.matrix_factorisation(4), generic, S.all_entries(4)) == 16
    with pytest.raises(ValueError, match="rtol"):
        S.model_rank(S.f_linear, torch.zeros(3), x, rtol=2.0)


def test_formulas_and_table():
    assert [S.optimistic_matrix(r, 4) for r in range(5)] == [0, 7, 12, 15, 16]
    assert S.optimistic_nn(2, 5) == 12
    t = S.table_10_1(28, 3, 1)
    assert t == {"CNN": 685, "CNN without sharing": 6760, "fully connected": 530660}
    assert S.table_10_1(28, 3, 2, m_null=1)["CNN without sharing"] == 2 * 6760 - 10
    with pytest.raises(ValueError, match="s ≤ d"):
        S.table_10_1(3, 5, 1)
    with pytest.raises(ValueError, match="rank r"):
        S.optimistic_matrix(5, 4)


def test_cnn_models():
    assert S.n_params_cnn_1d(2, 5, 3, shared=True) == 2 * 3 + 2 * 3
    assert S.n_params_cnn_1d(1, 5, 3, shared=False) == 3 + 9
    f = S.cnn_1d(1, 5, 3)
    x = torch.randn(50, 5, dtype=torch.float64)
    theta = torch.tensor([1.0, 1.0, 1.0, 0.6, 0.8, 1.0], dtype=torch.float64)
    w = torch.tensor([[0.6, 0.8, 1, 0, 0], [0, 0.6, 0.8, 1, 0], [0, 0, 0.6, 0.8, 1]], dtype=torch.float64)
    assert torch.allclose(f(theta, x), torch.tanh(x @ w.T).sum(1))
    with pytest.raises(ValueError, match="kernel size"):
        S.cnn_1d(1, 5, 6)


def test_matrix_completion_full_observation_recovers():
    rng = np.random.default_rng(0)
    targets = S.low_rank_targets(6, 4, 1, rng)
    assert np.allclose(np.linalg.norm(targets, axis=(1, 2)), 4)
    masks = S.random_masks(np.array([16] * 3 + [2] * 3), 4, rng)
    assert masks.sum((1, 2)).tolist() == [16] * 3 + [2] * 3
    err = S.complete_matrices(targets, masks, init_std=1e-3, lr=0.1, steps=3000, rng=rng)
    assert (err[:3] < 1e-3).all() and (err[3:] > 0.1).all()
    with pytest.raises(ValueError, match="observed entries"):
        S.random_masks(np.array([17]), 4, rng)


@pytest.mark.parametrize("seed", [1, 2])
def test_fit_linear_models_optimistic_sizes(seed):
    err_nl = S.fit_linear_models([(1, 1, 0)], np.array([2]), 6, nonlinear=True, init_std=1e-4, steps=5000, seed=seed)
    err_l = S.fit_linear_models([(1, 1, 0)], np.array([2]), 6, nonlinear=False, init_std=1e-4, steps=5000, seed=seed)
    assert np.median(err_nl) < 1e-8 < 1e-3 < np.median(err_l)
    big = S.fit_linear_models([(1, 1, 0)], np.array([2]), 6, nonlinear=True, init_std=0.3, steps=5000, seed=seed)
    assert np.median(big) > 1e-3  # a large init loses the optimistic size


def test_curvature_step_converges_ill_conditioned_samples():
    """f_L on 3 samples: the per-cell step lr = 0.5/λ_max leaves far fewer cells unconverged than lr 0.05."""
    kw = dict(nonlinear=False, init_std=1e-4, steps=20_000, seed=4)
    fixed = S.fit_linear_models([(1, 0, 0)], np.array([3]), 200, lr=0.05, **kw)
    curvature = S.fit_linear_models([(1, 0, 0)], np.array([3]), 200, **kw)
    assert (curvature > 1e-8).mean() < 0.7 * (fixed > 1e-8).mean()
    assert np.isfinite(curvature).all()
    untrained = S.fit_linear_models([(1, 0, 0)], np.array([3]), 4, nonlinear=False, init_std=1e-4, steps=0)
    assert np.median(untrained) > 0.5  # 0 steps: the model is still ≈ 0, the target is 1
    with pytest.raises(ValueError, match="init_std"):
        S.fit_linear_models([(1, 0, 0)], np.array([2]), 2, nonlinear=True, init_std=0.0)


def test_target_10_18_and_architectures():
    x = torch.randn(40, 5, dtype=torch.float64)
    cnn, m_cnn = S.net_10_3("CNN", 1)
    theta = torch.tensor([1.0, 1.0, 1.0, 0.6, 0.8, 1.0], dtype=torch.float64)
    assert torch.allclose(cnn(theta, x), S.target_10_18(x))
    assert [S.net_10_3(a, 2)[1] for a in S.ARCHITECTURES_10_3] == [12, 24, 12]
    assert m_cnn == 6
    with pytest.raises(ValueError, match="unknown architecture"):
        S.net_10_3("transformer", 2)
    with pytest.raises(ValueError, match="d = 5"):
        S.target_10_18(torch.randn(3, 4))


def test_fit_nets_10_18_recovers_with_enough_samples():
    err = S.fit_nets_10_18("CNN", np.array([2, 24]), 3, width=1, steps=1500, seed=0)
    assert err.shape == (2, 3)
    assert np.median(err[1]) < 1e-3 < np.median(err[0])
    with pytest.raises(ValueError, match="sample sizes"):
        S.fit_nets_10_18("CNN", np.array([0, 4]), 2, width=1)


def test_fit_nets_10_18_in_single_precision_recovers_like_double():
    """图10.3(b)–(d) trains in float32 (same draws, rounded): the same recovery, n = 24 but not n = 2."""
    single = S.fit_nets_10_18("CNN", np.array([2, 24]), 3, width=3, steps=1500, seed=0, precision="float32")
    double = S.fit_nets_10_18("CNN", np.array([2, 24]), 3, width=3, steps=1500, seed=0)
    for err in (single, double):
        assert np.median(err[1]) < 1e-3 < np.median(err[0])
    with pytest.raises(ValueError, match="precision"):
        S.fit_nets_10_18("CNN", np.array([2, 4]), 2, width=1, precision="float16")


def test_width_multiples_and_steps_of_10_3():
    """The "Nx" nets of 图10.3(b)–(d): 3N neurons for the fully connected net, N kernels for the CNNs; the step
    is lr up to 10x, then lr·10/N."""
    assert [S.width_10_3(a, 10) for a in S.PANELS_10_3] == [30, 10, 10]
    assert S.lr_10_3(10) == 0.3 and S.lr_10_3(34) == pytest.approx(3 / 34)
    with pytest.raises(ValueError, match="multiple"):
        S.width_10_3("CNN", 0)


def test_check_width_free_on_constant_linear_and_never_rows():
    """n* the same at every width passes (β = 0); n* = M (parameter counting, β = 1) fails; a row that never
    recovers fails (β is NaN, not a number that passes)."""
    ns, lo, hi = np.array([6, 18, 60]), 1e-4, 1.0

    def sweep(rows):
        return S.WidthSweep((1, 3, 10), {"CNN": ns}, {"CNN": np.array(rows)}, 1e-2)

    assert list(sweep([[lo] * 3] * 3).n_params("CNN")) == [6, 18, 60]
    free = sweep([[lo, lo, lo]] * 3)
    assert free.growth_exponent("CNN") == pytest.approx(0) and S.check_width_free(free, "CNN").passed
    counting = sweep([[lo, lo, lo], [hi, lo, lo], [hi, hi, lo]])
    assert counting.growth_exponent("CNN") == pytest.approx(1)
    assert not S.check_width_free(counting, "CNN").passed
    never = sweep([[lo, lo, lo], [lo, lo, lo], [hi, hi, hi]])
    assert np.isnan(never.growth_exponent("CNN")) and not S.check_width_free(never, "CNN").passed


@pytest.mark.parametrize("arch", S.ARCHITECTURES_10_3)
def test_fit_nets_10_18_trains_on_the_settings_device(monkeypatch, arch):
    """With the settings' device another one (tests/device_support.py), the steps of 图10.3's fits and their test
    error compute there: a sample or a parameter left on the CPU fails, as it would on a GPU."""
    from types import SimpleNamespace

    from device_support import META, OneDevicePerCall, steps_only

    records = []
    monkeypatch.setattr(S, "settings", lambda: SimpleNamespace(device=META))
    monkeypatch.setattr(S, "run", steps_only(records))
    with OneDevicePerCall():
        err = S.fit_nets_10_18.__wrapped__(arch, np.array([2, 4]), 2, width=2, steps=2, seed=0)
    assert records[0]["mse"].device.type == "meta" and records[0]["mse"].shape == (4,)
    assert err.shape == (2, 2)


@pytest.mark.parametrize("arch,width", [("CNN", 2), ("CNN without sharing", 2), ("fully connected", 3)])
def test_patch_form_gradient_equals_autograd(arch, width):
    """The closed-form GD step of 图10.3 is the gradient of the model's own mean squared error."""
    model, n_params = S.net_10_3(arch, width)
    gen = torch.Generator().manual_seed(0)
    theta = torch.randn(4, n_params, generator=gen, dtype=torch.float64).requires_grad_()
    x = torch.randn(4, 7, 5, generator=gen, dtype=torch.float64)
    y, weight = S.target_10_18(x), torch.rand(4, 7, generator=gen, dtype=torch.float64)
    a, k = S.patch_form(arch, width, theta.detach())
    assert torch.equal(S.theta_form(arch, a, k), theta.detach())
    f, grad_a, grad_k = S.patch_net_step(S.patches(arch, x), a.contiguous(), k.contiguous(), y, weight)
    assert torch.allclose(f, model(theta, x))
    (weight * (model(theta, x) - y) ** 2).sum().backward()
    assert torch.allclose(S.theta_form(arch, grad_a, grad_k), theta.grad)


def test_fit_linear_model_set_matches_single_fits():
    both = S.fit_linear_model_set([(1, 1, 0)], np.array([2, 3]), 4, [(True, 1e-4), (False, 1e-4)], steps=3000, seed=2)
    alone = S.fit_linear_models([(1, 1, 0)], np.array([2, 3]), 4, nonlinear=False, init_std=1e-4, steps=3000, seed=2)
    assert both.shape == (2, 1, 2, 4)
    assert np.allclose(np.log10(both[1] + 1e-300), np.log10(alone + 1e-300))


def test_samples_needed():
    ns = np.array([4, 8, 12, 16])
    assert S.samples_needed(ns, np.array([1.0, 1e-3, 1.0, 1e-4]), 1e-2) == 16
    assert S.samples_needed(ns, np.array([1e-3] * 4), 1e-2) == 4
    assert np.isnan(S.samples_needed(ns, np.array([1.0, 1.0, 1e-3, 1.0]), 1e-2))  # never: NaN, not inf
    with pytest.raises(ValueError, match="increasing"):
        S.samples_needed(ns[::-1], np.ones(4), 1e-2)


@pytest.mark.parametrize("seed", [1, 5])
def test_matrix_completion_small_init_recovers_rank_one_near_its_optimistic_size(seed):
    res = S.matrix_completion([1], np.arange(1, 17), 16, (1e-6, 0.5), seed=seed)
    small, large = res.half_point(res.small)[0], res.half_point(res.large)[0]
    assert res.success_below() == 0.0
    assert 7 <= small <= 11 and large >= 14  # the grid ends at n = 16 = d², where the large init recovers too
    assert S.check_completion_transition(res).passed and S.check_completion_large_init(res).passed


def test_completion_large_init_fails_when_the_large_init_never_reaches_half_success():
    """A large-init run that never trains (1 GD step) never reaches 50% success on the grid: its n½ does not
    exist, and "needs more entries" must not pass on a value that never happened (图10.5b)."""
    ns = np.arange(1, 17)
    small = S.matrix_completion([1], ns, 16, (1e-6,), seed=1)
    untrained = S.completion_grid([1], ns, 16, init_std=0.5, lr=0.2, steps=1, threshold=1e-3, seed=1)
    res = S.CompletionResult([1], ns, {1e-6: small.small, 0.5: untrained}, small.success_threshold)
    assert np.isnan(res.half_point(res.large)[0])
    v = S.check_completion_large_init(res)
    assert not v.passed, v.measured_line()


def test_model_ranks_are_generic_off_the_target_set():
    off = S.model_ranks(2, perturb=0.5, n_inputs=300, widths=(3,))
    assert off.f_nl_best == 3 and off.matrix == [16] * 4 and off.fnn[3] == 18 and off.example2["Q1"] == 6
    with pytest.raises(ValueError, match="perturb"):
        S.model_ranks(0, perturb=-1.0)


def test_conditioned_targets_have_the_rank_norm_and_conditioning_asked():
    rng = np.random.default_rng(0)
    for r in (1, 2, 3, 4):
        m = S.conditioned_low_rank_targets(5, 4, r, rng, min_ratio=0.1)
        s = np.linalg.svd(m, compute_uv=False)
        assert m.shape == (5, 4, 4)
        assert np.allclose(np.linalg.norm(m, axis=(1, 2)), 4)
        assert np.all(s[:, r - 1] / s[:, 0] >= 0.1) and np.all(s[:, r:] < 1e-10)
    with pytest.raises(ValueError, match="min_ratio"):
        S.conditioned_low_rank_targets(2, 4, 1, rng, min_ratio=1.0)


def test_identifying_order_sees_every_row_and_column_of_a_rank_one_target():
    """A rank-1 4×4 target is identified by 7 entries exactly when they join every row and column (a spanning tree of
    the rows-columns graph): its first 7 entries touch all 4 rows and all 4 columns."""
    rng = np.random.default_rng(1)
    for target in S.conditioned_low_rank_targets(5, 4, 1, rng):
        first = S.identifying_order(target, 1, rng)[:7]
        assert set(first // 4) == set(range(4)) and set(first % 4) == set(range(4))


def test_cross_order_is_the_books_order_through_the_largest_block_and_identifies_the_target():
    """The book's order (rows and columns 1, 2, … alternately) when the leading block has the largest volume; a
    permutation of the 16 entries whose first 2rd − r² entries are the cross's rows and columns and identify the
    target (model rank 2rd − r² there)."""
    book = [0, 1, 2, 3, 4, 8, 12, 5, 6, 7, 9, 13, 10, 11, 14, 15]  # the authors' sample_patterns of 图10.2
    assert S.cross_order(np.diag([4.0, 3.0, 2.0, 1.0]), 4).tolist() == book
    target = np.outer([1.0, 2.0, 0.5, 1.0], [1.0, 0.5, 3.0, 1.0])  # largest entry at row 1, column 2
    first = S.cross_order(target, 1)[:7]
    assert {(i // 4, i % 4) for i in first} == {(1, j) for j in range(4)} | {(i, 2) for i in range(4)}
    rng = np.random.default_rng(2)
    f = S.matrix_factorisation(4)
    for r in (1, 2, 3):
        for m in S.conditioned_low_rank_targets(3, 4, r, rng):
            order = S.cross_order(m, r)
            assert sorted(order.tolist()) == list(range(16))
            u, s, vt = np.linalg.svd(m)
            a, b = np.zeros((4, 4)), np.zeros((4, 4))
            a[:, :r], b[:r] = u[:, :r] * np.sqrt(s[:r]), np.sqrt(s[:r])[:, None] * vt[:r]
            theta = torch.tensor(np.concatenate([a.ravel(), b.ravel()]))
            size = S.optimistic_matrix(r, 4)
            assert S.model_rank(f, theta, S.all_entries(4)[order[:size]]) == size
    with pytest.raises(ValueError, match="r="):
        S.cross_order(target, 5)
    with pytest.raises(ValueError, match="order"):
        S.completion_curves(1, 1, order="random")


def test_completion_curves_recover_from_the_optimistic_size_and_not_before():
    res = S.completion_curves(1, 2, ranks=(1,), seed=3)
    assert res.error.shape == (1, 16, 2) and res.ranks.tolist() == [1]
    assert res.transition[0] >= 7 and not np.isnan(res.transition[0])
    assert res.mean_error[0, :6].min() > 1e-2  # below 7 entries a rank-1 target is not determined
