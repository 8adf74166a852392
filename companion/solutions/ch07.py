"""Worked solutions for the exercises of chapter 7, the phase diagram of two-layer ReLU networks (相图).

Notebook: ``chapters/ch07_phase_diagram.py``.  Equations are the book's: (7.4) f^α_θ(x) = (1/α) Σ a_k σ(w_kᵀx),
(7.5) a_k ~ N(0, β1²), w_k ~ N(0, β2² I), (7.9) κ = β1β2/α and κ′ = β1/β2, (7.12) γ = lim −log κ / log m,
γ′ = lim −log κ′ / log m, and the boundary γ = max(1, 1 + γ′) of the diagram (表7.1, 图7.5).
"""

from __future__ import annotations

from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "he_xavier", "regimes_19", "regime_of"]


def regime_of(gamma: float, gamma_prime: float) -> str:
    """The regime of the point (γ, γ′): 'linear' left of γ = max(1, 1 + γ′), 'condensed' right of it, 'critical' on it."""
    boundary = max(1.0, 1.0 + gamma_prime)
    if abs(gamma - boundary) < 1e-9:
        return "critical"
    return "condensed" if gamma > boundary else "linear"


def he_xavier() -> dict[str, tuple[float, float]]:
    """习题17: (γ, γ′) of He (β1 = √(2/m), β2 = √(2/d), α = 1) and Xavier (β1 = √(2/(m+1)), β2 = √(2/(m+d))).

    He: κ = 2/√(md) → γ = ½; κ′ = √(d/m) → γ′ = ½.  Xavier: κ ≈ 2/m → γ = 1; κ′ → 1 → γ′ = 0 (表7.1)."""
    return {"He": (0.5, 0.5), "Xavier": (1.0, 0.0)}


def regimes_19() -> dict[str, str]:
    """习题19: (i) (γ, γ′) = (0, 0) linear; (ii) (2, 0) condensed; (iii) (1, −1) critical."""
    points = {"i": (0.0, 0.0), "ii": (2.0, 0.0), "iii": (1.0, -1.0)}
    return {case: regime_of(*p) for case, p in points.items()}


S17 = Solution(
    label="习题17",
    text=r"""
**Placing He and Xavier in the phase diagram.** The state variables are $\kappa = \beta_1\beta_2/\alpha$ and
$\kappa' = \beta_1/\beta_2$ (7.9), and the coordinates are their exponents in $m$ as $m \to \infty$ (7.12):
$\gamma = \lim -\log\kappa/\log m$, $\gamma' = \lim -\log\kappa'/\log m$. Constant factors (the $\sqrt2$'s, the input
dimension $d$) drop out of the limit because $\log(\text{const})/\log m \to 0$.

*Kaiming He* ($\alpha = 1$, $\beta_1 = \sqrt{2/m}$, $\beta_2 = \sqrt{2/d}$):
$\kappa = \frac{2}{\sqrt{md}} \propto m^{-1/2}$ so $\gamma = \tfrac12$; $\kappa' = \sqrt{d/m} \propto m^{-1/2}$ so
$\gamma' = \tfrac12$.

*Xavier* ($\alpha = 1$, $\beta_1 = \sqrt{2/(m+1)}$, $\beta_2 = \sqrt{2/(m+d)}$): for large $m$ both are
$\approx\sqrt{2/m}$,
so $\kappa \approx 2/m$, $\gamma = 1$, and $\kappa' = \sqrt{(m+d)/(m+1)} \to 1$, $\gamma' = 0$.

**Answer:** He $(\tfrac12, \tfrac12)$, Xavier $(1, 0)$, as in 表7.1. He lies left of the boundary
$\gamma = \max(1, 1 + \gamma') = 1.5$: the **linear** regime (a wide He-initialised two-layer net trains like its
kernel). Xavier lies on the segment $\{\gamma = 1, \gamma' \le 0\}$: **critical**, like the mean-field scaling.
""",
    code="""\
import math
from companion.experiments.ch07_phase import limit_gammas

he = limit_gammas(lambda m, d: 1.0, lambda m, d: math.sqrt(2 / m), lambda m, d: math.sqrt(2 / d), d=5)
xavier = limit_gammas(lambda m, d: 1.0, lambda m, d: math.sqrt(2 / (m + 1)), lambda m, d: math.sqrt(2 / (m + d)), d=5)
print("He", he, "Xavier", xavier)        # slopes between two huge widths: (0.5, 0.5) and (1.0, 0.0)
answers17 = {"He": (0.5, 0.5), "Xavier": (1.0, 0.0)}
phase.check_exercise17(answers17);""",
    answer=he_xavier,
)

S19 = Solution(
    label="习题19",
    text=r"""
**Three scalings.** Compute $\kappa = \beta_1\beta_2/\alpha$, $\kappa' = \beta_1/\beta_2$, read off the exponents
(7.12) and
compare $\gamma$ with the boundary $\gamma_c(\gamma') = \max(1, 1 + \gamma')$: linear if $\gamma < \gamma_c$,
condensed if
$\gamma > \gamma_c$, critical on it.

| case | $\alpha,\ \beta_1,\ \beta_2$ | $\kappa$ | $\kappa'$ | $(\gamma, \gamma')$ | $\gamma_c$ | regime |
|---|---|---|---|---|---|---|
| (i) | $1, 1, 1$ | $1$ | $1$ | $(0, 0)$ | 1 | **linear** |
| (ii) | $m^2, 1, 1$ | $m^{-2}$ | $1$ | $(2, 0)$ | 1 | **condensed** |
| (iii) | $1, 1, 1/m$ | $m^{-1}$ | $m$ | $(1, -1)$ | 1 | **critical** |

(i) is the plain "standard normal" net: its output is of size $\sqrt m$ and the weights barely move relative to their
size (RD → 0). (ii) divides the output by $m^2$: the net starts essentially at zero and must grow its weights by
a large factor — the neurons condense. (iii) shrinks only the input weights: $\gamma = 1$ with $\gamma' = -1 \le 0$ lies
on the critical segment $\{\gamma = 1, \gamma' \le 0\}$.

To see one of them: in the explorer set $\gamma = 2$, $\gamma' = 0$ (case (ii)) and watch the neurons gather on a few
orientations, while at $\gamma = 0$ they stay spread (the notebook's 图7.6: occupied share of orientation bins 0.06 in
the condensed cells against 1.00 in the linear ones).
""",
    code="""\
answers19 = {"i": "linear", "ii": "condensed", "iii": "critical"}
phase.check_exercise19(answers19);""",
    answer=regimes_19,
)

#: The solutions of chapter 7, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S17, S19)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-7 exercise and return its answer (``solution(19)`` → the regimes).

    ``label`` is "习题17", "习题19" or the number 17 / 19.  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 7")
