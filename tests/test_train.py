import numpy as np
import pytest
import torch

from companion.core.nets import MLP, BatchedMLP
from companion.core.train import descend, run, train


def data():
    x = torch.linspace(-1, 1, 32)[:, None]
    return x, torch.sin(3 * x)


def test_full_batch_training_decreases_loss_and_records_every_k():
    x, y = data()
    hist = train(MLP([1, 32, 1], init_std=0.5), x, y, steps=200, lr=1e-2, record_every=50, progress=False)
    assert hist.steps.tolist() == [0, 50, 100, 150, 200]
    assert hist.train_loss[-1] < 0.2 * hist.train_loss[0]


def test_batched_members_train_independently():
    """Training K members together equals training each alone (losses are summed, parameters disjoint)."""
    x, y = data()
    torch.manual_seed(0)
    together = BatchedMLP([1, 8, 1], 2, init_std=0.5)
    alone = BatchedMLP([1, 8, 1], 1, init_std=0.5)
    with torch.no_grad():
        for pa, pt in zip(alone.parameters(), together.parameters()):
            pa.copy_(pt[:1])
    h2 = train(together, x, y, steps=50, lr=1e-2, record_every=50, progress=False)
    h1 = train(alone, x, y, steps=50, lr=1e-2, record_every=50, progress=False)
    assert np.allclose(h2.train_loss[:, 0], h1.train_loss[:, 0], rtol=1e-5)


def test_gradient_loss_is_per_member():
    x, y = data()
    dy = 3 * torch.cos(3 * x)
    model = BatchedMLP([1, 8, 1], 2, init_std=0.5)
    hist = train(model, x, y, steps=1, lr=1e-3, loss="mse+grad", dy=dy, record_every=1, progress=False)
    assert hist.train_loss.shape == (2, 2)
    assert np.all(hist.train_loss[0] > 4.0)   # the derivative term dominates: mean (3cos3x)² ≈ 4.6


def test_minibatch_outputs_and_probe():
    x, y = data()
    hist = train(MLP([1, 16, 1]), x, y, steps=20, lr=1e-2, batch_size=8, record_every=10, x_eval=x, y_eval=y,
                 keep_outputs=True, probe=lambda m, s: {"step2": s * 2}, progress=False)
    assert hist.outputs.shape == (3, 32, 1)
    assert hist.eval_loss.shape == (3,)
    assert hist["step2"].tolist() == [0, 20, 40]
    assert "step2" in hist and "eval_loss" in hist and "nothing" not in hist


@pytest.mark.parametrize("kwargs, message", [
    (dict(loss="l1"), "unknown loss 'l1'"),
    (dict(optimizer="rmsprop"), "unknown optimizer 'rmsprop'"),
    (dict(lr=0.0), "learning rate"),
    (dict(batch_size=100), r"batch_size must lie in \[1, 32\]"),
    (dict(loss="mse+grad"), "target gradient dy"),
])
def test_bad_arguments(kwargs, message):
    x, y = data()
    args = dict(steps=5, lr=1e-3, progress=False) | kwargs
    with pytest.raises(ValueError, match=message):
        train(MLP([1, 4, 1]), x, y, **args)


def test_stop_below():
    x, y = data()
    hist = train(MLP([1, 32, 1], init_std=0.5), x, y, steps=5000, lr=1e-2, record_every=10, stop_below=1e-2,
                 progress=False)
    assert hist.steps[-1] < 5000 and hist.train_loss[-1] < 1e-2


def test_run_records_at_chosen_steps_and_stops_early():
    """The engine alone: an update with no gradient (halving a number), records and a stopping rule."""
    state = {"v": 1.0}

    def update(step):
        state["v"] /= 2

    hist = run(update, steps=10, record=lambda s: {"v": state["v"]}, record_at=[0, 3, 10], progress=False)
    assert hist.steps.tolist() == [0, 3, 10] and hist["v"].tolist() == [1.0, 1 / 8, 1 / 1024]
    state["v"] = 1.0
    hist = run(update, steps=100, record=lambda s: {"v": state["v"]}, record_every=1,
               stop=lambda row: row["v"] < 0.1, progress=False)
    assert hist.steps[-1] == 4 and hist["v"][-1] == 1 / 16       # stopped at the first record below 0.1
    with pytest.raises(KeyError, match="recorded no series 'w'; it has v"):
        hist["w"]


def test_descend_is_gradient_descent_and_lbfgs_gets_its_closure():
    theta = torch.tensor([3.0], requires_grad=True)
    step = descend(torch.optim.SGD([theta], lr=0.25), lambda: (theta - 1.0) ** 2)
    step(0)
    assert theta.item() == pytest.approx(3.0 - 0.25 * 2 * 2.0)
    theta2 = torch.tensor([3.0], requires_grad=True)
    descend(torch.optim.LBFGS([theta2], lr=1.0), lambda: ((theta2 - 1.0) ** 2).sum())(0)
    assert theta2.item() == pytest.approx(1.0, abs=1e-4)


def test_an_interrupted_run_returns_nothing():
    def update(step):
        if step == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(update, steps=10, record=lambda s: {"s": s}, progress=False)


def test_bad_engine_arguments():
    with pytest.raises(ValueError, match="record_every ≥ 1"):
        run(lambda s: None, steps=3, record=lambda s: {}, record_every=0)
    with pytest.raises(ValueError, match=r"record_at must name steps within \[0, 3\]"):
        run(lambda s: None, steps=3, record=lambda s: {}, record_at=[5])
