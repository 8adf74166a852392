"""The chapter-4 explorer and the checks of its exercises.

:func:`make_explorer` lets an instructor change the target's frequencies and amplitudes, the
initialisation std, the activation (and its width a), the width, the learning rate, ASI and the
loss, and watch the output, its spectrum and the Δ_F(k) heat map of 图4.7 change.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from matplotlib.figure import Figure

from companion.kit import widgets as w
from companion.kit.exercises import feedback
from companion.experiments.ch04_frequency import FPConfig, FPResult, plot_spectrum, run_fprinciple
from companion.core.nets import ACTIVATIONS
from companion.kit.plots import plot_delta_f, plot_fit
from companion.core.spectral import dft, uniform_grid


def parse_numbers(text: str, name: str, cast: Callable[[str], float] = float) -> tuple:
    """'1, 3, 5' → (1, 3, 5); a ValueError names the field and the bad text."""
    try:
        values = tuple(cast(part) for part in text.replace(";", ",").split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{name}={text!r} must be a comma-separated list of numbers, e.g. '1, 3, 5'") from None
    if not values:
        raise ValueError(f"{name} is empty: give at least one number")
    return values


def explore(ks: str, amps: str, init_std: float, act: str, a: float, width: int, lr: float, asi: bool,
            loss: str, steps: int, seed: int = 0) -> FPResult:
    """One explorer run: a single 1-width-width-1 network on the chosen target (cached)."""
    k_values = parse_numbers(ks, "frequencies", int)
    amp_values = parse_numbers(amps, "amplitudes")
    if len(amp_values) != len(k_values):
        raise ValueError(f"give one amplitude per frequency: {len(k_values)} frequencies, {len(amp_values)} amplitudes")
    config = FPConfig(ks=k_values, amps=amp_values, n_train=128, n_test=512, hidden=(width, width), act=act, a=a,
                      init_std=init_std, asi=asi, loss=loss, lr=lr, steps=steps, record_every=max(steps // 100, 1))
    return run_fprinciple(config, seed)


def draw(result: FPResult, fig: Figure) -> None:
    ax1, ax2, ax3 = fig.subplots(1, 3)
    plot_fit(ax1, result.x_test, result.f_test, result.out_test[-1, 0], x_train=result.x_train,
             y_train=result.f_train, title=f"after {result.steps[-1]} steps")
    plot_spectrum(ax2, result.f_train, result.out_train[-1, 0], k_max=max(result.config.ks) + 4)
    plot_delta_f(ax3, result.steps, result.deltas[:, 0], result.config.ks)


def make_explorer() -> w.Explorer:
    """The instructor panel of chapter 4 (first update in about a second on one core)."""
    controls = {
        "ks": w.text("1, 3, 5", "frequencies k"),
        "amps": w.text("1, 1, 1", "amplitudes"),
        "init_std": w.log_slider(0.1, 0.01, 3.0, "init std"),
        "act": w.dropdown("tanh", ACTIVATIONS, "activation"),
        "a": w.float_slider(0.3, 0.05, 3.0, 0.05, "a (ricker / sin)"),
        "width": w.int_slider(64, 8, 256, "width", step=8),
        "lr": w.log_slider(2e-3, 1e-4, 3e-2, "learning rate"),
        "asi": w.checkbox(False, "ASI"),
        "loss": w.dropdown("mse", ("mse", "mse+grad"), "loss"),
        "steps": w.int_slider(800, 100, 4000, "steps", step=100),
    }
    return w.Explorer("Frequency principle explorer (图4.7)", controls, explore, draw)


# ----------------------------------------------------------------------------------------------
# Exercise checks (习题 of chapter 4)
# ----------------------------------------------------------------------------------------------
def check_alias(answer: int | None) -> bool:
    """习题18: sin(11x) sampled at 16 points of [−π, π) shows up in which DFT bin k ∈ [0, 8]?"""
    x = uniform_grid(16)
    truth = int(np.argmax(np.abs(dft(np.sin(11 * x)))))
    return feedback("alias", answer, lambda a: int(a) == truth,
                    "16 samples cannot tell k from 16 − k: which k ≤ 8 gives the same samples?")


def check_parity_spectrum(answer: Callable[[np.ndarray], complex] | None, d: int = 3) -> bool:
    """习题6 / (4.4): a function k ↦ the DFT of the parity f(x) = Π x_j on {−1, 1}^d at the vector k."""
    x = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
    f = x.prod(1)
    rng = np.random.default_rng(0)
    ks = rng.uniform(-1, 1, size=(6, d))

    def ok(fn: Callable[[np.ndarray], complex]) -> bool:
        numeric = [np.mean(f * np.exp(-2j * np.pi * x @ k)) for k in ks]
        return np.allclose([complex(fn(k)) for k in ks], numeric, atol=1e-9)

    return feedback("parity spectrum", answer, ok,
                    "write e^{−2πi k·x} = Π_j e^{−2πi k_j x_j} and sum each x_j over {−1, 1}; the book's (4.4)")


def check_gradient_weight(answer: Callable[[float], float] | None) -> bool:
    """习题13: by what factor does L_grad (6.3) weight the error of frequency k, relative to L_nongrad (6.2)?"""
    return feedback("derivative loss", answer,
                    lambda fn: all(np.isclose(float(fn(k)), 1 + k * k) for k in (0, 1, 3, 5, 12.5)),
                    "the derivative of ε·sin(kx) is ε·k·cos(kx): compare the squared errors of both terms")


def check_asi(answer: np.ndarray | None) -> bool:
    """习题8: the output of an ASI network at initialisation, on any input."""
    return feedback("ASI", answer, lambda out: np.asarray(out).size > 0 and np.all(np.asarray(out) == 0),
                    "build companion.core.nets.ASI(MLP(...)) and evaluate it before training")


def check_stopping_step(answer: int | None, steps: np.ndarray, test_loss: np.ndarray) -> bool:
    """习题5: a stopping step chosen without the test set whose test loss is within 1.5× of the best one."""
    best = float(np.min(test_loss))

    def ok(step: int) -> bool:
        return float(test_loss[int(np.argmin(np.abs(steps - int(step))))]) <= 1.5 * best

    return feedback("early stopping", answer, ok,
                    "stop once the low-frequency part is fitted (Δ_F at k=1 small) but before the noise's "
                    "high frequencies are — compare the training output's spectrum with the first peaks")
