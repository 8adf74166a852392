# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Chapter 12 — Anchor functions: a laboratory for language models (锚函数)
#
# *深度学习现象导论*, chapter 12, after Zhang, Zhang, Xu et al., "Anchor function: a type of benchmark
# functions for studying language models" (2024).
#
# Real language is too rich to study a transformer's mechanism; an **anchor function** (锚函数) keeps
# the one thing that matters: a special token, the **anchor** (锚点), tells the model *what to do* with
# the token(s) next to it, the **key** (关键项); everything else is noise. The simplest is the
# **identity task** (恒等学习任务) "3x → x", eq. (12.1): the output is the number right after the 3.
# This notebook reproduces:
#
# 1. the **mod-residue split** (模-余数数据划分, §12.5.1) — the model generalises to unseen
#    (position, key) combinations — and the failure of the naive split by key value (图12.4);
# 2. the **mechanism** of 图12.15/12.16: layer 1 **shifts** (移位: the key attends to the anchor before
#    it) and layer 2 **broadcasts** (广播: the last position attends to the key);
# 3. two more language-like tasks of §12.6: **reading comprehension** (阅读理解) and **statistical
#    output** (统计输出, 图12.13), whose softmax learns the 0.8/0.2 split of its labels;
# 4. why a transformer: a transformer, an LSTM and a fully connected net against the training-set size (图12.6);
# 5. the composite task: data generalisation (数据泛化) versus task generalisation (任务泛化) (图12.9), and
#    what the model outputs at the positions the loss never reads (图12.8);
# 6. working memory (图12.10), statistical output with type-2 data (图12.13(b)) and forward/backward
#    recitation (图12.12);
# 7. an explorer over task, split, depth, heads and training steps.
#
# The book trains a 4-layer, 4-head post-LN decoder (d_model 400) for 4000 epochs (§12.8). Here all
# four tasks train at once as **one batched ensemble** of tiny 2-layer, 1-head post-LN decoders
# (d_model 32, learned positions, causal mask, `companion.core.transformer`), each member on its own task,
# with AdamW and the book's warm-up + cosine learning rate, cross-entropy on the last token (§12.8.2).
#
# Run time: quick profile ≈ 100 CPU-seconds of training, under two minutes in all (results are cached on
# disk); full profile (d_model 64, 4 layers, more steps) several minutes on a CPU.

# %%
import matplotlib.pyplot as plt

from companion.core import anchor_tasks, attention
from companion.experiments import ch12_anchors as anchors
from companion.kit.claims import show
from companion.kit.config import pick, settings
from companion.kit.plots import panels
from companion.kit.seeds import active_seed

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. Data: anchors, keys and the splits (§12.4–12.5)
#
# Sequences of n = 9 tokens; numbers 20–99 are keys and noise, the anchor is the token 3. The anchor
# sits at a random position i − 1 ∈ {0, …, 6} and the key right after it, so the last token is noise
# and the answer has to be *fetched*.
#
# * **Mod-residue split**: Γ_i = {k·n + i}. A key at position i is drawn from I ∖ Γ_i in training and
#   from I ∩ Γ_i in the test set. Every number is a key somewhere in training, yet no test
#   (position, key) pair was seen.
# * **Naive split by key value** (图12.4): training keys 20–79, test keys 80–99. A test key appears in
#   training only as noise, so its embedding is pushed only by "noise" gradients and nothing ties it
#   to an output — the book predicts failure.

# %%
example = anchor_tasks.identity_task(3, 3, seed=seed)
print("training sequences:\n", example.train.x.numpy(), "\ntargets:", example.train.y.numpy())
print("test keys mod 9 = key position:", (example.tests["test"].y % 9).numpy(), example.tests["test"].key_pos.numpy())

# %% [markdown]
# ## 2. Four tasks, one batched run
#
# Member 1: identity with the mod-residue split; member 2: identity with the key-range split;
# member 3: reading comprehension (a1, x1, a2, x2, a3, x3, a4, x4, a) ↦ x_k with a_k = a (anchors 1–8,
# mod-residue split on the position of x_k); member 4: statistical output, type 1 (every sequence five
# times, one copy labelled x + 1). 4000 training sequences each (the book: 1000–30000), 1000 steps.

# %%
CFG12 = dict(n_train=4000, n_test=500,
             d_model=pick(quick=32, full=64), n_layers=pick(quick=2, full=4), n_heads=pick(quick=1, full=4),
             steps=pick(quick=1000, full=3000), lr=2e-3, weight_decay=0.01, batch_size=100, gamma=0.5,
             record_every=50)
run = anchors.run_anchor_tasks(anchors.TASKS, seed=seed, **CFG12)
model = run.model()
k_of = {t: k for k, t in enumerate(run.tasks)}
final = {t: {s: float(run.accuracy[s][-1, k]) for s in ("train", "test")} for t, k in k_of.items()}
print(f"trained in {run.seconds:.0f} CPU-s")
for t, acc in final.items():
    print(f"{t:20s} train {acc['train']:.3f}  test {acc['test']:.3f}")

# %%
fig, axes = panels(4, width=3.2)
titles = {"identity": "identity, mod-residue split", "identity_key_range": "identity, key-range split (Fig. 12.4)",
          "reading": "reading comprehension", "statistical": "statistical output (type 1)"}
for ax, t in zip(axes, run.tasks):
    for s, style in (("train", "-"), ("test", "--")):
        ax.plot(run.steps, run.accuracy[s][:, k_of[t]], style, label=s)
    ax.set_title(titles[t], fontsize=9)
    ax.set_xlabel("step")
    ax.set_ylim(-0.03, 1.03)
axes[0].set_ylabel("accuracy")
axes[0].legend()
plt.show()

# %% [markdown]
# ### The mod-residue split generalises; the key-range split does not (图12.4)
#
# The first claim: the identity member's test accuracy is ≥ 0.99, stated as its test error ≤ 0.01 (the
# same condition; the error shows how far it is from the line). With 2000 training sequences it fell
# short on some seeds (0.972 after 600 steps; 0.984 and 0.988 after 1000 steps): the model had seen too
# few (position, key) combinations. With 4000 sequences — the same training cost, since mini-batches are
# drawn at random — and 1000 steps it reached 0.998–1.0 on those seeds.
#
# That the key-range model answers the unseen keys wrongly is almost built into the data: the numbers
# 80–99 are never a training *target*, so nothing pushes their output logits up. What the model itself
# does is the interesting part, and the claim checks it: it fits its training set (≥ 0.99) and it still
# **finds** the unseen key — the last position's layer-2 attention goes to the key with weight ≥ 0.8 on
# the test sequences, as on the trained ones — yet it answers ≤ 0.1 of them. The mechanism that locates
# the key (anchor + shift + broadcast) generalises to every key; what fails is the map from an unseen
# key's embedding to its output, which only ever received "noise" gradients.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_mod_residue(run))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_key_range(run))

# %% [markdown]
# ## 3. The mechanism: shift, then broadcast (图12.15, 图12.16)
#
# We average the attention maps of the identity model over its test sequences, grouped by the key's
# position. 图12.15 says layer 1 **shifts** — the key attends to the anchor right before it, so the
# key's vector now also carries "I follow a 3" — and layer 2 **broadcasts** — the last position, where
# the answer is read, attends to the position that holds anchor + key.
#
# Measures (`companion.core.attention`): whether, at every key position, the anchor is the token the key
# attends to most among those before it; the *shift contrast*, the mean layer-1 weight key → anchor
# divided by the mean weight key → any other earlier token (1 for a uniform map); the *broadcast score*,
# the mean layer-2 weight last position → key.

# %%
test = run.data("identity").tests["test"]
k_id = k_of["identity"]
maps = [m[k_id] for m in attention.attention_maps(model, test.x)]  # per layer (N, H, T, T)
shift = float(attention.shift_contrast(maps[0], test.key_pos))
anchor_top = float(attention.anchor_is_top(maps[0], test.key_pos))
anchor_weight = float(attention.shift_score(maps[0], test.key_pos))
broadcast = float(attention.broadcast_score(maps[1], test.key_pos))
broadcast_l1 = float(attention.broadcast_score(maps[0], test.key_pos))

POS = 4  # show the sequences whose key sits at position 4 (the anchor at 3)
sel = (test.key_pos == POS).numpy()
fig, axes = panels(2, width=3.6, height=3.2)
for ax, layer in zip(axes, (0, 1)):
    image = ax.imshow(maps[layer][sel, 0].mean(0), cmap="viridis", vmin=0, vmax=1)
    ax.set_title(f"layer {layer + 1} attention (anchor at {POS - 1}, key at {POS})", fontsize=9)
    ax.set_xlabel("key position (attended)")
    ax.set_ylabel("query position")
    ax.grid(False)
plt.colorbar(image, ax=axes[-1], fraction=0.05)
plt.show()
print(f"layer 1: anchor most attended at {anchor_top:.0%} of key positions, key→anchor weight "
      f"{anchor_weight:.2f}, shift contrast {shift:.1f}; "
      f"layer 2: last→key weight {broadcast:.2f} (layer 1: {broadcast_l1:.2f})")

# %% [markdown]
# The shift claim states "the anchor is the most attended earlier token at every key position" as a number
# with a margin: at the worst key position, the anchor's mean weight divided by the largest mean weight of
# any other earlier token (best head) must exceed 1 (`attention.anchor_top_ratio`); and the shift
# contrast must be ≥ 2. The broadcast claim: layer-2 weight last position → key ≥ 0.8, layer-1 < 0.5.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_shift(run))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_broadcast(run))

# %% [markdown]
# At this small scale the layer-1 shift is **soft**: the anchor gets the largest share of the key's
# attention (0.25–0.45), the rest is spread over the key itself and the tokens before, decaying with
# distance; the book's larger model, trained 4000 epochs, shows a sharp shift (the digest measured 0.94
# with d_model 64 after 1500 steps). A soft shift suffices because the anchor's embedding is unlike any
# number's. The broadcast in layer 2 is nearly one-hot, as in 图12.15(b).
# Because the anchor's position varies, the broadcast is *content*-based (it looks for "the token after
# a 3"), while the shift is *positional* (i → i − 1): the book's remark that the first map "is mainly
# based on position embeddings, the second on where the anchor is".

# %% [markdown]
# ## 4. Reading comprehension and statistical output (§12.6.2, §12.6.8, 图12.13)
#
# **Reading comprehension**: the question token a at the end names one of the four anchors; the model
# must find that anchor in the text and return the number after it — the book reaches 100% test accuracy.
#
# **Statistical output, type 1**: each training sequence appears five times and one copy is labelled x + 1.
# The same input has two labels, so no model can exceed 80% training accuracy (图12.13(a)), and
# cross-entropy is minimised by the softmax (0.8, 0.2) on (x, x + 1) (图12.13(c)). We read the softmax on
# the training inputs, as in 图12.13(c), over the 800 distinct sequences (its accuracy on fresh test
# sequences, labelled x, is in the table of section 2; the claim does not need it).

# %%
p_x, p_x1 = anchors.statistical_softmax(run)  # mean softmax on x and x+1 over the 800 distinct training inputs
print(f"reading comprehension: test accuracy {final['reading']['test']:.3f}")
print(f"statistical output: train accuracy {final['statistical']['train']:.3f}; "
      f"softmax p(x) = {p_x:.2f}, p(x+1) = {p_x1:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_reading(run))

# %% [markdown]
# The statistical-output claim checks what the model learns: it fits its training set up to near the cap
# (training accuracy ≥ 0.7), its softmax ratio p(x)/p(x+1) lies between 2.5 and 8 (the optimum is 4), and
# p(x) + p(x+1) ≥ 0.8. The cap itself (training accuracy ≤ 0.8) holds by construction of the data — the
# same input carries two labels — so it is stated, not checked (an earlier version checked ≤ 0.82, a
# condition no model can fail).

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_statistical(run))

# %% [markdown]
# ## 5. Why a transformer? Transformer, LSTM and fully connected net (图12.6)
#
# 图12.6 compares three architectures on the identity task as the number of training sequences grows:
# a transformer, an **LSTM** (长短期记忆网络) and a **fully connected network** (全连接神经网络, FNN). In the book
# the transformer generalises from about 600 sequences, the LSTM needs about 2200, and the FNN hardly
# generalises at all (10 seeds, 4000 epochs, models of 5.6M, 5.3M and 416M parameters).
#
# CPU-sized analogue (`companion.core.sequence_models`): the tiny transformer of section 2, a one-layer LSTM
# (token table d = 32, hidden 64) of about the same size, and an FNN that concatenates the nine token
# embeddings and passes them through two ReLU layers of width 256 (about five times larger; the book's is 75 times).
# All three train through the same engine with the same AdamW, schedule, step count and last-token loss;
# each architecture trains one member per training size as one batched ensemble, on nested training sets
# and one mod-residue test set.

# %%
CFG_SIZES = dict(sizes=pick(quick=(250, 500, 1000, 2000), full=(250, 500, 1000, 2000, 4000, 8000)),
                 n_test=500, d_model=pick(quick=32, full=64), steps=pick(quick=400, full=3000), lr=2e-3,
                 weight_decay=0.01, batch_size=100)
sizes_run = anchors.run_sample_efficiency(seed=seed, **CFG_SIZES)
for arch in sizes_run.test:
    print(f"{arch:12s} {sizes_run.params[arch]:7d} parameters, test accuracy "
          f"{[round(float(a), 2) for a in sizes_run.test[arch]]}  ({sizes_run.seconds[arch]:.0f} CPU-s)")

# %%
fig, ax = plt.subplots(figsize=(4.6, 3.2), layout="constrained")
for arch, marker in zip(sizes_run.test, "os^"):
    ax.plot(sizes_run.sizes, sizes_run.test[arch], marker + "-", label=arch)
ax.set(xscale="log", xlabel="training sequences", ylabel="test accuracy", ylim=(-0.03, 1.03),
       title="identity task (Fig. 12.6 analogue)")
ax.legend()
plt.show()

# %% [markdown]
# The claim keeps what reproduces at this scale: the transformer generalises (test accuracy ≥ 0.9 at some
# size) while the FNN stays below 0.5 at every size. The FNN shares no weight across positions: its first
# layer reads position i through weights of its own, and under the mod-residue split a test key at position i
# is a value those weights never had to send to the output, so the FNN stays at chance — 图12.6's "the FNN
# hardly generalises", here sharpened to none at all.
#
# The book's second statement, that the LSTM needs about four times more data than the transformer, is
# fragile here. With 800 training steps our small LSTM learnt the identity task from as few sequences as the
# transformer (test accuracy 0.91 vs 0.97 at 1000 sequences, seed 0); with the 400 steps used here it lags
# behind (at the transformer's n*, LSTM test accuracy 0.44–0.81 on seeds 0–4, where the transformer has ≥ 0.9),
# so what is measured mixes sample efficiency with the LSTM's slower optimisation. One reason to expect little difference is the split itself:
# the mod-residue split tests generalisation to unseen (position, key) pairs, and a recurrent net applies the
# same weights at every position, so it is translation-invariant by construction, while the transformer, with
# learned position embeddings, must learn that invariance from data. The statement is therefore an
# exploration (its pass rate over seeds is in the robustness report).

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_sample_efficiency(sizes_run))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_lstm_gap(sizes_run))

# %% [markdown]
# ## 6. The composite task: data generalisation before task generalisation (图12.9)
#
# The **composite task** (复合任务, §12.6.4) has four anchors, each a map g(x; a) = x + shift[a] (the book's
# a, b, c, d: +5, +1, −2, −8), and a sequence (…, x, a1, a2, …) asks for g(g(x; a1); a2). The 16 ordered
# anchor pairs are 16 tasks; 15 are trained, one is held out. Fresh keys on the trained pairs measure
# **data generalisation** (数据泛化, "ID"), the held-out pair **task generalisation** (任务泛化, "OOD").
# The book observes that data generalisation always reaches 100% while task generalisation is usually lower,
# and (图12.9) that it arrives much later: 100 vs 400 epochs.
#
# Which pair is held out matters, and the book does not say which. The shifts add, so (c, d) and (d, c) have
# the same answer: holding out (c, d) while (d, c) is trained lets a model answer the unseen pair by
# symmetry alone. A diagonal pair such as (d, d) (x − 16) has no such twin: only composing g(·; d) twice
# answers it. We train both, as one batched ensemble (sequences of length 6, chapter 13's setting: 20000
# training sequences, AdamW with lr 1e-2, batch 128, 1500 steps, γ = 0.5).

# %%
CFG_COMPOSITE = dict(held_out=(((3, 4),), ((4, 4),)), n_train=20000, n_test=500, d_model=pick(quick=32, full=64),
                     steps=pick(quick=1500, full=3000), lr=pick(quick=1e-2, full=3e-3), weight_decay=0.01,
                     gamma=0.5, batch_size=128, record_every=30)
composite = anchors.run_composite(seed=seed, **CFG_COMPOSITE)

# %%
fig, axes = panels(2, width=3.6)
for ax, held in zip(axes, composite.held_out):
    k = composite.member(held)
    for split, style in (("train", ":"), ("ID", "-"), ("OOD", "--")):
        ax.plot(composite.steps, composite.accuracy[split][:, k], style, label=split)
    ax.set(title=f"held out: {held[0]}", xlabel="step", ylim=(-0.03, 1.03))
axes[0].set_ylabel("accuracy")
axes[0].legend()
plt.show()

# %% [markdown]
# With (c, d) held out and (d, c) trained, the held-out pair is answered about as soon as the trained pairs
# are: task and data generalisation arrive together, and 图12.9's delay does not appear. With the diagonal
# pair (d, d) held out, the model reaches 100% on fresh keys of the 15 trained pairs but stays well below on
# (d, d) — near chance on most seeds, partly learnt on a few (0.67 on seed 0): the pair maps are learnt largely
# as separate tasks, not as compositions of single-anchor maps. Chapter 13 shows that a smaller initialisation
# (larger γ) and weight decay are what push a model towards composing.
#
# Two explorations (not claims) state the book's sentences. First, the sentence before 图12.9: data
# generalisation reaches 100% (ID error ≤ 0.01, on the diagonal member) while task generalisation stays lower
# (OOD < ID). OOD stayed below ID on every seed we ran, but within 1500 steps the ID accuracy itself fell short
# of 0.99 on 2 of 12 seeds (0.986 and 0.858): the sentence held on 10 of 12 seeds, short of the 19 of 20 a
# claim needs. Second, the timing of 图12.9 (ID reaches 0.9 at least twice as early as OOD, which does get
# there), measured on the (c, d) member: it held on 0 of 12 seeds — the two arrive together when the held-out
# pair is learnable by symmetry, and task generalisation does not arrive when it is not.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_task_harder(composite))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_data_before_task(composite))

# %% [markdown]
# ### What the model outputs at the other positions (图12.8)
#
# The loss only reads the last position, but the model produces an output at every position. 图12.8 (right)
# shows what a trained 10-layer model says there: at the first anchor a1 it outputs f_{a1}(f_{a1}(x)) — as if
# the pair were (a1, a1) — and from the second anchor on it outputs the correct answer and keeps it; the book
# adds that smaller models do not show this pattern stably. We read the argmax at each position of the ID test
# sequences (for "from the second anchor on", those whose second anchor is not the last token).

# %%
outputs = {held[0]: anchors.per_position_outputs(composite, held) for held in composite.held_out}
for pair, shares in outputs.items():
    print(f"held out {pair}: " + ", ".join(f"{name} {share:.2f}" for name, share in shares.items()))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_per_position(composite))

# %% [markdown]
# The diagonal member shows the book's pattern on some seeds: f_{a1}(f_{a1}(x)) at the first anchor (on 0.37–0.91
# of the sequences, ≥ 0.5 on 9 of 11 seeds) and the answer carried to every later position (≥ 0.9 of the
# sequences on 5 of 11 seeds, 0.36–1.0 overall); the (c, d) member does not show it. The book itself finds the
# pattern stable only in its 10-layer model, so in our 2-layer model it is an exploration (5 of 11 seeds).

# %% [markdown]
# ## 7. Working memory, statistical output of type 2, recitation (图12.10, 图12.13, 图12.12)
#
# Three more tasks of §12.6 train as one batched ensemble of the same tiny transformer (sequences of 9
# tokens, numbers 20–99; AdamW with lr 1e-2, 800 steps):
#
# * **Working memory** (工作记忆, §12.6.5, 图12.10): (…, x, a1, *, …, a2, …) ↦ f_{a2}(f_{a1}(x)) with
#   a1 ∈ {1, 2} right after the key, a2 ∈ {3, 4} later, at least one irrelevant token between, and the
#   shifts of 图12.10 (f_1(x) = x, f_2(x) = x + 1, f_3(x) = x, f_4(x) = x − 2). The model must hold the
#   intermediate result until it sees the second anchor. Mod-residue split on the key and its position.
# * **Statistical output, type 2** (统计输出, 图12.13(b)): the identity data with a random fifth of the
#   *distinct* sequences relabelled x + 1. Every input now has one label, so the model can fit the training
#   set completely; on unseen test sequences the book finds it answers x about 80% and x + 1 about 20% of
#   the time — the label statistics reappear as answer frequencies.
# * **Forward/backward recitation** (前向-后向背诵, §12.6.7, 图12.12): the pair (m, 3, n) sits anywhere; in
#   the book's naming the *forward* task asks with n for m, (…, m, 3, n, …, n) ↦ m, the *backward* task asks
#   with m for n, (…, m, 3, n, …, m) ↦ n; 500 training sequences each.

# %%
CFG_GRID = dict(n_test=500, d_model=32, n_layers=2, steps=pick(quick=800, full=3000),
                lr=pick(quick=1e-2, full=3e-3), weight_decay=0.01, batch_size=100, record_every=100)
MEMBERS = (("forward", 500), ("backward", 500), ("statistical_2", 2000), ("working_memory", 4000))
grid = anchors.run_task_grid(MEMBERS, seed=seed, **CFG_GRID)
share_x, share_x1 = anchors.test_prediction_shares(grid)
for task, n in MEMBERS:
    print(f"{task:15s} ({n:4d} sequences): train {grid.final('train', task):.3f}  test {grid.final('test', task):.3f}")
print(f"statistical output, type 2: on unseen sequences the model answers x in {share_x:.0%}, "
      f"x + 1 in {share_x1:.0%} of the cases")

# %%
fig, axes = panels(3, width=3.2)
for ax, (task, n), title in zip(axes, MEMBERS[2:] + MEMBERS[:1],
                                ("statistical output, type 2", "working memory (Fig. 12.10)", "recitation, 500 seq.")):
    tasks = (("forward", "backward") if task == "forward" else (task,))
    for t in tasks:
        k = grid.index(t)
        ax.plot(grid.steps, grid.accuracy["train"][:, k], ":", label=f"{t} train" if len(tasks) > 1 else "train")
        ax.plot(grid.steps, grid.accuracy["test"][:, k], "-", label=f"{t} test" if len(tasks) > 1 else "test")
    ax.set(title=title, xlabel="step", ylim=(-0.03, 1.03))
    ax.legend(fontsize=7)
axes[0].set_ylabel("accuracy")
plt.show()

# %% [markdown]
# Working memory is learnt: the test accuracy on unseen (position, key) pairs ended between 0.79 and 1.0 over
# seeds 0–19 — but below the 0.9 of the statement on 3 of those 20 seeds, so at this scale it is an exploration.
# Statistical output of type 2 held on 19 of seeds 0–19: the training set is fitted completely and on unseen
# sequences 9–19% of the answers are x + 1 (below the 10% of the statement once, on seed 8) — the model turns
# the 20% of relabelled training sequences into a frequency of its answers, somewhat below 20%.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_working_memory(grid))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_statistical_2(grid))

# %% [markdown]
# **Recitation.** The book reports that the forward task (its naming) always generalises better than the
# backward one. We find the opposite in this setting: with 500 training sequences the *backward* task
# (…, m, 3, n, …, m) ↦ n generalises far better, on every seed we ran (forward − backward between −1.0 and −0.3
# over seeds 0–7), so the book's sentence is recorded as an exploration that fails here. The direction depends
# on the setting, though: in another ensemble (six tasks, 800 steps) the same seed gave +0.11. Note also that
# the book's naming looks inverted against its own motivation: reciting the *next* line of a poem from the
# previous one is "given m, answer n" — the book's "backward" task — and that is the direction that wins here,
# in line with the book's GPT-4 observation that forward recitation is the easy one.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_recitation(grid))

# %% [markdown]
# Two more tasks of §12.6 were tried at this scale and left out: the **multi-anchor task** (多锚点任务, 图12.14,
# f_a(x) = x + a for ten anchors with the anchor-based split, `anchor_tasks.multi_anchor_task`) fitted its
# training set (0.98) but answered ≤ 0.1 of the held-out (anchor, key) combinations, and the **classification
# task** (分类任务, 图12.7, `anchor_tasks.classification_task`) reached test accuracy 0.24 with number
# embeddings that showed no order (`anchors.embedding_order` ≈ 1.0). The book trains them on 30000 sequences for
# 4000 epochs with a 4-layer model; both generators are in the package for a longer run (full profile).

# %% [markdown]
# ## 8. Explorer
#
# Choose a task, its split, the depth, the number of heads and the number of training steps; one small
# model (d_model 32) trains in a few seconds (cached) and the panel shows its accuracy curves and the
# attention maps of its first two layers, averaged over test sequences with the key (or, for reading
# comprehension, the answer) at position 5.

# %%
explorer = anchors.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## 9. Exercises (习题)
#
# **Exercise 4 (§12.9).** Why the mod-residue split? Build the *random* split yourself: draw 2000
# training and 500 test sequences of the identity task with the key anywhere in 20–99, and count how many
# test (position, key) pairs also occur in training. `anchors.check_overlap` prints a verdict.

# %%
train_pairs = set()  # fill with (key position, key) pairs of a random training set …
test_pairs = set()  # … and of a random test set (see anchor_tasks.identity_task for the data layout)
anchors.check_overlap(train_pairs, test_pairs)

# %% [markdown]
# **Exercise 11.** How would you set the position embeddings and W^Q, W^K so that every position
# attends to the one before it? Inspect `model.member_weight("x_pos", k_id)` and the layer-1 map above:
# which structure of X^pos W^Q W^Kᵀ X^posᵀ produces the shift?
#
# ## Summary
#
# * Anchor functions isolate *what to read* (the anchor) from *what to output* (the key); the
#   mod-residue split tests generalisation to unseen (position, key) combinations, which a tiny
#   transformer achieves; splitting by key value cannot work, because unseen keys were only noise.
# * Two attention operations solve the identity task: a positional **shift** in layer 1 and a
#   content-based **broadcast** in layer 2 (图12.15) — operations the book also finds in Llama2-7B.
# * The same model reads (reading comprehension) and learns *distributions* when the labels are
#   ambiguous (statistical output): its softmax reproduces the 0.8/0.2 frequencies.
# * Against a fully connected net the transformer's weight sharing over positions is what lets it generalise
#   (图12.6); a small LSTM, translation-invariant by construction, lagged behind after 400 steps but nearly
#   matched the transformer after 800 (seed 0).
# * Data generalisation is easier than task generalisation (图12.9): fresh keys of trained anchor pairs are
#   answered perfectly, an unseen diagonal pair is not; an unseen pair whose mirror was trained is answered
#   by symmetry, at the same time as the data.
# * A tiny transformer mostly holds an intermediate result across irrelevant tokens (working memory, 图12.10,
#   an exploration at this scale) and turns the label statistics of type-2 data into answer frequencies on
#   unseen inputs (图12.13(b)).
