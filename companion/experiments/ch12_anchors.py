"""Anchor functions (锚函数): synthetic language-like tasks and the book's train/test splits (§12.4–12.5, §13.2).

A sequence is a row of integer tokens.  *Anchors* (锚点) are small tokens 1–10, *keys* (关键项) and
*noise* are numbers in [lo, hi] (20–99 by default); the target is read at the last position.

* :func:`identity_task` — "3x → x", eq. (12.1)/(12.2): the output is the token right after the anchor 3.
* :func:`reading_task` — reading comprehension (§12.6.2): (a1, x1, …, a4, x4, a) ↦ x_k with a_k = a.
* :func:`statistical_task` — statistical output (§12.6.8): identity data whose labels are x+1 for
  one fifth of the copies (type 1) or of the sequences (type 2).
* :func:`composite_task` — the two-anchor composite function (12.5) of §12.6.4 and §13.2:
  (…, x, a1, a2, …) ↦ g(g(x; a1); a2) with g(x; a) = x + shift[a] (mod ``modulus``), key first.

Splits (§12.5.1):

* ``"mod_residue"`` (模-余数数据划分) — with Γ_i = {k·m + i}, a key at position i is drawn from
  I ∖ Γ_i in training and from I ∩ Γ_i in the test set (m = the sequence length n in the book), so
  every number is a key somewhere in training but no (position, key) pair is shared;
* ``"key_range"`` — the naive split of 图12.4: train keys below ``split_at``, test keys above; the
  test keys never appear as keys in training, so the model has no reason to map them;
* held-out anchor pairs (复合锚点划分) — for the composite task: the pairs in ``held_out`` never appear
  in training; their test set measures task generalisation (OOD), the test data of the trained pairs
  data generalisation (ID).

Everything is deterministic given ``seed`` (a NumPy generator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from companion.kit.cache import cached
from companion.kit.claims import ClaimSpec, Verdict, compare, threshold
from companion.core.transformer import Transformer, TransformerConfig, fit_last_token

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


def _tensor(x: np.ndarray) -> Tensor:
    return torch.as_tensor(np.ascontiguousarray(x), dtype=torch.long)


# ------------------------------------------------------------------------------ identity "3x → x"
def _identity(rng: np.random.Generator, n: int, seq_len: int, anchor: int, lo: int, hi: int,
              split: str, test: bool, modulus: int, split_at: int) -> AnchorData:
    x = rng.integers(lo, hi + 1, size=(n, seq_len))
    anchor_pos = rng.integers(0, seq_len - 2, size=n)  # anchor in 0..n−3, key in 1..n−2: the last token is noise
    key_pos = anchor_pos + 1
    if split == "mod_residue":
        keys = _keys(rng, key_pos, lo, hi, modulus, test)
    else:
        keys = rng.integers(split_at, hi + 1, size=n) if test else rng.integers(lo, split_at, size=n)
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
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if split == "key_range" and not lo < split_at <= hi:
        raise ValueError(f"split_at must lie in ({lo}, {hi}], got {split_at}")
    if seq_len < 3:
        raise ValueError(f"seq_len must be ≥ 3 (anchor, key and a last token), got {seq_len}")
    rng = np.random.default_rng(seed)
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
    tr, rng = base.train, np.random.default_rng(seed + 1)
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
             test: bool, modulus: int) -> AnchorData:
    a = np.stack([rng.choice(anchors, size=n_pairs, replace=False) for _ in range(n)])  # distinct a_i
    keys = rng.integers(lo, hi + 1, size=(n, n_pairs))
    k = rng.integers(0, n_pairs, size=n)
    key_pos = 2 * k + 1
    rows = np.arange(n)
    keys[rows, k] = _keys(rng, key_pos, lo, hi, modulus, test)
    x = np.empty((n, 2 * n_pairs + 1), dtype=np.int64)
    x[:, 0:-1:2], x[:, 1:-1:2], x[:, -1] = a, keys, a[rows, k]
    return AnchorData(_tensor(x), _tensor(keys[rows, k]), _tensor(key_pos), _tensor(a[rows, k][:, None]))


def reading_task(n_train: int, n_test: int, *, anchors: Sequence[int] = tuple(range(1, 9)), n_pairs: int = 4,
                 lo: int = 20, hi: int = 99, seed: int = 0) -> TaskData:
    """Reading comprehension (§12.6.2): (a1, x1, …, a4, x4, a) ↦ x_k where a_k = a, mod-residue split."""
    _check_n(n_train=n_train, n_test=n_test)
    _check_range(lo, hi, anchors)
    if not 1 <= n_pairs <= len(set(anchors)):
        raise ValueError(f"n_pairs must lie in [1, {len(set(anchors))}] (distinct anchors), got {n_pairs}")
    rng, pool, seq_len = np.random.default_rng(seed), np.asarray(sorted(set(anchors))), 2 * n_pairs + 1
    return TaskData("reading comprehension", _reading(rng, n_train, pool, n_pairs, lo, hi, False, seq_len),
                    {"test": _reading(rng, n_test, pool, n_pairs, lo, hi, True, seq_len)},
                    vocab_size=hi + 2, seq_len=seq_len)


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
    rng = np.random.default_rng(seed)
    m = seq_len if residue_mod is None else residue_mod
    common = (shifts, seq_len, lo, hi, modulus, m)
    return TaskData("composite", _composite(rng, n_train, train_pairs, *common, test=False),
                    {"ID": _composite(rng, n_id, train_pairs, *common, test=True),
                     "OOD": _composite(rng, n_ood, np.asarray(held), *common, test=None)},
                    vocab_size=modulus, seq_len=seq_len)


def swap_anchors(data: AnchorData) -> AnchorData:
    """The same sequences with the two anchors exchanged (x; a1, a2) → (x; a2, a1), for commutativity (§13.3)."""
    x, rows = data.x.clone(), torch.arange(len(data))
    x[rows, data.key_pos + 1], x[rows, data.key_pos + 2] = data.x[rows, data.key_pos + 2], data.x[rows, data.key_pos + 1]
    return AnchorData(x, data.y, data.key_pos, data.anchors.flip(1))


# ------------------------------------------------------------------------------ experiments (ch. 12)
TASKS = ("identity", "identity_key_range", "reading", "statistical")


def make_task(name: str, n_train: int, n_test: int, seed: int = 0) -> TaskData:
    """One of :data:`TASKS` with the book's split (sequence length 9, numbers 20–99)."""
    if name == "identity":
        return identity_task(n_train, n_test, seed=seed)
    if name == "identity_key_range":
        return identity_task(n_train, n_test, split="key_range", seed=seed)
    if name == "reading":
        return reading_task(n_train, n_test, seed=seed)
    if name == "statistical":
        return statistical_task(n_train, n_test, kind=1, seed=seed)
    raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")


@dataclass
class TaskRun:
    """Result of :func:`run_anchor_tasks`: one trained member per task (a picklable record)."""

    tasks: tuple[str, ...]
    steps: np.ndarray  # (R,)
    accuracy: dict[str, np.ndarray]  # "train"/"test" → (R, K)
    cfg: TransformerConfig
    state: dict  # the ensemble's state_dict
    seconds: float  # CPU seconds of training
    seed: int = 0
    n_train: int = 2000
    n_test: int = 500

    def model(self):
        """The trained ensemble (member k learned ``tasks[k]``)."""
        model = Transformer(self.cfg, n_members=len(self.tasks))
        model.load_state_dict(self.state)
        return model.eval()

    def data(self, task: str) -> TaskData:
        """The data member ``task`` was trained and tested on (regenerated from the seed)."""
        return make_task(task, self.n_train, self.n_test, seed=self.seed)


def _run_anchor_tasks(tasks: tuple[str, ...], n_train: int, n_test: int, d_model: int, n_layers: int,
                      n_heads: int, steps: int, lr: float, weight_decay: float, batch_size: int,
                      gamma: float, record_every: int, seed: int) -> TaskRun:
    if not tasks:
        raise ValueError("give at least one task")
    data = [make_task(t, n_train, n_test, seed=seed) for t in tasks]
    stack = lambda xs: torch.stack(list(xs))  # noqa: E731  (K, N, …)
    x, y = stack(d.train.x for d in data), stack(d.train.y for d in data)
    n_eval = min(n_train, n_test)
    evals = {"train": (x[:, :n_eval], y[:, :n_eval]),
             "test": (stack(d.tests["test"].x for d in data), stack(d.tests["test"].y for d in data))}
    cfg = TransformerConfig(vocab_size=max(d.vocab_size for d in data), max_len=data[0].seq_len, d_model=d_model,
                            n_layers=n_layers, n_heads=n_heads, d_ff=4 * d_model)
    g = torch.Generator().manual_seed(seed)
    model = Transformer(cfg, n_members=len(tasks), gamma=gamma, generator=g)
    hist = fit_last_token(model, x, y, steps=steps, lr=lr, weight_decay=weight_decay, batch_size=batch_size,
                          record_every=record_every, evals=evals, generator=g, desc="anchor tasks")
    return TaskRun(tuple(tasks), hist.steps, hist.accuracy, cfg, model.state_dict(), hist.seconds, seed,
                   n_train, n_test)


def run_anchor_tasks(tasks: Sequence[str] = TASKS, *, n_train: int = 2000, n_test: int = 500, d_model: int = 32,
                     n_layers: int = 2, n_heads: int = 1, steps: int = 600, lr: float = 2e-3,
                     weight_decay: float = 0.01, batch_size: int = 100, gamma: float = 0.5,
                     record_every: int = 50, seed: int = 0) -> TaskRun:
    """Train one transformer per task in ``tasks``, all as one batched ensemble (cached on disk).

    AdamW with a warm-up/cosine learning rate, cross-entropy on the last token (§12.8).
    """
    return cached(_run_anchor_tasks)(tuple(tasks), n_train, n_test, d_model, n_layers, n_heads, steps, lr,
                                     weight_decay, batch_size, gamma, record_every, seed)


# ------------------------------------------------------------------------------ claims (ch. 12)
MOD_RESIDUE = ClaimSpec("ch12.mod-residue", "§12.5.1",
                        "with the mod-residue split the identity task reaches test accuracy ≥ 0.99")
KEY_RANGE = ClaimSpec("ch12.key-range", "图12.4",
                      "with the naive key-range split the model fits its training set (≥ 0.99) and still finds the "
                      "unseen keys (the last position attends to them with weight ≥ 0.8), yet answers ≤ 0.1 of them")
SHIFT = ClaimSpec("ch12.shift", "图12.15",
                  "layer 1 shifts: at every key position the anchor right before the key is its most attended earlier "
                  "token, with at least twice the weight of an average other one")
BROADCAST = ClaimSpec("ch12.broadcast", "图12.15",
                      "layer 2 broadcasts: the last position attends to the key with weight ≥ 0.8 (layer 1 does not)")
READING = ClaimSpec("ch12.reading", "§12.6.2",
                    "reading comprehension generalises under the mod-residue split (test accuracy ≥ 0.9)")
STATISTICAL = ClaimSpec("ch12.statistical", "图12.13",
                        "statistical output: the model fits its ambiguous training set up to near its 0.8 cap (≥ 0.7) "
                        "and its softmax puts about four times more mass on x than on x+1 (ratio between 2.5 and 8), "
                        "nearly all mass (≥ 0.8) on the two")


def _member(run: TaskRun, task: str) -> int:
    if task not in run.tasks:
        raise ValueError(f"the run has no member for task {task!r}; its tasks are {run.tasks}")
    return run.tasks.index(task)


def final_accuracy(run: TaskRun, task: str, split: str) -> float:
    """Final accuracy of the member that learned ``task`` on ``split`` ("train" or "test")."""
    return float(run.accuracy[split][-1, _member(run, task)])


def attention_on_test(run: TaskRun, task: str) -> tuple[AnchorData, list[np.ndarray]]:
    """The test set of ``task`` and the attention maps of its member, one (N, H, T, T) array per layer."""
    from companion.core.lm_analysis import attention_maps
    test = run.data(task).tests["test"]
    k = _member(run, task)
    return test, [m[k] for m in attention_maps(run.model(), test.x)]


def statistical_softmax(run: TaskRun, task: str = "statistical") -> tuple[float, float]:
    """Mean softmax mass on x and on x+1 over the distinct training sequences of the statistical task."""
    from companion.core.lm_analysis import masked_last_outputs
    stat = run.data(task)
    copies = 5 if task == "statistical" else 1
    distinct = stat.train.subset(torch.arange(len(stat.train)) % copies == 0)  # one copy of each sequence
    key = distinct.x[torch.arange(len(distinct)), distinct.key_pos]
    logits = torch.as_tensor(masked_last_outputs(run.model(), distinct, None))[_member(run, task)]
    probs = torch.softmax(logits, -1)
    rows = torch.arange(len(distinct))
    return float(probs[rows, key].mean()), float(probs[rows, key + 1].mean())


def check_mod_residue(run: TaskRun, task: str = "identity") -> Verdict:
    """§12.5.1: the identity member's test accuracy ≥ 0.99, stated as its test error ≤ 0.01."""
    acc = final_accuracy(run, task, "test")
    return MOD_RESIDUE.judge(threshold("test error", 1 - acc, "<=", 0.01), test_accuracy=acc)


def check_key_range(run: TaskRun, task: str = "identity_key_range") -> Verdict:
    """图12.4: the key-range member fits training and attends to the unseen keys, but does not answer them."""
    from companion.core.lm_analysis import broadcast_score
    train, test_acc = final_accuracy(run, task, "train"), final_accuracy(run, task, "test")
    test, maps = attention_on_test(run, task)
    found = float(broadcast_score(maps[-1], test.key_pos))
    return KEY_RANGE.judge(threshold("train error", 1 - train, "<=", 0.01),
                           threshold("last→key weight on unseen keys", found, ">=", 0.8),
                           threshold("test accuracy", test_acc, "<=", 0.1),
                           train_accuracy=train)


def check_shift(run: TaskRun, task: str = "identity") -> Verdict:
    """图12.15 (layer 1): the anchor beats every other earlier token at every key position, contrast ≥ 2."""
    from companion.core.lm_analysis import anchor_top_ratio, shift_contrast, shift_score
    test, maps = attention_on_test(run, task)
    top = float(anchor_top_ratio(maps[0], test.key_pos))
    contrast = float(shift_contrast(maps[0], test.key_pos))
    return SHIFT.judge(threshold("min over positions of anchor weight / largest other earlier weight", top, ">", 1.0),
                       threshold("shift contrast", contrast, ">=", 2.0),
                       key_to_anchor=float(shift_score(maps[0], test.key_pos)))


def check_broadcast(run: TaskRun, task: str = "identity") -> Verdict:
    """图12.15 (layer 2): the last position attends to the key in layer 2 (≥ 0.8), not in layer 1 (< 0.5)."""
    from companion.core.lm_analysis import broadcast_score
    test, maps = attention_on_test(run, task)
    l2, l1 = (float(broadcast_score(maps[i], test.key_pos)) for i in (-1, 0))
    return BROADCAST.judge(threshold("last→key weight, layer 2", l2, ">=", 0.8),
                           threshold("last→key weight, layer 1", l1, "<", 0.5))


def check_reading(run: TaskRun, task: str = "reading") -> Verdict:
    """§12.6.2: reading comprehension's test accuracy ≥ 0.9."""
    return READING.judge(threshold("test accuracy", final_accuracy(run, task, "test"), ">=", 0.9))


def check_statistical(run: TaskRun, task: str = "statistical") -> Verdict:
    """图12.13: training accuracy near its cap of 0.8 (≥ 0.7), p(x)/p(x+1) in [2.5, 8], p(x) + p(x+1) ≥ 0.8."""
    train = final_accuracy(run, task, "train")
    p_x, p_x1 = statistical_softmax(run, task)
    ratio = p_x / max(p_x1, 1e-12)
    return STATISTICAL.judge(threshold("train accuracy", train, ">=", 0.7),
                             threshold("p(x)/p(x+1)", ratio, ">=", 2.5),
                             threshold("p(x)/p(x+1)", ratio, "<=", 8.0),
                             threshold("p(x)+p(x+1)", p_x + p_x1, ">=", 0.8),
                             p_x=p_x, p_x_plus_1=p_x1)


def check_overlap(train_pairs: set, test_pairs: set) -> float | None:
    """Exercise 4 (§12.9): the share of test (position, key) pairs that also occur in training.

    Prints a verdict; returns the share (``None`` while the sets are still empty placeholders).
    """
    if not train_pairs or not test_pairs:
        print("… fill train_pairs and test_pairs with (key position, key) tuples, then run the cell again.")
        return None
    bad = [p for p in (*train_pairs, *test_pairs) if not (isinstance(p, tuple) and len(p) == 2)]
    if bad:
        raise ValueError(f"pairs must be (key position, key) tuples; got e.g. {bad[0]!r}")
    share = len(test_pairs & train_pairs) / len(test_pairs)
    if share > 0.5:
        print(f"✔ {share:.0%} of the test (position, key) pairs were already seen in training: a random split "
              "measures memory, not generalisation. The mod-residue split makes this share exactly 0.")
    else:
        print(f"✘ only {share:.0%} overlap — is the training set drawn at random over all keys and positions, "
              "with about 2000 sequences?")
    return share


# ------------------------------------------------------------------------------ explorer (ch. 12)
EXPLORER_POSITION = 5  # attention maps are averaged over sequences whose key (or answer) sits here


def _explore_tasks(task: str, split: str, depth: int, heads: int, steps: int, seed: int) -> dict:
    if split == "key_range" and task != "identity":
        raise ValueError(f"split 'key_range' is defined for the identity task only, not {task!r}")
    name = "identity_key_range" if split == "key_range" else task
    run = run_anchor_tasks((name,), n_layers=depth, n_heads=heads, steps=steps, record_every=max(10, steps // 10),
                           seed=seed)
    test = run.data(name).tests["test"]
    sel = test.key_pos == EXPLORER_POSITION
    with torch.no_grad():
        _, maps = run.model()(test.x[sel], return_attention=True)
    return {"steps": run.steps, "train": run.accuracy["train"][:, 0], "test": run.accuracy["test"][:, 0],
            "maps": [m[0].mean(dim=(0, 1)).numpy() for m in maps[:2]], "name": name}


def make_explorer(seed: int = 0):
    """Explorer for chapter 12: task, split, depth, heads, steps → accuracy curves and attention maps."""
    from companion.kit import widgets as W

    def draw(result: dict, fig) -> None:
        axes = fig.subplots(1, 1 + len(result["maps"]))
        axes[0].plot(result["steps"], result["train"], label="train")
        axes[0].plot(result["steps"], result["test"], "--", label="test")
        axes[0].set(xlabel="step", ylabel="accuracy", ylim=(-0.03, 1.03), title=result["name"])
        axes[0].legend()
        for l, (ax, a) in enumerate(zip(axes[1:], result["maps"])):
            ax.imshow(a, vmin=0, vmax=1)
            ax.set(title=f"layer {l + 1} (key at {EXPLORER_POSITION})", xlabel="attended", ylabel="query")
            ax.grid(False)

    controls = {"task": W.dropdown("identity", ("identity", "reading", "statistical"), "task"),
                "split": W.dropdown("mod_residue", SPLITS, "split"),
                "depth": W.int_slider(2, 1, 4, "layers"),
                "heads": W.dropdown(1, (1, 2, 4), "heads"),
                "steps": W.int_slider(300, 100, 1000, "steps", step=100)}
    return W.Explorer("Anchor functions: task, split and model size",
                      controls, lambda **v: _explore_tasks(seed=seed, **v), draw)


# ------------------------------------------------------------------------------ experiments (ch. 13)
@dataclass
class CompositionRun:
    """Result of :func:`run_composition`: one member per (γ, λ, seed) setting (a picklable record)."""

    settings: tuple[tuple[float, float, int], ...]  # (γ, λ, data seed) of each member
    steps: np.ndarray  # (R,)
    accuracy: dict[str, np.ndarray]  # "train"/"ID"/"OOD" → (R, K)
    commutativity: np.ndarray  # (K,) on the OOD pairs
    cfg: TransformerConfig
    state: dict
    seconds: float
    n_train: int = 20000
    n_test: int = 1000

    def model(self) -> Transformer:
        """The trained ensemble; member k has the setting ``settings[k]``."""
        model = Transformer(self.cfg, n_members=len(self.settings), gamma=[s[0] for s in self.settings])
        model.load_state_dict(self.state)
        return model.eval()

    def data(self, seed: int) -> TaskData:
        """The composite-task data of one seed (regenerated)."""
        return composition_data(self.n_train, self.n_test, seed)

    def members(self, gamma: float, lam: float) -> list[int]:
        """Indices of the members trained with (γ, λ), over all seeds."""
        found = [k for k, (g, l, _) in enumerate(self.settings) if abs(g - gamma) < 1e-9 and abs(l - lam) < 1e-9]
        if not found:
            raise ValueError(f"no member with gamma={gamma}, lambda={lam}; settings are {self.settings}")
        return found

    def final(self, split: str, gamma: float, lam: float) -> float:
        """Final accuracy on ``split`` ("train", "ID", "OOD") averaged over the seeds of (γ, λ)."""
        return float(self.accuracy[split][-1, self.members(gamma, lam)].mean())


def composition_data(n_train: int, n_test: int, seed: int) -> TaskData:
    """The composite task of §13.2 at CPU scale: sequence length 6, key position 0–3, residues mod 4."""
    return composite_task(n_train, n_test, n_test, seq_len=6, residue_mod=4, seed=seed)


def _run_composition(settings: tuple[tuple[float, float, int], ...], n_train: int, n_test: int, d_model: int,
                     n_layers: int, steps: int, lr: float, batch_size: int, record_every: int) -> CompositionRun:
    from companion.core.lm_analysis import commutativity
    if not settings:
        raise ValueError("give at least one (gamma, lambda, seed) setting")
    by_seed = {s: composition_data(n_train, n_test, s) for s in sorted({s for _, _, s in settings})}
    data = [by_seed[s] for _, _, s in settings]
    stack = lambda xs: torch.stack(list(xs))  # noqa: E731  (K, N, …)
    x, y = stack(d.train.x for d in data), stack(d.train.y for d in data)
    evals = {"train": (x[:, :n_test], y[:, :n_test])}
    for split in ("ID", "OOD"):
        evals[split] = (stack(d.tests[split].x for d in data), stack(d.tests[split].y for d in data))
    cfg = TransformerConfig(vocab_size=data[0].vocab_size, max_len=data[0].seq_len, d_model=d_model,
                            n_layers=n_layers, n_heads=1, d_ff=4 * d_model)
    g = torch.Generator().manual_seed(1_000 + settings[0][2])
    model = Transformer(cfg, n_members=len(settings), gamma=[s[0] for s in settings], generator=g)
    hist = fit_last_token(model, x, y, steps=steps, lr=lr, weight_decay=[s[1] for s in settings],
                          batch_size=batch_size, record_every=record_every, evals=evals, generator=g,
                          desc="composite task")
    model.eval()
    comm = np.array([commutativity(model, d.tests["OOD"])[k] for k, d in enumerate(data)])
    return CompositionRun(tuple(settings), hist.steps, hist.accuracy, comm, cfg, model.state_dict(),
                          hist.seconds, n_train, n_test)


def run_composition(settings: Sequence[tuple[float, float, int]], *, n_train: int = 20000, n_test: int = 1000,
                    d_model: int = 32, n_layers: int = 2, steps: int = 1000, lr: float = 1e-2,
                    batch_size: int = 128, record_every: int = 100) -> CompositionRun:
    """Train the composite task for every (γ, λ, seed) in ``settings`` as one batched ensemble (cached).

    γ is the initialisation rate (std = d_in^{−γ}), λ the AdamW weight decay; each seed has its own data.
    """
    settings = tuple((float(g), float(l), int(s)) for g, l, s in settings)
    return cached(_run_composition)(settings, n_train, n_test, d_model, n_layers, steps, lr, batch_size,
                                    record_every)


# ------------------------------------------------------------------------------ claims (ch. 13)
WEAK_CONTROL, STRONG_CONTROL = (0.8, 0.01), (1.4, 0.1)  # (γ, λ) of weak / strong complexity control
PHASE_ONE = ClaimSpec("ch13.phase-one", "图13.5",
                      "phase 1, at this scale slow fitting: with a large initialisation (γ = 0.2, λ = 0.01) the model "
                      "has fit neither its training set nor the ID test (both < 0.7) within 1000 steps, and it lags "
                      "behind γ = 0.8 on its training set")
COMPLEXITY_CONTROL = ClaimSpec("ch13.complexity-control", "图13.5/13.6",
                               "complexity control decides the solution: with weak control (γ = 0.8, λ = 0.01) the "
                               "model fits ID (≥ 0.95) but not the unseen pairs, and strong control (γ = 1.4, λ = 0.1) "
                               "raises the OOD accuracy by at least 0.3 (means over the data seeds)")
REASONING_LEVEL = ClaimSpec("ch13.reasoning-level", "图13.5/13.6",
                            "strong complexity control (γ = 1.4, λ = 0.1) solves most unseen pairs: mean OOD accuracy "
                            "≥ 0.5 over the data seeds", exploration=True)
COMMUTATIVITY = ClaimSpec("ch13.commutativity", "§13.3",
                          "with weak control (γ = 0.8, λ = 0.01) the model fits ID (≥ 0.95) and answers (c, d) and "
                          "(d, c) alike on ≥ 80% of the unseen sequences, far more often (by ≥ 0.5) than it answers "
                          "them correctly (means over the data seeds)")
WQ_CONDENSATION = ClaimSpec("ch13.wq-condensation", "图13.10",
                            "condensation of the first-layer query neurons grows with γ: rank correlation ≥ 0.7 over "
                            "the γ × λ grid, and γ = 1.4 at least twice as condensed as γ = 0.2 (both λ)")
EMBEDDING_ORDER = ClaimSpec("ch13.embedding-order", "图13.12",
                            "the number embeddings become low-dimensional as γ grows: the rank correlation between γ "
                            "and the top-2 PCA variance is ≥ 0.7 over the γ × λ grid")
EMBEDDING_CONTRAST = ClaimSpec("ch13.embedding-contrast", "图13.12",
                               "the top-2 PCA variance of the number embeddings at γ = 1.4 is at least twice that at "
                               "γ = 0.5 (mean over both λ)", exploration=True)


def rank_correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ with tied values given their average rank (γ repeats once per λ in the grid)."""
    from scipy.stats import spearmanr
    return float(spearmanr(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).statistic)


def grid_measure(run: CompositionRun, measure: str) -> dict[tuple[float, float], float]:
    """Per (γ, λ) cell of ``run``, the mean over its members of ``measure``:

    ``"wq_condensation"`` — mean |cos| between the first-layer query neurons (图13.10);
    ``"embedding_variance"`` — the top-2 PCA variance share of the number-token embeddings 20–99 (图13.12).
    """
    from companion.core.lm_analysis import condensation, explained_variance
    model = run.model()
    fns = {"wq_condensation": lambda k: condensation(model.member_weight("w_q", k, layer=0).numpy()),
           "embedding_variance": lambda k: explained_variance(model.member_weight("w_em", k)[20:100].numpy())}
    if measure not in fns:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(fns)}")
    cells = list(dict.fromkeys((g, l) for g, l, _ in run.settings))
    return {c: float(np.mean([fns[measure](k) for k in run.members(*c)])) for c in cells}


def _over_lambda(values: dict[tuple[float, float], float], gamma: float) -> float:
    found = [v for (g, _), v in values.items() if abs(g - gamma) < 1e-9]
    if not found:
        raise ValueError(f"no cell with gamma={gamma}; cells are {sorted(values)}")
    return float(np.mean(found))


def check_phase_one(run: CompositionRun, large: tuple[float, float] = (0.2, 0.01),
                    reference: tuple[float, float] = (0.8, 0.01)) -> Verdict:
    """图13.5, phase 1 as it appears at CPU scale: the large-initialisation model has not fit its training
    set within the budget (train and ID < 0.7), and fits it more slowly than γ = 0.8."""
    train, id_acc, ref = run.final("train", *large), run.final("ID", *large), run.final("train", *reference)
    return PHASE_ONE.judge(threshold("train accuracy, γ=0.2", train, "<", 0.7),
                           threshold("ID accuracy, γ=0.2", id_acc, "<", 0.7),
                           compare("train accuracy, γ=0.2", train, "<", "train accuracy, γ=0.8", ref),
                           OOD_accuracy=run.final("OOD", *large))


def check_complexity_control(contrast: CompositionRun, weak: tuple[float, float] = WEAK_CONTROL,
                             strong: tuple[float, float] = STRONG_CONTROL) -> Verdict:
    """图13.5/13.6: weak control fits ID (error ≤ 0.05); strong control's mean OOD exceeds weak's by ≥ 0.3."""
    id_weak, ood_weak = contrast.final("ID", *weak), contrast.final("OOD", *weak)
    ood_strong = contrast.final("OOD", *strong)
    return COMPLEXITY_CONTROL.judge(threshold("ID error, weak", 1 - id_weak, "<=", 0.05),
                                    threshold("OOD strong − OOD weak", ood_strong - ood_weak, ">=", 0.3),
                                    ood_weak=ood_weak, ood_strong=ood_strong, id_strong=contrast.final("ID", *strong))


def check_reasoning_level(contrast: CompositionRun, strong: tuple[float, float] = STRONG_CONTROL) -> Verdict:
    """Exploration: the level strong control reaches, mean OOD ≥ 0.5 (single runs vary 0.2–0.9)."""
    ood = contrast.accuracy["OOD"][-1, contrast.members(*strong)]
    return REASONING_LEVEL.judge(threshold("mean OOD accuracy, strong", float(ood.mean()), ">=", 0.5),
                                 single_runs=np.round(ood, 2))


def check_commutativity(contrast: CompositionRun, weak: tuple[float, float] = WEAK_CONTROL) -> Verdict:
    """§13.3: weak control fits ID and answers (c, d), (d, c) alike (≥ 0.8), by ≥ 0.5 more often than right."""
    id_weak, ood_weak = contrast.final("ID", *weak), contrast.final("OOD", *weak)
    comm = float(contrast.commutativity[contrast.members(*weak)].mean())
    return COMMUTATIVITY.judge(threshold("ID error, weak", 1 - id_weak, "<=", 0.05),
                               threshold("commutativity", comm, ">=", 0.8),
                               threshold("commutativity − OOD accuracy", comm - ood_weak, ">=", 0.5),
                               ood_accuracy=ood_weak)


def check_wq_condensation(run: CompositionRun) -> Verdict:
    """图13.10: Spearman ρ(γ, mean |cos| of W_Q(1) neurons) ≥ 0.7 over the grid; γ = 1.4 ≥ 2 × γ = 0.2."""
    cond = grid_measure(run, "wq_condensation")
    rho = rank_correlation([g for g, _ in cond], list(cond.values()))
    low, high = _over_lambda(cond, 0.2), _over_lambda(cond, 1.4)
    return WQ_CONDENSATION.judge(threshold("Spearman ρ(γ, |cos|)", rho, ">=", 0.7),
                                 threshold("|cos|(γ=1.4) / |cos|(γ=0.2)", high / low, ">=", 2.0),
                                 cos_02=low, cos_14=high)


def check_embedding_order(run: CompositionRun) -> Verdict:
    """图13.12: Spearman ρ(γ, top-2 PCA variance of the number embeddings) ≥ 0.7 over the grid."""
    var = grid_measure(run, "embedding_variance")
    rho = rank_correlation([g for g, _ in var], list(var.values()))
    return EMBEDDING_ORDER.judge(threshold("Spearman ρ(γ, top-2 variance)", rho, ">=", 0.7),
                                 variance_05=_over_lambda(var, 0.5), variance_14=_over_lambda(var, 1.4))


def check_embedding_contrast(run: CompositionRun) -> Verdict:
    """Exploration (图13.12): top-2 PCA variance at γ = 1.4 ≥ 2 × that at γ = 0.5 (mean over λ)."""
    var = grid_measure(run, "embedding_variance")
    low, high = _over_lambda(var, 0.5), _over_lambda(var, 1.4)
    return EMBEDDING_CONTRAST.judge(threshold("variance(γ=1.4) / variance(γ=0.5)", high / low, ">=", 2.0),
                                    variance_05=low, variance_14=high)


def _explore_composition(gamma: float, lam: float, depth: int, steps: int, seed: int) -> dict:
    from companion.core.lm_analysis import condensation, cosine_order, neuron_cosine
    run = run_composition([(gamma, lam, seed)], n_layers=depth, steps=steps, record_every=max(10, steps // 10))
    w_q = run.model().member_weight("w_q", 0, layer=0).numpy()
    order = cosine_order(w_q)
    return {"steps": run.steps, "ID": run.accuracy["ID"][:, 0], "OOD": run.accuracy["OOD"][:, 0],
            "commutativity": float(run.commutativity[0]), "condensation": condensation(w_q),
            "cosine": neuron_cosine(w_q)[np.ix_(order, order)]}


def make_composition_explorer(seed: int = 0):
    """Explorer for chapter 13: γ, λ, depth → ID/OOD accuracy, commutativity and W^{Q(1)} condensation."""
    from companion.kit import widgets as W

    def draw(result: dict, fig) -> None:
        ax1, ax2 = fig.subplots(1, 2)
        ax1.plot(result["steps"], result["ID"], label="ID")
        ax1.plot(result["steps"], result["OOD"], "--", label="OOD (unseen pairs)")
        ax1.set(xlabel="step", ylabel="accuracy", ylim=(-0.03, 1.03),
                title=f"commutativity on OOD pairs {result['commutativity']:.2f}")
        ax1.legend()
        ax2.imshow(result["cosine"], cmap="RdBu_r", vmin=-1, vmax=1)
        ax2.set(title=f"cos of W_Q(1) neurons, mean |cos| {result['condensation']:.2f}", xlabel="neuron",
                ylabel="neuron")
        ax2.grid(False)

    controls = {"gamma": W.float_slider(1.4, 0.1, 1.6, 0.1, "init rate γ"),
                "lam": W.log_slider(0.1, 0.001, 1.0, "weight decay λ"),
                "depth": W.int_slider(2, 1, 4, "layers"),
                "steps": W.int_slider(600, 200, 1500, "steps", step=100)}
    return W.Explorer("Complexity control on the composite task", controls,
                      lambda **v: _explore_composition(seed=seed, **v), draw, figsize=(10.0, 3.6))
