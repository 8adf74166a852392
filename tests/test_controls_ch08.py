"""Negative controls of chapter 8's claims: each claim's own check, on a small real run without the phenomenon.

Each control runs the check function the notebook uses on a short real training run in which the
phenomenon is absent (a large initialisation, an activation without dead zones, no dropout, a wrong
keep probability in the identity) and asserts that the claim fails; where it is cheap, a positive twin
runs the same small setting with the phenomenon present and asserts that the claim holds.
"""

import dataclasses

import pytest

from companion.core import neurons as cond
from companion.experiments import ch08_condensation as ch08

P1 = [act for act, p in ch08.MULTIPLICITY.items() if p == 1]


# 图8.2–8.4 — the notebook's setting of §1 (small init) and a large initialisation without the phenomenon

@pytest.fixture(scope="module")
def condensing():
    return ch08.run_condensation(width=100, init_std=1e-3, steps=12_000, seed=0, progress=False)


@pytest.fixture(scope="module")
def large_init():
    # a linear-regime initialisation (std 1 instead of 10⁻³): no saddle, no stalls, no plateau, no condensation
    return ch08.run_condensation(width=100, init_std=1.0, steps=1500, seed=0, progress=False)


# 图8.2 — the loss stalls twice (initial stage, plateau), the orientations gather

@pytest.mark.contrast("large initialisation, std 1 (linear regime)")
def test_control_ch08_loss_stalls(large_init):
    v = ch08.check_loss_stalls(large_init)
    assert not v.passed, v.measured_line()


def test_loss_stall_check_holds_at_small_initialisation(condensing):
    v = ch08.check_loss_stalls(condensing)
    assert v.passed, v.measured_line()


# 图8.3 — one orientation cluster on the first plateau, ≥ 3 at the end

@pytest.mark.contrast("large initialisation, std 1 (linear regime)")
def test_control_ch08_plateau_one_orientation(large_init):
    v = ch08.check_plateau_condensation(large_init)
    assert not v.passed, v.measured_line()


def test_plateau_check_discriminates_on_a_small_condensing_run(condensing):
    v = ch08.check_plateau_condensation(condensing)
    assert v.passed, v.measured_line()


# 图8.4 — the output is one neuron's ramp on the plateau, has the target's kinks at the end

@pytest.mark.contrast("large initialisation, std 1 (linear regime)")
def test_control_ch08_plateau_outputs(large_init):
    v = ch08.check_plateau_outputs(large_init)
    assert not v.passed, v.measured_line()


def test_plateau_outputs_check_holds_at_small_initialisation(condensing):
    v = ch08.check_plateau_outputs(condensing)
    assert v.passed, v.measured_line()


# 图8.3 / 习题19 — dead ReLU neurons never move

def test_control_ch08_dead_neurons_still():
    # softplus has no dead zone: the neurons inactive (w x + b ≤ 0) at every input still get a gradient
    proc = ch08.run_condensation(width=40, init_std=0.1, act="softplus", steps=300, n_snapshots=2, seed=0)
    v = ch08.check_dead_neurons(proc)
    assert not v.passed, v.measured_line()


def test_dead_neuron_check_holds_for_the_same_relu_run():
    proc = ch08.run_condensation(width=40, init_std=0.1, act="relu", steps=300, n_snapshots=2, seed=0)
    v = ch08.check_dead_neurons(proc)
    assert v.passed, v.measured_line()


# 图8.10 — p = 1 activations condense onto one line (5-D, epoch 100)

@pytest.mark.contrast("large initialisation, std 1 instead of 50⁻⁴")
def test_control_ch08_p1_one_line():
    # a large initialisation (std 1 instead of 50⁻⁴): the input weights stay spread in R⁶
    initial = {act: ch08.run_initial_condensation(act, n_members=1, steps=100, init_std=1.0, seed=0) for act in P1}
    v = ch08.check_p1_one_line(initial)
    assert not v.passed, v.measured_line()


def test_one_line_check_holds_at_the_book_initialisation():
    initial = {act: ch08.run_initial_condensation(act, n_members=1, steps=100, seed=0) for act in P1}
    v = ch08.check_p1_one_line(initial)
    assert v.passed, v.measured_line()


# 图8.10(a)–(c) — tanh nets on one line, the median x·tanh net on two, read as blocks of the heat map

@pytest.mark.contrast("large initialisation, std 1 instead of 50⁻⁴ (the linear regime)")
def test_control_ch08_activation_line_blocks():
    # the same nets, data and epochs from std 1: in 100 Adam steps the weights hardly turn, no 5 of the 50 neurons
    # share a line: no net lies on one block or on two (zero blocks each)
    result = ch08.run_line_blocks(n_nets=5, init_std=1.0, seed=0)
    v = ch08.check_line_blocks(result)
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed and not v.conditions[2].passed, v.measured_line()
    assert (result.blocks == 0).all(), result.blocks


def test_line_block_check_holds_at_the_small_initialisation():
    v = ch08.check_line_blocks(ch08.run_line_blocks(n_nets=5, seed=0))
    assert v.passed, v.measured_line()


# 图8.10 — at most 2p orientations (1-D version)

@pytest.mark.contrast("large initialisation, std 1 (no condensation)")
def test_control_ch08_multiplicity_bound():
    # a large initialisation (std 1): the amplitude-carrying neurons stay spread round the circle
    runs = {act: ch08.run_multiplicity(act, n_members=2, init_std=1.0, seed=0) for act in ch08.MULTIPLICITY}
    v = ch08.check_multiplicity_bound(runs)
    assert not v.passed, v.measured_line()
    assert all((r.clusters > 2 * ch08.MULTIPLICITY[a]).any() for a, r in runs.items() if ch08.MULTIPLICITY[a] == 1)


def test_multiplicity_check_holds_at_small_initialisation():
    runs = {act: ch08.run_multiplicity(act, n_members=2, seed=0) for act in ch08.MULTIPLICITY}
    v = ch08.check_multiplicity_bound(runs)
    assert v.passed, v.measured_line()


# (8.5) — Monte-Carlo dropout risk = R_S + R_1

@pytest.fixture(scope="module")
def small_dropout():
    return ch08.run_dropout_relu(width=60, keep=0.9, steps=300, n_masks=20_000, seed=0)


def test_control_ch08_dropout_risk_identity(small_dropout):
    # a perturbed identity: the masks of the Monte-Carlo run keep 80% of the neurons, R_1 assumes p = 0.9
    mean, se = cond.dropout_risk_monte_carlo(small_dropout.a_eff, small_dropout.hidden, small_dropout.y,
                                             0.8, n_masks=20_000, seed=0)
    v = ch08.check_dropout_risk(dataclasses.replace(small_dropout, mc_mean=mean, mc_se=se))
    assert not v.passed, v.measured_line()


def test_dropout_risk_identity_holds_on_the_same_run(small_dropout):
    v = ch08.check_dropout_risk(small_dropout)
    assert v.passed, v.measured_line()


# 图8.12 — dropout moves the features and condenses the large neurons

@pytest.mark.contrast("no dropout, keep 1 (图8.12)")
def test_control_ch08_dropout_condenses():
    # no dropout in either member (p = 1 twice): no RD ratio, no gathering
    result = ch08.run_dropout_relu(width=100, keep=1.0, steps=2000, n_masks=100, seed=0)
    v = ch08.check_dropout_condenses(result)
    assert not v.passed, v.measured_line()


# 图8.13 — dropout gives the tanh nets a simpler fit

@pytest.mark.contrast("no dropout, keep 1 (图8.13)")
def test_control_ch08_dropout_simpler_fit():
    # no dropout in either member: the two fits' total variations are alike (while both fit the data)
    result = ch08.run_tanh_dropout(keep=1.0, trials=3, width=100, steps=2000, seed=0)
    v = ch08.check_dropout_simpler_fit(result)
    assert not v.passed, v.measured_line()


# 图8.13(d,e) — dropout condenses the tanh net's features

@pytest.mark.contrast("no dropout, keep 1: the identical run without dropout (图8.13(d))")
def test_control_ch08_dropout_tanh_features():
    # the notebook's quick setting with p = 1: both nets are the same run without dropout, whose largest
    # neurons stay spread over the orientations
    result = ch08.run_tanh_features(keep=1.0, width=500, lr=1e-2, steps=6000, seed=0)
    v = ch08.check_dropout_tanh_features(result)
    assert not v.passed, v.measured_line()
    assert result.occupied[1] >= 0.5, result.occupied  # not only the comparison with itself: the 50% bound fails too


# 图8.13, three-layer nets (dropout after both hidden layers) — a simpler fit and condensed first-layer features

@pytest.fixture(scope="module")
def three_layer_no_dropout():
    # the notebook's quick three-layer setting with p = 1: both nets of each pair are the same run without dropout
    return ch08.run_three_layer_dropout(keep=1.0, trials=3, width=100, lr=2e-2, steps=4000, seed=0)


@pytest.mark.contrast("no dropout, keep 1 (图8.13, three-layer net)")
def test_control_ch08_dropout_three_layer_fit(three_layer_no_dropout):
    v = ch08.check_three_layer_simpler_fit(three_layer_no_dropout)
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("no dropout, keep 1 (图8.13, three-layer net)")
def test_control_ch08_dropout_three_layer_features(three_layer_no_dropout):
    v = ch08.check_three_layer_features(three_layer_no_dropout)
    assert not v.passed, v.measured_line()
    assert not v.conditions[1].passed, v.measured_line()  # not only the comparison with itself: ½ × the start fails too


# 图8.16 — dropout lowers the sample size needed to recover the two-neuron teacher

@pytest.mark.contrast("no dropout, keep 1 for every student (图8.16's p = 1 row)")
def test_control_ch08_dropout_sample_size():
    # the notebook's quick students at n = 8 and 9, with p = 1 in the dropout column too: they interpolate the
    # samples in the linear regime and miss the teacher between them
    sizes = ch08.FEW_SAMPLES
    err = ch08.run_dropout_sample_size(sizes, keeps=(1.0, 1.0), trials=1, width=200, steps=4000, lr=1e-2, seed=0)
    v = ch08.check_dropout_sample_size(err, sizes)
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed, v.measured_line()  # not only the ratio: the 2% bound fails too


# 图8.14 — dropout from the usual initialisation fits far sooner than a small initialisation

@pytest.mark.contrast("usual-scale initialisation in the small-init slot (图8.13(b))")
def test_control_ch08_dropout_fast_route():
    # the "small" nets at the usual scale (a, w ~ N(0, 1), α = √m, no dropout): no saddle, they fit at once
    result = ch08.run_tanh_dropout(keep=0.9, trials=3, width=100, steps=3000, small=(1.0, 100 ** 0.5), seed=0)
    v = ch08.check_dropout_fast_route(result)
    assert not v.passed, v.measured_line()



# 图8.5 — a convolution layer condenses from a small initialisation, not from the usual one

CNN_SMALL = dict(n_train=120, n_test=60, channels=16, steps=800, seed=0)


@pytest.mark.contrast("usual-scale initialisation, std 0.3, in the small-init slot")
def test_control_ch08_cnn_condensation():
    # the "small" member at the usual scale too (std 0.3 for every parameter): nothing condenses
    v = ch08.check_cnn_condensation(ch08.run_cnn_condensation(**CNN_SMALL, small_std=0.3))
    assert not v.passed, v.measured_line()
    assert not v.conditions[1].passed  # the fitted kernels stay off one line


def test_cnn_condensation_check_holds_at_small_initialisation():
    v = ch08.check_cnn_condensation(ch08.run_cnn_condensation(**CNN_SMALL))
    assert v.passed, v.measured_line()


# 图8.5(e, f) — at a finer resolution (the digits interpolated to 12×12) the kernels and the outputs condense onto one
# line, two opposite directions, from the book's initialisation; the LeCun-scale net of the same run does not

CNN_LINE = dict(n_train=60, n_test=30, channels=32, small_std=96.0 ** -4, lr=2e-4, image_size=12, steps=2000, seed=0)


@pytest.mark.contrast("LeCun-scale initialisation: the control member of the same run (图8.5's contrast)")
def test_control_ch08_cnn_one_line():
    result = ch08.run_cnn_condensation(**CNN_LINE)
    v = ch08.check_cnn_one_line(result, member=1)
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed  # the control's fitted kernels stay off one line
    small = ch08.check_cnn_one_line(result)  # the same run's small-init member: one line
    assert small.passed, small.measured_line()


# 图8.9 — from a small initialisation the loss first stalls (the initial stage), then falls

@pytest.mark.contrast("large initialisation, std 1 instead of 50⁻⁴")
def test_control_ch08_initial_plateau():
    # the usual scale (std 1 instead of 50⁻⁴): no saddle to start from, the loss falls at once
    result = ch08.run_initial_condensation("tanh", n_members=1, steps=400, init_std=1.0, record_every=20, seed=0)
    v = ch08.check_initial_plateau(result)
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed


def test_initial_plateau_check_holds_at_the_book_initialisation():
    result = ch08.run_initial_condensation("tanh", n_members=1, steps=4000, record_every=20, seed=0)
    v = ch08.check_initial_plateau(result)
    assert v.passed, v.measured_line()


# 图8.11 — every residual layer condenses from the small initialisation N(0, 0.01²)

@pytest.mark.contrast("the usual scale, std 1/√18 instead of 0.01 (the linear regime)")
def test_control_ch08_residual_condensation():
    # the book's residual net and epochs from the usual scale: 1400 Adam steps of 4·10⁻⁵ hardly turn the weights,
    # which keep the ≈ 9.5 effective lines of random vectors in every layer
    result = ch08.run_residual_condensation(n_members=1, std=18 ** -0.5, seed=0)
    v = ch08.check_residual_condensation(result)
    assert not v.passed, v.measured_line()
    assert not any(c.passed for c in v.conditions), v.measured_line()  # no layer condenses



# 图8.11 read as heat-map blocks — the p = 1 layers on one line, the p ≥ 2 layers more often on more than one

@pytest.mark.contrast("the usual scale, std 1/√18 instead of 0.01 (the linear regime)")
def test_control_ch08_residual_line_blocks():
    # the same residual nets, each on its own data, from the usual scale: in 1400 Adam steps of 4·10⁻⁵ no two of a
    # layer's 18 neurons come to share a line, so no layer has a block: the p = 1 layers lie on no line and the
    # p ≥ 2 layers are not on more lines than they are
    result = ch08.run_residual_condensation(n_members=5, std=18 ** -0.5, seed=0, own_data=True)
    v = ch08.check_residual_line_blocks(result)
    assert not v.passed, v.measured_line()
    assert not any(c.passed for c in v.conditions), v.measured_line()
    assert (result.blocks() == 0).all(), result.blocks()


def test_residual_line_block_check_holds_at_the_small_initialisation():
    result = ch08.run_residual_condensation(n_members=5, seed=0, own_data=True)
    v = ch08.check_residual_line_blocks(result)
    assert v.passed, v.measured_line()

# 图8.6 — from the default initialisation the last convolution layer of a residual CNN condenses, the first does not

@pytest.mark.contrast("a small initialisation (1/20 of the default scale, the condensed regime of 图8.5), and three "
                      "times the default scale (the lazy regime)")
def test_control_ch08_resnet_last_not_first():
    # from 1/20 of PyTorch's default scale the first layer condenses too: its kernels keep under a third of their
    # effective lines (0.29 on seed 0), so "the first layer does not condense" fails
    small = ch08.run_residual_cnn(n_members=1, init_scale=0.05, seed=0)
    v = ch08.check_resnet_last_not_first(small)
    assert not v.passed, v.measured_line()
    assert not v.conditions[2].passed, v.measured_line()  # the first layer's kernels condense
    # from 3× the default scale Adam's steps of 10⁻³ are small against the weights: the last layer's kernels keep
    # their map (r 0.98 on seed 0; its outputs 0.72), so "the last layer condenses" fails
    lazy = ch08.run_residual_cnn(n_members=1, init_scale=3.0, seed=0)
    v = ch08.check_resnet_last_not_first(lazy)
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed, v.measured_line()
