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
# 3. three more language-like tasks of §12.6: **reading comprehension** (阅读理解), **classification**
#    (分类任务), whose number embeddings learn the order of the numbers (图12.7), and **statistical output**
#    (统计输出, 图12.13), whose softmax learns the 0.8/0.2 split of its labels;
# 4. why a transformer: a transformer, an LSTM and a fully connected net against the training-set size (图12.6);
# 5. working memory (图12.10), statistical output with type-2 data (图12.13(b)) and forward/backward
#    recitation (图12.12, with an erratum on its naming);
# 6. an explorer over task, split, depth, heads and training steps.
#
# The tasks with two anchors — data versus task generalisation on the composite task (图12.9), the outputs at the
# positions the loss never reads (图12.8), synonyms (图12.11) and the multi-anchor task (图12.14) — are the second
# part of the chapter, the notebook `ch12b_composite_tasks`.
#
# The book trains a 4-layer, 4-head post-LN decoder (d_model 400) for 4000 epochs (§12.8). Here the tasks
# train in several runs, each **one batched ensemble** of tiny 2-layer, 1-head post-LN decoders
# (d_model 32, learned positions, causal mask, `companion.core.transformer`), each member on its own task,
# with AdamW and the book's warm-up + cosine learning rate, cross-entropy on the last token (§12.8.2).
#
# Run time: quick profile ≈ 190 CPU-seconds on one thread (2026-12-07, an Intel Xeon beside another run: the
# working-memory and type-2 nets of section 6 74 s, 图12.12's recitation nets 46 s, the tasks of section 2 24 s,
# 图12.6's sample sizes 24 s, 图12.7's classification 16 s); with the second core lent to the batched runs and an
# empty cache, 129 s on an idle two-core Intel Xeon and 144 s on an AMD EPYC (the chapter map in the README) —
# **over the 120 s** this companion allows chapters 12–14 (`docs/architecture.md` says why it is not mended yet).
# Results are cached on disk. Full profile (d_model 64, 4 layers, more steps): 34–39 minutes a seed on one thread
# of the two-core CPU, beside another run (seeds 0–4 on an AMD EPYC; 36–38 minutes on an Intel Xeon for the fresh
# seeds 500–504). On an NVIDIA H200 GPU shared with the other eleven
# chapters (one CPU thread each) the chapter, then one notebook with both parts, had not finished after 460 s. At the
# full profile (seeds 0–4 and 500–504; `robustness/report-full.json`, `docs/full-profile.md`) 9 of the 12 claims hold
# on all ten; 图12.15's shift fails on all ten (section 3), 图12.7's classification on seed 3 and 图12.12's recitation
# on seed 4 (sections 4 and 6, where each is checked, say why); the recitation claim, judged on the fresh seeds,
# holds on all five of them. 图12.10's working memory failed with the learning rate the full profile used before and
# holds with the task's own (section 6).

# %% tags=["launch-install"]
# Opened without the companion (Colab, a JupyterHub): install it.  Where it is installed (locally, CI, Binder): nothing.
import importlib, importlib.util, pathlib, subprocess, sys
REPOSITORY = ""  # written by `python -m companion launch --repository URL`
if importlib.util.find_spec("companion") is None:
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    if importlib.util.find_spec("torch") is None:  # the CPU build: PyPI's Linux torch is the CUDA one (~2.7 GB)
        subprocess.run([*pip, "--extra-index-url", "https://download.pytorch.org/whl/cpu", "torch"], check=True)
    here = pathlib.Path.cwd().resolve()
    clone = next((p for p in (here, *here.parents) if (p / "companion" / "__init__.py").is_file()), None)
    if clone is None and not REPOSITORY:
        raise SystemExit("The companion is not installed and this notebook names no repository to install it from: "
                         "run `pip install -e .` in a clone of the repository.")
    subprocess.run([*pip, "-e", str(clone)] if clone else [*pip, f"git+{REPOSITORY}"], check=True)
    importlib.invalidate_caches()

# %%
import matplotlib.pyplot as plt
import numpy as np

from companion.core import anchor_tasks, attention
from companion.experiments import ch12_anchors as anchors
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
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
# Two more identity nets are trained on member 1's data from other initial weights and mini-batches
# (`IDENTITY_TWINS`, an independent stream of the seed): the claims on the identity task and its mechanism
# (§12.5.1, 图12.15) judge the median of the three nets, as the book's curves are means over seeds. One
# net alone fell short now and then (test accuracy 0.988 at seed 13; a layer-1 shift contrast below 2 at
# seeds 8 and 510), while the other claims held on those seeds.

# %%
CFG12 = dict(n_train=pick(quick=4000, full=4000, smoke=500), n_test=pick(quick=500, full=500, smoke=100),
             d_model=pick(quick=32, full=64), n_layers=pick(quick=2, full=4), n_heads=pick(quick=1, full=4),
             steps=pick_steps(quick=1000, full=3000, every=100, smoke=4),  # a smoke run: its first and last record
             lr=2e-3, weight_decay=0.01, batch_size=100, gamma=0.5, record_every=100)
run = anchors.run_anchor_tasks(anchors.TASKS, seed=seed, **CFG12)
twins = anchors.run_anchor_tasks(anchors.IDENTITY_TWINS, seed=seed, stream=1, **CFG12)  # two more identity nets
model = run.model()
k_of = {t: k for k, t in enumerate(run.tasks)}
final = {t: {s: float(run.accuracy[s][-1, k]) for s in ("train", "test")} for t, k in k_of.items()}
print(f"trained in {run.seconds + twins.seconds:.0f} CPU-s")
for t, acc in final.items():
    print(f"{t:20s} train {acc['train']:.3f}  test {acc['test']:.3f}")
print("two more identity nets: test " + ", ".join(f"{a:.3f}" for a in twins.accuracy["test"][-1]))

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
# The first claim: the median test accuracy of the three identity nets is ≥ 0.99, stated as its test
# error ≤ 0.01 (the same condition; the error shows how far it is from the line). With 2000 training sequences it fell
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
show(anchors.check_mod_residue(run, more=twins))

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
# The maps above are member 1's; each claim takes the median of every measure over the three identity nets.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_shift(run, more=twins))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_broadcast(run, more=twins))

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
# **At the full profile** (d_model 64, four layers of four heads, 3000 steps; seeds 0–4)
# the broadcast holds (seed 0: last position → key 0.97 in the last layer, 0.11 in layer 1) and in layer 1 the anchor
# is still the most attended earlier token (1.16 and 1.18 times the next one at the worst key position), but the
# shift contrast is 1.47 and 1.50 (seeds 0 and 1) where `ch12.shift` asks for 2: the claim fails on all five seeds
# (margins −0.15 to −0.26). **A setting that departs from the figure's:** 图12.15 shows
# "the attention maps of a two-layer model" (两层模型的注意力图), the model of this section's quick profile; the full
# profile trains the book's §12.8 decoder, four layers of four heads, whose first layer need not do the whole shift by
# itself. The setting was not changed after seeing this. The claim is judged on the fresh seeds 500–504: it fails
# there too, on all five (shift contrast 1.37, 1.64, 1.65, 1.92, 1.78), while the broadcast holds on all five.

# %% [markdown]
# ## 4. Reading comprehension, classification and statistical output (§12.6.2, §12.6.3, §12.6.8, 图12.7, 图12.13)
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
# ### Classification: the embeddings learn the order of the numbers (§12.6.3, 图12.7)
#
# The **classification task** (分类任务) turns reading comprehension around: (x1, a1, x2, a2, x3, a3, x4, a4, x)
# ↦ a_k with k = argmin_i |x_i − x| — the answer is the anchor beside the number *nearest* to the query x, not
# beside an equal one (anchors 1–8 distinct within a sequence, numbers 20–99; rows with a tie are drawn again).
# Mod-residue split on the nearest number and its position. The book (§12.6.3) trains on 30000 sequences and
# reaches 100% test accuracy; to answer, the model must know how far apart two numbers are, so the embeddings
# must encode their order, and 图12.7 shows it: a t-SNE map of the token embeddings of 20–99 after training,
# the numbers lying in order.
#
# Here one model of the chapter's tiny kind (2 decoder layers of 1 head, d_model 32) learns the book's 30000
# training sequences in 2000 AdamW steps of 200 sequences at lr 3·10⁻³, about 13 passes over the data (the book:
# 4 layers of 4 heads, 4000 epochs in batches of 50). The setting matters: with lr 10⁻², or up to 1500 steps, or
# fewer than 4000 sequences, the test accuracy stayed at chance (0.18–0.26; design seed 100); this setting reached
# 0.95–0.98 on design seeds 119–124.
#
# The claim checks the order *in the embedding space itself* (t-SNE distorts distances): for every number, the
# mean |value difference| to its 5 nearest neighbours in embedding space, against that to a random other number
# (`anchor_tasks.embedding_order`: ≈ 1 for embeddings blind to order). It holds when the model has learned the
# task (test accuracy ≥ 0.6, chance 0.25) and its nearest neighbours are ≥ 3 times closer in value than random
# numbers. The book's contrast is reading comprehension, which fetches a number and never compares two: the
# right-hand map is the reading-comprehension model of section 2, and the negative control in `tests/` trains
# reading comprehension in exactly this setting — the same check fails there (ratio ≈ 1).
#
# Validated on seeds 0–19 (the setting was chosen on seeds 100–130): 20 of 20, test accuracy 0.93–0.99 and order
# ratio 6.4–7.4; on seeds 500–519, run in the same sweep, 20 of 20 too (0.93–0.99 and 5.5–7.6). Smallest margin
# +0.55 (seed 17, test accuracy 0.932 against 0.6). The book's 100 % test accuracy is not reached in 2000 steps; the
# order of the embeddings, which the figure shows, is there on every seed.
#
# **At the full profile** (seeds 0–4) the claim holds on four seeds and fails on seed 3 — **a setting not designed for
# this task at that size.** The full profile trains the classification model as the §12.8 decoder (4 layers of 4
# heads, d_model 64) for 8000 steps at the quick model's rate 3·10⁻³. It fits its training set (0.95 by step 1600,
# 1.0 at the end on every seed) and answers 0.88, 0.74, 0.65, 0.59 and 0.79 of the held-out sequences (seeds 0–4):
# the larger model learns part of its data by heart. The order of the embeddings, what 图12.7 draws, is there on
# all five (5 nearest neighbours 11.9–13.1 times closer in value than random numbers, against ≥ 3); the condition
# that fails on seed 3 is the first, the task learnt (0.592 against 0.6). A full-profile rate would have to be
# designed on seeds ≥ 100 and validated; the setting was not changed after seeing this. On the fresh seeds 500–504
# (not the claim's judged seeds, 0–19) it holds on all five, with test accuracies 0.90, 0.63, 0.79, 0.82 and 0.86.

# %%
CFG_CLASSIFICATION = dict(n_train=anchors.CLASSIFICATION_TRAIN, n_test=pick(quick=500, full=500, smoke=100),
                          d_model=pick(quick=32, full=64), n_layers=pick(quick=2, full=4), n_heads=pick(quick=1, full=4),
                          steps=pick_steps(quick=anchors.CLASSIFICATION_STEPS, full=8000, every=400, smoke=4),
                          lr=anchors.CLASSIFICATION_LR, weight_decay=0.01, batch_size=anchors.CLASSIFICATION_BATCH,
                          record_every=pick(quick=100, full=400))
classification = anchors.run_replicas("classification", 1, seed=seed, **CFG_CLASSIFICATION)
reading_k = run.tasks.index("reading")
order = {"classification": anchor_tasks.embedding_order(anchors.number_embeddings(classification, 0)),
         "reading": anchor_tasks.embedding_order(anchors.number_embeddings(run, reading_k))}
print(f"classification: train accuracy {classification.final_k('train', 0):.3f}, test accuracy "
      f"{classification.final_k('test', 0):.3f}, order ratio {order['classification']:.1f} "
      f"(trained in {classification.seconds:.0f} CPU-s)")
print(f"reading comprehension (section 2's model): test accuracy {final['reading']['test']:.3f}, "
      f"order ratio {order['reading']:.1f}")

# %%
fig, axes = panels(3, width=3.0, height=3.0)
axes[0].plot(classification.steps, classification.accuracy["train"][:, 0], ":", label="train")
axes[0].plot(classification.steps, classification.accuracy["test"][:, 0], "-", label="test")
axes[0].axhline(0.25, color="grey", lw=0.8, ls="--", label="chance")
axes[0].set(title="classification task", xlabel="step", ylabel="accuracy", ylim=(-0.03, 1.03))
axes[0].legend(fontsize=7)
for ax, (src, k, task) in zip(axes[1:], ((classification, 0, "classification"), (run, reading_k, "reading"))):
    xy = anchors.embedding_tsne(src, k, seed=seed)
    points = ax.scatter(xy[:, 0], xy[:, 1], c=range(20, 100), cmap="viridis", s=12)
    ax.set(title=f"{task}, ratio {order[task]:.1f}", xticks=[], yticks=[])
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="number")
fig.suptitle("t-SNE of the embeddings of 20-99 after training", fontsize=9)
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_classification_order(classification))

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
#
# **Trained to convergence.** A comparison of how many sequences each architecture needs means something only
# when every model has finished learning from the sequences it got: an LSTM that is still fitting its training
# set looks as if it needed more data. Every member therefore trains until it has **converged**, by a stated
# criterion: its training accuracy is ≥ 0.99 at every record from half-way through the run on (it fitted its
# training set while the learning rate was still at least half its peak, and kept it) and its test accuracy moves
# by at most 0.02 over the last quarter of the run. The claims below judge converged members only; a member that
# did not converge is a "never", not a pass. The setting, 500 steps at peak learning rate 3·10⁻³ (warm-up +
# cosine), was chosen on design seeds 100–109: there every member of all three architectures converged, while
# with the 400 steps at 2·10⁻³ used before, the LSTM (training accuracy 0.93 at 1000 and 2000 sequences, seed 100)
# and even the transformer (0.89 at 1000) were still learning. The book trains 4000 epochs at a peak of 2·10⁻⁴.

# %%
CFG_SIZES = dict(sizes=pick(quick=(500, 700, 1000, 1400), full=(250, 500, 700, 1000, 1400, 2000, 4000, 8000),
                            smoke=(250, 500)),  # a smoke run: two small sizes (each record evaluates max(sizes) sequences)
                 n_test=pick(quick=500, full=500, smoke=100), d_model=pick(quick=32, full=64),
                 steps=pick_steps(quick=500, full=3000, every=750, smoke=4), lr=3e-3, weight_decay=0.01, batch_size=100)
sizes_run = anchors.run_sample_efficiency(seed=seed, **CFG_SIZES)
for arch in sizes_run.test:
    print(f"{arch:12s} {sizes_run.params[arch]:7d} parameters, test accuracy "
          f"{[round(float(a), 2) for a in sizes_run.test[arch]]}, converged "
          f"{sizes_run.converged[arch].astype(int).tolist()}  ({sizes_run.seconds[arch]:.0f} CPU-s)")

# %%
fig, ax = plt.subplots(figsize=(4.6, 3.2), layout="constrained")
for arch, marker in zip(sizes_run.test, "os^"):
    line, = ax.plot(sizes_run.sizes, sizes_run.test[arch], marker + "-", label=arch)
    late = ~sizes_run.converged[arch]  # hollow: a member that did not converge (not judged)
    ax.plot([n for n, bad in zip(sizes_run.sizes, late) if bad], sizes_run.test[arch][late], marker, ms=9,
            mfc="white", mec=line.get_color(), label="not converged" if late.any() else None)
ax.axhline(0.9, color="0.6", ls=":", lw=1)
ax.set(xscale="log", xlabel="training sequences", ylabel="test accuracy", ylim=(-0.03, 1.03),
       title="identity task (Fig. 12.6 analogue)")
ax.legend()
plt.show()

# %% [markdown]
# The claim keeps what reproduces at this scale: the transformer generalises (test accuracy ≥ 0.9 at some
# size) while the FNN stays below 0.5 at every size. The FNN shares no weight across positions: its first
# layer reads position i through weights of its own, and under the mod-residue split a test key at position i
# is a value those weights never had to send to the output, so the FNN stays at chance — 图12.6's "the FNN
# hardly generalises", here sharpened to none at all. With every member trained to convergence this held on 20 of
# 20 seeds 0–19 and, since the run changed after those seeds had been seen, on 20 of 20 seeds 500–519 (the
# transformer's best test accuracy ≥ 0.97, the FNN's ≤ 0.016).
#
# The book's second statement, that the LSTM needs about four times more data than the transformer (about 2200
# sequences against 600), does not hold here once both are trained to convergence. On the validation seeds 0–19
# (239 of the 240 members converged; the one that did not is the transformer at 1000 sequences of seed 0, drawn
# hollow above: its training accuracy was 0.986 at half-way, so its 0.92 is not judged and its n* is 1400) the
# transformer first reached test accuracy 0.9 at n* = 1000 sequences on 14 seeds, at 700 on 5 and at 1400 on 1;
# the converged LSTM reached it at 1000 on 19 seeds and at 1400 on 1. The LSTM was still below 0.9 at the
# transformer's n* on 6 of 20 seeds (0–19) and on 8 of 20 (500–519), with a median margin of −0.02: five of the
# six are seeds where the transformer already reached 0.9 at 700 sequences (the LSTM 0.68–0.79 there), the sixth
# an LSTM at 0.898; where the transformer's n* is 1000 the LSTM sits at 0.90–0.96 there. With the 400 steps at
# learning rate 2·10⁻³ used before, the same check held on 20 of 20 seeds 0–19, because the LSTM had not finished
# fitting its training set: that measured the LSTM's slower optimisation, not its sample efficiency. At the
# smallest size the order is even reversed: from 500 sequences the LSTM answers 0.22–0.49 of the test sequences
# and the transformer 0.02–0.18 (seeds 0–19); the transformer's curve is steeper, from near chance to ≈ 1 between
# 700 and 1000 sequences. One reason to expect little difference is the split itself: the mod-residue split tests
# generalisation to unseen (position, key) pairs, and a recurrent net applies the same weights at every position,
# so it is translation-invariant by construction, while the transformer, with learned position embeddings, must
# learn that invariance from data. The statement therefore stays an exploration. Unchecked: the book's own sizes
# and gap (600 vs 2200), which may need its larger models (5.6M and 5.3M parameters, a 4-layer LSTM), its 4000
# epochs and its learning rate (peak 2·10⁻⁴); and the full profile, whose verdicts are not measured.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_sample_efficiency(sizes_run))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_lstm_gap(sizes_run))

# %% [markdown]
# ## 6. Working memory, statistical output of type 2, recitation (图12.10, 图12.13, 图12.12)
#
# Three more tasks of §12.6 train the same tiny transformer (sequences of 9 tokens, numbers 20–99; AdamW with
# lr 1e-2, 800 steps), each in a run of its own, and each as several independent models — each with its own
# initialisation *and its own draw of the data* — so that a claim is judged on their median rather than on the luck
# of one training run. Statistical output trains three models (initialisation rate γ = 1.0, mini-batches of 100),
# working memory three of the book's own size — 4 decoder layers of 4 heads (§12.6), lr 5e-3, γ = 0.4, mini-batches
# of 200; see below why. Recitation follows at the end of the section, with three models per training-set size of the
# book:
#
# * **Working memory** (工作记忆, §12.6.5, 图12.10): (…, x, a1, *, …, a2, …) ↦ f_{a2}(f_{a1}(x)) with
#   a1 ∈ {1, 2} right after the key, a2 ∈ {3, 4} later, at least one irrelevant token between, and the
#   shifts of 图12.10 (f_1(x) = x, f_2(x) = x + 1, f_3(x) = x, f_4(x) = x − 2). The model must hold the
#   intermediate result until it sees the second anchor. Mod-residue split on the key and its position.
# * **Statistical output, type 2** (统计输出, 图12.13(b)): the identity data with a random fifth of the
#   *distinct* sequences relabelled x + 1. Every input now has one label, so the model can fit the training
#   set completely; on unseen test sequences the book finds it answers x about 80% and x + 1 about 20% of
#   the time — the label statistics reappear as answer frequencies.

# %%
CFG_GRID = dict(n_test=pick(quick=500, full=500, smoke=100), d_model=32, n_layers=2,
                steps=pick_steps(quick=800, full=3000, every=100, smoke=4),
                lr=pick(quick=1e-2, full=3e-3), weight_decay=0.01, batch_size=100, record_every=100)
stat2 = anchors.run_replicas("statistical_2", anchors.STAT2_NETS, n_train=anchors.STAT2_TRAIN, seed=seed,
                             gamma=anchors.STAT2_GAMMA, **CFG_GRID)  # γ = 1.0, each model its own data draw
CFG_WM = dict(CFG_GRID, n_layers=anchors.WM_LAYERS, n_heads=anchors.WM_HEADS, lr=anchors.WM_LR,
              batch_size=anchors.WM_BATCH)  # the book's 4 layers of 4 heads, batches of 200, lr 5e-3 (see below why)
wm = anchors.run_working_memory(anchors.WM_NETS, seed=seed, **CFG_WM)  # γ = 0.4, each model its own data draw
print(f"working memory  ({wm.members[0][1]:4d} sequences, {wm.n_members} models): test accuracy "
      f"{', '.join(f'{a:.2f}' for a in wm.finals('test', 'working_memory'))}")
for k, (share_x, share_x1) in zip(stat2.indices("statistical_2"), anchors.test_prediction_shares(stat2)):
    print(f"statistical output, type 2, model {k} ({stat2.members[k][1]} sequences): train "
          f"{stat2.final_k('train', k):.3f}; on unseen sequences it answers x in {share_x:.0%}, x + 1 in "
          f"{share_x1:.0%} of the cases")

# %%
fig, axes = panels(2, width=3.2)
for ax, task, title in zip(axes, ("statistical_2", "working_memory"),
                           ("statistical output, type 2", "working memory (Fig. 12.10)")):
    src = wm if task == "working_memory" else stat2
    ks = src.indices(task)  # the replicas' mean
    ax.plot(src.steps, src.accuracy["train"][:, ks].mean(1), ":", label="train")
    ax.plot(src.steps, src.accuracy["test"][:, ks].mean(1), "-", label="test")
    ax.set(title=title, xlabel="step", ylim=(-0.03, 1.03))
    ax.legend(fontsize=7)
axes[0].set_ylabel("accuracy")
plt.show()

# %%
# 图12.10: what the working-memory models output at the first anchor and between the anchors (trained on the last
# token only), and every position of the median model's first test sequences
k_wm = anchors.working_memory_member(wm)
fig, axes = panels(2, width=4.2)
readouts = anchors.working_memory_readouts(wm)
for j, shares in enumerate(readouts):
    for i, where in enumerate(("at a1: ", "")):
        exact, held = shares[f"{where}f_a1(x)"], shares[f"{where}f_a1(x) or f_4(f_a1(x))"]
        x = i + 0.27 * (j - (len(readouts) - 1) / 2)
        axes[0].bar(x, exact, width=0.25, color="C0", label="f_a1(x)" if i + j == 0 else None)
        axes[0].bar(x, held - exact, bottom=exact, width=0.25, color="C1", label="f_a1(x) − 2" if i + j == 0 else None)
axes[0].axhline(0.7, xmin=0.02, xmax=0.48, color="k", ls=":", lw=1)
axes[0].axhline(0.8, xmin=0.52, xmax=0.98, color="k", ls=":", lw=1)
axes[0].set_xticks([0, 1], ["at the first anchor", "between the anchors"])
axes[0].set(title=f"output holding the intermediate ({len(readouts)} models)", ylabel="share", ylim=(0, 1.25))
axes[0].legend(fontsize=7, loc="upper center", ncol=2)
axes[1].axis("off")
for i, (tokens, outputs) in enumerate(anchors.working_memory_outputs(wm, k_wm)):
    axes[1].text(0, 0.9 - 0.3 * i, " ".join(f"{t:2d}" for t in tokens), family="monospace", fontsize=9)
    axes[1].text(0, 0.8 - 0.3 * i, " ".join(f"{t:2d}" for t in outputs), family="monospace", fontsize=9,
                 color="tab:orange")
axes[1].set_title("input (black), output (orange) per position")
plt.show()

# %% [markdown]
# **Working memory.** 图12.10 shows two things: the model answers f_{a2}(f_{a1}(x)), and from the first anchor on it
# *holds the intermediate result*: its output at the first anchor is f_{a1}(x) ("第一个锚点的输出是通过第一个锚点对
# 关键项运算得到的中间结果"), and its outputs at the irrelevant tokens repeat it until the second anchor arrives
# ("模型通过在无关 token 的输出中保留这个值来记忆这个中间结果"). Our models are trained on the last token only, like the book's,
# so their outputs at the earlier positions are untrained read-outs of what they hold there. The book adds that the
# held value may differ from f_{a1}(x) by a constant, since only f_{a2} ∘ f_{a1} is fixed by the data. We find exactly
# this: the models output f_{a1}(x) or f_{a1}(x) − 2 = f_4(f_{a1}(x)) — one of the two answers still possible before
# the second anchor (f_3 keeps the value, f_4 subtracts 2) — and rarely anything else; which of the two varies from
# model to model. The statement checked, each quantity the median of three models: (i) unseen (position, key) pairs
# answered (test accuracy ≥ 0.9), (ii) the intermediate, up to that shift, output already at the first anchor on
# ≥ 0.7 of the test sequences, and (iii) held at ≥ 0.8 of the irrelevant positions between the anchors. It is a
# reproduced **phenomenon**, validated on seeds 0–19 and on 500–519 (both seen for the earlier version, so it is
# judged on 500–519): 20 of 20 and 19 of 20. On seed 512 the median test accuracy was 0.89 (two of the three models
# at 0.89 and 0.74), and seed 506 held at 0.918 — the tightest condition is (i), as before. The new condition (ii)
# held on all 40 seeds: the median share at the first anchor was 0.78–0.98 (median 0.89 on 0–19, 0.92 on 500–519;
# one single model of 120 below 0.7, at 0.698), and (iii) 0.90–1.00.
#
# *Why the book's 4-layer, 4-head model.* With the 2-layer, 1-head model of the rest of this notebook (our earlier
# version, five models) (i) and (iii) held on all of seeds 0–19 and 500–519, but the output at the first anchor
# itself was scattered: f_{a1}(x) or f_{a1}(x) − 2 on only 28–76% of the test sequences at seed 0, the rest mostly
# one or three off. The book trains a 4-layer decoder with 4 heads per layer (§12.6) and remarks (§12.6.4) that
# shallower models do not show the per-position outputs stably. On the design seeds 100–118 (three models each, lr
# 5e-3; at lr 1e-2 two of six 4-layer models stalled) the median share at the first anchor was 0.84–0.98 on 17 seeds
# and 0.72 on one (seed 114, where two of the three models were weaker; median over the 18 seeds 0.91); three 2-layer,
# 1-head models in the same setting reached medians of 0.53–0.73 (seeds 100–105 and 0; median 0.59), five at lr 1e-2
# 0.35–0.68 (seeds 100, 101, 105, 106). We fixed 0.7 as the threshold for (ii); 0.9 and 0.8 are the earlier
# version's. The 2-layer, 1-head models are the control of (ii): they fail it at seed 0 (0.59), but they reach 0.7 on
# 2 of those 7 seeds — depth makes the first-anchor output reliable, it does not switch it on. The naive key-range
# split of 图12.4 (test keys never seen in training) is the control of (i) (tests/test_controls_ch12.py).
#
# *Why batches of 200.* A single model sometimes ends on a plateau: its test accuracy climbs to 0.1–0.87 and stays
# there while the learning rate decays. With batches of 100 this happened to about one 2-layer model in five (12 of
# 60 on seeds 100–109, each its own data draw); Adam's β2 = 0.98 (12 of 60), a learning-rate floor of 0.1 (9 of 60)
# or a warm-up over 30 % of the steps (6 of 60) did not remove it, batches of 50 made it the rule (12 of 18), and
# **batches of 200 left 4 of 60, none below 0.83**: in 800 steps a model sees 80 000 sequences with batches of 100 and
# 160 000 with 200 — the plateaus come from too few examples seen, not too few steps. (γ = 0.3 stalled 40 of 48
# models, γ = 0.5 12 of 27: γ = 0.4 stays.)
#
# Our sequences are 9 tokens long (the book's example 20) and our batches 200 sequences. Whether the held value is
# f_{a1}(x) rather than f_{a1}(x) − 2 the book leaves open, and we do not judge it.
#
# **Statistical output of type 2.** The training set is fitted completely, and on unseen sequences each model answers
# x + 1 in about one case in seven: it turns the 20% of relabelled training sequences into a frequency of its
# answers, somewhat below the book's 20%. The statement checked, on the model of median x + 1 share among three
# (each its own initialisation and data): training error ≤ 0.05, x + 1 answered on 10–30% of the unseen sequences,
# x or x + 1 on ≥ 90%. It is a reproduced **phenomenon**, validated once on seeds 0–19 and on 500–519 (both seen for
# the earlier version): 20 of 20 on each (margin min +0.071, median +0.089 on 0–19; +0.067 and +0.084 on 500–519;
# the median model's share of x + 1 answers 0.12–0.20, single models 0.106–0.21, none of 120 below 0.1).
#
# *Why three models at γ = 1.0.* One model at γ = 0.5 answered x + 1 on 8–19% of the unseen sequences, and the
# lower bound failed on 2 to 3 of seeds 0–19 in earlier sweeps (18 of 20 in the last, 20 of 500–519): an
# exploration. On the design seeds 100–103 (five models each, own data) the share rose with the initialisation rate:
# γ = 0.3 → 0.09 (some models did not fit: training accuracy down to 0.54), 0.5 → 0.12, 0.8 → 0.14, 1.0 → 0.15,
# while more data lowered it (4000 sequences → 0.08) and more steps or no weight decay left it at 0.13. At γ = 1.0 (a
# smaller initialisation; the book's model is a 4-layer, 4-head decoder whose initialisation it does not state)
# single models stayed within 0.09–0.21 on seeds 100–119 and the median of three within 0.11–0.18. The contrast of 图12.13(a), type-1 data
# (each sequence five times, one copy labelled x + 1), fits only up to 0.8 and fails the check, as do the trained
# identity task (unambiguous labels: x + 1 almost never) and an untrained model (tests/test_controls_ch12.py).

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_working_memory(wm))

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_statistical_2(stat2))

# %% [markdown]
# **At the full profile** `ch12.working-memory` failed on seeds 0 and 1 with the learning rate the full profile then
# used for it, 3·10⁻³ (the anchor grid's, 3000 steps): the three models fit their training sets (accuracy 1.0) and
# answered 0.01, 0.05 and 0.13 (seed 0) and 0.03, 0.63 and 0.06 (seed 1) of the unseen test sequences — they
# memorised. They did not generalise first and forget later: on seed 0 their test accuracy stayed at or below 0.13 at
# every record from step 0 to 3000, while the training accuracy rose to 1.0 by step 2000. At this budget the learning
# rate decides it, not the number of passes: on design seeds 100 and 101, 3000 steps at 3·10⁻³ ended at test
# accuracies 0.49, 0.17, 0.94 and 0.93, 0.04, 0.88; 800 steps at 3·10⁻³ at 0.21, 0.23, 0.77; 3000 steps at
# 5·10⁻³, the rate this task was designed with (see the models' settings above), at 1.0 for all six models. The full
# profile now trains these models at 5·10⁻³: at that setting the claim holds on 20 of the 20 fresh seeds 500–519,
# measured on the models alone (smallest medians: test accuracy 0.998, $f_{a_1}(x)$ at the first anchor 0.87, held
# between the anchors 0.98), and in the chapter's full profile, run again with it on seeds 0 and 1, it holds on both
# (all six models at test accuracy 1.0; $f_{a_1}(x)$ at the first anchor on 0.93 of the test sequences, median). The book's own
# setting is longer still (§12.8.3): batches of 100, a peak learning rate of 2·10⁻⁴ reached after 400 warm-up epochs,
# 4000 epochs in all — about 160 000 steps on 4000 sequences.

# %% [markdown]
# ### Forward and backward recitation (前向-后向背诵, §12.6.7, 图12.12)
#
# The pair (m, 3, n) sits anywhere in the sequence, and the last token asks for one member of it by the other:
# (…, m, 3, n, …, m) ↦ n recalls the token after the anchor from the one before it, (…, m, 3, n, …, n) ↦ m the
# reverse. As in the book, one data set holds sequences of both patterns ("(*,*,m,3,n,*,*,*,n) 或
# (*,*,m,3,n,*,*,*,m)"), half and half, and one model learns both; its test accuracy is measured on unseen
# sequences of each pattern (mod-residue split on the answer). 图12.12 plots it against the training-set size
# (the authors' sizes: 500, 1000, 2000, 4000 and 7000 sequences) early (epoch 400) and late (epoch 4000) in
# training. We train three models per size, each with its own initialisation and its own draw of the data, the
# training sets of a draw nested, all as one batched ensemble (800 steps); the bars are the three models' mean, the
# whiskers their lowest and highest (the book's 图12.6 averages 10 seeds per setting).
#
# **An erratum on the names.** §12.6.7 motivates the task by poems: reciting the *next* line is the forward
# task ("背诵一句诗句的下一句诗句（前向任务）"), the previous line the backward one. It then defines the tasks the
# other way round: "“(*,*,m,3,n,*,*,m)”的输出为“n”（后向任务）", and (…, n) ↦ m is called forward — yet
# recalling the next token n from m is exactly what the motivation calls forward. The text contradicts itself,
# and the authors' code (repository `anchor_function_pub`, the run behind 图12.12) names the tasks as the
# motivation does: its "forward" data put m as the query and n as the answer. So we read 图12.12's statement
# "forward always generalises better" ("在前向任务中的泛化能力始终优于后向任务") with the motivation's and the
# code's naming: recalling n from m, (…, m, 3, n, …, m) ↦ n, generalises better than recalling m from n. (The
# package keeps the names of the book's definition: `"backward"` is m ↦ n.)

# %%
CFG_RECITATION = dict(n_test=pick(quick=500, full=500, smoke=100),
                      steps=pick_steps(quick=800, full=3000, every=100, smoke=4),
                      lr=pick(quick=1e-2, full=3e-3), record_every=100)
recitation = anchors.run_recitation(anchors.RECITATION_SIZES, seed=seed, **CFG_RECITATION)  # three models per size
early = len(recitation.steps) // 2  # the middle of training, and its end (the book: epochs 400 and 4000)
m_to_n, n_to_m = recitation.by_size("backward"), recitation.by_size("forward")  # (T, models, sizes)
bars = {f"m->n, step {recitation.steps[early]}": m_to_n[early], f"n->m, step {recitation.steps[early]}": n_to_m[early],
        f"m->n, step {recitation.steps[-1]}": m_to_n[-1], f"n->m, step {recitation.steps[-1]}": n_to_m[-1]}
fig, ax = plt.subplots(figsize=(7, 3.4))
positions = np.arange(len(recitation.sizes))
for i, (label, values) in enumerate(bars.items()):  # bar: the models' mean; whisker: their lowest and highest
    mean = values.mean(0)
    ax.bar(positions + (i - 1.5) * 0.2, mean, width=0.2, label=label,
           yerr=np.clip((mean - values.min(0), values.max(0) - mean), 0, None),  # ≥ 0 despite rounding
           error_kw=dict(lw=0.8, capsize=1.5),
           color=("#f4a582", "#92c5de", "#d6604d", "#4393c3")[i], edgecolor="black", linewidth=0.5)
ax.set(xticks=positions, xticklabels=recitation.sizes, xlabel="training sequences (both patterns)",
       ylabel="test accuracy", ylim=(0, 1.05), title="Recitation (Fig. 12.12): three models per training-set size")
ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
plt.show()
print("gap m->n minus n->m per size, mean over training and the models:",
      np.round(anchors.recitation_gap(recitation), 3))

# %% [markdown]
# The statement checked: over the sweep of training-set sizes, recalling n from m generalises better than the
# reverse — the gap in test accuracy, averaged over the recorded steps (100–800, early and late in training), the
# three models and the five sizes, is ≥ 0.01, and the reverse leads at fewer than half of the sizes. The gap lives
# where a size is just enough to generalise: at 500 sequences neither pattern is learnt (test accuracy about 0.05);
# at 1000 the m ↦ n pattern is ahead; from 2000 on both usually reach 0.9–1.0, the m ↦ n pattern sooner. The
# control is the other reading of the names: the same check asked for n ↦ m fails on the same run
# (tests/test_controls_ch12.py).
#
# It is a reproduced **phenomenon**, validated once on seeds 0–19 and on 500–519 (both seen for the one-model
# version): 20 of 20 on each (mean gap 0.024–0.090, median 0.035 on 0–19; 0.018–0.066, median 0.041 on 500–519;
# the reverse led at one size of five on 6 and 8 of those seeds, at 1000 sequences on none).
#
# *Why three models per size.* With one model per size (thresholds from the design seeds 100–119: mean gaps
# 0.015–0.10, the reverse ahead at no more than two sizes in six) the claim held on 16 of seeds 0–19 and 19 of
# 500–519: on seeds 7 and 9 the n ↦ m model led at 1000 sequences (gaps −0.116 and −0.056), on seeds 14 and 17 it
# was ahead at three sizes of five by less than 0.07 each, where both patterns are learnt or neither. The gap of one
# model at one size is the luck of one draw and one initialisation; the book too averages over seeds. With three
# models per size, on the same design seeds, every one of the 20 passed (mean gaps 0.014–0.068). An earlier
# version, one model per direction at 500 sequences of its own pattern, held on 18 of seeds 0–19 and 18 of 500–519.
#
# The book's 4000 epochs are beyond the quick profile (our 800 steps are 11–160 epochs, depending on the size).
#
# **At the full profile** (3000 steps at 3·10⁻³, seeds 0–4) the claim holds on four seeds and fails on seed 4 (mean
# gap 0.0095 against 0.01; the others 0.015–0.025) — **the asymmetry is thinner at this scale than the book states.**
# At 1000 sequences the m ↦ n pattern leads on every seed (0.032–0.064, averaged over training), but from 2000 on
# both patterns end within 0.02 of each other, and most of the 30 records come after both are learnt, which dilutes
# the average. The book's figure shows the forward task ahead at every size, early and late; here that holds near
# 1000 sequences only. Not a bug; the threshold was not changed after seeing this. The claim is judged on the
# fresh seeds 500–504, and there it holds on all five: mean gaps 0.020, 0.011, 0.019, 0.015 and 0.037, the reverse
# ahead at no size but one (seed 502, 2000 sequences, by 0.001); at 1000 sequences m ↦ n again leads most
# (0.027–0.111).

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_recitation(recitation))

# %% [markdown]
# ## 7. Explorer
#
# Choose a task, its split, the depth, the number of heads and the number of training steps; one small
# model (d_model 32) trains in a few seconds (cached) and the panel shows its accuracy curves and the
# attention maps of its first two layers, averaged over test sequences with the key (or, for reading
# comprehension, the answer) at position 5.

# %%
explorer = anchors.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## 8. Exercises (习题)
#
# **Exercise 4 (§12.9).** Why the mod-residue split? Build the *random* split yourself: draw 2000
# training and 500 test sequences of the identity task with the key anywhere in 20–99, and count how many
# test (position, key) pairs also occur in training. `anchors.check_overlap` prints a verdict.
#
# Worked solution: run `from companion.solutions.ch12 import solution; solution(4)` (on the site: the "Solution" toggle below).

# %%
train_pairs = set()  # fill with (key position, key) pairs of a random training set …
test_pairs = set()  # … and of a random test set (see anchor_tasks.identity_task for the data layout)
anchors.check_overlap(train_pairs, test_pairs)

# %% [markdown]
# **Exercise 11.** How would you set the position embeddings and W^Q, W^K so that every position
# attends to the one before it? Inspect `model.member_weight("x_pos", k_id)` and the layer-1 map above:
# which structure of X^pos W^Q W^Kᵀ X^posᵀ produces the shift?
#
# Worked solution: run `from companion.solutions.ch12 import solution; solution(11)` (on the site: the "Solution" toggle below).
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
#   (图12.6); a small LSTM, translation-invariant by construction and trained to convergence, reached test
#   accuracy 0.9 from about as few sequences as the transformer (1000 on most seeds), not the book's four times more.
# * A task that compares numbers (classification) makes the number embeddings learn the order of the numbers
#   (图12.7); a task that only fetches one (reading comprehension) leaves them unordered.
# * A tiny transformer holds an intermediate result across irrelevant tokens (working memory, 图12.10): its
#   untrained outputs between the anchors repeat f_{a1}(x), up to the shift the second anchor may still add, and
#   it turns the label statistics of type-2 data into answer frequencies on unseen inputs (图12.13(b)).
# * Recitation: recalling the token after the anchor from the one before it is the easier direction — the
#   "forward" of the book's motivation and of the authors' code; the book's definition swaps the names (图12.12).
