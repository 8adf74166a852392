"""Worked solution for the exercise of chapter 9, the embedding principle (嵌入原则).

Notebook: ``chapters/ch09_embedding_principle.py``; its single exercise is titled ``## Exercise (习题 20)``, label
"习题20".  Notation: f_θ(x) = Σ_{j=1}^m a_j tanh(w_j x + b_j), θ = (a_j, w_j, b_j); the companion's risk is
R(θ) = (1/2n) Σ_i (f_θ(x_i) − f*(x_i))² (half the book's R_S of 习题20, which changes no critical point); the one-step
splitting embedding T^α_s of §9.1 copies neuron s with output weights α a_s and (1 − α) a_s.
"""

from __future__ import annotations

from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution"]


S20 = Solution(
    label="习题20",
    text=r"""
**Critical losses of widths 1, 2, 3 for $f^*(x) = \tanh(x - 7) + \tanh x + \tanh(x + 7)$** (80 points on $[-10, 10]$).

*Method.* Many-restart L-BFGS in float64 with a Newton polish (`emb.best_fits`) finds critical points of each width;
`emb.distinct_losses` groups their losses. A restart can also end on a point that is not critical (two neurons whose
difference mimics a derivative run off to infinity along a valley) — check `fit.grad_norm`.

*What we measured* (seed 0, 8 restarts per width; the companion's risk $R = \frac1{2n}\sum(\cdot)^2$):

| width $m$ | distinct losses found |
|---|---|
| 1 | 0.05625 |
| 2 | 0.0490 (‖∇R‖ = 2.5·10⁻³: a valley, not a critical point), 0.0539, 0.05624 |
| 3 | $9\cdot10^{-33}$ (exact fit: $f^*$ is itself a width-3 net), 0.0091, 0.0151, 0.0395 |

*Which losses reappear one width up?* By the **embedding principle** every critical point of width $m$ is also a
critical point of width $m + 1$: split a neuron, $T^\alpha_s(\theta)$, and the output and the gradient are unchanged
for every $\alpha$. We checked it on the width-1 optimum: split into 2 and 3 copies it keeps its loss 0.05625 exactly
(output change 0) with ‖∇R‖ ≈ $10^{-8}$; its Hessian gains zero eigenvalues (1 → 3 → 5 zeros, no negative ones) —
a degenerate critical point of the wider landscape, the "embedded critical point". So 0.05625 is a critical loss of
widths 1, 2 and 3, the width-2 values are critical losses of width 3, and so on.

*Why the restarts do not show them at width 3:* L-BFGS from random starts is attracted by minima, and embedded points
are degenerate or saddles in the wider landscape, with a tiny basin of attraction; restarts at width 3 land on the
exact fit or on genuinely width-3 points. Gradient descent from a *small* initialisation is different: it passes
through the embedded points and stalls there — the plateaus at the width-1 loss in section 1 (图9.1, 9.2), which is how
the embedding principle shows up in training.
""",
    code="""\
for m in (1, 2, 3):                                  # about a second per restart
    fits = emb.best_fits(x20a, y20, m, restarts=8, seed=seed)
    print(m, np.round(emb.distinct_losses(fits), 5), " grad norms:", [f"{f.grad_norm:.0e}" for f in fits[:4]])

# the width-1 optimum, split into 2 and 3 neurons: same loss and output, still critical, more zero eigenvalues
best1 = emb.best_fits(x20a, y20, 1, restarts=4, seed=seed)[0]
for s in emb.split_spectra(best1, x20a, y20, ks=(1, 2, 3)):
    print(f"width {s.m}: |grad R| = {s.grad_norm:.1e}, output change {s.out_diff:.1e}, Hessian {s.counts}")""",
)

#: The solution of chapter 9.
SOLUTIONS: dict[str, Solution] = collect(S20)


def solution(label: str | int = 20) -> Any:
    """Show the worked solution of chapter 9's exercise ("习题20" or 20); it is an open exercise, so returns ``None``.
    Raises ``ValueError`` for an unknown label."""
    return show(SOLUTIONS, label, "chapter 9")
