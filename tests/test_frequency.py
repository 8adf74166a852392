"""The chapter-4 experiments on sizes small enough for a unit test."""

import numpy as np
import pytest

from companion.frequency import (FPConfig, FourierFeatureNet, MscaleDNN, parity_data, run_fprinciple, run_parity,
                                 sum_of_sines)
import torch


def test_fprinciple_low_frequency_converges_first():
    res = run_fprinciple(FPConfig(ks=(1, 6), amps=(1.0, 1.0), n_train=64, hidden=(64, 64), steps=600,
                                  record_every=10, lr=2e-3, members=2), seed=0)
    assert res.deltas.shape == (61, 2, 2) and res.first.shape == (2, 2)
    assert np.all(res.first[:, 0] < res.first[:, 1])
    assert np.allclose(res.f_train, sum_of_sines(res.x_train, (1, 6), (1, 1)))


@pytest.mark.parametrize("changes, message", [
    (dict(ks=(1, 80), amps=(1.0, 1.0)), r"frequencies must lie in \[1, n_train/2\)"),
    (dict(ks=(1, 2), amps=(1.0,)), "equal length"),
    (dict(act="gelu"), "unknown activation"),
    (dict(loss="huber"), "unknown loss"),
    (dict(init_std=(0.1, 0.2), members=3), "3 members"),
])
def test_bad_configs(changes, message):
    with pytest.raises(ValueError, match=message):
        run_fprinciple.__wrapped__(FPConfig(**changes), seed=0)


def test_parity_data_and_bad_dimension():
    x, y = parity_data(3)
    assert x.shape == (8, 3) and set(y) == {-1.0, 1.0} and y.sum() == 0
    with pytest.raises(ValueError, match="dimension d"):
        parity_data(40)
    res = run_parity(d=4, n_train=10, hidden=(32,), init_std=0.1, steps=50, lr=1e-2, members=1, seed=0)
    assert res.output.shape == (1, 16) and 0 <= res.test_acc[0] <= 1


def test_mscale_scales_each_neuron_group():
    net = MscaleDNN(1, 6, 2, scales=[1, 10, 100])
    assert net.scale.tolist() == [1, 1, 10, 10, 100, 100]
    assert net(torch.zeros(4, 1)).shape == (4, 1)
    with pytest.raises(ValueError, match="width 2"):
        MscaleDNN(1, 2, 2, scales=[1, 2, 3])
    ff = FourierFeatureNet(1, 8, 10.0, 16, 2)
    assert ff.B.shape == (8, 1) and ff(torch.zeros(3, 1)).shape == (3, 1)
