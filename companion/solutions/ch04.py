"""Worked solutions for the exercises of chapter 4, the frequency principle (频率原则).

Notebook: ``chapters/ch04_frequency_principle.py``.  Equations are the book's: (4.4) the DFT of the parity
function; the Δ_F(k) of §4.1.  The numbers quoted in the open questions were measured with the companion at
seed 0 (quick profile, one CPU thread) or read from the executed notebook.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "folded_bin", "alias_bin", "parity_dft", "asi_output", "stopping_step"]


def folded_bin(k: int, n: int) -> int:
    """The DFT bin in [0, n/2] where sin(kx), sampled at n equispaced points of [−π, π), shows up.

    On the grid x_j = −π + 2πj/n the factor e^{inx_j} = e^{−inπ} e^{2πij} = ±1 is the same at every sample
    (``(−1)^n``, here +1 for even n), so k and k ± n, and k and −k (up to sign), give the same samples.
    """
    r = k % n
    return int(min(r, n - r))


def alias_bin() -> int:
    """习题18: sin(11x) at 16 points of [−π, π) shows up in bin 16 − 11 = 5."""
    return folded_bin(11, 16)


def parity_dft(k: Any) -> complex:
    """习题6, (4.4): the DFT of the parity f(x) = Π_j x_j on {−1, 1}^d at the frequency vector k,
    (1/2^d) Σ_x Π_j x_j e^{−2πi k·x} = Π_j ½(e^{−2πik_j} − e^{2πik_j}) = (−i)^d Π_j sin 2πk_j."""
    k = np.asarray(k, dtype=float).ravel()
    return complex((-1j) ** k.size * np.prod(np.sin(2 * np.pi * k)))


def _parity_dft() -> Any:
    return parity_dft


def asi_output(width: int = 50, n_inputs: int = 9, seed: int = 0) -> np.ndarray:
    """习题8: the output of ``ASI(MLP([1, width, 1], "tanh", init_std=1.0))`` before training, on ``n_inputs``
    points of [−π, π] — exactly zero, because the second sub-network is a copy of the first."""
    import torch

    from companion.core.nets import ASI, MLP

    net = ASI(MLP([1, width, 1], "tanh", init_std=1.0, generator=torch.Generator().manual_seed(seed)))
    x = torch.linspace(-np.pi, np.pi, n_inputs)[:, None]  # (N, 1)
    with torch.no_grad():
        return net(x).numpy()[:, 0]  # (N,)


def stopping_step(es: Any, member: int = 0, ratio: float = 0.95) -> int:
    """习题5: a stopping step read from the training loss alone (图4.12's run ``es``).

    The training loss falls fast while the network fits the low-frequency peak of the data (sin x), then slowly
    while it eats the flat noise spectrum from low to high frequency.  Stop at the first recorded step t after
    which the running minimum of the training loss falls by less than ``1 − ratio`` (5 %) over the next
    ``window`` steps (5 % of the run, at least 100 steps).  Uses ``es.steps`` and ``es.train_loss`` only.
    """
    steps = np.asarray(es.steps)
    loss = np.minimum.accumulate(np.asarray(es.train_loss)[:, member])  # running minimum: Adam's spikes ignored
    window = max(100.0, 0.05 * float(steps[-1]))
    for i, t in enumerate(steps):
        j = int(np.searchsorted(steps, t + window))
        if j >= len(steps):
            break
        if loss[j] >= ratio * loss[i]:
            return int(t)
    return int(steps[-1])


S18 = Solution(
    label="习题18",
    text=r"""
**Aliasing (频率混叠).** The companion samples $x_j = -\pi + 2\pi j/n$, $j = 0,\dots,n-1$, here $n = 16$. On this grid
$e^{i n x_j} = e^{-i n\pi}\, e^{2\pi i j} = (-1)^n = 1$, so the sampled exponentials $e^{ikx_j}$ and
$e^{i(k-16)x_j}$ are
*the same sequence*. Hence

$$\sin(11x_j) = \sin\big((11 - 16)x_j\big) = -\sin(5x_j)\qquad\text{for every sample } j.$$

The 16 numbers the DFT sees are those of $-\sin 5x$: the energy appears in **bin 5** (with a flipped sign, which
the magnitude of the spectrum does not show). In general frequency $k$ folds to $\min(k \bmod n,\ n - k \bmod n)$; the
highest frequency 16 samples can represent is the Nyquist bin $n/2 = 8$, and 11 lies $3$ above it, so it reappears
3 below it.

Why it matters for the frequency principle: an under-sampled high frequency *looks like* a low one. A network,
which prefers low frequencies, then happily fits the spurious low frequency — this is what happens to the parity
function in section 6 (图4.13(b)).
""",
    code="""\
from companion.core.spectral import dft, uniform_grid

x = uniform_grid(16)                               # x_j = -pi + 2*pi*j/16
spectrum = np.abs(dft(np.sin(11 * x)))
print(np.round(spectrum, 3), "-> peak in bin", int(np.argmax(spectrum)))
print("same samples as -sin(5x):", np.allclose(np.sin(11 * x), -np.sin(5 * x)))
check_alias(5)""",
    answer=alias_bin,
)

S6 = Solution(
    label="习题6",
    text=r"""
**The parity function (奇偶函数) is high-frequency dominated.** Write $f(\mathbf x) = \prod_j x_j$ on $\Omega = \{-1,1\}^d$
and take the DFT of (4.4),
$\hat f(\mathbf k) = \frac{1}{2^d}\sum_{\mathbf x\in\Omega} f(\mathbf x)\, e^{-2\pi i\,\mathbf k\cdot\mathbf x}$.

1. The exponential factorises over the coordinates: $e^{-2\pi i\,\mathbf k\cdot\mathbf x} = \prod_j e^{-2\pi i k_j
   x_j}$, and so
   does $f$. The sum over the $2^d$ corners is a product of $d$ sums over $x_j \in \{-1, 1\}$:
   $$\hat f(\mathbf k) = \prod_{j=1}^d \tfrac12\sum_{x_j=\pm1} x_j\, e^{-2\pi i k_j x_j}.$$
2. Each factor is $\tfrac12\big(e^{-2\pi i k_j} - e^{2\pi i k_j}\big) = -i\,\sin 2\pi k_j$.
3. Therefore
   $$\hat f(\mathbf k) = (-i)^d \prod_{j=1}^d \sin 2\pi k_j,\qquad(4.4)$$
   a function of the whole vector $\mathbf k$ (not only of $|\mathbf k|$).

Reading it: at $\mathbf k = 0$ the spectrum vanishes, and near the origin $|\hat f| \approx (2\pi)^d\prod_j|k_j|$ is
tiny; it
is largest at $k_j = \pm\tfrac14$ (mod $\tfrac12$) in every coordinate. All of the function's energy sits at "high"
frequencies — the opposite of what the frequency principle favours — which is why a network trained on 200 of the
1024 points of $\{-1,1\}^{10}$ predicts the rest at chance (图4.13(b), section 6 of the notebook: test accuracy 0.51
and 0.47 at seed 0).
""",
    code="""\
def parity_dft(k):
    k = np.asarray(k, dtype=float)
    return (-1j) ** k.size * np.prod(np.sin(2 * np.pi * k))

check_parity_spectrum(parity_dft)""",
    answer=_parity_dft,
)

S8 = Solution(
    label="习题8",
    text=r"""
**ASI, the antisymmetric initialisation (反对称初始化).** `ASI(net)` keeps the network $h_1 = $ `net` and an exact copy
$h_2 = $ `copy.deepcopy(net)` and outputs $h(\mathbf x) = h_1(\mathbf x) - h_2(\mathbf x)$.

1. At $t = 0$ the two sub-networks have identical parameters, so $h_1(\mathbf x) = h_2(\mathbf x)$ for *every* input and
   $h \equiv 0$ — whatever the activation, the width or the initialisation scale (here a large one, `init_std=1.0`).
2. During training the two copies receive opposite gradients ($\partial h/\partial\theta_1 = -\partial
   h/\partial\theta_2$) and
   move apart; the network's expressiveness is that of the pair.

Why the book uses it: a randomly initialised network is already a function with its own spectrum, and with a large
initialisation that function is rough (high-frequency, 图6.2). Starting from $h \equiv 0$ removes this initial
function from the comparison, so that $\Delta_F(k)$ measures only what training does. The check therefore expects an
output that is exactly zero on any inputs.
""",
    code="""\
import torch
from companion.core.nets import ASI, MLP

net = ASI(MLP([1, 50, 1], "tanh", init_std=1.0))
with torch.no_grad():
    asi_output = net(torch.linspace(-np.pi, np.pi, 9)[:, None]).numpy()[:, 0]
print(asi_output)                                   # nine exact zeros
check_asi(asi_output)""",
    answer=asi_output,
)

S5 = Solution(
    label="习题5",
    text=r"""
**Early stopping (提前停止) from training information only.** The data of section 5 are $\sin x$ plus noise
$0.2\,\mathcal N(0,1)$: one low-frequency peak plus a flat (white) noise spectrum. By the frequency principle the
network fits the peak first, then the noise, from low to high frequency. The test error against the clean $\sin x$ is
smallest between the two stages. The task is to find that moment without the test set.

1. *What the training loss shows.* While the peak is being fitted, the training loss falls fast (seed 0, member 0:
   from 0.48 at step 20 to 0.056 at step 200). Once the peak is fitted, what is left is the noise, whose variance
   is about $0.2^2 = 0.04$; the network removes it only slowly, from its low-frequency end (the loss drifts from 0.028
   to 0.024 between steps 300 and 500). The fast-to-slow transition is the end of the low-frequency stage.
2. *The same in frequency.* Compute the relative error $\Delta_F$ of the training output at the data's peak (the
   DFT bin of $\sin x$ on the training grid): it falls from 1 to below 0.05 over exactly these steps (seed 0,
   member 0: 0.28 at step 100, 0.08 at step 200, 0.03 at step 300).
3. *A rule.* Let $\bar L(t)$ be the running minimum of the training loss (so that Adam's occasional spikes do not
   matter). Stop at the first recorded step $t$ with $\bar L(t + w) \ge 0.95\,\bar L(t)$, i.e. after which the loss
   gains
   less than 5 % over a window $w$ (5 % of the run, at least 100 steps).

On the notebook's run this gives a step in the admissible range: on the 20 training curves we measured (member 0,
seeds 0–19, the notebook's 3000 steps) the rule stopped between step 240 and 1140, on 19 of them with a test loss
within 1.5× of that curve's best (seed 15 stopped at step 1140, at 1.64×). A rule based only on the noise level —
stop when the training loss reaches an estimate of $\sigma^2$ from differences of neighbouring samples — has no such
margin: on seed 0 the estimate is 0.042 (for 0.04) and the rule stops at step 240, at 1.48× the best test loss, just
inside the range.

This is the book's 习题5: the frequency-domain error tells *when* the low frequencies are fitted; what follows is
mostly noise.
""",
    code="""\
# The rule, from the training loss of member 0 only:
running_min = np.minimum.accumulate(es.train_loss[:, 0])
window = max(100, 0.05 * es.steps[-1])
my_stopping_step = int(es.steps[-1])
for i, t in enumerate(es.steps):
    j = np.searchsorted(es.steps, t + window)
    if j >= len(es.steps):
        break
    if running_min[j] >= 0.95 * running_min[i]:
        my_stopping_step = int(t)
        break
print("stop at step", my_stopping_step)
check_stopping_step(my_stopping_step, es.steps, es.test_loss[:, 0])""",
    answer=stopping_step,
)

OPEN = Solution(
    label="Open questions",
    covers=(7, 10, 11, 12, 13),
    text=r"""
**习题7 — is the frequency principle specific to neural networks?** No and yes. It is a property of *gradient
training* of a model whose gradient carries less high-frequency content than low (6.11), not of networks as such.
Measured on $\sin x + \sin 3x + \sin 5x$ at 128 points of $[-\pi, \pi)$ with gradient descent on linear least squares
(first step with $\Delta_F(k) < 0.1$):

* a polynomial $\sum_{j\le15} c_j (x/\pi)^j$: $k = 1$ after 28 steps, $k = 3$ and $k = 5$ *never* within 200 000
  steps — the monomials' Gram matrix has its large eigenvalues on smooth functions, so a low-frequency preference
  appears without any network;
* a Fourier basis ($\sin jx$, $\cos jx$, $j \le 8$, all of norm 1): $k = 1, 3, 5$ all at step 4 — no order at all;
* the Jacobi iteration of chapter 15 (§15.5, 图15.1(c)): the *opposite* order, mode $j$ shrinking by $\cos(j\pi/n)$ per
  sweep, the high modes first.

So the order depends on the model and the algorithm. What is special about networks is that common activations
and small initialisations make the low-frequency preference the default.

**习题10 — does depth change it?** Not the order, the speed. With the explorer's target (k = 1, 3, 5, equal
amplitudes, width 64, Adam at $5\cdot10^{-3}$, 1500 steps, seed 0) the first steps with $\Delta_F(k) < 0.1$ were
45 / 720 / never for one hidden layer, 30 / 285 / 1050 for two and 30 / 120 / 345 for four: always low before high,
with depth shortening the delay of the high frequencies (test MSE $0.23$, $5.6\cdot10^{-3}$, $4.6\cdot10^{-5}$). The
book reports the same order for deep networks (图4.2, 图4.7).

**习题11 — construct a violation.** Remove one of the three factors of (6.11) (chapter 6):
an activation whose spectrum peaks at high frequency — Ricker with $a = 0.1$ (section 3: every peak converges at
step 10, against 30 / 70 / 200 for $a = 0.3$); $\sin(10x)$ as activation (all peaks within steps 8–16); a large
initialisation (图4.11: the image's unseen columns fall to 0.7 dB PSNR); or a loss that weights high frequencies
(习题13). In each case the training points are still fitted but the function between them oscillates and the test
error grows (section 3: test MSE 0.082 for $a = 0.1$ vs 0.027 for $a = 0.3$).

**习题12 — does the optimiser change it?** Switch the explorer's optimiser from Adam to plain gradient descent
(`sgd`, full batch). On the same target and network (two hidden layers, seed 0): learning rate 0.05 gives
15 / 945 / never (1500 steps) — the same order, with the high frequencies much slower than with Adam (30 / 285 /
1050); learning rate 0.2 diverges. Adam rescales each *parameter's* step, not each frequency's, so it does not remove
the $\exp(-|\pi k/2w|)$ factor of (6.11); it mainly shortens the time scale. Full-batch GD is the setting of the
theory; Adam and SGD keep the qualitative picture.

**习题13 — a derivative of the output in the loss.** For an error $\varepsilon\sin kx$ the derivative adds
$\varepsilon k\cos kx$, so $L_{\rm grad}$ (6.3) weights frequency $k$ by $1 + k^2$ relative to $L_{\rm nongrad}$ (6.2) —
chapter 6's 习题7, 8. High frequencies converge sooner (图6.4; chapter 6's notebook measures $k = 5$ converging at
step 420 instead of 1430, medians over members), and with strong enough weighting the order can disappear — which is
why the
principle is weaker when solving differential equations whose losses contain derivatives (chapter 15).
""",
    code="""\
# 习题7: gradient descent on linear least squares, two bases, the first step with Delta_F(k) < 0.1
from companion.core.spectral import dft, uniform_grid

x = uniform_grid(128)
f = np.sin(x) + np.sin(3 * x) + np.sin(5 * x)
fh = dft(f)

def first_steps(features, steps):
    lr = 1.0 / np.linalg.eigvalsh(features.T @ features / len(x)).max()
    coef, first = np.zeros(features.shape[1]), {}
    for t in range(steps + 1):
        h = features @ coef
        for k in (1, 3, 5):
            if k not in first and abs(dft(h)[k] - fh[k]) / abs(fh[k]) < 0.1:
                first[k] = t
        coef -= lr * features.T @ (h - f) / len(x)
    return first

monomials = np.stack([(x / np.pi) ** j for j in range(16)], 1)
fourier = np.stack([np.sin(j * x) for j in range(1, 9)] + [np.cos(j * x) for j in range(9)], 1)
print("polynomial:", first_steps(monomials, 20000), " Fourier:", first_steps(fourier, 200))""",
)

#: The solutions of chapter 4, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S18, S6, S8, S5, OPEN)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-4 exercise and return its answer (``solution(18)`` → 5).

    ``label`` is a label of :data:`SOLUTIONS` ("习题18", "Open questions") or an exercise number (18 means 习题18).
    The answer of 习题5 needs the notebook's run: ``solution(5)`` returns the function, call it as
    ``solution(5)(es)``.  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 4")
