"""The (γ, γ′) parametrisation, the boundary, 表7.1, S_w and the exercise checkers of chapter 7."""

import math

import numpy as np
import pytest
import torch

from companion.experiments import ch07_phase as phase


def test_scales_realise_kappa_and_kappa_prime():
    for g, gp, m in [(0.5, 0.0, 1000), (1.75, -0.5, 400), (1.0, 1.0, 50)]:
        b1, b2, al = phase.scales(g, gp, m)
        assert phase.finite_gammas(al, b1, b2, m) == pytest.approx((g, gp))
    with pytest.raises(ValueError, match="width"):
        phase.scales(1.0, 0.0, 1)


def test_regime_boundary():
    assert phase.regime(0.5, 0.0) == "linear"
    assert phase.regime(1.0, -1.0) == "critical"
    assert phase.regime(2.0, 0.0) == "condensed"
    assert phase.regime(1.5, 0.6) == "linear"  # γ′ > γ − 1
    assert phase.regime(1.5, 0.5) == "critical"
    assert phase.critical_gamma(np.array([-1.0, 0.5])) == pytest.approx([1.0, 1.5])


def test_table_7_1_placements_match_the_book():
    placed = phase.placements(d=3)
    for name, (g, gp) in phase.BOOK_TABLE.items():
        assert placed[name][:2] == pytest.approx((g, gp), abs=1e-6)
    assert placed["NTK"][2] == "linear" and placed["Xavier"][2] == "critical"


def test_fit_slope_recovers_a_power_law():
    m = np.array([100, 200, 400, 800])
    assert phase.fit_slope(m, 3 * m ** -0.4) == pytest.approx(-0.4)
    with pytest.raises(ValueError, match="positive"):
        phase.fit_slope(m, -m)


def test_sign_agreement_margin():
    g, gp = np.array([0.25, 0.75, 1.25, 1.75]), np.array([0.0])
    sw = np.array([[-0.5], [0.3], [0.2], [0.4]])
    far, agrees = phase.sign_agreement(g, gp, sw, margin=0.3)
    assert far.ravel().tolist() == [True, False, False, True]
    assert agrees[far].all() and not agrees[1, 0]


@pytest.mark.parametrize("seed", [1, 3])
def test_small_phase_run_separates_linear_from_condensed(seed):
    run = phase.run_phase([0.5, 1.75], [0.0], [200, 800], seed=seed, n_seeds=4)
    assert run.converged.all()
    sw = run.sw()[:, 0]
    assert sw[0] < -0.2 and sw[1] > 0.2
    net, k = run.net(1.75, 0.0, 800, seed=3)
    assert net.widths[k] == 800 and k == 7
    feat = phase.regime_features(run, 800)
    assert feat.kinks[1.75] <= 4 < 50 < feat.kinks[0.5]
    assert feat.clusters[1.75] <= 2 and feat.occupied[1.75] < 0.2 < 0.8 < feat.occupied[0.5]
    with pytest.raises(ValueError, match="gamma"):
        run.net(0.7, 0.0, 800)


def test_a_run_stopped_during_a_width_resumes_at_that_width(tmp_path, monkeypatch):
    """Each width is cached on its own (chapter 7's full profile spends hours on its widest digits' nets, longer than
    a session or a device window): a run stopped during its second width keeps the first, and the rerun trains only
    the second, to the numbers of a run never stopped."""
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path))
    trained, train = [], phase.train_ensemble

    def stopped_at_the_second_width(net, *args, **kwargs):
        trained.append(int(net.widths[0]))
        if len(trained) == 2:
            raise KeyboardInterrupt
        return train(net, *args, **kwargs)

    monkeypatch.setattr(phase, "train_ensemble", stopped_at_the_second_width)
    grid = ([0.5, 1.75], [0.0], [40, 80])
    with pytest.raises(KeyboardInterrupt):
        phase.run_phase(*grid, seed=5, max_steps=50)
    resumed = phase.run_phase(*grid, seed=5, max_steps=50)
    assert trained == [40, 80, 80]
    monkeypatch.setenv("COMPANION_CACHE", "off")
    fresh = phase.run_phase(*grid, seed=5, max_steps=50)
    for field in ("rd", "converged", "steps"):
        assert np.array_equal(getattr(resumed, field), getattr(fresh, field))
    assert resumed.rd.dtype == np.float64 and resumed.steps.shape == (2, 1, 2, 1)


def test_boundary_cells_flag_the_adjacent_column():
    run = phase.run_phase([0.25, 0.75, 1.75], [0.0], [200, 400], seed=2)
    sw, far, agrees = phase.boundary_cells(run)
    assert far[:, 0].tolist() == [True, False, True]  # 0.75 is half a step (0.25) from γ = 1
    assert agrees[0, 0] and agrees[2, 0] and sw.shape == (3, 1)


def test_placements_need_the_limit():
    assert phase.placements(m_pair=(2.0, 4.0))["Xavier"][0] != pytest.approx(1.0, abs=1e-3)  # 2/(m+1), not 2/m
    assert phase.placements()["Xavier"][:2] == (1.0, 0.0)


def test_exercise_checkers(capsys):
    assert phase.check_exercise17({"He": (0.5, 0.5), "Xavier": (1.0, 0.0)})
    assert not phase.check_exercise17({"He": (1.0, 0.5), "Xavier": (1.0, 0.0)})
    assert phase.check_exercise19({"i": "linear", "ii": "condensed", "iii": "critical"})
    assert not phase.check_exercise19({"i": "linear", "ii": "linear", "iii": "critical"})
    assert "correct" in capsys.readouterr().out
    with pytest.raises(ValueError, match="liquid"):
        phase.check_exercise19({"i": "liquid", "ii": "linear", "iii": "linear"})
    with pytest.raises(ValueError, match="Xavier"):
        phase.check_exercise17({"He": (0.5, 0.5)})


def test_limit_removes_constants():
    g, gp = phase.limit_gammas(lambda m, d: 7.0 * math.sqrt(m), lambda m, d: 3.0, lambda m, d: 2.0 / m)
    assert (g, gp) == pytest.approx((1.5, -1.0))


def test_effective_direction_count():
    from companion.core.neurons import effective_direction_count

    rng = np.random.default_rng(0)
    line = np.outer(rng.choice([-1.0, 1.0], 50) * rng.uniform(0.5, 2, 50), [1.0, 2.0, -1.0])
    assert effective_direction_count(line) == pytest.approx(1.0)
    two = np.vstack([np.tile([1.0, 0, 0], (30, 1)), np.tile([0, 1.0, 0], (30, 1))])
    assert effective_direction_count(two) == pytest.approx(2.0)
    # weights: a line carrying almost all the weight dominates the count
    assert effective_direction_count(two, np.r_[np.ones(30), 1e-6 * np.ones(30)]) == pytest.approx(1.0, abs=1e-4)
    spread = rng.normal(size=(5000, 10))
    assert 9.0 < effective_direction_count(spread) <= 10.0


def test_direction_features_on_digits():
    x, y = phase.digits_points(n=40, seed=3)
    run = phase.run_phase([0.5, 1.75], [0.0], [60, 120], x=x, y=y, seed=3, max_steps=200, dtype=torch.float32)
    assert run.nets[0].w.dtype == torch.float32 and run.nets[0].w.shape == (2, 60, 65)
    feat = phase.direction_features(run)
    assert feat.dim == 65 and feat.n_eff.shape == (2, 2) and feat.extremes == (0.5, 1.75)
    assert feat.n_eff[1, -1] < 3 < 20 < feat.n_eff[0, -1]  # condensed: about one line; linear: spread
    assert feat.n_eff_init[1, -1] > 20  # ... and the condensed net started spread
    assert feat.projection_spread[1, -1] < feat.projection_spread[0, -1]
    v = phase.check_digits_condensation(feat)
    assert [c.lhs for c in v.conditions][0] == "N_eff γ=1.75"


def test_grid_sharpening_fails_where_the_grid_has_no_adjacent_condensed_cell():
    """The full profile's grid (γ, γ′ in steps of 0.25, cells on the critical lines) has no condensed cell within half a
    step of the boundary: the exploration has nothing to measure and fails as "never" — it stopped the chapter by
    raising before — while the quick grid's adjacent cells are measured."""
    def features(gammas, gamma_primes, occupied_by_width):
        g, gp = np.asarray(gammas), np.asarray(gamma_primes)
        far, _ = phase.sign_agreement(g, gp, np.zeros((len(g), len(gp))), margin=float(np.min(np.diff(g))) / 2 + 1e-9)
        regimes = np.array([[phase.regime(float(x), float(y)) for y in gp] for x in g])
        occupied = np.broadcast_to(np.asarray(occupied_by_width)[:, None], (len(g), len(gp), 2, 3)).copy()
        return phase.GridFeatures(g, gp, np.array([250, 2000]), occupied, regimes, far)

    full = phase.check_grid_sharpening(features(np.arange(0.25, 2.51, 0.25), np.arange(-0.75, 1.26, 0.25), [0.5, 0.4]))
    assert not full.passed and math.isnan(full.conditions[0].value)
    quick = phase.check_grid_sharpening(features((0.25, 0.75, 1.25, 1.75, 2.25), (-0.5, 0.0, 0.5, 1.0), [0.5, 0.4]))
    assert quick.passed and quick.conditions[0].value == pytest.approx(0.4)
    assert not phase.check_grid_sharpening(features((0.25, 0.75, 1.25, 1.75, 2.25), (-0.5, 0.0, 0.5, 1.0),
                                                    [0.4, 0.5])).passed
