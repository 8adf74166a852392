"""Worked solutions for the exercises of chapter 5, multiscale networks and Fourier features (多尺度神经网络).

Notebook: ``chapters/ch05_multiscale_networks.py``.  Equations are the book's: (5.1) the scaling rule of the Fourier
transform, (5.2) the MscaleDNN, (5.11) Fourier features.  Numbers in the open questions: the executed notebook
(seed 0, quick profile) and runs of the notebook's explorer that we measured (seed 0, one CPU thread).
"""

from __future__ import annotations

import math
from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "stretch_factor", "fraction_above"]


def stretch_factor(frequency: float = 25.0) -> float:
    """(5.1), 习题2: sin(2π·frequency·x) = sin(2π·(frequency/a)·z) for z = a·x, one cycle per unit iff a = frequency."""
    return float(frequency)


def fraction_above(limit: float = 100.0, sigma: float = 100.0) -> float:
    """习题4, 5: P(|b| > limit) for b ~ N(0, σ²): 2(1 − Φ(limit/σ)) = erfc(limit/(σ√2)); ≈ 0.3173 for σ = limit."""
    return math.erfc(limit / (sigma * math.sqrt(2.0)))


S2 = Solution(
    label="习题2",
    text=r"""
**Stretching the input turns a high frequency into a low one.** A neuron group of the MscaleDNN (5.2) with scale $a$
computes $\sigma(a\,\mathbf w\cdot x + b)$, i.e. it is an ordinary network of the stretched variable $z = a x$.

1. Rewrite the component in $z$: $\sin(2\pi\cdot 25x) = \sin\!\big(2\pi\,\tfrac{25}{a}\,z\big)$. To this group it has
   frequency $25/a$ cycles per unit of $z$.
2. It looks like $\sin 2\pi z$, one cycle per unit, when $25/a = 1$: **$a = 25$**.
3. The same in the language of (5.1), $\mathcal F[f(kx)](\zeta) = \frac{1}{|k|}\hat f(\zeta/k)$: a peak of $\hat f$ at
   frequency 25 appears, after stretching by $a$, at $25/a$.

Why it helps: by the frequency principle (chapter 4) a network learns frequency 1 quickly and frequency 25 very
slowly; the group with $a = 25$ gets the difficult component as an easy one. This is what section 1 measures: the
MscaleDNN reaches $\Delta_F(10) = 0.013$ and $\Delta_F(25) = 0.29$, the plain network of the same width only
0.39 and 0.84.
""",
    code="check_stretch(25)",
    answer=stretch_factor,
)

S4 = Solution(
    label="习题4, 5",
    text=r"""
**How many Fourier features lie above what the samples can pin down?** The features (5.11) use frequencies
$b_j \sim \mathcal N(0, \sigma^2)$ (cycles per unit). With 200 equispaced samples on $[0, 1)$ the highest frequency
the samples determine is the Nyquist frequency (奈奎斯特频率) $200/2 = 100$; a component above it is
indistinguishable, on the samples, from one below (aliasing, chapter 4 习题18).

1. Standardise: $|b_j|/\sigma = |Z|$ with $Z \sim \mathcal N(0, 1)$.
2. $P(|b_j| > 100) = P(|Z| > 100/\sigma) = 2\big(1 - \Phi(100/\sigma)\big) =
   \operatorname{erfc}\!\big(100/(\sigma\sqrt2)\big)$.
3. For $\sigma = 100$: $2(1 - \Phi(1)) = \operatorname{erfc}(1/\sqrt2) \approx$ **0.317** — almost a third of the
   features. For $\sigma = 10$ the same probability is $\operatorname{erfc}(10/\sqrt2) \approx 1.5\cdot10^{-23}$: none.

What it explains (`ch05.fourier-overfit`): the linear readout can use the third of the features above 100 cycles to
interpolate the samples exactly while oscillating between them, and gradient descent has no reason to avoid them —
their alias on the samples is a low frequency. In section 2 the $\sigma = 100$ net ends with test MSE 0.198 against
$1.9\cdot10^{-5}$ for $\sigma = 10$.

The book's 习题4 asks whether fixed or random frequencies are better and whether to train them. Random Gaussian
frequencies cover all directions and scales without a grid (important in several dimensions, where a grid of
frequencies grows exponentially); what matters is the scale $\sigma$, which must match the target's highest
frequency *and* stay below the sampling limit. Training $b_j$ is possible, but then the features follow the
frequency principle again (the gradient with respect to $b_j$ is largest for the low frequencies), and nothing stops
them from drifting above the Nyquist frequency; fixing them and choosing $\sigma$ by validation is the usual choice.
""",
    code="""\
import math
from scipy.stats import norm

sigma, nyquist = 100.0, 200 / 2
above_nyquist = 2 * (1 - norm.cdf(nyquist / sigma))        # = math.erfc(nyquist / (sigma * math.sqrt(2)))
b = np.random.default_rng(0).normal(0.0, sigma, 100_000)   # a Monte Carlo check
print(round(above_nyquist, 4), (np.abs(b) > nyquist).mean())
check_nyquist_fraction(above_nyquist)""",
    answer=fraction_above,
)

OPEN = Solution(
    label="Open questions",
    covers=(3, 6, 9),
    text=r"""
**习题3 — interference between frequency components.** In a multiscale network every scale group sees the whole
target; the low-frequency part is easy for *every* group, so at first all groups fit it, and a high-scale group can
just as well represent low frequencies with small weights. The parts therefore are not separated by themselves — the
groups' outputs overlap and partly cancel. Section 3 shows what separates them in the SD²DNN: with the low module at
scale 1 alone, the middle module's band starting at 20 and equal weights, the sum solved the three-scale equation
(5.7) but the middle module took the smooth part (the low module's share at k = 1 about 0.02). With scale bands kept
apart (0.5–15, 60–100, 400–1000) and the oscillating modules weighted by ε₁ and ε₂ as in the authors' code, every
module takes its own scale (20/20 seeds). The orthogonality penalty, which adds the squared inner products between the
sub-modules' outputs to the loss, is meant to make overlapping contributions cost something; as formed here it grows
like the fourth power of the parts' heights and barely acts on parts 10⁻² high — without it the modules separate just
as well. Three identical sub-modules (the same scales, equal weights) solve the equation but split it arbitrarily.

**习题6 — does the activation matter?** Yes, decisively. ReLU is positively homogeneous:
$\mathrm{ReLU}(a(wx + b)) = a\,\mathrm{ReLU}(wx + b)$ for $a > 0$, so the group "$\mathrm{ReLU}(a w x + b)$" is the same
family of functions as the unscaled group with different weights — the stretch only changes the initialisation's
effective size and the learning rate, not the function class. The companion's digest found no gain for ReLU or tanh
MscaleDNNs; the notebook uses the compactly supported sReLU, $\mathrm{sReLU}(x) = \mathrm{ReLU}(x)\,\mathrm{ReLU}(1 -
x)$,
whose bump has a fixed width, so that scale $a$ really produces bumps $a$ times narrower (sin/cos activations work
for the same reason). A smooth activation whose spectrum decays slowly also helps the high-frequency groups.

**习题9 — is a larger $A$ always better?** No. Scales up to $A$ give groups that see frequencies up to $A$ times lower,
but (i) at a fixed width each scale gets fewer neurons (width 64 with $A = 64$: one neuron per scale);
(ii) a group with a large scale has a rough initial output and behaves like a large initialisation (chapter 6): it
injects frequencies above what the samples can pin down, so the fit between samples oscillates — the same failure as
the Fourier features with $\sigma = 100$; (iii) gradients of the high-scale groups are $a$ times larger, which
constrains the learning rate.

Measured with the explorer's MscaleDNN (width 64, 1500 steps, seed 0), final $\Delta_F$ at $k = 1, 10, 25$ and test
MSE:

| $A$ | $\Delta_F(1)$ | $\Delta_F(10)$ | $\Delta_F(25)$ | test MSE |
|---|---|---|---|---|
| 1 | 0.009 | 0.78 | 0.94 | 0.117 |
| 4 | 0.006 | 0.19 | 0.78 | 0.031 |
| 16 | 0.002 | 0.013 | 0.40 | 0.0098 |
| 64 | 0.002 | 0.073 | 0.34 | 0.016 |

Going from 16 to 64 scales helps $k = 25$ a little but loses $k = 10$ and raises the test error by 70 %: the useful $A$
is of the order of the highest frequency present in the target (here 25), not as large as possible. Try the
explorer's *scales A* slider.
""",
    code="""\
# 习题9: the explorer's MscaleDNN with A = 1, 4, 16, 64 scales (width 64, 1500 steps; a few seconds each)
from companion.experiments.ch05_multiscale import explore

for A in (1, 4, 16, 64):
    run = explore("mscale", A, 10.0, 64, 1500)
    print(f"A = {A:2d}: final Delta_F(1, 10, 25) = {np.round(run.deltas[-1], 3)}, test MSE = {run.test_mse:.2e}")""",
)

#: The solutions of chapter 5, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S2, S4, OPEN)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-5 exercise and return its answer (``solution(2)`` → 25.0).

    ``label`` is a label of :data:`SOLUTIONS` ("习题2", "习题4, 5", "Open questions") or an exercise number
    (4 and 5 both mean "习题4, 5").  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 5")
