"""Worked solutions for the exercises of chapter 8, condensation (凝聚).

Notebook: ``chapters/ch08_condensation.py``.  Notation: f_θ(x) = Σ_k a_k ReLU(w_k x + b_k) with θ = (a_k, w_k, b_k)
(the book's 习题19), the empirical risk R_S(θ) = (1/2n) Σ_i (f_θ(x_i) − y_i)², the cosine similarity (8.4).
"""

from __future__ import annotations

from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "dead_neuron_distance"]


def dead_neuron_distance() -> float:
    """习题19: a ReLU neuron inactive at every training input gets a zero gradient and moves a distance 0."""
    return 0.0


S19 = Solution(
    label="习题19",
    text=r"""
**Why the grey neurons never move.** Take $f_\theta(x) = \sum_k a_k\,\mathrm{ReLU}(w_k x + b_k)$ and
$R_S(\theta) = \frac1{2n}\sum_{i=1}^n (f_\theta(x_i) - y_i)^2$; write $e_i = f_\theta(x_i) - y_i$. Suppose neuron
$k$ is *dead*:
$w_k x_i + b_k \le 0$ at every training input, so $\mathrm{ReLU}(w_k x_i + b_k) = 0$ and $\mathrm{ReLU}'(w_k x_i +
b_k) = 0$
(with the convention $\mathrm{ReLU}'(0) = 0$, which autograd uses).

1. $\dfrac{\partial R_S}{\partial a_k} = \frac1n\sum_i e_i\,\mathrm{ReLU}(w_k x_i + b_k) = 0$.
2. $\dfrac{\partial R_S}{\partial w_k} = \frac1n\sum_i e_i\,a_k\,\mathrm{ReLU}'(w_k x_i + b_k)\,x_i = 0$.
3. $\dfrac{\partial R_S}{\partial b_k} = \frac1n\sum_i e_i\,a_k\,\mathrm{ReLU}'(w_k x_i + b_k) = 0$.

So a gradient-descent step leaves $(a_k, w_k, b_k)$ unchanged. The step changes *other* neurons, and therefore the
residuals $e_i$, but not the fact that neuron $k$ is inactive on the training inputs, which depends only on its own
$(w_k, b_k)$. By induction on the step count the neuron stays dead and never moves: the total distance it travels is
**0**. (This holds for full-batch GD on a fixed training set, and for SGD and Adam too — their updates are built from
these zero gradients; weight decay would shrink it towards 0, and new inputs could wake it up.)

The notebook measures it (`check_dead_neurons`, 图8.3): 29 of the 100 neurons are dead at initialisation, the
largest distance any of them moves is exactly 0, and the smallest move of a live neuron is $4\cdot10^{-5}$. A
softplus net has no such neurons: $\mathrm{softplus}' > 0$ everywhere.
""",
    code="""\
import numpy as np

w0, b0 = proc.w[0][:, 0], proc.w[0][:, 1]                      # (m,) input weights and biases at t = 0
dead = np.all(np.outer(w0, proc.x) + b0[:, None] <= 0, axis=1)  # inactive at every training input
moved = np.linalg.norm(proc.w[-1] - proc.w[0], axis=1) + np.abs(proc.a[-1] - proc.a[0])
print(dead.sum(), "dead neurons; the farthest of them moved", moved[dead].max())
answer19 = 0.0""",
    answer=dead_neuron_distance,
)

S13 = Solution(
    label="习题13 / 20",
    text=r"""
**Three ways to quantify condensation (凝聚), and which one separates the regimes.** For a two-layer net with
neurons $(a_k, w_k, b_k)$ the companion uses

* **orientation clusters**: the angles $\operatorname{atan2}(b_k, w_k)$ of the neurons carrying 90 % of the amplitude
  $A_k = |a_k|\,\|(w_k, b_k)\|$, split wherever two neighbours are more than 0.1 rad apart (a run wider than a
  quarter turn counts as many arcs) — few clusters = condensed; together with the *occupied share* of 36 angle bins;
* **the top eigenvalue of the direction Gram** $\frac1m\sum_k \hat u_k\hat u_k^\top$, $\hat u_k = (w_k, b_k)/\|(w_k,
  b_k)\|$
  — 1 when all directions lie on one line, $1/d$ (here $\tfrac12$) when they are spread;
* **the cosine heat map** $D(u, v) = u^\top v/(\|u\|\|v\|)$ (8.4), rows sorted by its leading eigenvector — blocks of
  $\pm1$ are clusters; as a number, the share of $D$ on its top line, $\lambda_1(D)/C$ for $C$ neurons.

They differ in what they weigh. The eigenvalue counts every neuron equally, and in 2-D (input weight and bias) it
can only distinguish "one line" (1) from "spread" ($\tfrac12$): a net with six clusters and a spread net get similar
values. The heat map is a picture, easy to read but not a number unless summarised — and its summary $\lambda_1(D)/C$
is the same number as the Gram eigenvalue of the same neurons (the two matrices share their nonzero eigenvalues).
The orientation clusters weight by amplitude and count directions, which is what "condensed on a few directions"
means.

Measured at $m = 500$ on the target (8.2), GD as in §1 (lr 0.05, 8000 steps, seed 0), at the end of training:

| init std | final $R_S$ | clusters | occupied share | Gram eigenvalue: all neurons / carrying ones ($= \lambda_1(D)/C$) |
|---|---|---|---|---|
| $10^{-3}$ | 0.0071 | 6 | 0.25 | 0.58 / 0.70 |
| $10^{-1}$ | 0.0001 | 14 | 0.89 | 0.54 / 0.60 |
| $1$ | 0.187 | 2 | 0.11 | 0.88 / 0.996 |

* Between the small and the moderate initialisation the **cluster count and the occupied share** separate the regimes
  clearly (6 vs 14, 0.25 vs 0.89); the eigenvalue hardly does (0.70 vs 0.60 on the carrying neurons, 0.58 vs 0.54 on
  all of them): it is the worst of the three in one dimension. It is the right tool in many dimensions, where spread
  directions give $1/d$ and "one line" still gives 1 (section 3's initial condensation, $d = 6$).
* **A warning from init std 1:** with the explorer's learning rate 0.05 this net diverges in its first steps (the loss
  jumps from 460 to $2.4\cdot10^5$), most neurons die, and it ends at $R_S = 0.187$ — a failed fit. All three measures
  then call it "condensed" (2 clusters, eigenvalue 0.996). Condensation measures are meaningful only on nets that fit
  the data; compare nets at equal (small) training loss, and check the relative distance RD of chapter 7 (here 31 for
  std 1 against 0.23 for std 0.1).

So: the amplitude-weighted cluster count (with the occupied share, so that "spread" is not read as "one cluster")
separates the regimes best at $m = 500$; the heat map shows *how* (blocks), the eigenvalue quantifies "one line". This
is the book's 习题13 (which indicators) and 20(c) (seeing condensation).
""",
    code="""\
from companion.core.neurons import (alignment_eigenvalue, amplitude, carrying_mask, cosine_similarity_matrix,
                                    count_angle_clusters, occupied_fraction, orientation)

for std in (1e-3, 0.1, 1.0):                 # explorer runs at width 500 (about half a minute each)
    run = ch8.run_condensation(width=500, init_std=std, steps=8000, n_snapshots=41, seed=seed, progress=False)
    w, a = run.w[-1], run.a[-1]
    amp, ang = amplitude(a, w), orientation(w)
    carrying = carrying_mask(amp, 0.9)
    cos = cosine_similarity_matrix(w[carrying])
    print(f"init std {std:g}: clusters {count_angle_clusters(ang, amp)}, occupied share {occupied_fraction(ang, amp):.2f}, "
          f"Gram eigenvalue {alignment_eigenvalue(w):.3f} (all) / {alignment_eigenvalue(w[carrying]):.3f} (carrying), "
          f"top-line share of D {np.linalg.eigvalsh(cos)[-1] / len(cos):.3f}")""",
)

#: The solutions of chapter 8, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S19, S13)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-8 exercise and return its answer (``solution(19)`` → 0.0).

    ``label`` is "习题19", "习题13 / 20" or a number (13 or 20 → "习题13 / 20").  Raises ``ValueError`` otherwise.
    """
    return show(SOLUTIONS, label, "chapter 8")
