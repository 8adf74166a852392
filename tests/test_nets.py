import math

import pytest
import torch

from torch import nn

from companion.core.nets import (ASI, ACTIVATIONS, MLP, BatchedMLP, FourierFeatureNet, MscaleDNN, activation, linear,
                                ricker, srelu)
from companion.kit.seeds import generator


def test_ricker_matches_formula_4_3():
    x, a = torch.tensor([0.0, 0.3, 1.0]), 0.3
    expected = (1 / (15 * a)) * math.pi ** 0.25 * (1 - (x / a) ** 2) * torch.exp(-0.5 * (x / a) ** 2)
    assert torch.allclose(ricker(x, a), expected)
    assert ricker(torch.tensor(a), a).abs() < 1e-7     # zero crossing at |x| = a


def test_srelu_support():
    x = torch.tensor([-1.0, 0.5, 2.0])
    assert torch.allclose(srelu(x), torch.tensor([0.0, 0.25, 0.0]))


def test_activation_lookup_and_errors():
    assert set(ACTIVATIONS) >= {"tanh", "relu", "ricker", "sin", "srelu", "xtanh", "x2tanh"}
    assert torch.allclose(activation("sin", 10.0)(torch.tensor([0.1])), torch.sin(torch.tensor([1.0])))
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        activation("swish")
    with pytest.raises(ValueError, match="positive"):
        activation("ricker", a=0.0)


def test_mlp_init_std_per_layer():
    g = torch.Generator().manual_seed(0)
    net = MLP([1, 2000, 1], init_std=[0.5, 0.01], generator=g)
    assert abs(net.layers[0].weight.std().item() - 0.5) < 0.03
    assert abs(net.layers[1].weight.std().item() - 0.01) < 0.001
    with pytest.raises(ValueError, match="2 layers"):
        MLP([1, 5, 1], init_std=[0.1, 0.1, 0.1])


def test_asi_output_is_exactly_zero_at_init_then_moves():
    net = ASI(MLP([1, 30, 30, 1], "ricker", init_std=1.0, a=0.1))
    x = torch.linspace(-3, 3, 50)[:, None]
    assert torch.equal(net(x), torch.zeros(50, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    (net(x) - torch.sin(x)).pow(2).mean().backward()
    opt.step()
    assert net(x).abs().max() > 0


def test_batched_mlp_equals_members_run_separately():
    g = torch.Generator().manual_seed(1)
    model = BatchedMLP([2, 8, 8, 1], 3, "tanh", init_std=torch.tensor([0.1, 1.0, 3.0]), generator=g)
    x = torch.randn(5, 2)
    out = model(x)
    assert out.shape == (3, 5, 1)
    for k in range(3):
        h = x
        for l, (w, b) in enumerate(zip(model.weights, model.biases)):
            h = h @ w[k] + b[k]
            if l < 2:
                h = torch.tanh(h)
        assert torch.allclose(out[k], h, atol=1e-6)


def test_batched_mlp_per_member_activation_parameter_and_asi():
    model = BatchedMLP([1, 16, 1], 2, "ricker", a=torch.tensor([0.3, 0.1]), asi=True)
    assert torch.equal(model(torch.randn(7, 1)), torch.zeros(2, 7, 1))


def test_batched_mlp_shape_errors():
    model = BatchedMLP([3, 4, 1], 2)
    with pytest.raises(ValueError, match=r"input must have shape \(N, 3\)"):
        model(torch.randn(5, 2))
    with pytest.raises(ValueError, match="init_std"):
        BatchedMLP([3, 4, 1], 2, init_std=[0.1, 0.2, 0.3])


def test_mscale_scales_each_neuron_group():
    net = MscaleDNN(1, 6, 2, scales=[1, 10, 100], generator=generator(0))
    assert net.scale.tolist() == [1, 1, 10, 10, 100, 100]
    assert net(torch.zeros(4, 1)).shape == (4, 1)
    with pytest.raises(ValueError, match="width 2"):
        MscaleDNN(1, 2, 2, scales=[1, 2, 3], generator=generator(0))
    ff = FourierFeatureNet(1, 8, 10.0, 16, 2, generator=generator(0))
    assert ff.B.shape == (8, 1) and ff(torch.zeros(3, 1)).shape == (3, 1)


def test_initialisations_come_from_the_generator_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    nets = [lambda: MLP([2, 8, 1], generator=generator(5)), lambda: BatchedMLP([2, 8, 1], 3, generator=generator(5)),
            lambda: MscaleDNN(2, 8, 2, scales=[1, 4], generator=generator(5)),
            lambda: FourierFeatureNet(2, 4, 3.0, 8, 2, generator=generator(5))]
    for make in nets:
        a, b = make(), make()
        assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    assert torch.equal(torch.random.get_rng_state(), before)          # the global random state was not touched


def test_linear_draws_torchs_default_initialisation():
    torch.manual_seed(3)
    reference = nn.Linear(7, 5)
    layer = linear(7, 5, generator(3))
    assert torch.equal(reference.weight, layer.weight) and torch.equal(reference.bias, layer.bias)
