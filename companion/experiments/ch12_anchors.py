"""Chapter 12, anchor functions (锚函数): the four tasks trained as one batched ensemble, the claims, the explorer.

The tasks and splits (§12.4–12.6) are :mod:`companion.core.anchor_tasks`; the attention measures of
图12.15 are :mod:`companion.core.attention`.  :func:`run_anchor_tasks` trains one tiny post-LN decoder
per task (member k learns ``tasks[k]``) with AdamW, the warm-up + cosine learning rate and cross-entropy
on the last token (§12.8) through :func:`companion.core.transformer.fit_last_token`; the ``check_…``
functions turn the chapter's statements into claims (the notebook, the robustness run and the
negative controls call the same ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from companion.core.anchor_tasks import (SPLITS, AnchorData, TaskData, identity_task, reading_task,
                                         statistical_task, TrainedMembers, train_on_tasks)
from companion.core.attention import (anchor_top_ratio, attention_maps, broadcast_score, masked_last_outputs,
                                      shift_contrast, shift_score)
from companion.core.transformer import Transformer
from companion.kit.cache import cached
from companion.kit.claims import ClaimSpec, Verdict, threshold
from companion.kit.seeds import active_seed

# ------------------------------------------------------------------------------ runs
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
class TaskRun(TrainedMembers):
    """Result of :func:`run_anchor_tasks` (a picklable record): member k learned ``tasks[k]``; its ``history``
    has the series "train accuracy" and "test accuracy" (R, K), read as ``accuracy["train"|"test"]``."""

    tasks: tuple[str, ...]
    seed: int = 0
    n_train: int = 2000
    n_test: int = 500

    def model(self) -> Transformer:
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
    data = [make_task(t, n_train, n_test, seed=seed) for t in tasks]
    model, history = train_on_tasks(data, gamma=gamma, weight_decay=weight_decay, d_model=d_model, n_layers=n_layers,
                                    n_heads=n_heads, steps=steps, lr=lr, batch_size=batch_size,
                                    record_every=record_every, n_eval=min(n_train, n_test), seed=seed)
    return TaskRun(history, model.cfg, model.state_dict(), tuple(tasks), seed, n_train, n_test)


def run_anchor_tasks(tasks: Sequence[str] = TASKS, *, n_train: int = 2000, n_test: int = 500, d_model: int = 32,
                     n_layers: int = 2, n_heads: int = 1, steps: int = 600, lr: float = 2e-3,
                     weight_decay: float = 0.01, batch_size: int = 100, gamma: float = 0.5,
                     record_every: int = 50, seed: int = 0) -> TaskRun:
    """Train one transformer per task in ``tasks``, all as one batched ensemble (cached on disk).

    AdamW with a warm-up/cosine learning rate, cross-entropy on the last token (§12.8).
    """
    return cached(_run_anchor_tasks)(tuple(tasks), n_train, n_test, d_model, n_layers, n_heads, steps, lr,
                                     weight_decay, batch_size, gamma, record_every, seed)


# ------------------------------------------------------------------------------ claims
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
    test = run.data(task).tests["test"]
    k = _member(run, task)
    return test, [m[k] for m in attention_maps(run.model(), test.x)]


def statistical_softmax(run: TaskRun, task: str = "statistical") -> tuple[float, float]:
    """Mean softmax mass on x and on x+1 over the distinct training sequences of the statistical task."""
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
    train, test_acc = final_accuracy(run, task, "train"), final_accuracy(run, task, "test")
    test, maps = attention_on_test(run, task)
    found = float(broadcast_score(maps[-1], test.key_pos))
    return KEY_RANGE.judge(threshold("train error", 1 - train, "<=", 0.01),
                           threshold("last→key weight on unseen keys", found, ">=", 0.8),
                           threshold("test accuracy", test_acc, "<=", 0.1),
                           train_accuracy=train)


def check_shift(run: TaskRun, task: str = "identity") -> Verdict:
    """图12.15 (layer 1): the anchor beats every other earlier token at every key position, contrast ≥ 2."""
    test, maps = attention_on_test(run, task)
    top = float(anchor_top_ratio(maps[0], test.key_pos))
    contrast = float(shift_contrast(maps[0], test.key_pos))
    return SHIFT.judge(threshold("min over positions of anchor weight / largest other earlier weight", top, ">", 1.0),
                       threshold("shift contrast", contrast, ">=", 2.0),
                       key_to_anchor=float(shift_score(maps[0], test.key_pos)))


def check_broadcast(run: TaskRun, task: str = "identity") -> Verdict:
    """图12.15 (layer 2): the last position attends to the key in layer 2 (≥ 0.8), not in layer 1 (< 0.5)."""
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


# ------------------------------------------------------------------------------ explorer
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


def make_explorer(seed: int | None = None):
    """Explorer for chapter 12: task, split, depth, heads, steps → accuracy curves and attention maps.

    Trains from ``seed`` (default: the active seed, ``COMPANION_SEED``).
    """
    from companion.kit import widgets as W

    seed = active_seed() if seed is None else seed

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
