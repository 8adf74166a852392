"""Worked solutions for the exercises of chapter 11, flatness and the edge of stability (平坦性).

Notebook: ``chapters/ch11_flatness.py``.  Equations are the book's: (11.10) 0 < η < 2/λ for GD on L = ½λθ², (11.11)
0 < η < 2/λ_max for a network, (11.6) the link between the SGD noise and the directional flatness.  Numbers: the
executed notebook (seed 0, quick profile).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "stability_limit", "rescale"]


def stability_limit(lam: float = 10.0) -> float:
    """习题2, (11.10): GD on ½λθ² multiplies θ by 1 − ηλ per step, so it converges iff |1 − ηλ| < 1, i.e. η < 2/λ."""
    return 2.0 / float(lam)


def rescale(model: Any, c: float) -> Any:
    """习题11: a copy of a two-layer ReLU net with (W₁, b₁, W₂) → (cW₁, cb₁, W₂/c); the same function for c > 0."""
    import torch

    out = copy.deepcopy(model)
    with torch.no_grad():
        out.layers[0].weight.mul_(c)
        out.layers[0].bias.mul_(c)
        out.layers[1].weight.div_(c)
    return out


def _rescale() -> Callable[[Any, float], Any]:
    return rescale


S2 = Solution(
    label="习题2",
    text=r"""
**The stability limit of gradient descent.** On $L(\theta) = \tfrac12\lambda\theta^2$ the gradient is
$\lambda\theta$, so one
step of GD with learning rate $\eta$ is
$$\theta_{t+1} = \theta_t - \eta\lambda\theta_t = (1 - \eta\lambda)\,\theta_t,\qquad \theta_t = (1 -
\eta\lambda)^t\theta_0.$$

1. It converges iff $|1 - \eta\lambda| < 1$, i.e. $0 < \eta < 2/\lambda$ (11.10). For $\lambda = 10$: **$\eta_{\max}
   = 0.2$**
   (at exactly $\eta = 0.2$ the factor is $-1$ and $\theta$ flips sign forever without shrinking).
2. Between $1/\lambda$ and $2/\lambda$ the factor is negative: GD converges while oscillating around the minimum; below
   $1/\lambda$ it converges monotonically (section 1: 'monotone' at $\eta\lambda = 0.5, 1$, 'oscillating' at 1.5,
   'marginal' at
   2, 'diverging' at 2.1).
3. In a network the quadratic is the local model along each Hessian eigenvector, and the sharpest one decides:
   $\eta < 2/\lambda_{\max}$ (11.11).

**The second half (Adam).** Adam's step is $\eta\,\hat m_t/(\sqrt{\hat v_t} + \epsilon)$, built from running averages of
the gradient and of its square. Multiplying every gradient by a constant leaves $\hat m_t/\sqrt{\hat v_t}$ unchanged (up
to $\epsilon$), so on $\tfrac12\lambda\theta^2$ Adam's trajectory is **the same for every $\lambda$**: there is no threshold
$2/\lambda$, and the step size is set by $\eta$ alone (about $\eta$ per step at first, like $\eta\,\mathrm{sign}$ of the
gradient). We measured it (torch's Adam, $\theta_0 = 1$, 2000 steps): for $\eta = 0.01$ and for $\eta = 0.5$ — far above
$2/\lambda = 0.2$ — and for $\lambda = 10$ and $1000$, $|\theta|$ ends below $10^{-30}$, with identical trajectories for
the two $\lambda$. A large $\eta$ gives large early oscillations (jumps of order $\eta$ across the minimum), but as the
gradient shrinks so does $\hat v_t$, and the oscillations die out. With Adam, instability comes from the interplay of
$\eta$ with how fast the gradient *changes* (non-quadratic losses, noise), not from $\eta\lambda > 2$; this is why the
edge of stability of adaptive methods is measured on the preconditioned sharpness.
""",
    code="""\
lam = 10.0
eta_max = 2 / lam
for eta in (0.9 * eta_max, 1.1 * eta_max):        # just below / just above the limit
    theta = 1.0
    for _ in range(50):
        theta -= eta * lam * theta
    print(f"eta = {eta:.3f}: |theta_50| = {abs(theta):.2e}")
fl.check_stability_limit(eta_max, lam=10.0)

# the second half: Adam on the same quadratic, a learning rate far above 2/lambda, two values of lambda
from companion.core.train import descend  # the package's one training step: backward, then the optimiser

for lam_adam in (10.0, 1000.0):
    theta = torch.tensor([1.0], requires_grad=True)
    update = descend(torch.optim.Adam([theta], lr=0.5), lambda: 0.5 * lam_adam * theta ** 2)
    for step in range(2000):
        update(step)
    print(f"Adam, lambda = {lam_adam:g}, eta = 0.5: |theta_2000| = {abs(theta.item()):.1e}")""",
    answer=stability_limit,
)

S11 = Solution(
    label="习题11",
    text=r"""
**Sharpness is not invariant under reparametrisation.** ReLU is positively homogeneous:
$\sigma(cz) = c\,\sigma(z)$ for $c > 0$. For the two-layer net $f(x) = W_2\,\sigma(W_1x + b_1) + b_2$,

1. replace $(W_1, b_1, W_2)$ by $(cW_1, cb_1, W_2/c)$: $\;\frac{1}{c}W_2\,\sigma(c(W_1x + b_1)) + b_2 =
   W_2\,\sigma(W_1x + b_1) + b_2$ —
   **the same function**, hence the same training and test loss, for every $c > 0$;
2. but the Hessian changes: the second derivatives with respect to $W_2$ scale like $c^2$ (the hidden outputs are
   multiplied by $c$) and those with respect to $(W_1, b_1)$ like $c^{-2}$. For $c \to 0$ or $c \to \infty$ one of
   the two
   blocks blows up, so $\lambda_{\max}$ can be made as large as we like without changing anything that matters
   (Dinh et al., 2017).

In code: copy the model (`copy.deepcopy`, so that the notebook's network is not modified), multiply
`layers[0].weight` and `layers[0].bias` by $c$ and divide `layers[1].weight` by $c$; the output bias stays. The
notebook's
section 6 measures it on the plain ReLU net of section 5: the outputs do not change (to rounding), while
$\lambda_{\max}$
moves by more than a factor 2 at $c = 3$ and at $c = 1/3$.

This answers the book's 习题11 (limitations of $\lambda_{\max}$): flatness "explains" generalisation only within a
fixed parametrisation; measures invariant under such rescalings (e.g. normalised or filter-normalised sharpness, the
profiles of section 5) are needed to compare networks.
""",
    code="import copy\nfrom typing import Any\n\n" + inspect.getsource(rescale) + "\n\nfl.check_rescaling(rescale, relu_net, x1, y1)",
    answer=_rescale,
)

OPEN = Solution(
    label="Open questions",
    covers=(13, 6, 15),
    text=r"""
**习题13 — why does GD not settle at a minimum much flatter than $2/\eta$?** Gradient descent has no term that
lowers the sharpness. In the first phase (progressive sharpening) the loss falls and, for reasons of the architecture
and the data, the curvature along the top direction *grows*; GD follows the loss downhill wherever that takes the
sharpness. It cannot exceed $2/\eta$ for long: once $\lambda_{\max} > 2/\eta$ the iterate oscillates and grows along the
top eigenvector (the quadratic of 习题2), the loss rises in that direction, and the third-order terms of the loss move
the parameters to a region where $\lambda_{\max}$ is slightly smaller — a self-stabilisation that holds $\lambda_{\max}$
*at* $2/\eta$ (section 2: the median over the last half is 1.003 × $2/\eta$ for $\eta = 0.3$ and $0.4$). Below the edge
nothing pushes the sharpness down; with a small $\eta = 0.1$ it stays at $0.53 \times 2/\eta$ (10.4 against a limit
of 20).
The deeper point: GD's implicit bias is set by the step size, which excludes the sharp minima but does not select the
flattest one.

**习题6 — why do small batches prefer flat minima?** The SGD noise is not isotropic: its covariance $\Sigma$ is aligned
with the Hessian (§11.3.1; section 4: $\mathrm{Tr}(H\Sigma)$ is 102 times the value for the same noise spread evenly
over
all directions), and its size along a direction grows with the curvature there ((11.6): the variance falls steeply with
the directional flatness, log-log slope −7.1). A smaller batch means a larger $\Sigma$ ($\propto 1/B$). In a sharp
minimum the noise it produces along the sharp directions is large compared with the basin's width, so SGD is kicked
out; it stays only where the basin is wide enough for its noise — a flat minimum. Isotropic noise of the same total
size does not do this (section 4: GLD ends at $\lambda_{\max} = 8.0$ like GD, SGD with $B = 8$ at 4.4; batch 32 at 7.5).

**习题15 — how would batch normalisation change section 3?** Batch normalisation (批归一化) makes the network
invariant to the scale of the weights before each BN layer, so, as in 习题11, $\lambda_{\max}$ is no longer a
well-defined measure: scaling those weights by $c$ scales their Hessian block by $1/c^2$, and weight decay or the
growth of the weight norm during training changes the measured sharpness without changing the function. BN also
couples the examples of a batch — the noise of SGD now contains the noise of the batch statistics, which itself
shrinks with larger $B$. One expects the qualitative effect (smaller batches, more noise, flatter in a
scale-invariant measure) to survive, but the raw $\lambda_{\max}$ comparison of section 3 to become unreliable; the
effective learning rate $\eta/\|w\|^2$ is what sets the edge for BN networks.
""",
)

#: The solutions of chapter 11, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S2, S11, OPEN)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-11 exercise and return its answer (``solution(2)`` → 0.2, ``solution(11)``
    → the function ``rescale``).  ``label`` is "习题2", "习题11", "Open questions" or a number (13, 6, 15 → the open
    questions).  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 11")
