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
# # Chapter 12 — Anchor functions, part two: composition, synonyms and many anchors (锚函数（二）：复合任务、近义词与多锚点)
#
# *深度学习现象导论*, chapter 12 (§12.6.4, §12.6.6, §12.6.9), after Zhang, Zhang, Xu et al., "Anchor function: a
# type of benchmark functions for studying language models" (2024). The first part of the chapter
# (`ch12_anchor_functions`) introduces anchor functions (锚函数), the mod-residue split (模-余数数据划分) and the
# tiny transformer they train; this part takes the tasks in which **two anchors** act on one key, or ten anchors
# act as one operation, and asks what a language model generalises to:
#
# 1. **data generalisation** (数据泛化) versus **task generalisation** (任务泛化) on the composite task (复合任务,
#    图12.9): fresh keys of trained anchor pairs are answered, an unseen anchor pair is not;
# 2. what the model outputs at the positions the loss never reads: a pattern that deeper models show stably and
#    2-layer ones do not (图12.8);
# 3. a **synonym** (近义词) that teaches an anchor pair never trained (图12.11);
# 4. ten anchors that must be learnt as an operation, "add a", rather than as pairs (多锚点任务, 图12.14), and a run
#    with weight decay in which most anchors reach the book's accuracy;
# 5. an explorer over the multi-anchor task's split, its weight decay and the training steps.
#
# The book trains a 4-layer, 4-head post-LN decoder (d_model 400) for 4000 epochs (§12.8). Here every task trains
# as a member of **one batched ensemble** of tiny 2-layer, 1-head post-LN decoders (d_model 32, learned positions,
# causal mask, `companion.core.transformer`; section 3 also trains 4-layer ones), each member on its own task, with
# AdamW and the book's warm-up + cosine learning rate, cross-entropy on the last token (§12.8.2);
# `companion.experiments.ch12b_composite` has the runs and the checks.
#
# Run time: quick profile ≈ 250 CPU-seconds on one thread (2026-12-07, an Intel Xeon beside another run: section 3's
# deep and shallow nets 150 s, the two-anchor tasks of section 1 51 s, the harder split 22 s, many anchors 13 s, the
# explorer 7 s); with the second core lent to the batched runs and an empty cache, 150 s on an idle two-core AMD EPYC
# (the chapter map in the README) — **over the 120 s** this companion allows chapters 12–14 (`docs/architecture.md`
# says why it is not mended yet). Results are cached on disk. Full profile (d_model 64, 3000 steps, three more members, 6-layer nets in section 3) about 11
# minutes per seed on one thread of a 2-core CPU, not yet measured on a GPU.

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

from companion.experiments import ch12b_composite as anchors
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.plots import panels
from companion.kit.seeds import active_seed

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. Three tasks with two anchors or ten, one batched run (§12.6.4, §12.6.6, §12.6.9; 图12.9, 12.11, 12.14)
#
# The **composite task** (复合任务, §12.6.4) has four anchors, each a map g(x; a) = x + shift[a] (the book's
# a, b, c, d: +5, +1, −2, −8), and a sequence (…, x, a1, a2, …) asks for g(g(x; a1); a2). The 16 ordered
# anchor pairs are 16 tasks; some are trained, the others held out. Fresh keys on the trained pairs measure
# **data generalisation** (数据泛化, "ID"), the held-out pairs **task generalisation** (任务泛化, "OOD").
# Two more tasks of §12.6 have the same two kinds of test, so the eight models below train as one batched
# ensemble (sequences of length 6, mod-residue split with m = 4 as in chapter 13; AdamW with lr 1e-2, batch 100,
# 1500 steps):
#
# 1. **composite**, the diagonal pair (d, d) held out (x ↦ x − 16), 20000 training sequences. Which pair is held
#    out matters: the shifts add, so (c, d) and (d, c) have the same answer, and a model can answer an unseen
#    (c, d) from a trained (d, c) by symmetry alone. A diagonal pair has no such twin.
# 2. **synonym task** (近义词任务, §12.6.6): anchors 1, 2, 4, 9 with x + 5, x + 1, x − 8, x − 2 (the shifts of the
#    authors' code). The original data use ten pairs in which 4 and 9 never meet, so (4, 9) and (9, 4) — both
#    x ↦ x − 10 — are never trained ("OOD"). This member also sees the book's augmentation: a **synonym** 3
#    that does what 9 does, in six more pairs, among them (4, 3) and (3, 4). As in the book the four pairs with 9
#    keep 100 sequences each and the twelve others share the rest of the 20000. Three nets from different
#    initialisations (members 2–4; the claim judges the median net, as for the multi-anchor task below).
# 3. the same task on the **original data** only: 20000 sequences spread evenly over its ten pairs (2000 on
#    each pair with 9) — more data, but no synonym.
# 4. **multi-anchor task** (多锚点任务, §12.6.9): (…, a, x, …) ↦ x + a for ten anchors a = 1, …, 10 with the
#    *anchor-based split*: anchor a never meets the keys G_a^c = [12 + 8a, 19 + 8a] in training; those
#    combinations are its "OOD" test. Every number is a key in training, so only a model that has learnt
#    "add a" — not one that has memorised (anchor, key) pairs — answers them. 50000 training sequences, three
#    nets from different initialisations (members 6–8).

# %%
CFG_COMPOSITE = dict(members=pick(quick=anchors.COMPOSITE_MEMBERS,
                                  full=anchors.COMPOSITE_MEMBERS + (("composite", ((3, 4),)), ("synonym", 5000),
                                                                    ("synonym_original", 5000))),
                     n_train=20000, n_test=pick(quick=500, full=500, smoke=100), d_model=pick(quick=32, full=64),
                     steps=pick_steps(quick=1500, full=3000, every=100, smoke=4),
                     lr=pick(quick=1e-2, full=3e-3), weight_decay=0.01, gamma=0.5, batch_size=100, record_every=100)
two = anchors.run_composite(seed=seed, **CFG_COMPOSITE)
print(f"trained in {two.seconds:.0f} CPU-s")
for k, spec in enumerate(two.members):
    print(f"{str(spec):28s} train {two.accuracy['train'][-1, k]:.3f}  ID {two.accuracy['ID'][-1, k]:.3f}  "
          f"OOD {two.accuracy['OOD'][-1, k]:.3f}")

# %%
names = {"composite": "composite, (d, d) held out", "synonym": "synonym task, with the synonym 3",
         "synonym_original": "synonym task, original data", "multi_anchor": "multi-anchor, anchor-based split"}
fig, axes = panels(4, width=3.2)
for ax, kind in zip(axes, names):
    k = two.median_member(kind) if kind in ("synonym", "multi_anchor") else two.member(kind)
    for split, style in (("train", ":"), ("ID", "-"), ("OOD", "--")):
        ax.plot(two.steps, two.accuracy[split][:, k], style, label=split)
    ax.set(title=names[kind], xlabel="step", ylim=(-0.03, 1.03))
    ax.title.set_fontsize(9)
axes[0].set_ylabel("accuracy")
axes[0].legend()
plt.show()

# %% [markdown]
# ## 2. Data generalisation comes easier than task generalisation (图12.9)
#
# The book observes that after training the task test accuracy is usually below the data test accuracy, which
# always reaches 100%, and (图12.9) that task generalisation arrives much later: 100 versus 400 epochs. The
# composite member above is one net; to judge the end state we train a run of its own (so that the draws of the
# eight models above stay as they were): **three nets** with the diagonal pair (d, d) held out, and one with the
# pair (c, d) held out, whose twin (d, c) — the same map x ↦ x − 10 — is trained (same data size, optimiser and
# steps as above). The claim reads the medians of the three nets: fresh keys of the 15 trained pairs are
# answered (median ID accuracy ≥ 0.99) and the held-out diagonal pair is not (median OOD at least 0.1 below the
# median ID). One net alone fell short of 0.99 on 3 of seeds 0–19 (ID 0.948–0.982 after the quick run's 1500
# steps: still converging, not a different regime); judging the median of three was decided after seeing that,
# so the claim was validated on seeds 0–19 (19 of 20; the failure, seed 11: median ID accuracy 0.988) and on
# the fresh seeds 500–519 (20 of 20; smallest margin 0 on seed 517, where the median ID accuracy was exactly
# 0.99; median margin +1, ID error 0).
#
# The (c, d) net is the contrast: a held-out task that *can* be reached from the trained ones. There task
# generalisation is not harder — its OOD accuracy climbs with its ID accuracy and both end at 1 — and the same check
# fails on it (negative control).

# %%
CFG_HARDER = dict(CFG_COMPOSITE, members=anchors.HARDER_MEMBERS)
harder = anchors.run_composite(seed=seed, **CFG_HARDER)
print(f"trained in {harder.seconds:.0f} CPU-s")
fig, axes = panels(2, width=3.4)
for ax, k, title in zip(axes, (harder.median_member("composite", "ID"), harder.member(("composite", ((3, 4),)))),
                        ("(d, d) held out, median net", "(c, d) held out, (d, c) in training")):
    for split, style in (("train", ":"), ("ID", "-"), ("OOD", "--")):
        ax.plot(harder.steps, harder.accuracy[split][:, k], style, label=split)
    ax.set(title=title, xlabel="step", ylim=(-0.03, 1.03))
    ax.title.set_fontsize(9)
axes[0].set_ylabel("accuracy")
axes[0].legend()
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_task_harder(harder))

# %% [markdown]
# The second half — task generalisation does arrive, but later — needs a held-out task that the model *can*
# learn. In our small models there are two such cases, and in both the two arrive together: the synonym member
# (the synonym lets it answer (4, 9) and (9, 4)), where on the tuning seeds 100–109 the accuracy on the
# never-trained pairs reached 0.9 at most 100 steps after the ID accuracy did (once 50 steps before it), and the
# (c, d) net above, whose OOD accuracy reached 0.9 before or with its ID accuracy on the tuning seeds 100–102. On
# the 40 validation seeds of the claim above the (c, d) net's OOD accuracy reached 0.9 100–200 steps after its ID
# accuracy (700–1000 steps) on 22 of them, with it on 15 and 100 steps before it on 3: data first at times, but
# by a quarter of the time at most, not the book's factor of four. The timing of 图12.9 is recorded as
# an exploration that fails here (0 of those 10 seeds, and 0 of seeds 0–19). *At the full profile* (d_model 64,
# seeds 0–4) it fails the same way: the synonym member's ID and OOD accuracy pass 0.9 at the same 100-step record
# (step 500–600), and the (c, d) net's OOD accuracy 0–100 steps after its ID accuracy — at both sizes the two arrive
# together (`docs/full-profile.md`).

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_data_before_task(two))

# %% [markdown]
# ## 3. What the model outputs at the other positions: stable in deeper models (图12.8)
#
# The loss only reads the last position, but the model produces an output at every position. 图12.8 (right)
# shows what a trained 10-layer model says there: at the first anchor a1 it outputs f_{a1}(f_{a1}(x)) — as if
# the pair were (a1, a1) — and from the second anchor on it outputs the correct answer and keeps it. The book adds
# that models with fewer layers do not show this pattern stably (并不会稳定的出现). Ten layers do not fit the
# budget, so we compare **4 layers** with the chapter's **2**: the composite task of section 2 (the diagonal pair
# (d, d) held out) from seven initialisations, trained once at each depth with everything else alike (lr 5·10⁻³,
# 2000 steps: a smaller rate than the chapter's 10⁻², since deeper post-LN nets train less easily — at 6 layers
# even 5·10⁻³ left most nets untrained). We read the argmax at every position of the ID test sequences: the share
# with f_{a1}(f_{a1}(x)) at the first anchor, and the share with the answer at every position from the second
# anchor on (over sequences whose second anchor is not the last token).

# %%
CFG_DEPTH = dict(CFG_COMPOSITE, members=anchors.DEPTH_MEMBERS, lr=pick(quick=5e-3, full=2e-3),
                 steps=pick_steps(quick=2000, full=3000, every=100, smoke=4))
deep = anchors.run_composite(seed=seed, n_layers=pick(quick=anchors.DEEP_LAYERS, full=6), **CFG_DEPTH)
shallow = anchors.run_composite(seed=seed, n_layers=2, **CFG_DEPTH)
print(f"trained in {deep.seconds + shallow.seconds:.0f} CPU-s")
for run in (deep, shallow):
    net, examples = anchors.example_outputs(run)
    print(f"{run.cfg.n_layers} layers, net {net + 1} (its share of f_a1(f_a1(x)) at a1 is the median of the seven):")
    for tokens, outputs, answer in examples:
        print("   input ", " ".join(f"{t:3d}" for t in tokens), "   answer", answer)
        print("   output", " ".join(f"{t:3d}" for t in outputs))

# %%
fig, axes = panels(2, width=4.2)
for ax, run in zip(axes, (shallow, deep)):
    by_net = anchors.per_position_by_net(run)
    nets = range(1, len(by_net["answer from a2 on"]) + 1)
    ax.bar([n - 0.2 for n in nets], by_net["f_a1 f_a1(x) at a1"], width=0.4, label="f_a1(f_a1(x)) at the first anchor")
    ax.bar([n + 0.2 for n in nets], by_net["answer from a2 on"], width=0.4, label="answer from the second anchor on")
    ax.axhline(0.5, color="C0", lw=0.8, ls=":")
    ax.axhline(0.9, color="C1", lw=0.8, ls=":")
    ax.set(title=f"{run.cfg.n_layers} layers, seven nets", xlabel="net", xticks=list(nets), ylim=(0, 1.45),
           yticks=[0, 0.2, 0.4, 0.6, 0.8, 1])
axes[0].set_ylabel("share of ID test sequences")
axes[0].legend(fontsize=8, loc="upper left")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_per_position(deep))

# %%
print("the contrast, 2 layers:", anchors.check_per_position(shallow).measured_line())

# %% [markdown]
# The 4-layer nets show the book's pattern, the 2-layer nets do not — not because they fail the task (both fit it:
# ID accuracy 1), but because they do not carry the answer to the later positions. The setting was chosen on the
# design seeds 100–103, 106, 107, 110, 111 and 114–116 (five to seven nets each): 54 of 65 four-layer nets answered at
# every position from the second anchor on (on ≥ 0.9 of the sequences), and the median of each seed's nets on
# 0.95–1; of 71 two-layer nets 10 did, their median on 0.27–0.56 (seeds 100–105, 114–118). The claim — the medians
# of seven 4-layer nets — held on every validation seed 0–19 (the median net answering from the second anchor on
# 0.97–1 of the sequences) and on every one of seeds 500–519 (0.902–1: seed 504 passed by 0.002, three of its
# seven nets below 0.9). The 2-layer nets of the same runs fail the same check on all 40 seeds (their median net
# 0.07–0.87) while fitting the task (every net's ID accuracy ≥ 0.93).
#
# Two things the figure does not show. At the first anchor the nets do not all agree on what to output: the share
# with f_{a1}(f_{a1}(x)) is about 0.7–0.8 for the median net, and some nets output another guess there (for
# instance g(g(x; a1); c), as if the second anchor were c). And depth is not the only way to the pattern: a
# single 2-layer net shows it at times (10 of 71 on the design seeds), which is what "not stably" means here. An
# earlier attempt with narrower 4-layer nets (d_model 24, lr 5·10⁻³, 1000 steps) was undertrained (median ID
# accuracy 0.93) and held the pattern less often than 2 layers; 6 layers trained at lr 2·10⁻³ (1.6 times the time) but
# not at 5·10⁻³.

# %% [markdown]
# ## 4. Synonyms teach a task that was never trained (图12.11)
#
# Trained on the original pairs only, the model learns them (ID ≈ 1) but cannot answer (4, 9) and (9, 4): the
# answer x − 10 never occurs in its data, and at this scale it does not compose g(·; 4) and g(·; 9). With the
# synonym data it answers them: 3 and 9 occur in the same contexts with the same effect, so the model treats 9
# like 3, and (4, 3), (3, 4) are trained. The book finds the same once the data set is large enough (图12.11(a),
# 3000–20000 sequences in total). So does ours: in a first trial (sequences of length 9, tuning seeds 100–102)
# 10000 sequences sufficed on two seeds of three (accuracy on the unseen pairs 0.93, 0.18, 0.79) and 20000 on all
# three (≥ 0.99), so the quick profile uses 20000 (the full profile adds 5000 for both kinds of data). The claim:
# accuracy on (4, 9), (9, 4) ≥ 0.9 with the synonym data (the median of three nets), ≤ 0.1 with as many
# sequences of the original pairs. With one net the claim held on 20 of seeds 0–19 in a first sweep and on 19 in
# a second (after the ensemble had grown, so that every net started from other draws): on seed 16 that net
# reached only 0.55 on the unseen pairs — a net still on its way, as the multi-anchor net of seed 6 was. So both
# claims judge the median of three nets, a change made after those failures and stated here.

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_synonym(two))

# %% [markdown]
# ## 5. Many anchors: learning the operation, not the pairs (图12.14)
#
# 图12.14 shows the multi-anchor model's accuracy on the held-out keys of each anchor. The book reads two things
# in it: in most cases the model generalises to (anchor, key) combinations it never saw — it has learnt the
# operation "add a", not pairs and not only translation invariance — and it does worst for the anchors at the
# edges, 1, 2 and 10, which the book puts down to the construction of the data (fewer data points there). The
# claim checks both: accuracy ≥ 0.5 on the never-trained combinations (most of them answered), and a lower mean
# accuracy for the anchors 1, 2, 10 than for the seven others. A model that memorised pairs would answer none
# (compare the original-data synonym member on its unseen pairs).
#
# The task is trained from three initialisations in the same batched run, and the claims judge the **median
# net** (by accuracy on the never-trained combinations): one net alone sometimes stays on its loss plateau for
# the whole quick run (on seed 6 it ended at training accuracy 0.25), which says something about the optimiser's
# step budget, not about the generalisation the figure shows. The bars are the median net, the dots the other two.
# How *well* it generalises is weaker in these nets than in the book: ≥ 0.9 on at least 7 of the 10 anchors held
# on 5 of seeds 0–19 and 7 of seeds 500–519 in the robustness sweep of 2026-11-30; the next section finds why and
# trains a run of its own in which it holds. The claim itself held on all 20 seeds with the median net (smallest
# margin 0.17, on the edge-anchor comparison).

# %%
median_net = two.median_member("multi_anchor")
per_anchor = anchors.per_anchor_accuracy(two, median_net)
fig, ax = plt.subplots(figsize=(4.6, 3.0), layout="constrained")
ax.bar(list(per_anchor), list(per_anchor.values()), label="median net")
for k in (k for k, (kind, _) in enumerate(two.members) if kind == "multi_anchor" and k != median_net):
    other = anchors.per_anchor_accuracy(two, k)
    ax.plot(list(other), list(other.values()), "o", color="k", ms=3)
ax.set(xlabel="anchor a", ylabel="accuracy on held-out keys", xticks=list(per_anchor), ylim=(0, 1.03),
       title="multi-anchor task f_a(x) = x + a (Fig. 12.14)")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_multi_anchor(two))

# %% [markdown]
# ## 6. Most anchors at 0.9 or more: a run with weight decay (图12.14)
#
# In the book's figure (a 4-layer, 4-head model, 20000 sequences, 440 epochs in the authors' code) every anchor but
# the edges reaches about 0.9 or more on its never-trained keys (x ∈ G_a^c), and the edge anchors 1, 2, 10 less
# (0.86, 0.88 and 0.97 in the authors' run, 0.99 or more on the others); on the training keys (x ∈ G_a) all are at 1
# (≥ 0.997). Our nets above stop short, and not for lack of steps: their training accuracy is 1 after about 1200 of
# the 1500 steps and their accuracy on the never-trained keys levels off with it (0.72–0.94 on the tuning seed 100),
# with middle anchors such as 3, 6 and 9 left at 0.49–0.89. The nets have fitted their data with a solution that
# memorises part of the (anchor, key) pairs. Smaller initial weights (initialisation rate γ = 0.6 to 1, chapter 13)
# did not leave the loss plateau within 1500 steps (training accuracy ≤ 0.18 on seed 100). What helped is a stronger
# pull towards small weights: AdamW's weight decay λ raised from 0.01 to 0.4, which prefers the simpler rule "add a"
# over a table of pairs. On the tuning seeds 100–102 (λ = 0.2, 0.3, 0.4, 0.5 compared, three nets each; 1000 and 1500
# steps) λ = 0.3–0.5 gave ≥ 0.9 on at least 7 anchors in 15 of 18 nets after 1000 steps, λ = 0.2 in 3 of 6; λ = 1 did
# not fit the training set in 1500 steps. The run below: the same task and data as the multi-anchor nets above, three
# nets, λ = 0.4, 1000 steps (the quick profile's budget; the full profile trains 3000 steps, not validated). The
# claim reads, per anchor, the **median of the three nets** (green bars; the dots are the nets), so that one net late
# off its plateau does not decide it: at least 7 of the 10 anchors ≥ 0.9, and the edge anchors 1, 2, 10 lower on
# average than the seven others.
#
# The contrast (the claim's negative control) is the naive key-range split of 图12.4 for the same task: keys 80–99
# held out for every anchor alike, so the test keys were never keys in training. A net trained so fits its training
# set and answers almost none of them: the model learns to add a to the numbers it has seen as keys, and nothing ties
# the unseen ones to an output.
#
# Validated once on seeds 0–19 and on the fresh seeds 500–519 (the earlier exploration of this statement had been
# seen on both): 20 of 20 on each. The 7th best anchor's median accuracy was 1 on 38 of the 40 seeds (lowest 0.96,
# seed 511), the edge anchors' mean at most 0.79 against at least 0.97 for the others; smallest margin +0.068 (seed
# 511), median +0.111. The edges' deficit is carried by anchors 1 and 10 (median accuracy 0–0.87); anchor 2 is at
# 0.89–1 here, lower than the middle only on some seeds, where the authors' run has 0.88. The edges are where answers
# are rare: x + a for a key held out at the ends of the range is near the ends of the answers, and two of them, 21 =
# 20 + 1 and 109 = 99 + 10, are never a training target at all. Not checked: the book's own model (4 layers, 4 heads)
# and its weight decay; that nets at λ = 0.01 fall short (ours above reach the statement on 5 of seeds 0–19) is a
# finding of this companion, not a statement of the book.

# %%
CFG_MULTI = dict(CFG_COMPOSITE, members=anchors.MULTI_ANCHOR_MEMBERS, weight_decay=anchors.MULTI_ANCHOR_DECAY,
                 steps=pick_steps(quick=1000, full=3000, every=100, smoke=4))
multi = anchors.run_composite(seed=seed, **CFG_MULTI)
print(f"trained in {multi.seconds:.0f} CPU-s")
held = anchors.median_per_anchor(multi)  # x ∈ G_a^c, never trained with its anchor
seen = anchors.median_per_anchor(multi, split="ID")  # x ∈ G_a, fresh sequences
a_s = list(held)
fig, ax = plt.subplots(figsize=(4.8, 3.0), layout="constrained")
ax.bar([a - 0.2 for a in a_s], [seen[a] for a in a_s], width=0.4, color="C0", label="x ∈ G_a (trained keys)")
ax.bar([a + 0.2 for a in a_s], [held[a] for a in a_s], width=0.4, color="C2", label="x ∈ G_a^c (held-out keys)")
for k in multi.same_nets("multi_anchor"):
    net = anchors.per_anchor_accuracy(multi, k)
    ax.plot([a + 0.2 for a in net], list(net.values()), "o", color="k", ms=3)
ax.axhline(0.9, color="grey", lw=0.8, ls=":")
ax.set(xlabel="anchor a", ylabel="accuracy", xticks=a_s, ylim=(0, 1.4), yticks=[0, 0.2, 0.4, 0.6, 0.8, 1],
       title="weight decay 0.4, median of three nets (Fig. 12.14)")
ax.legend(loc="upper center", ncol=2, fontsize=7)
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(anchors.check_multi_anchor_most(multi))

# %% [markdown]
# **At the full profile** (d_model 64, lr 3·10⁻³, 3000 steps; seeds 0–4 on a 2-core CPU, `robustness/report-full.json`)
# both claims of 图12.14 fail: with weight decay 0.01 the median net answers 14–35 % of the never-trained (anchor, key)
# combinations (section 5's claim asks 50 %), and with weight decay 0.4 the 7th best anchor reaches 0.60–0.96 (≥ 0.9 on
# one seed of five). The wider nets memorise more of the pairs — the direction found above at this scale, where weak
# decay leaves part of the pairs memorised — and a λ for the full profile was never chosen on design seeds. The book's
# own model (4 layers, 4 heads, d_model 400) is neither profile's. 图12.9's end state and 图12.11 hold on all five
# (`docs/full-profile.md`). Section 3 at the full profile (6 layers against 2, d_model 64, lr 2·10⁻³, 3000 steps;
# measured on seeds 0–4 after the depth runs were added, about 11 minutes per run on the 2-core CPU): 图12.8's
# claim holds on 5 of 5, the median 6-layer net answering from the second anchor on all (1.00) of the
# sequences and outputting f_{a1}(f_{a1}(x)) at the first anchor on 0.78–0.84.
#
# On the fresh seeds 500–504 (2026-12-06) the same: 图12.9's end state, 图12.11 and 图12.8 hold on all five; with
# weight decay 0.01 the median net answers 13–29 % of the never-trained combinations (0 of 5), and with 0.4 the 7th
# best anchor reaches 0.74–1.00 (≥ 0.9 on 3 of 5). Nothing changed.

# %% [markdown]
# ## 7. Explorer
#
# One multi-anchor net (the data, model and learning rate of sections 1 and 6; 200 test sequences) under the
# anchor-based split or the key-range split of 图12.4, with the weight decay λ and the number of training steps as
# controls: the left panel shows the accuracy on the training set, on fresh sequences of the trained keys (ID) and on
# the held-out keys (OOD), the right one the accuracy on each anchor's held-out keys after training. With the
# anchor-based split, compare λ = 0.01 with 0.4; with the key-range split, see whether any λ helps.

# %%
explorer = anchors.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## Summary
#
# * Data generalisation is easier than task generalisation (图12.9): fresh keys of trained anchor pairs are
#   answered, an unseen diagonal pair is not. A never-trained pair becomes answerable through a **synonym**:
#   when 3 does what 9 does and (4, 3) is trained, the model answers (4, 9) (图12.11); more data on the original
#   pairs does not help.
# * Ten anchors with x ↦ x + a and the anchor-based split: the model answers most never-trained (anchor, key)
#   combinations, least well at the edges (图12.14) — it learns the operation; with weight decay 0.4 at least seven
#   of the ten anchors reach 0.9, as in the book.
# * At the positions the loss never reads, 4-layer models output f_{a1}(f_{a1}(x)) at the first anchor and carry
#   the answer from the second anchor on, as the book's 10-layer model does; 2-layer models do not do so stably
#   (图12.8).
# * Not reproduced at this scale, and said so above: task generalisation arriving four times later than data
#   generalisation (图12.9's timing).
