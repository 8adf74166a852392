"""Worked solutions for the exercises of chapter 14, more phenomena and in-context learning as an implicit ΔW
(深度神经网络的更多现象).

Notebook: ``chapters/ch14_more_phenomena.py``.  Notation of §14.3 and of Dherin et al. (the book's source for the
implicit update): a contextual block T_W(C, x) = M_W(A(C, x)) with an MLP M_W whose first weight matrix is W
(H × D); ΔA = A(C, x) − A(x); Theorem 2.2: T_W(C, x) = T_{W+ΔW}(x) with ΔW = (W ΔA) A(x)ᵀ / ‖A(x)‖².
The notebook numbers its exercises 1–6; exercises 4, 5, 6 are the book's 习题7, 9, 10.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "min_norm_update"]


def min_norm_update(W: Any, dA: Any, a_x: Any) -> Any:
    """Exercise 1: the ΔW of least Frobenius norm with ΔW A(x) = W ΔA, i.e. (W ΔA) A(x)ᵀ / ‖A(x)‖² (rank 1)."""
    import torch

    return torch.outer(W @ dA, a_x) / (a_x @ a_x)  # (H, D)


def _min_norm_update() -> Callable[[Any, Any, Any], Any]:
    return min_norm_update


S1 = Solution(
    label="Exercise 1",
    text=r"""
**The least-norm update (Theorem 2.2's ΔW).** We need $(W + \Delta W)A(x) = W\big(A(x) + \Delta A\big)$, i.e. the linear
constraint $\Delta W\,a = v$ with $a = A(x) \in \mathbb R^D$ and $v = W\Delta A \in \mathbb R^H$.

1. *Row by row.* Row $r$ of $\Delta W$ must satisfy $\delta_r^\top a = v_r$. Among all vectors with a given inner
   product with $a$, the shortest is parallel to $a$: $\delta_r = v_r\,a/\|a\|^2$ (any component orthogonal to $a$ adds
   to the norm and not to the product).
2. *Together.* $\Delta W = \dfrac{v\,a^\top}{\|a\|^2} = \dfrac{(W\Delta A)\,A(x)^\top}{\|A(x)\|^2}$ — an outer product,
   **rank 1**, exactly the update of the theorem (§14.3).
3. *Check.* $\Delta W a = v\,(a^\top a)/\|a\|^2 = v$ ✓, and $\|\Delta W\|_F = \|W\Delta A\|/\|A(x)\|$, which the checker
   compares with the norm of your answer. No matrix of smaller norm satisfies the constraint, because the minimum
   was taken row by row.

The hint's "rank-1 matrix that maps $A(x)$ to a given vector and annihilates everything orthogonal to $A(x)$" is
$v\,\hat a^\top/\|a\|$ with $\hat a = a/\|a\|$: the same formula.
""",
    code="""\
def my_delta_w(W, dA, a_x):
    return torch.outer(W @ dA, a_x) / (a_x @ a_x)      # (H, D): (W dA) A(x)^T / |A(x)|^2

phenomena.check_min_norm_update(my_delta_w)""",
    answer=_min_norm_update,
)

S2 = Solution(
    label="Exercise 2",
    text=r"""
**ΔW is not unique, and why the theorem picks the minimal one.** If $N\,A(x) = 0$ — every row of $N$ orthogonal to
$A(x)$, e.g. $N = R\,(I - \hat a\hat a^\top)$ for any $H\times D$ matrix $R$ — then $(W + \Delta W + N)A(x) = (W +
\Delta W)A(x)$:
the block's output *at this query* is unchanged, and `icl.patched_output` gives the same prediction to rounding (the
snippet builds such an $N$ on a random block and compares the two outputs).

Why single out $\Delta W = (W\Delta A)A(x)^\top/\|A(x)\|^2$?

* *It is the smallest* (Exercise 1) and the only one in the span of $A(x)$: it changes the MLP's first layer only in
  the direction of the current input and leaves the response to every input orthogonal to $A(x)$ untouched — the
  "least interference" update. The others change the network on inputs unrelated to the query.
* *It is what gradient descent would do.* One gradient step on $\tfrac12\|(W + \Delta W)A(x) - W A(C, x)\|^2$ from
  $\Delta W = 0$ moves $\Delta W$ along $(\text{residual})\,A(x)^\top$, and with the right step size lands exactly on
  the minimal update — which is why Dherin et al. read the token-by-token updates as an implicit gradient descent
  (section 8: each partial update is rank 1, and they telescope to $\Delta W(C)$).
* *It is determined by the context alone*, through $\Delta A$, so it is a well-defined function $C \mapsto \Delta W(C)$
  that can be compared with fine-tuning (section 9); the family $\Delta W + N$ has no such canonical member otherwise.
""",
    code="""\
from companion.core import icl
from companion.kit.seeds import generator

gen = generator(seed, 5)
W = torch.randn(6, 4, dtype=torch.float64, generator=gen)
dA, a_x = torch.randn(4, dtype=torch.float64, generator=gen), torch.randn(4, dtype=torch.float64, generator=gen)
dW = torch.outer(W @ dA, a_x) / (a_x @ a_x)
N = torch.randn(6, 4, dtype=torch.float64, generator=gen) @ (torch.eye(4, dtype=torch.float64) - torch.outer(a_x, a_x) / (a_x @ a_x))
print("same effect at the query:", torch.allclose((W + dW + N) @ a_x, W @ (a_x + dA)))
print("norms: minimal", float(dW.norm()), " other", float((dW + N).norm()))
print("ranks:", int(torch.linalg.matrix_rank(dW)), int(torch.linalg.matrix_rank(dW + N)))

# the same on a contextual block, with icl.patched_output: the query alone, patched by dW or by dW + N
block = icl.ContextualBlock(dim=8, hidden=32, heads=2, kind="skip", generator=gen).double()
prompt = torch.randn(1, 12, 8, dtype=torch.float64, generator=gen)          # 11 context tokens + the query
query = prompt[:, -1:]
with torch.no_grad():
    update = icl.implicit_update(block, prompt, query)                        # Theorem 2.2: dW (1, H, D), db2
    _, u = icl.query_state(block, query)                                      # A(x) at the MLP's input, (1, D)
    R = torch.randn(update.dW.shape, dtype=torch.float64, generator=gen)
    N = R - torch.einsum("bhd,bd,be->bhe", R, u, u) / (u * u).sum()          # rows orthogonal to A(x)
    other = icl.Update(update.dW + N, update.db2)
    full = icl.block_output(block, prompt)
    print("minimal dW:", float((icl.patched_output(block, query, update) - full).abs().max()),
          " dW + N:", float((icl.patched_output(block, query, other) - full).abs().max()),
          " norms:", float(update.dW.norm()), float(other.dW.norm()))""",
)

S3 = Solution(
    label="Exercise 3",
    text=r"""
**The second block.** `phenomena.delta_w_path(model, tasks, block=1)` computes the token-by-token increments of the
implicit update of the second block's MLP (the identity holds there too: section 7 verifies $\Delta W(C)$ of block 1 to
$3\cdot10^{-16}$ in float64). Compare the decay of its increments (mean of the last three over the first three) with
that of the untrained control's second block, as section 8 does for block 0 (block 0: trained 0.22, untrained 0.18 —
the decay itself is softmax averaging: each new token changes an attention average over more tokens by less).

What to expect and how to read it: the second block receives the first block's output, in which the context has
already been mixed into every position; its $\Delta A$ therefore reflects what block 0 computed, not the raw
examples. If its increments decay like its untrained control's, the decay says nothing about learning there either.

Measured (seed 0, the notebook's trained model and 200 tasks; mean ‖increment‖ of the first and last token, and the
decay = last three / first three):

| | first increment | last increment | decay |
|---|---|---|---|
| block 0, trained | 1.57 | 0.23 | 0.22 |
| block 0, untrained | 0.86 | 0.10 | 0.18 |
| block 1, trained | 0.71 | 0.10 | 0.24 |
| block 1, untrained | 0.90 | 0.11 | 0.18 |

Both blocks decay like the softmax-averaging baseline (0.22 and 0.24 against 0.18). But the trained first block's
updates are about twice those of its untrained control at every token, while the trained second block's are no
larger than its control's (smaller at first). So the second block is *closer* to the untrained baseline: the
trained model's context-dependent update is concentrated in the first block, which is where it "reads" the
examples; the second block mostly processes the already-mixed representation. (What would settle the question is
section 9's test applied to block 1: does its $\Delta W(C_i)$ alone improve predictions on new queries?)
""",
    code="""\
for block in (0, 1):
    inc_trained = phenomena.mean_increment(phenomena.delta_w_path(model, tasks, block=block))
    inc_random = phenomena.mean_increment(phenomena.delta_w_path(phenomena.random_init(config), tasks, block=block))
    print(f"block {block}: decay trained {phenomena.increment_decay(inc_trained):.2f}, "
          f"untrained {phenomena.increment_decay(inc_random):.2f}")""",
)

S4 = Solution(
    label="Exercise 4",
    covers=(7,),
    text=r"""
**Grokking (顿悟) against the weight decay λ (the book's 习题7).** Grokking is the late jump of the test accuracy long
after the training set is memorised. Weight decay (权重衰减) drives it: the memorising solution has a large weight norm;
decay slowly shrinks it, and the network drifts towards the lower-norm, generalising (modular-arithmetic) solution,
which fits the data with smaller weights.

Prediction: the delay shrinks as λ grows — roughly like $1/\lambda$ if the drift is a decay at rate $\eta\lambda$ of the
excess norm — until λ is so large that even the training set is fitted late or not at all. A larger training fraction
makes the memorising solution costlier (more pairs to store) and the general one better determined, so the delay
shrinks too.

Measured (seed 0, $p = 31$, division, 2500 steps; one batched run per training fraction, about a minute each): the
first step with training accuracy ≥ 0.99 and the first with test accuracy ≥ 0.9.

| λ | 0.1 | 0.25 | 0.5 | 1.0 |
|---|---|---|---|---|
| 60 % of the table: train / test | 60 / never | 60 / 2460 | 70 / 1200 | 70 / 860 |
| 80 % of the table: train / test | 70 / 1760 | 80 / 780 | 80 / 500 | 90 / 330 |

The memorisation time hardly depends on λ (60–90 steps); the grokking step falls with λ, close to $1/\lambda$ at small λ
($\lambda\,t_{\rm test} \approx 600$ for λ = 0.25 and 0.5 at 60 %) and more slowly beyond; and a larger training
fraction
shortens the delay by a factor of 2–3 at every λ (with 80 % even λ = 0.1 groks, at step 1760). Without weight decay
(section 1's second member, λ = 0) the notebook sees no grokking within the run.
""",
    code="""\
for fraction in (0.6, 0.8):
    sweep = phenomena.run_grokking(phenomena.GrokConfig(p=31, train_fraction=fraction, weight_decay=(0.1, 0.25, 0.5, 1.0),
                                                        seed=seed))
    for k, lam in enumerate(sweep.config.weight_decay):
        t_train, t_test = phenomena.grokking_steps(sweep, k)
        print(f"train fraction {fraction}, lambda {lam}: train acc 0.99 at {t_train}, test acc 0.9 at {t_test}")""",
)

S5 = Solution(
    label="Exercise 5",
    covers=(9,),
    text=r"""
**Pruning without loss: lottery tickets (幸运彩票, the book's 习题9).** Iterative magnitude pruning with rewinding:
train, remove the smallest-magnitude half of each hidden layer's remaining weights (a quarter in the output layer),
rewind the survivors to their *initial* values, repeat. A ticket is good if, trained alone, it tests as well as the
dense network.

Reading `lottery.remaining` (fraction of weights left per round) against `lottery.ticket` (test accuracy, one column
per ticket): in section 2 at seed 0 the best ticket at ≤ 20 % of the weights is, on average over the three tickets,
within 0.005 of its dense network's error — so yes, a network can be shrunk five-fold without hurting it. Pruned to
2.5 % the tickets degrade (error 0.142 against 0.055 at their best), and the same masks with a fresh random
initialisation do 2.2 times worse: the surviving *initial values* matter, not only the sparse architecture.

Measured (seed 0, the notebook's configuration; mean test accuracy over the three tickets, dense = 0.950):

| weights left | 100 % | 51 % | 27 % | 14 % | 7.7 % | 4.3 % | 2.5 % |
|---|---|---|---|---|---|---|---|
| magnitude tickets (rewound) | 0.950 | 0.951 | 0.949 | 0.944 | 0.944 | 0.914 | 0.858 |
| same masks, fresh init | 0.952 | 0.956 | 0.949 | 0.944 | 0.930 | 0.841 | 0.691 |
| random pruning (rewound) | 0.950 | 0.951 | 0.952 | 0.942 | 0.921 | 0.727 | 0.409 |

Per ticket, the smallest fraction within 1 point of its own dense accuracy is 7.7 % for two of the three tickets and
27 % for the third; on average the tickets stay within 1 % down to 7.7 %. With `criterion="random"` the subnetworks
are fine while there are plenty of weights (down to about 14 %) and then collapse (0.41 at 2.5 %), and rewinding
them is no better than a fresh initialisation (0.415): randomly pruned networks are just smaller networks. The winning
tickets are the combination of the magnitude mask *and* its initial values.
""",
    code="""\
print("remaining:", np.round(lottery.remaining, 3))
print("ticket accuracy (mean):", np.round(lottery.ticket.mean(1), 3), " dense:", np.round(lottery.ticket[0], 3))
within = lottery.ticket >= lottery.ticket[0] - 0.01               # (R+1, K): within 1 point of the dense net
print("smallest fraction within 1 %:", [float(lottery.remaining[within[:, k]].min()) for k in range(within.shape[1])])
random_pruning = phenomena.run_lottery(phenomena.LotteryConfig(criterion="random", steps=lottery_config.steps, seed=seed))
print("random pruning, ticket accuracy:", np.round(random_pruning.ticket.mean(1), 3))""",
)

S6 = Solution(
    label="Exercise 6",
    covers=(10,),
    text=r"""
**Double descent (双下降) without label noise and with a ridge (the book's 习题10).** The random-features model fits its
output weights to minimum norm; its test error peaks at the interpolation threshold (插值阈值) $m = n$ because there the
feature matrix is square and badly conditioned: the minimum-norm solution must use huge weights to interpolate, and
whatever noise is in the labels — or in the target as seen through $m$ random features — is amplified by
$1/\sigma_{\min}$.

Measured (seed 0, $n = 200$ digits, 5 feature draws per width), test classification error at widths 100 / 200 / 2000:

| setting | $m = 100$ | $m = 200$ (peak) | $m = 2000$ |
|---|---|---|---|
| label noise 0.2, ridge 0 (section 3) | 0.344 | 0.838 | 0.284 |
| label noise 0, ridge 0 | 0.165 | 0.723 | 0.060 |
| label noise 0.2, ridge 10 | 0.180 | 0.164 | 0.232 |

* **Without label noise the peak stays** for the random-features model (0.72 at $m = n$ against 0.17 at $m = 100$): the
  "noise" that is amplified is also the part of the target the $m$ random features cannot represent (the
  misspecification), which a ResNet, able to fit the clean labels almost exactly, does not have — hence the book's
  remark that for ResNets the peak "can hardly be seen" without label noise.
* **The ridge removes it**: with $\lambda = 10$ the error is flat around 0.16–0.19 near $m = n$ (maximum 0.166 between
  $m = 130$ and $300$), because the penalty bounds the weights where $\sigma_{\min} \to 0$. Of the two changes, the
  ridge
  removes the peak; dropping the label noise only lowers the curve.
""",
    code="""\
for name, overrides in (("no label noise", dict(label_noise=0.0)), ("ridge 10", dict(ridge=10.0))):
    result = phenomena.run_double_descent(phenomena.DoubleDescentConfig(n_draws=dd_config.n_draws, seed=seed, **overrides))
    print(name, dict(zip(result.widths.tolist(), np.round(result.test_error, 3).tolist())))""",
)

#: The solutions of chapter 14, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S1, S2, S3, S4, S5, S6)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-14 exercise and return its answer (``solution(1)`` → the function
    ``min_norm_update``).  ``label`` is "Exercise 1" … "Exercise 6" or a number 1–6 (7, 9, 10 — the book's
    习题 numbers of exercises 4–6 — work too).  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 14")
