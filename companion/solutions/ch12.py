"""Worked solutions for the exercises of chapter 12, anchor functions (锚函数).

Notebook: ``chapters/ch12_anchor_functions.py``.  Notation as in the book and the notebook: the identity task (12.1)
f₃(x₁…x_n) = x_{i+1} where x_i = 3 (anchor 3, key x_{i+1}); the mod-residue split (模-余数划分): a key x at position p
is a test pair iff x ≡ p (mod m); attention scores X W^Q (X W^K)ᵀ with X = X^em + X^pos.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "random_split_pairs", "expected_overlap", "shift_scores"]


def random_split_pairs(seed: int = 0, n_train: int = 2000, n_test: int = 500, seq_len: int = 9, lo: int = 20,
                       hi: int = 99) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """Exercise 4: the (key position, key) pairs of a *random* split of the identity task.

    As in :func:`companion.core.anchor_tasks.identity_task`, the anchor sits at a position in [0, seq_len − 3] and the
    key right after it (positions 1 … seq_len − 2), but the key is drawn from all of [lo, hi] for training and test
    alike.  Returns (train_pairs, test_pairs)."""
    rng = np.random.default_rng(seed)

    def pairs(n: int) -> set[tuple[int, int]]:
        key_pos = rng.integers(0, seq_len - 2, size=n) + 1  # (n,) the key follows the anchor
        keys = rng.integers(lo, hi + 1, size=n)  # (n,) any key, whatever the position
        return {(int(p), int(k)) for p, k in zip(key_pos, keys)}

    train = pairs(n_train)
    return train, pairs(n_test)


def _random_split_pairs() -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    return random_split_pairs()


def expected_overlap(n_train: int = 2000, seq_len: int = 9, lo: int = 20, hi: int = 99) -> float:
    """The chance that a random test pair was drawn in training: 1 − (1 − 1/N)^n_train, N = (seq_len − 2)(hi − lo + 1)."""
    n_pairs = (seq_len - 2) * (hi - lo + 1)
    return 1.0 - (1.0 - 1.0 / n_pairs) ** n_train


def shift_scores(seq_len: int = 9, scale: float = 200.0) -> np.ndarray:
    """Exercise 11: the causal attention weights (T, T) of one head whose scores are X^pos W^Q (X^pos W^K)ᵀ with
    rotary-like positions p_i = (cos iθ, sin iθ), W^Q = √scale·I and W^K = √scale·R(θ), θ = π/T.  Row i puts almost
    all its weight on i − 1 (row 0 has only itself)."""
    theta = np.pi / seq_len
    i = np.arange(seq_len)
    pos = np.stack([np.cos(i * theta), np.sin(i * theta)], 1)  # (T, 2)
    rot = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])  # row vectors: angle + θ
    q, k = np.sqrt(scale) * pos, np.sqrt(scale) * pos @ rot  # (T, 2): k_j = (cos (j+1)θ, sin (j+1)θ)
    scores = q @ k.T  # (T, T) = scale·cos((i − j − 1)θ)
    scores = np.where(np.tril(np.ones((seq_len, seq_len), bool)), scores, -np.inf)  # causal mask
    weights = np.exp(scores - scores.max(1, keepdims=True))
    return weights / weights.sum(1, keepdims=True)


S4 = Solution(
    label="Exercise 4",
    text=r"""
**Why the mod-residue split (模-余数数据划分).** A test set should contain inputs the model has not seen. In the
identity task what the model must combine is *where* the key sits and *which* key it is, so the unit of novelty is
the pair (key position, key).

1. *Count the pairs.* The key follows the anchor at positions $1,\dots,7$ of a length-9 sequence, and keys range over
   $20,\dots,99$: $7 \times 80 = 560$ possible pairs.
2. *Random split.* Each of 2000 training sequences draws one pair uniformly. A given pair is missed by all of them
   with probability $(1 - 1/560)^{2000} \approx e^{-3.57} \approx 0.028$, so about **97 %** of the test pairs were
   already
   seen in training (our draw with seed 0: 317 of its 325 distinct test pairs, 98 %; 547 of the 560 pairs occur in
   training). Test accuracy on such a split measures memory of seen
   (position, key) pairs, not generalisation.
3. *Mod-residue split.* Put a pair in the test set iff $x \equiv p \pmod m$ (with $m = 9$ here): every key and every
   position still occurs in training — only their *combinations* are split — and the overlap is exactly 0. A model
   that answers these test pairs has learned the rule (read the token after the anchor), not a table.
4. The other splits of the book's 习题4: by *key value* (train on keys < 80, test on keys ≥ 80) makes generalisation
   impossible — the unseen keys' embeddings were never trained as answers (the notebook's section 2: test accuracy 0
   although the attention already points at the key); by *anchor position* it tests a different thing, the
   transfer of the positional shift to positions never trained.
""",
    code="""\
import numpy as np

rng = np.random.default_rng(seed)

def random_pairs(n, seq_len=9, lo=20, hi=99):
    key_pos = rng.integers(0, seq_len - 2, size=n) + 1      # the key follows the anchor
    keys = rng.integers(lo, hi + 1, size=n)                 # any key at any position
    return set(zip(key_pos.tolist(), keys.tolist()))

train_pairs, test_pairs = random_pairs(2000), random_pairs(500)
print(len(train_pairs), "distinct training pairs of 560;", "expected overlap", 1 - (1 - 1 / 560) ** 2000)
anchors.check_overlap(train_pairs, test_pairs)""",
    answer=_random_split_pairs,
)

S11 = Solution(
    label="Exercise 11",
    text=r"""
**Building a shift (移位) by hand.** The layer-1 score between query position $i$ and key position $j$ is
$s_{ij} = x_i W^Q (x_j W^K)^\top$ with $x = x^{\rm em} + x^{\rm pos}$. For a *positional* shift we want the part
$P = X^{\rm pos} W^Q W^{K\top} X^{{\rm pos}\top}$ to be largest at $j = i - 1$ in every row, by a margin that the
softmax
turns into (almost) all of the weight.

1. *Positions on a circle.* Take $x^{\rm pos}_i = (\cos i\theta, \sin i\theta)$ in two dedicated coordinates (zeros
   elsewhere), $\theta = \pi/T$.
2. *Queries and keys.* $W^Q = \sqrt c\,I$ and $W^K = \sqrt c\,R_\theta$, the rotation by $+\theta$: the key of
   position $j$
   is $\sqrt c\,(\cos(j+1)\theta, \sin(j+1)\theta)$, "one step ahead".
3. *Scores.* $P_{ij} = c\cos\big((i - j - 1)\theta\big)$: a **Toeplitz** matrix (it depends only on $i - j$) whose
   maximum, $c$, lies on the **first sub-diagonal** $j = i - 1$. Every other allowed $j \le i$ scores at most
   $c\cos\theta$, so the weight on $i - 1$ is at least $1/(1 + T e^{-c(1 - \cos\theta)})$: with $T = 9$ and $c = 200$,
   $c(1 - \cos\theta) \approx 12$ and the shift is sharp (weight > 0.9999).
4. *Only even positions → the odd one before* (the book's 习题11). Position embeddings are a free table, so give the
   queries their own coordinates, switched off at odd positions: $x^{\rm pos}_i = (e_i\cos i\theta, e_i\sin i\theta,
   \cos i\theta, \sin i\theta)$ with $e_i = 1$ for even $i$ and 0 for odd $i$; $W^Q$ reads the first two coordinates,
   $W^K$ the last two (rotated by $\theta$). Then $P_{ij} = c\,e_i\cos((i - j - 1)\theta)$: even rows shift, odd rows
   get a
   flat positional score and attend by content.

So the structure to look for in a trained model is a product $X^{\rm pos}W^QW^{K\top}X^{{\rm pos}\top}$ that is (close
to) constant along diagonals with its peak on the sub-diagonal — learned position embeddings that behave like
sinusoids, and a $W^QW^{K\top}$ that acts on them as a rotation by one position. The companion's small model learns a
*soft* version (section 3: the anchor gets 0.42 of the key's layer-1 weight, 3.4 times an average earlier token); the
rest of the work is done by the content (the anchor's embedding is unlike any key).
""",
    code="""\
import numpy as np
from companion.solutions.ch12 import shift_scores

print(np.round(shift_scores(9, scale=200.0), 3))       # row i: weight ~1 on column i - 1

# the positional part of the trained model's layer-1 scores (all heads together, layer norm ignored)
P = model.member_weight("x_pos", k_id)[:9]            # (T, d)
Wq, Wk = model.member_weight("w_q", k_id, layer=0), model.member_weight("w_k", k_id, layer=0)
scores = ((P @ Wq) @ (P @ Wk).T).numpy()              # (T, T)
print(np.round(scores - scores.mean(1, keepdims=True), 1))""",
)

#: The solutions of chapter 12, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S4, S11)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-12 exercise and return its answer (``solution(4)`` → the pair sets
    (train_pairs, test_pairs) of a random split).  ``label`` is "Exercise 4", "Exercise 11" or 4 / 11.  Raises
    ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 12")
