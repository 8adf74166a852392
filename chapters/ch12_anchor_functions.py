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
# 4. an explorer over task, split, depth, heads and training steps.
#
# The book trains a 4-layer, 4-head post-LN decoder (d_model 400) for 4000 epochs (§12.8). Here all
# four tasks train at once as **one batched ensemble** of tiny 2-layer, 1-head post-LN decoders
# (d_model 32, learned positions, causal mask, `companion.core.transformer`), each member on its own task,
# with AdamW and the book's warm-up + cosine learning rate, cross-entropy on the last token (§12.8.2).
#
# Run time: quick profile ≈ 20 CPU-seconds of training, under a minute in all (results are cached on
# disk); full profile (d_model 64, 4 layers, more steps) a few minutes on a CPU.

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
# The composite task (复合任务, §12.6.4: two anchors, 15 of 16 pairs trained, one held out — data vs task
# generalisation) is the subject of chapter 13's notebook, where it is studied over the initialisation
# rate γ and weight decay λ.

# %% [markdown]
# ## 5. Explorer
#
# Choose a task, its split, the depth, the number of heads and the number of training steps; one small
# model (d_model 32) trains in a few seconds (cached) and the panel shows its accuracy curves and the
# attention maps of its first two layers, averaged over test sequences with the key (or, for reading
# comprehension, the answer) at position 5.

# %%
explorer = anchors.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## 6. Exercises (习题)
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
