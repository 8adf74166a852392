"""Negative controls of chapter 14's claims: each claim's own check on a small real run where the phenomenon
is absent fails (and, where cheap, passes on the same small setting with the phenomenon present)."""

import numpy as np
import pytest
import torch

from companion.core import icl
from companion.experiments import ch14_icl as icl_tasks
from companion.experiments.ch14_icl import (check_beats_gd1, check_closer_to_gd1, check_dw_decay, check_dw_learns,
                                            check_error_falls, check_finetune, check_identity_random,
                                            check_identity_trained, check_pattern_attention)
from companion.kit.seeds import generator

SMALL = icl_tasks.ICLConfig(d=4, k_max=16, d_model=16, d_ff=32, steps=1, batch=8, seed=3)


def random_checks(scale: float) -> dict:
    return icl_tasks.random_identity_checks(5, dim=4, hidden=8, n_prompts=8, n_tokens=6, scale=scale)


def test_control_ch14_identity_random():
    # a perturbed identity: every ΔW scaled by 1 + 1e-6 no longer reproduces the context's effect
    v = check_identity_random(random_checks(1 + 1e-6))
    assert not v.passed, v.measured_line()
    positive = check_identity_random(random_checks(1.0))
    assert positive.passed, positive.measured_line()


@pytest.fixture(scope="module")
def untrained():
    return icl_tasks.random_init(SMALL)


def trained_checks(scale: float) -> dict:
    test = icl_tasks.sample_tasks(16, SMALL.k_max, SMALL.d, generator=generator(1))
    return icl_tasks.trained_identity_checks(icl_tasks.random_init(SMALL), test, scale=scale)


def test_control_ch14_identity_trained():
    # the transformer's own blocks (float32 and float64) with every ΔW perturbed by 0.1 %
    v = check_identity_trained(trained_checks(1 + 1e-3))
    assert not v.passed, v.measured_line()
    positive = check_identity_trained(trained_checks(1.0))
    assert positive.passed, positive.measured_line()


@pytest.fixture(scope="module")
def untrained_comparison(untrained):
    # an untrained learner: it reads the prompt (softmax averaging) but has learned no algorithm
    return icl_tasks.compare(untrained, SMALL, ks=[2, 4, 8, 16], n_tasks=256, n_probes=4, seed=11)


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
    run = icl_tasks.finetune_vs_delta_w(untrained, SMALL, n_tasks=16, n_test=8)
    v = check_dw_learns(run, run)
    assert not v.passed, v.measured_line()
    assert not v.conditions[1].passed, v.measured_line()  # its ΔW does not beat the zero predictor


def test_control_ch14_finetune(untrained):
    # shuffled labels: each task's examples come from another task, so neither fine-tuning on them nor
    # reading them in context can lower the error on this task's test queries
    run = icl_tasks.finetune_vs_delta_w(untrained, SMALL, n_tasks=16, n_test=8, shuffle_labels=True)
    v = check_finetune(run)
    assert not v.passed, v.measured_line()
    assert not any(c.passed for c in v.conditions[2:]), v.measured_line()  # neither beats the zero predictor


def test_control_ch14_pattern_attention():
    # no training: the transformer neither classifies nor looks at the same-pattern examples
    model = icl_tasks.train_pattern_learner.__wrapped__(steps=0, seed=1).model
    tasks = icl_tasks.sample_pattern_tasks(500, generator=generator(3))
    v = check_pattern_attention(*icl_tasks.attention_on_same_pattern(model, tasks))
    assert not v.passed, v.measured_line()
