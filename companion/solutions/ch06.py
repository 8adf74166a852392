"""Worked solutions for the exercises of chapter 6, the mechanism of the frequency principle (频率原则的机制).

Notebook: ``chapters/ch06_frequency_mechanism.py``.  Equations are the book's: (6.2) L_nongrad, (6.3) L_grad, (6.5)
the Fourier transform of a tanh neuron, (6.7) its large-frequency form, (6.11) the size of the gradient of the loss
at frequency k.  Numbers: the executed notebook (seed 0, quick profile) and our measurements (seed 0, one thread).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "gradient_weight", "tanh_spectrum"]


def gradient_weight(k: float) -> float:
    """习题7, 8: L_grad (6.3) weights the squared error of frequency k by 1 + k² relative to L_nongrad (6.2)."""
    return 1.0 + float(k) ** 2


def tanh_spectrum(xi: float, w: float) -> float:
    """习题5, 10: |∫ tanh(wx) e^{−iξx} dx| = π / (|w| sinh(πξ / (2|w|))) for ξ > 0, the modulus of (6.5)."""
    w = abs(float(w))
    return math.pi / (w * math.sinh(math.pi * float(xi) / (2.0 * w)))


def _gradient_weight() -> Callable[[float], float]:
    return gradient_weight


def _tanh_spectrum() -> Callable[[float, float], float]:
    return tanh_spectrum


S7 = Solution(
    label="习题7, 8",
    text=r"""
**The derivative term multiplies frequency $k$ by $1 + k^2$.** Take an error of one frequency,
$f_\theta - f^* = \varepsilon\sin kx$, on many equispaced points of a whole number of periods (so that averages of
$\sin^2$ and $\cos^2$ are $\tfrac12$).

1. $L_{\rm nongrad}$ (6.2) is the mean of $\varepsilon^2\sin^2 kx$, i.e. $\varepsilon^2/2$.
2. $L_{\rm grad}$ (6.3) adds the mean of $(\nabla_x f_\theta - \nabla_x f^*)^2 = (\varepsilon k\cos kx)^2$, i.e.
   $\varepsilon^2 k^2/2$.
3. The ratio is $\dfrac{\varepsilon^2/2 + \varepsilon^2k^2/2}{\varepsilon^2/2} = 1 + k^2$.

**习题8, in the frequency domain:** $\widehat{f'}(k) = ik\,\hat f(k)$ — differentiation multiplies the Fourier transform
by the frequency. By Parseval (6.9) the loss is a sum over frequencies of $|\hat h(k) - \hat f(k)|^2$, and the
derivative term adds $k^2|\hat h(k) - \hat f(k)|^2$: the same error counts $1 + k^2$ times, so the gradient (6.11) on
high frequencies grows by that factor and they converge sooner. The notebook measures it (图6.4): with $L_{\rm grad}$
$k = 5$ converges at step 420 (median), with $L_{\rm nongrad}$ at step 1430. This is also chapter 4's 习题13, and why
the principle is weaker for losses of differential equations (chapter 15), whose residual contains $u''$ (weight
$k^4$).
""",
    code="""\
gradient_weight = lambda k: 1 + k ** 2
# numerically: an error eps*sin(kx) on whole periods
x = np.linspace(-np.pi, np.pi, 4096, endpoint=False)
for k in (1, 3, 5):
    e, de = 0.1 * np.sin(k * x), 0.1 * k * np.cos(k * x)
    print(k, ((e ** 2).mean() + (de ** 2).mean()) / (e ** 2).mean(), gradient_weight(k))
check_gradient_weight(gradient_weight)""",
    answer=_gradient_weight,
)

S5 = Solution(
    label="习题5, 10",
    text=r"""
**The spectrum of a tanh neuron decays exponentially.** $\tanh(wx)$ is not integrable (it tends to $\pm1$), so take
the transform of its derivative, which is: $\frac{d}{dx}\tanh(wx) = w\,\mathrm{sech}^2(wx)$, and use
$\widehat{g'}(\xi) = i\xi\,\hat g(\xi)$.

1. A standard integral: $\int \mathrm{sech}^2(u)\,e^{-i\eta u}\,du = \dfrac{\pi\eta}{\sinh(\pi\eta/2)}$.
2. With $u = wx$ ($w > 0$): $\int w\,\mathrm{sech}^2(wx)\,e^{-i\xi x}dx = \dfrac{\pi\xi/w}{\sinh(\pi\xi/2w)}$.
3. Divide by $\xi$: $$\Big|\int\tanh(wx)\,e^{-i\xi x}\,dx\Big| =
   \frac{\pi}{|w|\,\sinh\!\big(\pi\xi/(2|w|)\big)},\qquad \xi > 0.$$
   This is the modulus of the book's (6.5): $\big|\exp(ib\xi/w)\big| = 1$ and $e^{-y} - e^{y} = -2\sinh y$ give
   $\frac{2\pi}{|w|}\cdot\frac{1}{2\sinh(\pi\xi/2|w|)}$. A bias $b$ changes only the phase.
4. For large $\xi$, $\sinh y \approx e^y/2$: the spectrum is $\approx \frac{2\pi}{|w|}e^{-\pi\xi/(2|w|)}$ — the factor
   $\exp(-|\pi k/2w|)$ of (6.7) and (6.11). It decays exponentially with rate $\pi/(2|w|)$: the smaller the weight,
   the faster the decay, and the stronger the low-frequency preference of the gradient.

**ReLU.** $\mathrm{ReLU}(wx)$ has a kink: its second derivative is $|w|\,\delta(x)$ (up to sign), whose transform is
flat, so $|\widehat{\mathrm{ReLU}}(\xi)| \sim |w|/\xi^2$ — a power law, as the book notes. Prediction: the gradient
still favours low frequencies, so the principle holds for ReLU networks, but the preference is weaker (a power of $k$
instead of an exponential) and it does not depend on the weight's size in the same way; high frequencies are learned
comparatively sooner. tanh is the book's choice in §6.2 because its transform is explicit; any smooth activation
with a fast-decaying transform gives the same conclusion.
""",
    code="""\
tanh_spectrum = lambda xi, w: np.pi / (abs(w) * np.sinh(np.pi * xi / (2 * abs(w))))
for w in (0.5, 1.0, 3.0):
    print(w, [f"{tanh_spectrum(xi, w):.2e}" for xi in (0.5, 2.0, 6.0)])  # smaller w: faster decay
check_tanh_spectrum(tanh_spectrum)""",
    answer=_tanh_spectrum,
)

OPEN = Solution(
    label="Open questions",
    covers=(2, 3, 9, 11),
    text=r"""
**习题2, 11 — why a large initialisation breaks the principle, in terms of (6.11).** The gradient at frequency $k$
carries the factor $\exp(-|\pi k/2w_i|)$. With small weights $|w_i|$ this factor dies off at low $k$, so only
low frequencies receive gradient and they converge first. With large weights it is $\approx 1$ over a wide band:
every frequency in the band gets a comparable gradient and there is no order (section 1: first-convergence steps
80 / 110 / 110 for $k = 1, 3, 5$ at init std 2, against 10 / 630 / 1240 at std 0.07). Worse, a network with large
weights is already a rough function at $t = 0$: 41 % of its output energy lies above the data's Nyquist frequency
($k = 20$ for 40 samples), against 0.08 % for the small initialisation. Those components are invisible on the samples
(they alias to low frequencies there), so training has no signal to remove them: the data are fitted, the function
between them is not (test MSE 3.38 against 0.046). The other factors of (6.11) enter the same way:
$|\hat h(k) - \hat f(k)|$ through the loss (习题7, 8), the exponential through the activation (习题5, 10; Ricker
with small $a$ has a spectrum that rises before it falls, 图6.3).

**习题3 — choosing an initialisation range.** Keep $\exp(-\pi k/2|w|)$ small for the frequencies the data cannot
resolve, i.e. $|w|$ well below $k_{\rm Nyquist}$ — in practice a standard deviation of order $1/\sqrt{\text{fan-in}}$
(LeCun/Xavier-type) or smaller, and a check that the initial function carries almost no energy above the sampling
limit. Measured on the network of section 1 (1-200-200-1 tanh, float64, mean of 5 draws, before any training; the
output times a Hann window, so that the ends of the interval add no spurious high frequencies), the share of the
initial output's energy above $k = 20$ on $[-\pi, \pi)$ is below $10^{-7}$ for init std 0.07 and 0.3,
$1.0\cdot10^{-3}$ at
std 1 and $1.2\cdot10^{-2}$ at std 2 — it jumps by about five orders of magnitude between 0.3
and 1 (the snippet repeats
it). Training then amplifies what is there: at std 2 the trained net of section 1 ends with 41 % of its energy above
the Nyquist frequency. Try the
explorer's *init std* slider: the order 1 → 3 → 5 survives up to a few tenths and is gone at 1–2.

**习题9 — a loss that makes the principle stronger.** Do the opposite of (6.3): weight frequency $k$ by a decreasing
function, e.g.
$$L_{\rm smooth} = \sum_k \frac{|\hat h(k) - \hat f(k)|^2}{1 + k^2},$$
the squared $H^{-1}$ norm of the error. On a uniform grid it is computed with one FFT of the residual; in the space
domain it is the error tested against a smoothing kernel ($(1 - \partial_x^2)^{-1}$, a convolution with
$\tfrac12e^{-|x|}$). The gradient on frequency $k$ is divided by $1 + k^2$, so high frequencies converge even later —
useful when the data are noisy (chapter 4's early stopping), harmful when the fine details matter.
""",
    code="""\
# 习题3: the share of the initial function's energy above k = 20, against the init std (no training)
import torch
from companion.core.nets import MLP
from companion.core.spectral import dft, uniform_grid

x = uniform_grid(1024)
window = 0.5 * (1 + np.cos(x))          # Hann window: the periodic extension stays smooth
for std in (0.07, 0.3, 1.0, 2.0):
    shares = []
    for s in range(5):
        net = MLP([1, 200, 200, 1], "tanh", init_std=std, generator=torch.Generator().manual_seed(s)).double()
        with torch.no_grad():
            h = net(torch.as_tensor(x)[:, None]).numpy()[:, 0]
        energy = np.abs(dft((h - h.mean()) * window)) ** 2
        shares.append(energy[21:].sum() / energy[1:].sum())
    print(f"init std {std}: {np.mean(shares):.1e} of the energy above k = 20")

# 习题9: the H^-1 loss of a residual r on a uniform periodic grid
def smooth_loss(r):
    k = np.fft.rfftfreq(len(r), d=1 / len(r))
    return np.sum(np.abs(np.fft.rfft(r)) ** 2 / (1 + k ** 2)) / len(r) ** 2""",
)

#: The solutions of chapter 6, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S7, S5, OPEN)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-6 exercise and return its answer (a function of k, or of ξ and w).

    ``label`` is a label of :data:`SOLUTIONS` ("习题7, 8", "习题5, 10", "Open questions") or an exercise number
    (7 or 8 → "习题7, 8").  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 6")
