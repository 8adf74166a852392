"""Negative controls of chapter 14's claims: each claim's own check on a small real run where the phenomenon
is absent fails (and, where cheap, passes on the same small setting with the phenomenon present)."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from companion.core import icl
from companion.experiments import ch14_phenomena as phenomena
from companion.experiments.ch14_phenomena import (check_beats_gd1, check_closer_to_gd1, check_dw_decay, check_dw_learns,
                                                  check_error_falls, check_finetune, check_identity_random,
                                                  check_identity_trained, check_pattern_attention)
from companion.kit.seeds import generator

SMALL = phenomena.ICLConfig(d=4, k_max=16, d_model=16, d_ff=32, steps=1, batch=8, seed=3)


@pytest.fixture(scope="module")
def untrained():
    return phenomena.random_init(SMALL)


def random_checks(scale: float) -> dict:
    return phenomena.random_identity_checks(5, dim=4, hidden=8, n_prompts=8, n_tokens=6, scale=scale)


def trained_checks(scale: float) -> dict:
    test = phenomena.sample_tasks(16, SMALL.k_max, SMALL.d, generator=generator(1))
    return phenomena.trained_identity_checks(phenomena.random_init(SMALL), test, scale=scale)


@pytest.fixture(scope="module")
def perturbed_and_exact():
    """An identity claim's verdicts on its checks with every ΔW scaled by 1 + ε (must fail) and by 1 (must pass)."""
    def verdicts(check, make_checks, eps: float) -> tuple:
        return check(make_checks(1 + eps)), check(make_checks(1.0))
    return verdicts


def test_control_ch14_identity_random(perturbed_and_exact):
    # random blocks: every ΔW scaled by 1 + 1e-6 no longer reproduces the context's effect
    perturbed, exact = perturbed_and_exact(check_identity_random, random_checks, 1e-6)
    assert not perturbed.passed, perturbed.measured_line()
    assert exact.passed, exact.measured_line()


def test_control_ch14_identity_trained(perturbed_and_exact):
    # the transformer's own blocks (float32 and float64) with every ΔW perturbed by 0.1 %
    perturbed, exact = perturbed_and_exact(check_identity_trained, trained_checks, 1e-3)
    assert not perturbed.passed, perturbed.measured_line()
    assert exact.passed, exact.measured_line()


@pytest.fixture(scope="module")
def untrained_comparison(untrained):
    # an untrained learner: it reads the prompt (softmax averaging) but has learned no algorithm
    return phenomena.compare(untrained, SMALL, ks=[2, 4, 8, 16], n_tasks=256, n_probes=4, seed=11)


def test_control_ch14_beats_gd1(untrained_comparison):
    v = check_beats_gd1(untrained_comparison, SMALL.d, k=16)
    assert not v.passed, v.measured_line()


def test_control_ch14_error_falls(untrained_comparison):
    v = check_error_falls(untrained_comparison)
    assert not v.passed, v.measured_line()


def test_control_ch14_closer_to_gd1(untrained_comparison):
    v = check_closer_to_gd1(untrained_comparison, SMALL.d)
    assert not v.passed, v.measured_line()


def increments(recency: float, seed: int) -> np.ndarray:
    gen = generator(seed)
    block = icl.ContextualBlock(dim=8, hidden=16, heads=2, kind="skip", generator=gen, recency=recency)
    prompts = torch.randn(64, 17, 8, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        return icl.implicit_gd(block, prompts).increments().mean(0).numpy()


def test_control_ch14_dw_decay():
    # attention with a strong recency (ALiBi) bias weights the newest tokens instead of averaging over all:
    # every new token moves A(C, x) by a similar amount, and the increments do not shrink
    v = check_dw_decay(increments(2.0, 0), increments(2.0, 1))
    assert not v.passed, v.measured_line()
    positive = check_dw_decay(increments(0.0, 0), increments(0.0, 1))  # plain softmax averaging
    assert positive.passed, positive.measured_line()


def test_control_ch14_dw_learns(untrained):
    # the untrained network in the trained network's place: its ΔW(C_i) does not lower the test error
    run = phenomena.finetune_vs_delta_w(untrained, SMALL, n_tasks=16, n_test=8)
    v = check_dw_learns(run, run)
    assert not v.passed, v.measured_line()
    assert not v.conditions[1].passed, v.measured_line()  # its ΔW does not beat the zero predictor


def test_control_ch14_finetune(untrained):
    # shuffled labels: each task's examples come from another task, so neither fine-tuning on them nor
    # reading them in context can lower the error on this task's test queries
    run = phenomena.finetune_vs_delta_w(untrained, SMALL, n_tasks=16, n_test=8, shuffle_labels=True)
    v = check_finetune(run)
    assert not v.passed, v.measured_line()
    assert not any(c.passed for c in v.conditions[2:]), v.measured_line()  # neither beats the zero predictor


def test_control_ch14_pattern_attention():
    # no training: the transformer neither classifies nor looks at the same-pattern examples
    model = phenomena.train_pattern_learner.__wrapped__(steps=0, seed=1).model
    tasks = phenomena.sample_pattern_tasks(500, generator=generator(3))
    v = check_pattern_attention(*phenomena.attention_on_same_pattern(model, tasks))
    assert not v.passed, v.measured_line()


# ------------------------------------------------------------------------------------- §14.5–14.9
@pytest.mark.contrast("no weight decay")
def test_control_ch14_grokking():
    # no weight decay: the network memorises the training table (train accuracy 1) but the test accuracy
    # stays near chance for as long as the notebook's run with weight decay takes to grok (1500 steps)
    result = phenomena.run_grokking.__wrapped__(phenomena.GrokConfig(weight_decay=(0.0,), steps=1500, seed=1))
    v = phenomena.check_grokking(result)
    assert not v.passed, v.measured_line()
    assert result.history["train_acc"][-1, 0] == 1.0 and result.history["test_acc"][-1, 0] < 0.5


def test_control_ch14_double_descent():
    # a ridge penalty (λ = 10) removes the peak at the interpolation threshold: the error no longer rises and falls
    config = phenomena.DoubleDescentConfig(n_draws=2, seed=1)
    positive = phenomena.check_double_descent(phenomena.run_double_descent(config))
    assert positive.passed, positive.measured_line()
    v = phenomena.check_double_descent(phenomena.run_double_descent(replace(config, ridge=10.0)))
    assert not v.passed, v.measured_line()


def test_control_ch14_mode_connectivity():
    # an untrained bend (θ at the segment's midpoint) is the straight line: it keeps the line's barrier
    config = phenomena.ConnectivityConfig(n_train=500, steps=300, bend_steps=0, seed=1)
    v = phenomena.check_connectivity(phenomena.run_connectivity.__wrapped__(config))
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed, v.measured_line()


@pytest.mark.contrast("random pruning instead of magnitude pruning")
def test_control_ch14_lottery():
    # random pruning instead of pruning by magnitude: the sparse subnetwork is no winning ticket, and its
    # initial values do no better than a fresh random initialisation of the same mask
    result = phenomena.run_lottery.__wrapped__(phenomena.LotteryConfig(criterion="random", steps=100, seed=1))
    v = phenomena.check_lottery(result)
    assert not v.passed, v.measured_line()
    assert not v.conditions[2].passed, v.measured_line()
