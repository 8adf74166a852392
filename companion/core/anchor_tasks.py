"""Anchor functions (锚函数): synthetic language-like tasks and the book's train/test splits (§12.4–12.5, §13.2).

Shared by chapter 12 (identity, reading comprehension, statistical output) and chapter 13 (the composite
task) and by the attention analyses of :mod:`companion.core.attention`.

A sequence is a row of integer tokens.  *Anchors* (锚点) are small tokens 1–10, *keys* (关键项) and
*noise* are numbers in [lo, hi] (20–99 by default); the target is read at the last position.

* :func:`identity_task` — "3x → x", eq. (12.1)/(12.2): the output is the token right after the anchor 3.
* :func:`reading_task` — reading comprehension (§12.6.2): (a1, x1, …, a4, x4, a) ↦ x_k with a_k = a.
* :func:`statistical_task` — statistical output (§12.6.8): identity data whose labels are x+1 for
  one fifth of the copies (type 1) or of the sequences (type 2).
* :func:`working_memory_task` — (…, x, a1, *, …, a2, …) ↦ f_{a2}(f_{a1}(x)) with a gap (§12.6.5, 图12.10).
* :func:`recitation_task` — forward/backward recitation (§12.6.7, 图12.12): (…, m, 3, n, …, n) ↦ m and
  (…, m, 3, n, …, m) ↦ n.
* :func:`classification_task` — (x1, a1, …, x4, a4, x) ↦ a_k with x_k nearest to x (§12.6.3, 图12.7).
* :func:`multi_anchor_task` — f_a(x) = x + a for ten anchors with the anchor-based split (§12.6.9, 图12.14).
* :func:`composite_task` — the two-anchor composite function (12.5) of §12.6.4 and §13.2:
  (…, x, a1, a2, …) ↦ g(g(x; a1); a2) with g(x; a) = x + shift[a] (mod ``modulus``), key first.
* :func:`synonym_task` — the composite task with a synonym anchor (§12.6.6, 图12.11): 3 does what 9 does;
  do sequences with 3 teach the never-trained pairs (4, 9) and (9, 4)?
* :func:`multi_anchor_id_ood_task` — the multi-anchor task with the composite task's test sets "ID"/"OOD".

Splits (§12.5.1):

* ``"mod_residue"`` (模-余数数据划分) — with Γ_i = {k·m + i}, a key at position i is drawn from
  I ∖ Γ_i in training and from I ∩ Γ_i in the test set (m = the sequence length n in the book), so
  every number is a key somewhere in training but no (position, key) pair is shared;
* ``"key_range"`` — the naive split of 图12.4: train keys below ``split_at``, test keys above; the
  test keys never appear as keys in training, so the model has no reason to map them;
* held-out anchor pairs (复合锚点划分) — for the composite task: the pairs in ``held_out`` never appear
  in training; their test set measures task generalisation (OOD), the test data of the trained pairs
  data generalisation (ID).

:func:`embedding_order` measures how far a trained token table orders the numbers (图12.7, 图13.12): how much
closer in value a number's nearest neighbours in embedding space are than random numbers.

:func:`train_on_tasks` trains one :class:`~companion.core.transformer.Transformer` member per task (its own
data, its own γ and λ) as one batched ensemble, on the last token (§12.8).

Everything is deterministic given the integer ``seed`` (drawn through :mod:`companion.kit.seeds`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch
from torch import Tensor

from companion.core.train import History
from companion.core.sequence_models import SequenceConfig, make_model
from companion.core.transformer import Transformer, TransformerConfig, fit_last_token
from companion.kit.seeds import generator, numpy_rng

SPLITS = ("mod_residue", "key_range")
BOOK_SHIFTS = {1: 5, 2: 1, 3: -2, 4: -8}  # g(x;a)=x+5, g(x;b)=x+1, g(x;c)=x−2, g(x;d)=x−8 (§13.2.1)


@dataclass
class AnchorData:
    """Sequences ``x`` (N, T) with targets ``y`` (N,), the key's position and the anchors used."""

    x: Tensor
    y: Tensor
    key_pos: Tensor  # (N,) position of the key (the answer for reading: position of x_k)
    anchors: Tensor  # (N, A) the anchor(s) that decide the target

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def subset(self, mask: Tensor | np.ndarray) -> AnchorData:
        mask = torch.as_tensor(mask, dtype=torch.bool)
        return AnchorData(self.x[mask], self.y[mask], self.key_pos[mask], self.anchors[mask])


@dataclass
class TaskData:
    """A task: the training set, named test sets, and the sizes a model needs."""

    name: str
    train: AnchorData
    tests: dict[str, AnchorData] = field(default_factory=dict)
    vocab_size: int = 101
    seq_len: int = 9

    def first(self, n: int) -> TaskData:
        """The task trained on its first ``n`` sequences only, with the same test sets: nested training sets of
        one draw (the data-size axes of 图12.6 and 图12.12)."""
        if not 1 <= n <= len(self.train):
            raise ValueError(f"n must lie in [1, {len(self.train)}] (the training set's size), got {n}")
        return TaskData(self.name, self.train.subset(torch.arange(len(self.train)) < n), self.tests, self.vocab_size,
                        self.seq_len)


def _check_range(lo: int, hi: int, anchors: Sequence[int]) -> None:
    if not 0 <= lo < hi:
        raise ValueError(f"key range must satisfy 0 ≤ lo < hi, got lo={lo}, hi={hi}")
    clash = sorted(set(int(a) for a in anchors) & set(range(lo, hi + 1)))
    if clash:
        raise ValueError(f"anchors {clash} overlap the key range [{lo}, {hi}]; anchors must lie outside it")


def _check_n(**sizes: int) -> None:
    for name, n in sizes.items():
        if n < 1:
            raise ValueError(f"{name} must be ≥ 1, got {n}")


def _keys(rng: np.random.Generator, pos: np.ndarray, lo: int, hi: int, modulus: int, test: bool) -> np.ndarray:
    """Keys for positions ``pos`` under the mod-residue split: x ≡ pos (mod m) iff ``test``."""
    values = np.arange(lo, hi + 1)
    out = np.empty(len(pos), dtype=np.int64)
    for p in np.unique(pos):
        allowed = values[(values % modulus == p % modulus) == test]
        if allowed.size == 0:
            raise ValueError(f"key range [{lo}, {hi}] has no {'test' if test else 'training'} key for "
                             f"position {p} under the mod-{modulus} residue split; widen the range")
        rows = pos == p
        out[rows] = rng.choice(allowed, size=int(rows.sum()))
    return out


def _split_keys(rng: np.random.Generator, pos: np.ndarray, lo: int, hi: int, modulus: int, test: bool, split: str,
                split_at: int) -> np.ndarray:
    """Keys for positions ``pos`` under ``split``: the mod-residue split (:func:`_keys`), or the key-range split
    of 图12.4 (training keys in [lo, split_at), test keys in [split_at, hi])."""
    if split == "mod_residue":
        return _keys(rng, pos, lo, hi, modulus, test)
    return rng.integers(split_at, hi + 1, size=len(pos)) if test else rng.integers(lo, split_at, size=len(pos))


def _check_split(split: str, lo: int, hi: int, split_at: int) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if split == "key_range" and not lo < split_at <= hi:
        raise ValueError(f"split_at must lie in ({lo}, {hi}], got {split_at}")


def _tensor(x: np.ndarray) -> Tensor:
    return torch.as_tensor(np.ascontiguousarray(x), dtype=torch.long)


# ------------------------------------------------------------------------------ identity "3x → x"
def _identity(rng: np.random.Generator, n: int, seq_len: int, anchor: int, lo: int, hi: int,
              split: str, test: bool, modulus: int, split_at: int) -> AnchorData:
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    anchor_pos = rng.integers(0, seq_len - 2, size=n)  # anchor in 0..n−3, key in 1..n−2: the last token is noise
    key_pos = anchor_pos + 1
    keys = _split_keys(rng, key_pos, lo, hi, modulus, test, split, split_at)
    rows = np.arange(n)
    x[rows, anchor_pos], x[rows, key_pos] = anchor, keys
    return AnchorData(_tensor(x), _tensor(keys), _tensor(key_pos), _tensor(np.full((n, 1), anchor)))


def identity_task(n_train: int, n_test: int, *, seq_len: int = 9, anchor: int = 3, lo: int = 20, hi: int = 99,
                  split: str = "mod_residue", split_at: int = 80, seed: int = 0) -> TaskData:
    """The identity task f_3(x_1…x_n) = x_{i+1} where x_i = 3, eq. (12.1), with one anchor per sequence.

    ``split="mod_residue"`` uses m = ``seq_len``; ``split="key_range"`` trains on keys in
    [lo, split_at) and tests on [split_at, hi] (图12.4).  Noise tokens are uniform on [lo, hi].
    """
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, [anchor])
    _check_split(split, lo, hi, split_at)
    if seq_len < 3:
        raise ValueError(f"seq_len must be ≥ 3 (anchor, key and a last token), got {seq_len}")
    rng = numpy_rng(seed)
    args = (seq_len, anchor, lo, hi, split, seq_len, split_at)
    return TaskData(f"identity ({split})", _identity(rng, n_train, *args[:4], args[4], False, *args[5:]),
                    {"test": _identity(rng, n_test, *args[:4], args[4], True, *args[5:])},
                    vocab_size=hi + 2, seq_len=seq_len)


def statistical_task(n_train: int, n_test: int, *, kind: int = 1, p_shift: float = 0.2, seq_len: int = 9,
                     anchor: int = 3, lo: int = 20, hi: int = 98, seed: int = 0) -> TaskData:
    """Statistical output (§12.6.8, 图12.13): identity data whose label is x+1 for a fraction ``p_shift``.

    ``kind=1``: each sequence appears 1/p_shift times and one copy is labelled x+1, so the same input
    has two labels and the training accuracy is capped at 1 − p_shift; the softmax should learn
    (1 − p_shift, p_shift).  ``kind=2``: a fraction p_shift of distinct sequences is relabelled.
    Test sets (mod-residue split) keep the plain label x.
    """
    if kind not in (1, 2):
        raise ValueError(f"kind must be 1 or 2 (the book's two constructions), got {kind}")
    copies = round(1 / p_shift) if p_shift > 0 else 0
    if not 0 < p_shift < 1 or (kind == 1 and abs(copies * p_shift - 1) > 1e-9):
        raise ValueError(f"p_shift must lie in (0, 1) and, for kind 1, be 1/integer; got {p_shift}")
    base = identity_task(n_train if kind == 2 else -(-n_train // copies), n_test, seq_len=seq_len, anchor=anchor,
                         lo=lo, hi=hi, seed=seed)
    tr, rng = base.train, numpy_rng(seed + 1)
    if kind == 1:
        rep = lambda t: t.repeat_interleave(copies, dim=0)[:n_train]  # noqa: E731
        x, key_pos, anchors = rep(tr.x), rep(tr.key_pos), rep(tr.anchors)
        shifted = (torch.arange(len(x)) % copies) == copies - 1
    else:
        x, key_pos, anchors = tr.x, tr.key_pos, tr.anchors
        shifted = torch.as_tensor(rng.random(len(x)) < p_shift)
    y = tr.y.repeat_interleave(copies)[:n_train] if kind == 1 else tr.y.clone()
    y = y + shifted.long()
    return TaskData(f"statistical output (type {kind})", AnchorData(x, y, key_pos, anchors), base.tests,
                    vocab_size=hi + 2, seq_len=seq_len)


# ------------------------------------------------------------------------------ reading comprehension
def _reading(rng: np.random.Generator, n: int, anchors: np.ndarray, n_pairs: int, lo: int, hi: int,
             test: bool, modulus: int, split: str = "mod_residue", split_at: int = 80) -> AnchorData:
    a = np.stack([rng.choice(anchors, size=n_pairs, replace=False) for _ in range(n)])  # distinct a_i
    keys = rng.integers(lo, hi + 1, size=(n, n_pairs))
    k = rng.integers(0, n_pairs, size=n)
    key_pos = 2 * k + 1
    rows = np.arange(n)
    keys[rows, k] = _split_keys(rng, key_pos, lo, hi, modulus, test, split, split_at)
    x = np.empty((n, 2 * n_pairs + 1), dtype=np.int64)
    x[:, 0:-1:2], x[:, 1:-1:2], x[:, -1] = a, keys, a[rows, k]
    return AnchorData(_tensor(x), _tensor(keys[rows, k]), _tensor(key_pos), _tensor(a[rows, k][:, None]))


def reading_task(n_train: int, n_test: int, *, anchors: Sequence[int] = tuple(range(1, 9)), n_pairs: int = 4,
                 lo: int = 20, hi: int = 99, split: str = "mod_residue", split_at: int = 80,
                 seed: int = 0) -> TaskData:
    """Reading comprehension (§12.6.2): (a1, x1, …, a4, x4, a) ↦ x_k where a_k = a; the answer x_k follows the
    mod-residue split on its position (the book's), or with ``split="key_range"`` the naive split of 图12.4
    (training answers in [lo, split_at), test answers in [split_at, hi]; the other numbers uniform on [lo, hi])."""
    _check_split(split, lo, hi, split_at)
    draw = partial(_reading, split=split, split_at=split_at)
    return _pairs_task("reading comprehension", draw, n_train, n_test, anchors, n_pairs, lo, hi, seed)


def _pairs_task(name: str, draw: Callable[..., AnchorData], n_train: int, n_test: int, anchors: Sequence[int],
                n_pairs: int, lo: int, hi: int, seed: int) -> TaskData:
    """A task on sequences of ``n_pairs`` (number, anchor) pairs and a query, mod-residue split on 2·n_pairs + 1:
    checks the arguments and draws the training and test sets with ``draw`` (reading, classification)."""
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, anchors)
    if not 1 <= n_pairs <= len(set(anchors)):
        raise ValueError(f"n_pairs must lie in [1, {len(set(anchors))}] (distinct anchors), got {n_pairs}")
    rng, pool, seq_len = numpy_rng(seed), np.asarray(sorted(set(anchors))), 2 * n_pairs + 1
    return TaskData(name, draw(rng, n_train, pool, n_pairs, lo, hi, False, seq_len),
                    {"test": draw(rng, n_test, pool, n_pairs, lo, hi, True, seq_len)},
                    vocab_size=hi + 2, seq_len=seq_len)


# ------------------------------------------------------------------------------ working memory
WORKING_MEMORY_SHIFTS = {1: 0, 2: 1, 3: 0, 4: -2}  # 图12.10: f_1(x) = x, f_2(x) = x + 1, f_3(x) = x, f_4(x) = x − 2


def _working_memory(rng: np.random.Generator, n: int, seq_len: int, lo: int, hi: int, test: bool,
                    modulus: int, split: str, split_at: int) -> AnchorData:
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    p = rng.integers(0, seq_len - 5, size=n)  # key at p, first anchor at p+1, ≥ 1 noise token, second anchor ≤ T−2
    q = p + 3 + (rng.random(n) * (seq_len - 4 - p)).astype(np.int64)  # second anchor in p+3 … T−2
    a1, a2 = rng.integers(1, 3, size=n), rng.integers(3, 5, size=n)
    keys = _split_keys(rng, p, lo, hi, modulus, test, split, split_at)
    rows = np.arange(n)
    x[rows, p], x[rows, p + 1], x[rows, q] = keys, a1, a2
    shift = np.vectorize(WORKING_MEMORY_SHIFTS.__getitem__)(np.stack([a1, a2], 1)).sum(1)
    return AnchorData(_tensor(x), _tensor(keys + shift), _tensor(p), _tensor(np.stack([a1, a2], 1)))


def working_memory_task(n_train: int, n_test: int, *, seq_len: int = 9, lo: int = 20, hi: int = 99,
                        split: str = "mod_residue", split_at: int = 80, seed: int = 0) -> TaskData:
    """Working memory (工作记忆, §12.6.5, 图12.10): (…, x, a1, *, …, a2, …) ↦ f_{a2}(f_{a1}(x)).

    a1 ∈ {1, 2} follows the key, a2 ∈ {3, 4} comes later with at least one irrelevant token between, so the
    intermediate result has to be kept; shifts as in 图12.10 (:data:`WORKING_MEMORY_SHIFTS`).  The book's
    mod-residue split on the key and its position (m = ``seq_len``), or ``split="key_range"``: keys in
    [lo, split_at) in training, [split_at, hi] in the test set (the naive split of 图12.4).
    """
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, list(WORKING_MEMORY_SHIFTS))
    _check_split(split, lo, hi, split_at)
    if seq_len < 6:
        raise ValueError(f"seq_len must be ≥ 6 (key, a1, a gap, a2 and a last token), got {seq_len}")
    rng = numpy_rng(seed)
    return TaskData("working memory", _working_memory(rng, n_train, seq_len, lo, hi, False, seq_len, split, split_at),
                    {"test": _working_memory(rng, n_test, seq_len, lo, hi, True, seq_len, split, split_at)},
                    vocab_size=hi + 3, seq_len=seq_len)


# ------------------------------------------------------------------------------ forward/backward recitation
RECITATIONS = ("forward", "backward", "both")


def _recitation(rng: np.random.Generator, n: int, seq_len: int, anchor: int, lo: int, hi: int, forward: np.ndarray,
                test: bool, modulus: int) -> AnchorData:
    """``forward`` (n,) bool: (…, m, 3, n, …, n) ↦ m where True, (…, m, 3, n, …, m) ↦ n where False."""
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    p = rng.integers(0, seq_len - 3, size=n)  # m at p, the anchor at p+1, n at p+2 ≤ seq_len − 2
    answer_pos = np.where(forward, p, p + 2)
    answers = _keys(rng, answer_pos, lo, hi, modulus, test)
    others = rng.integers(lo, hi + 1, size=n)
    m, n_tok = np.where(forward, answers, others), np.where(forward, others, answers)
    rows = np.arange(n)
    x[rows, p], x[rows, p + 1], x[rows, p + 2] = m, anchor, n_tok
    x[:, -1] = np.where(forward, n_tok, m)  # the query: the other member of the pair
    return AnchorData(_tensor(x), _tensor(answers), _tensor(answer_pos), _tensor(np.full((n, 1), anchor)))


def recitation_task(n_train: int, n_test: int, *, direction: str = "forward", seq_len: int = 9, anchor: int = 3,
                    lo: int = 20, hi: int = 99, seed: int = 0) -> TaskData:
    """Forward/backward recitation (前向-后向背诵, §12.6.7, 图12.12): (…, m, 3, n, …, q) with the pair anywhere.

    In the book's naming ``"forward"`` is (…, m, 3, n, …, n) ↦ m (the query is the later token, the answer the
    earlier one) and ``"backward"`` is (…, m, 3, n, …, m) ↦ n.  ``"both"`` is the book's data set, sequences of
    either pattern ("(*,*,m,3,n,*,*,*,n) 或 (*,*,m,3,n,*,*,*,m)"), each a fair coin's choice, with one test set per
    direction ("forward", "backward"); a single direction has the test set "test".  The answer follows the
    mod-residue split on its own position (m = ``seq_len``), as for the identity task.
    """
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, [anchor])
    if direction not in RECITATIONS:
        raise ValueError(f"unknown direction {direction!r}; choose one of {', '.join(RECITATIONS)}")
    if seq_len < 4:
        raise ValueError(f"seq_len must be ≥ 4 (m, anchor, n and the query), got {seq_len}")
    rng = numpy_rng(seed)
    args = (seq_len, anchor, lo, hi)
    if direction == "both":
        train = _recitation(rng, n_train, *args, rng.random(n_train) < 0.5, False, seq_len)
        tests = {d: _recitation(rng, n_test, *args, np.full(n_test, d == "forward"), True, seq_len)
                 for d in ("forward", "backward")}
        return TaskData("recitation", train, tests, vocab_size=hi + 2, seq_len=seq_len)
    forward = direction == "forward"
    return TaskData(f"{direction} recitation", _recitation(rng, n_train, *args, np.full(n_train, forward), False, seq_len),
                    {"test": _recitation(rng, n_test, *args, np.full(n_test, forward), True, seq_len)},
                    vocab_size=hi + 2, seq_len=seq_len)


# ------------------------------------------------------------------------------ classification
def _classification(rng: np.random.Generator, n: int, anchors: np.ndarray, n_pairs: int, lo: int, hi: int,
                    test: bool, modulus: int) -> AnchorData:
    xs, ys, pos, chosen, have = [], [], [], [], 0
    while have < n:  # draw, keep rows with a unique nearest number on the right side of the split
        m = 2 * (n - have) + 64
        keys = rng.integers(lo, hi + 1, size=(m, n_pairs))
        q = rng.integers(lo, hi + 1, size=m)
        dist = np.abs(keys - q[:, None])
        k = dist.argmin(1)
        rows = np.arange(m)
        unique = (dist == dist[rows, k][:, None]).sum(1) == 1
        key_pos = 2 * k
        side = (keys[rows, k] % modulus == key_pos % modulus) == test
        keep = unique & side
        a = np.stack([rng.choice(anchors, size=n_pairs, replace=False) for _ in range(m)])
        x = np.empty((m, 2 * n_pairs + 1), dtype=np.int64)
        x[:, 0:-1:2], x[:, 1:-1:2], x[:, -1] = keys, a, q
        xs.append(x[keep]), ys.append(a[rows, k][keep]), pos.append(key_pos[keep]), chosen.append(a[rows, k][keep])
        have += int(keep.sum())
    cat = lambda parts: np.concatenate(parts)[:n]  # noqa: E731
    return AnchorData(_tensor(cat(xs)), _tensor(cat(ys)), _tensor(cat(pos)), _tensor(cat(chosen)[:, None]))


def classification_task(n_train: int, n_test: int, *, anchors: Sequence[int] = tuple(range(1, 9)), n_pairs: int = 4,
                        lo: int = 20, hi: int = 99, seed: int = 0) -> TaskData:
    """Classification (分类任务, §12.6.3, 图12.7): (x1, a1, …, x4, a4, x) ↦ a_k with k = argmin_i |x_i − x|.

    Rows whose nearest number is not unique are redrawn.  Mod-residue split on the nearest number x_k and
    its position 2k (m = 2·n_pairs + 1): a test sequence's (position, nearest number) pair never occurs in
    training.  To answer, the model must compare numbers: their embeddings have to encode order.
    """
    return _pairs_task("classification", _classification, n_train, n_test, anchors, n_pairs, lo, hi, seed)


# ------------------------------------------------------------------------------ multi-anchor f_a(x) = x + a
def anchor_test_keys(a: int) -> tuple[int, int]:
    """The held-out keys of anchor ``a`` in the anchor-based split of §12.6.9: G_a^c = [12 + 8a, 19 + 8a]."""
    return 12 + 8 * a, 19 + 8 * a


def _multi_anchor(rng: np.random.Generator, n: int, seq_len: int, anchors: np.ndarray, lo: int, hi: int,
                  test: bool, split_at: int | None = None) -> AnchorData:
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    a = anchors[rng.integers(0, len(anchors), size=n)]
    anchor_pos = rng.integers(0, seq_len - 2, size=n)
    keys = np.empty(n, dtype=np.int64)
    values = np.arange(lo, hi + 1)
    for v in np.unique(a):
        g_lo, g_hi = anchor_test_keys(int(v)) if split_at is None else (split_at, hi)
        held = (values >= g_lo) & (values <= g_hi)
        rows = a == v
        keys[rows] = rng.choice(values[held] if test else values[~held], size=int(rows.sum()))
    rows = np.arange(n)
    x[rows, anchor_pos], x[rows, anchor_pos + 1] = a, keys
    return AnchorData(_tensor(x), _tensor(keys + a), _tensor(anchor_pos + 1), _tensor(a[:, None]))


MULTI_ANCHOR_SPLITS = ("anchor", "key_range")


def multi_anchor_task(n_train: int, n_test: int, *, anchors: Sequence[int] = tuple(range(1, 11)), seq_len: int = 9,
                      lo: int = 20, hi: int = 99, split: str = "anchor", split_at: int = 80,
                      seed: int = 0) -> TaskData:
    """Multi-anchor task (多锚点任务, §12.6.9, 图12.14): (…, a, x, …) ↦ x + a for anchors a ∈ {1, …, 10}.

    Anchor-based split (``split="anchor"``, the book's): the keys of anchor a in G_a^c = [12 + 8a, 19 + 8a] are
    test keys, the rest of [lo, hi] training keys; so every number is a key in training, but never with its test
    anchor.  ``split="key_range"``: the naive split of 图12.4 for every anchor alike, training keys below
    ``split_at``, test keys from it on (never a key in training).  ``anchors`` are the per-sequence anchor tokens
    (``a`` is also the shift).
    """
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, anchors)
    if split not in MULTI_ANCHOR_SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(MULTI_ANCHOR_SPLITS)}")
    if split == "key_range":
        _check_split(split, lo, hi, split_at)
    for a in anchors if split == "anchor" else ():
        g_lo, g_hi = anchor_test_keys(int(a))
        if not (a >= 1 and lo <= g_lo and g_hi <= hi):
            raise ValueError(f"anchor {a}: its test keys [{g_lo}, {g_hi}] must lie in the key range [{lo}, {hi}]")
    pool, rng = np.asarray(sorted(set(int(a) for a in anchors))), numpy_rng(seed)
    at = split_at if split == "key_range" else None
    return TaskData("multi-anchor", _multi_anchor(rng, n_train, seq_len, pool, lo, hi, False, at),
                    {"test": _multi_anchor(rng, n_test, seq_len, pool, lo, hi, True, at)},
                    vocab_size=hi + int(pool.max()) + 1, seq_len=seq_len)


def repeat_to(data: AnchorData, n: int) -> AnchorData:
    """``data`` repeated cyclically to ``n`` rows, so that sets of different sizes stack into one ensemble.

    Uniform mini-batches from the result are uniform over ``data`` when ``n`` is a multiple of its size.
    """
    if len(data) < 1 or n < 1:
        raise ValueError(f"need a non-empty set and n ≥ 1, got {len(data)} rows and n={n}")
    idx = torch.arange(n) % len(data)
    return AnchorData(data.x[idx], data.y[idx], data.key_pos[idx], data.anchors[idx])


# ------------------------------------------------------------------------------ composite (two anchors)
def _composite(rng: np.random.Generator, n: int, pairs: np.ndarray, shifts: dict[int, int], seq_len: int,
               lo: int, hi: int, modulus: int, residue_mod: int, test: bool | None) -> AnchorData:
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    key_pos = rng.integers(0, seq_len - 2, size=n)  # key, then the two anchors
    pair = pairs[rng.integers(0, len(pairs), size=n)]  # (n, 2)
    keys = rng.integers(lo, hi + 1, size=n) if test is None else _keys(rng, key_pos, lo, hi, residue_mod, test)
    rows = np.arange(n)
    x[rows, key_pos], x[rows, key_pos + 1], x[rows, key_pos + 2] = keys, pair[:, 0], pair[:, 1]
    shift = np.vectorize(shifts.__getitem__)(pair).sum(1)
    return AnchorData(_tensor(x), _tensor((keys + shift) % modulus), _tensor(key_pos), _tensor(pair))


def composite_task(n_train: int, n_id: int, n_ood: int, *, shifts: dict[int, int] | None = None,
                   held_out: Sequence[tuple[int, int]] = ((3, 4), (4, 3)), seq_len: int = 6, lo: int = 20,
                   hi: int = 99, modulus: int = 100, residue_mod: int | None = None, seed: int = 0) -> TaskData:
    """Composite anchor function (12.5) in the key-first form of §13.2: (…, x, a1, a2, …) ↦ g(g(x;a1);a2).

    ``shifts`` maps each anchor token to its g(x; a) = x + shift (default: the book's a,b,c,d = 1,2,3,4
    with +5, +1, −2, −8); results are taken mod ``modulus``.  Training uses every ordered pair except
    ``held_out``, with keys from the mod-residue training residues (m = ``residue_mod``, default
    ``seq_len``); test set "ID" holds trained pairs with test-residue keys (data generalisation),
    "OOD" the held-out pairs with any key (task generalisation).
    """
    shifts = dict(BOOK_SHIFTS if shifts is None else shifts)
    _check_n(n_train=n_train, n_id=n_id, n_ood=n_ood)
    _check_range(lo, hi, list(shifts))
    if seq_len < 3:
        raise ValueError(f"seq_len must be ≥ 3 (key and two anchors), got {seq_len}")
    if modulus <= max(hi, *shifts):
        raise ValueError(f"modulus={modulus} must exceed every token (hi={hi}, anchors {sorted(shifts)})")
    all_pairs = [(a, b) for a in shifts for b in shifts]
    held = [tuple(int(v) for v in p) for p in held_out]
    unknown = [p for p in held if p not in all_pairs]
    if unknown or not held or len(set(held)) == len(all_pairs):
        raise ValueError(f"held_out must be a non-empty proper subset of the anchor pairs {all_pairs}; got {held}")
    train_pairs = np.asarray([p for p in all_pairs if p not in held])
    rng = numpy_rng(seed)
    m = seq_len if residue_mod is None else residue_mod
    common = (shifts, seq_len, lo, hi, modulus, m)
    return TaskData("composite", _composite(rng, n_train, train_pairs, *common, test=False),
                    {"ID": _composite(rng, n_id, train_pairs, *common, test=True),
                     "OOD": _composite(rng, n_ood, np.asarray(held), *common, test=None)},
                    vocab_size=modulus, seq_len=seq_len)


# ------------------------------------------------------------------------------ synonyms (§12.6.6, 图12.11)
SYNONYM_SHIFTS = {1: 5, 2: 1, 3: -2, 9: -2, 4: -8}  # anchor 3 is a synonym of 9: both map x ↦ x − 2
SYNONYM_PAIRS = ((1, 9), (2, 9), (9, 1), (9, 2), (1, 2), (1, 4), (2, 1), (4, 1), (2, 4), (4, 2))  # the original data
SYNONYM_EXTRA_PAIRS = ((1, 3), (3, 1), (2, 3), (3, 2), (4, 3), (3, 4))  # the augmentation with the synonym 3
SYNONYM_HELD_OUT = ((4, 9), (9, 4))  # never trained: 4 and 9 never meet in a training sequence


def _permute(data: AnchorData, order: Tensor) -> AnchorData:
    return AnchorData(data.x[order], data.y[order], data.key_pos[order], data.anchors[order])


def synonym_task(n_train: int, n_id: int, n_ood: int, *, augment: bool = True, n_per_nine_pair: int = 100,
                 seq_len: int = 6, lo: int = 20, hi: int = 99, modulus: int = 100, residue_mod: int | None = None,
                 seed: int = 0) -> TaskData:
    """Synonym task (近义词任务, §12.6.6, 图12.11): the composite task (12.5) with a synonym anchor, key first.

    Anchors 1, 2, 4, 9 with g(x; a) = x + 5, x + 1, x − 8, x − 2 (:data:`SYNONYM_SHIFTS`); the original data use
    the ten pairs :data:`SYNONYM_PAIRS`, in which 4 and 9 never meet, so the pairs (4, 9) and (9, 4) — both
    x ↦ x − 10 — are never trained (test set "OOD", any keys).  ``augment=True`` adds the synonym 3, which does
    what 9 does, in the six pairs :data:`SYNONYM_EXTRA_PAIRS` (among them (4, 3) and (3, 4)); as in the book,
    the four pairs with 9 then keep ``n_per_nine_pair`` sequences each and the twelve others share the rest of
    the ``n_train`` sequences.  ``augment=False`` spreads ``n_train`` evenly over the ten original pairs (more
    data on the same pairs).  Test set "ID": the trained pairs with test-residue keys (mod-residue split with
    m = ``residue_mod``, default ``seq_len``), i.e. data generalisation; "OOD": task generalisation.
    """
    _check_n(n_train=n_train, n_id=n_id, n_ood=n_ood)
    _check_range(lo, hi, list(SYNONYM_SHIFTS))
    if seq_len < 3:
        raise ValueError(f"seq_len must be ≥ 3 (key and two anchors), got {seq_len}")
    if modulus <= max(hi, *SYNONYM_SHIFTS):
        raise ValueError(f"modulus={modulus} must exceed every token (hi={hi}, anchors {sorted(SYNONYM_SHIFTS)})")
    nine = [p for p in SYNONYM_PAIRS if 9 in p]
    rng, m = numpy_rng(seed), seq_len if residue_mod is None else residue_mod
    common = (SYNONYM_SHIFTS, seq_len, lo, hi, modulus, m)
    if augment:
        if n_per_nine_pair < 1 or n_train - n_per_nine_pair * len(nine) < 1:
            raise ValueError(f"augment needs n_per_nine_pair ≥ 1 and n_train > {len(nine)}·n_per_nine_pair; "
                             f"got n_train={n_train}, n_per_nine_pair={n_per_nine_pair}")
        others = [p for p in SYNONYM_PAIRS if 9 not in p] + list(SYNONYM_EXTRA_PAIRS)
        parts = [_composite(rng, n_per_nine_pair * len(nine), np.asarray(nine), *common, test=False),
                 _composite(rng, n_train - n_per_nine_pair * len(nine), np.asarray(others), *common, test=False)]
        train = AnchorData(*(torch.cat([getattr(p, f) for p in parts]) for f in ("x", "y", "key_pos", "anchors")))
        train = _permute(train, torch.as_tensor(rng.permutation(len(train))))
        trained = np.asarray(list(SYNONYM_PAIRS) + list(SYNONYM_EXTRA_PAIRS))
    else:
        trained = np.asarray(SYNONYM_PAIRS)
        train = _composite(rng, n_train, trained, *common, test=False)
    return TaskData("synonym" if augment else "synonym (original data)", train,
                    {"ID": _composite(rng, n_id, trained, *common, test=True),
                     "OOD": _composite(rng, n_ood, np.asarray(SYNONYM_HELD_OUT), *common, test=None)},
                    vocab_size=modulus, seq_len=seq_len)


def multi_anchor_id_ood_task(n_train: int, n_id: int, n_ood: int, *, anchors: Sequence[int] = tuple(range(1, 11)),
                             seq_len: int = 9, lo: int = 20, hi: int = 99, split: str = "anchor", split_at: int = 80,
                             seed: int = 0) -> TaskData:
    """:func:`multi_anchor_task` (same training set) with the composite task's test names, so both train in one
    ensemble: "OOD" holds the held-out (anchor, key) combinations (G_a^c, or the keys from ``split_at`` on with
    ``split="key_range"``), "ID" fresh sequences of trained combinations (data generalisation, drawn from a second
    random stream)."""
    base = multi_anchor_task(n_train, n_ood, anchors=anchors, seq_len=seq_len, lo=lo, hi=hi, split=split,
                             split_at=split_at, seed=seed)
    _check_n(n_id=n_id)
    pool = np.asarray(sorted(set(int(a) for a in anchors)))
    fresh = _multi_anchor(numpy_rng(seed, 1), n_id, seq_len, pool, lo, hi, False,
                          split_at if split == "key_range" else None)
    return TaskData(base.name, base.train, {"ID": fresh, "OOD": base.tests["test"]}, base.vocab_size, seq_len)


def addition_task(*, top: int = 99, held: tuple[int, int] = (40, 60), seed: int = 0) -> TaskData:
    """a + b = c over a, b ∈ [0, top] (图13.14(C), §13.6: the book's top is 999, its held-out square [400, 600]²).

    A sequence is (a, b), one token per number, and the target is the token a + b (vocabulary 0–2·top).  Every
    pair with a and b both in ``held`` = [lo, hi] is held out — the test set "OOD", all (hi − lo + 1)² of them —
    and every other pair trains, once each, in an order shuffled by ``seed``: no training pair lies near a test
    pair on both operands, so the square is answered by the rule or not at all.
    """
    lo, hi = held
    if not (top >= 1 and 0 < lo <= hi < top):
        raise ValueError(f"the held-out square [{lo}, {hi}] must lie strictly inside [0, {top}] (top ≥ 1); "
                         f"got top={top}, held=({lo}, {hi})")
    a, b = (g.ravel() for g in np.meshgrid(np.arange(top + 1), np.arange(top + 1), indexing="ij"))
    test = (a >= lo) & (a <= hi) & (b >= lo) & (b <= hi)
    order = numpy_rng(seed).permutation(int((~test).sum()))

    def pairs(mask: np.ndarray, rows: np.ndarray | None = None) -> AnchorData:
        x = np.stack([a[mask], b[mask]], 1)
        x = x if rows is None else x[rows]
        n = len(x)
        return AnchorData(_tensor(x), _tensor(x.sum(1)), torch.zeros(n, dtype=torch.long),
                          torch.zeros((n, 0), dtype=torch.long))

    return TaskData("addition", pairs(~test, order), {"OOD": pairs(test)}, vocab_size=2 * top + 1, seq_len=2)


def swap_anchors(data: AnchorData) -> AnchorData:
    """The same sequences with the two anchors exchanged (x; a1, a2) → (x; a2, a1), for commutativity (§13.3)."""
    x, rows = data.x.clone(), torch.arange(len(data))
    x[rows, data.key_pos + 1], x[rows, data.key_pos + 2] = data.x[rows, data.key_pos + 2], data.x[rows, data.key_pos + 1]
    return AnchorData(x, data.y, data.key_pos, data.anchors.flip(1))


# ------------------------------------------------------------------------------ number embeddings
def embedding_order(embeddings: np.ndarray, values: np.ndarray | None = None, k: int = 5) -> float:
    """How much an embedding encodes the order of the numbers it embeds (图12.7, 图13.12).

    For every number, the mean |value difference| to its ``k`` nearest neighbours in embedding space
    (Euclidean), averaged; returned as the ratio of the same mean for neighbours drawn at random (all other
    numbers) to it: ≈ 1 for an embedding blind to order, large when neighbours in space are neighbours in value.
    """
    e = np.asarray(embeddings, dtype=float)
    v = np.arange(len(e), dtype=float) if values is None else np.asarray(values, dtype=float)
    if not 1 <= k < len(e):
        raise ValueError(f"k must lie in [1, {len(e) - 1}], got {k}")
    dist = ((e[:, None] - e[None]) ** 2).sum(-1)
    np.fill_diagonal(dist, np.inf)
    nearest = np.argsort(dist, axis=1)[:, :k]
    gap = np.abs(v[:, None] - v[None])
    knn = gap[np.arange(len(e))[:, None], nearest].mean()
    random = gap.sum() / (len(e) * (len(e) - 1))
    return float(random / knn)


# ------------------------------------------------------------------------------ training
@dataclass
class TrainedMembers:
    """A run of :func:`train_on_tasks` as a picklable record (cached on disk): what it recorded and the weights."""

    history: History  # series "<split> accuracy" (R, K), train_loss (R, K), cpu_seconds
    cfg: TransformerConfig | SequenceConfig  # the architecture's shape (图12.6 trains baselines too)
    state: dict  # the ensemble's state_dict

    @property
    def steps(self) -> np.ndarray:
        """The recorded steps (R,)."""
        return self.history.steps

    @property
    def accuracy(self) -> dict[str, np.ndarray]:
        """Split name ("train" and the tasks' test sets) → accuracy (R, K) at the recorded steps."""
        return {name.removesuffix(" accuracy"): values for name, values in self.history.series.items()
                if name.endswith(" accuracy")}

    @property
    def seconds(self) -> float:
        """CPU seconds of the training run."""
        return float(self.history["cpu_seconds"][-1, 0])

    @property
    def n_members(self) -> int:
        """K, the ensemble's size (the members' axis of the recorded accuracies)."""
        return int(self.accuracy["train"].shape[1])

    def model(self) -> Transformer:
        """The trained transformer ensemble rebuilt from the recorded weights, in eval mode (member k as trained)."""
        if not isinstance(self.cfg, TransformerConfig):
            raise TypeError(f"only transformer runs can be rebuilt here, this run trained a {type(self.cfg).__name__}")
        model = Transformer(self.cfg, n_members=self.n_members)
        model.load_state_dict(self.state)
        return model.eval()


def median_member_of(ks: Sequence[int], values: Sequence[float]) -> int:
    """The member of ``ks`` whose value (``values[i]`` belongs to ``ks[i]``) is the median: the lower middle one of an
    even count, ties in the order of ``ks`` — how the claims judged on several replicas pick the one they judge."""
    if len(ks) != len(values) or not ks:
        raise ValueError(f"give one value per member: {len(ks)} members, {len(values)} values")
    return ks[int(np.argsort(np.asarray(values, dtype=float), kind="stable")[(len(ks) - 1) // 2])]


def train_on_tasks(tasks: Sequence[TaskData], *, gamma: float | Sequence[float],
                   weight_decay: float | Sequence[float], d_model: int, n_layers: int, n_heads: int, steps: int,
                   lr: float, batch_size: int, record_every: int, n_eval: int, seed: int,
                   desc: str = "anchor tasks", arch: str = "transformer") -> tuple[Transformer, History]:
    """Train member k of one batched transformer ensemble on ``tasks[k]`` (all of one sequence length).

    Post-LN decoders (d_ff = 4·d_model) with initialisation rate ``gamma`` and AdamW decay ``weight_decay``
    (one value or one per member), trained by :func:`~companion.core.transformer.fit_last_token`; the
    accuracies recorded are ``"train"`` (the first ``n_eval`` training sequences) and every test set of the
    tasks.  ``seed`` draws the initialisation, then the mini-batches.  ``arch="lstm"`` or ``"fnn"`` trains
    the baselines of :mod:`companion.core.sequence_models` instead (图12.6), with the same optimiser and loss.
    Training sets of different sizes are first repeated cyclically to the largest (:func:`repeat_to`).
    """
    if not tasks:
        raise ValueError("give at least one task")
    stack = lambda xs: torch.stack(list(xs))  # noqa: E731  (K, N, …)
    n_max = max(len(t.train) for t in tasks)
    train = [t.train if len(t.train) == n_max else repeat_to(t.train, n_max) for t in tasks]
    x, y = stack(t.x for t in train), stack(t.y for t in train)
    evals = {"train": (x[:, :n_eval], y[:, :n_eval])}
    for split in tasks[0].tests:
        evals[split] = (stack(t.tests[split].x for t in tasks), stack(t.tests[split].y for t in tasks))
    g = generator(seed)
    model = make_model(arch, vocab_size=max(t.vocab_size for t in tasks), max_len=tasks[0].seq_len, d_model=d_model,
                       n_members=len(tasks), gamma=gamma, generator=g, n_layers=n_layers, n_heads=n_heads)
    history = fit_last_token(model, x, y, steps=steps, lr=lr, weight_decay=weight_decay, batch_size=batch_size,
                             record_every=record_every, evals=evals, generator=g, desc=desc)
    return model, history
