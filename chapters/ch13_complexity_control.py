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
# # Chapter 13 — Complexity control and reasoning (复杂度控制对语言模型推理能力的影响)
#
# *深度学习现象导论*, chapter 13, after Zhang, Wang, Yao, Zhang, Xu et al., "Initialization is critical
# to whether transformers fit composite functions by reasoning or memorizing" (NeurIPS 2024).
#
# A transformer that fits its training data can do so by **reasoning** (推理型解: learn the primitive
# operations and compose them) or by **memorising** (记忆型解: learn each input–output map as a whole).
# The chapter's finding: **complexity control** (复杂度控制) decides which. A small initialisation
# (a large **initialisation rate** γ, 初始化率: every weight ~ N(0, (d_in^{−γ})²)) and a large **weight
# decay** λ (权重衰减) favour reasoning; a large initialisation and small λ favour memorising.
#
# The task (§13.2): four anchors a, b, c, d with single-anchor maps g(x; a) = x + 5, g(x; b) = x + 1,
# g(x; c) = x − 2, g(x; d) = x − 8; a sequence (…, x, a1, a2, …) has the composite target
# g(g(x; a1); a2). The pairs (c, d) and (d, c) never appear in training: accuracy on them is
# **out-of-distribution** (OOD, task generalisation); fresh keys on the 14 trained pairs are
# **in-distribution** (ID, data generalisation, mod-residue split).
#
# This notebook reproduces:
#
# 1. the **three phases** over γ (图13.5) and the γ × λ map (图13.6): phase 1 fails even ID; phase 2
#    fits ID but not OOD, yet is **commutative** (交换性: f(x; c, d) = f(x; d, c)); phase 3 is good
#    ID and OOD (at this scale only for some seeds — see section 2);
# 2. mechanisms: masking attention (图13.7) and the PCA of outputs (图13.8); **condensation** of the
#    first-layer query neurons grows with γ (图13.10); token embeddings are ordered only in the
#    reasoning phase (图13.12);
# 3. the authors' own stored results beside ours, and an explorer over γ, λ and depth.
#
# Model: a 2-layer, 1-head post-LN decoder (d_model 32, d_ff 128, learned positions, causal mask,
# `companion.transformer`, eq. (13.3)–(13.6)); AdamW (the book's "Adam with weight decay"), warm-up +
# cosine learning rate, cross-entropy on the last token. Every (γ, λ, seed) is one member of **one
# batched ensemble** (cached on disk).
#
# Run time: quick profile ≈ 60–90 CPU-seconds on an unloaded 2-core machine (most of it the one batched
# training run; a rerun reads the cache); full profile (finer grid, 3 seeds, d_model 64) about an hour
# on a CPU.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from companion import anchors, lm_analysis
from companion.claims import claim
from companion.config import pick, seed_everything, settings
from companion.plots import panels

print(settings().describe())
seed = seed_everything()

# %% [markdown]
# ## 1. The data (§13.2)
#
# Sequence length 6 (the book: 9), vocabulary 0–99 with arithmetic mod 100, anchors are the tokens
# 1–4 (a–d), keys and noise 20–99. The key sits at position p ∈ {0, …, 3}, the anchors right after it.
# Training keys satisfy key mod 4 ≠ p, ID test keys key mod 4 = p; the OOD set uses the pairs (c, d) and
# (d, c) with any key. The book's example (23, a, b, 43, …) ↦ 23 + 5 + 1 = 29.

# %%
example = anchors.composition_data(4, 4, seed)
print("train:", example.train.x.numpy().tolist(), "→", example.train.y.numpy().tolist())
print("OOD:  ", example.tests["OOD"].x.numpy().tolist(), "→", example.tests["OOD"].y.numpy().tolist())

# %% [markdown]
# ## 2. Phases over γ and λ (图13.5, 图13.6)
#
# One batched run: γ ∈ {0.2, 0.5, 0.8, 1.1, 1.4} × λ ∈ {0.01, 0.1} with data seed s, plus a second data
# seed for weak complexity control (γ = 0.8, λ = 0.01) and strong complexity control (γ = 1.4, λ = 0.1).
#
# **What reproduces at CPU scale, and what does not.** The book's phases at λ = 0.01 are: phase 1 near
# γ = 0.2, phase 2 near γ = 0.5, phase 3 from γ ≈ 0.8 (GPT-2-sized models, learning rate ≤ 2.5·10⁻⁴,
# thousands of epochs). With our tiny width, 1000 steps and a 40× larger learning rate:
#
# * phase 1 (γ = 0.2: poor even on ID) reproduces for every seed;
# * the γ axis is shifted: γ = 0.8 usually memorises, and OOD accuracies of 0.6–0.9 appear only at
#   γ ≈ 1.1–1.4 — but **not for every seed**. Over six data seeds we measured OOD accuracy 0.26–0.88 at
#   (γ 1.4, λ 0.1) (some of these runs have not finished fitting ID after 1000 steps) and 0.0–0.33 at
#   (γ 0.8, λ 0.01); γ = 0.5 gave 0.1–0.85. The ordering "strong control → reasoning" is visible in most
#   runs, yet not reliably enough for a claim at this budget, so the phase-2/phase-3 contrast is an
#   exploration here; the full profile (d_model 64, 3000 steps, lr 3·10⁻³, three seeds) is the place to
#   test it;
# * the memorising model's **commutativity**, and the structural signatures of the small-initialisation
#   solutions (condensation, ordered embeddings, section 3), reproduce for every seed and carry the claims.

# %%
GAMMAS = pick(quick=(0.2, 0.5, 0.8, 1.1, 1.4), full=(0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 1.1, 1.25, 1.4, 1.55))
LAMBDAS = pick(quick=(0.01, 0.1), full=(0.01, 0.03, 0.1, 0.3, 1.0))
S0, S1 = 2 * seed, 2 * seed + 1  # two data seeds per COMPANION_SEED
EXTRA_SEEDS = pick(quick=(S1,), full=(S1, S1 + 1000))
grid = [(g, l, S0) for g in GAMMAS for l in LAMBDAS]
WEAK, STRONG = (0.8, 0.01), (1.4, 0.1)  # weak / strong complexity control
grid += [(*setting, s) for s in EXTRA_SEEDS for setting in (WEAK, STRONG)]
if settings().profile == "full":
    grid += [(g, l, s) for s in EXTRA_SEEDS for g in GAMMAS for l in LAMBDAS if (g, l) not in (WEAK, STRONG)]
CFG13 = dict(n_train=20000, n_test=1000, d_model=pick(quick=32, full=64), n_layers=2,
             steps=pick(quick=1000, full=3000), lr=pick(quick=1e-2, full=3e-3), batch_size=128, record_every=100)
run = anchors.run_composition(grid, **CFG13)
print(f"{len(grid)} members trained in {run.seconds:.0f} CPU-s")


def mean_over(split, gamma, lam):
    return run.final(split, gamma, lam)


# %%
fig, axes = panels(3, width=3.6)
for ax, lam in zip(axes, LAMBDAS[:2]):
    ax.plot(GAMMAS, [mean_over("ID", g, lam) for g in GAMMAS], "o-", label="ID")
    ax.plot(GAMMAS, [mean_over("OOD", g, lam) for g in GAMMAS], "s-", color="#d62728", label="OOD")
    ax.plot(GAMMAS, [float(run.commutativity[run.members(g, lam)].mean()) for g in GAMMAS], ":", color="0.4",
            label="commutativity")
    ax.set(xlabel="initialisation rate γ", ylabel="accuracy", title=f"Fig. 13.5 analogue, λ = {lam}",
           ylim=(-0.03, 1.03))
    ax.legend()
ood_map = np.array([[mean_over("OOD", g, l) for g in GAMMAS] for l in LAMBDAS])
id_map = np.array([[mean_over("ID", g, l) for g in GAMMAS] for l in LAMBDAS])
image = axes[2].imshow(ood_map, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=1)
for i in range(len(LAMBDAS)):
    for j in range(len(GAMMAS)):
        if id_map[i, j] < 0.9:  # hatched in the book: poor ID
            axes[2].text(j, i, "x", ha="center", va="center", color="w")
axes[2].set(xticks=range(len(GAMMAS)), xticklabels=GAMMAS, yticks=range(len(LAMBDAS)), yticklabels=LAMBDAS,
            xlabel="γ", ylabel="λ", title="Fig. 13.6 analogue: OOD accuracy (x = ID < 0.9)")
axes[2].grid(False)
plt.colorbar(image, ax=axes[2], fraction=0.05)
plt.show()

for k, (g, l, s) in enumerate(run.settings):
    print(f"γ={g:<4} λ={l:<5} data seed {s}:  ID {run.accuracy['ID'][-1, k]:.2f}  OOD {run.accuracy['OOD'][-1, k]:.2f}"
          f"  commutativity {run.commutativity[k]:.2f}")
phase = {"ID_0.2": mean_over("ID", 0.2, 0.01), "ID_weak": mean_over("ID", *WEAK), "OOD_weak": mean_over("OOD", *WEAK),
         "comm_weak": float(run.commutativity[run.members(*WEAK)].mean())}

# %%
# NBVAL_CHECK_OUTPUT
claim("图13.5", "phase 1: with a large initialisation (γ = 0.2, λ = 0.01) the model fails even the ID test (< 0.7)",
      passed=bool(phase["ID_0.2"] < 0.7), id_accuracy=phase["ID_0.2"])

# %% [markdown]
# ### Commutativity of the memorising solution (§13.3)
#
# With weak complexity control the model fits ID perfectly, and on the unseen pairs it mostly answers
# wrongly — yet it gives the **same** answer for (c, d) and (d, c): it treats the symmetric pair as one
# unit, the "symmetric maps" level of the book's solution hierarchy.

# %%
# NBVAL_CHECK_OUTPUT
claim("§13.3", "with weak control (γ = 0.8, λ = 0.01) the model fits ID (≥ 0.95) and answers (c, d) and (d, c) "
      "alike on ≥ 80% of the unseen sequences, far more often (by ≥ 0.5) than it answers them correctly "
      "(mean of 2 seeds)",
      passed=bool(phase["ID_weak"] >= 0.95 and phase["comm_weak"] >= 0.8
                  and phase["comm_weak"] - phase["OOD_weak"] >= 0.5),
      id_accuracy=phase["ID_weak"], commutativity=phase["comm_weak"], ood_accuracy=phase["OOD_weak"])

# %% [markdown]
# ## 3. Mechanisms (图13.7, 图13.8, 图13.10, 图13.12)
#
# ### Masking after the softmax and the PCA of outputs (图13.7, 图13.8)
#
# Remove, in every layer, all attention paid to the **key** (multiply its column of the attention matrix
# by 0 after the softmax). What the last position then outputs is what the network computed from the
# anchors alone. 图13.8 projects these outputs on two principal components, 50 sequences per anchor
# pair: the reasoning model arranges the pairs by their composite shift, with (c, d) and (d, c) together.

# %%
data = run.data(S0)
model = run.model()
pairs = [(a, b) for a in range(1, 5) for b in range(1, 5)]
picked = []
for a, b in pairs:  # 50 sequences per pair from the ID and OOD test sets
    src = data.tests["OOD"] if (a, b) in ((3, 4), (4, 3)) else data.tests["ID"]
    rows = torch.nonzero((src.anchors[:, 0] == a) & (src.anchors[:, 1] == b)).ravel()[:50]
    picked.append(src.subset(torch.isin(torch.arange(len(src)), rows)))
probe = anchors.AnchorData(*(torch.cat([getattr(p, f) for p in picked]) for f in ("x", "y", "key_pos", "anchors")))
masked = lm_analysis.masked_last_outputs(model, probe, offsets=(0,))  # (K, N, V)
shift = np.array([anchors.BOOK_SHIFTS[a] + anchors.BOOK_SHIFTS[b] for a, b in probe.anchors.tolist()])
fig, axes = panels(2, width=4.2, height=3.4)
for ax, (g, lam) in zip(axes, (WEAK, STRONG)):
    k = run.members(g, lam)[0]
    xy, ratio = lm_analysis.pca(masked[k], 2)
    points = ax.scatter(xy[:, 0], xy[:, 1], c=shift, cmap="coolwarm", s=6)
    for a, b in ((3, 4), (4, 3)):
        sel = (probe.anchors[:, 0] == a) & (probe.anchors[:, 1] == b)
        ax.scatter(xy[sel.numpy(), 0], xy[sel.numpy(), 1], marker="x", color="k", s=14,
                   label="(c,d), (d,c)" if a == 3 else None)
    ax.set(title=f"γ = {g}, λ = {lam}: key masked", xlabel=f"PC1 ({ratio[0]:.0%})", ylabel=f"PC2 ({ratio[1]:.0%})")
    ax.legend()
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="total shift of the pair")
plt.show()

# %% [markdown]
# Exploration (no claim): with only the anchors visible, the outputs form clusters per anchor pair, and
# the unseen pairs (black crosses) land next to each other — the two orders act as one unit; how cleanly
# the clusters line up by total shift (colour) varies between seeds at this scale.
# The cosine-similarity analysis of 图13.9 (second anchor masked) is left to the exercises.
#
# ### Condensation of W^{Q(1)} (图13.10)
#
# The cosine similarity between the input-weight vectors of the 32 query neurons of layer 1. Small
# initialisation (large γ) drives neurons to a few shared directions — **condensation** (凝聚, chapter 8) —
# a low-complexity solution. Neurons are ordered by the leading eigenvector so that aligned groups appear
# as blocks. The book shows γ = 0.2, 0.5, 0.8 at λ = 0.01; we add γ = 1.4. The claim uses the whole grid:
# the rank correlation (Spearman) between γ and the mean |cos| over all 10 (γ, λ) settings.

# %%
def mean_member(fn, gamma, lam):
    return float(np.mean([fn(k) for k in run.members(gamma, lam)]))


def wq_condensation(k):
    return lm_analysis.condensation(model.member_weight("w_q", k, layer=0).numpy())


def embedding_variance(k):
    return lm_analysis.explained_variance(model.member_weight("w_em", k)[20:100].numpy())


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


cells = [(g, l) for g in GAMMAS for l in LAMBDAS]
cond = {c: mean_member(wq_condensation, *c) for c in cells}
rho_cond = spearman([g for g, _ in cells], [cond[c] for c in cells])
fig, axes = panels(4, width=3.0, height=2.9)
for ax, g in zip(axes, (0.2, 0.5, 0.8, 1.4)):
    w = model.member_weight("w_q", run.members(g, 0.01)[0], layer=0).numpy()
    order = lm_analysis.cosine_order(w)
    ax.imshow(lm_analysis.neuron_cosine(w)[np.ix_(order, order)], cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set(title=f"γ = {g}, λ = 0.01: |cos| {cond[(g, 0.01)]:.2f}", xlabel="neuron", ylabel="neuron")
    ax.grid(False)
plt.show()
print("mean |cos| of W_Q(1) neurons:", {f"γ={g},λ={l}": round(v, 2) for (g, l), v in cond.items()},
      f"Spearman ρ(γ, |cos|) = {rho_cond:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
claim("图13.10", "condensation of the first-layer query neurons grows with γ: rank correlation ≥ 0.7 over the "
      "γ × λ grid, and γ = 1.4 at least twice as condensed as γ = 0.2 (both λ)",
      passed=bool(rho_cond >= 0.7 and cond[(1.4, 0.01)] + cond[(1.4, 0.1)] >= 2 * (cond[(0.2, 0.01)] + cond[(0.2, 0.1)])),
      spearman=rho_cond, cos_02=(cond[(0.2, 0.01)] + cond[(0.2, 0.1)]) / 2,
      cos_14=(cond[(1.4, 0.01)] + cond[(1.4, 0.1)]) / 2)

# %% [markdown]
# ### Token embeddings (图13.12)
#
# PCA of the embedding vectors of the number tokens 20–99. A reasoning model must represent "x + 5" for
# every x, so the numbers need an ordered, low-dimensional layout; a memorising model does not. The
# measure is the share of variance in the top two principal components (random vectors in 32 dimensions
# give ≈ 0.15), over the whole γ × λ grid; the scatter plots show weak vs strong control.

# %%
emb_var = {c: mean_member(embedding_variance, *c) for c in cells}
rho_emb = spearman([g for g, _ in cells], [emb_var[c] for c in cells])
emb_by_gamma = {g: (emb_var[(g, LAMBDAS[0])] + emb_var[(g, LAMBDAS[1])]) / 2 for g in GAMMAS}
fig, axes = panels(2, width=4.0, height=3.3)
for ax, c in zip(axes, (WEAK, STRONG)):
    xy, ratio = lm_analysis.pca(model.member_weight("w_em", run.members(*c)[0])[20:100].numpy(), 2)
    points = ax.scatter(xy[:, 0], xy[:, 1], c=np.arange(20, 100), cmap="viridis", s=12)
    ax.set(title=f"γ = {c[0]}, λ = {c[1]}: top-2 variance {ratio.sum():.2f}", xlabel="PC1", ylabel="PC2")
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="token value")
plt.show()
print("top-2 PCA variance of the number embeddings by γ (mean over λ):",
      {g: round(v, 2) for g, v in emb_by_gamma.items()}, f"Spearman ρ(γ, variance) = {rho_emb:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
claim("图13.12", "the number embeddings become ordered and low-dimensional as γ grows: rank correlation ≥ 0.7 "
      "over the γ × λ grid, and the top-2 PCA variance at γ = 1.4 at least twice that at γ = 0.5 (both λ)",
      passed=bool(rho_emb >= 0.7 and emb_by_gamma[1.4] >= 2 * emb_by_gamma[0.5]), spearman=rho_emb,
      variance_05=emb_by_gamma[0.5], variance_14=emb_by_gamma[1.4])

# %% [markdown]
# ## 4. The authors' stored results (their composition task)
#
# The authors' repository (understanding_dl, `code/book_jupyter_composition_task/result_*`) stores one
# run per init rate of their GPT-2-style model; each took about 75 GPU-minutes.
#
# | init rate γ | authors: test accuracy | this notebook |
# |---|---|---|
# | 0.1 | 0.015 | γ = 0.2 fails even ID (phase 1) |
# | 0.5 | 0.60 (run stopped early) | γ = 0.5: seed-dependent, OOD 0.1–0.85 |
# | 0.8 | 0.987 | γ = 0.8, λ = 0.01 memorises (OOD 0.0–0.33); OOD up to 0.6–0.9 only at γ ≈ 1.1–1.4, seed-dependent |
#
# The printed line below gives this run's OOD accuracy at each γ. Their γ = 0.5 run was stopped before
# convergence, which may explain its intermediate value; our γ axis is shifted (section 2).

# %%
ood_ours = {g: round(mean_over("OOD", g, 0.1), 3) for g in GAMMAS}
print("this run, OOD accuracy at λ = 0.1:", ood_ours)
print("this run, OOD accuracy at λ = 0.01:", {g: round(mean_over("OOD", g, 0.01), 3) for g in GAMMAS})

# %% [markdown]
# ## 5. Explorer
#
# Choose γ, λ and the depth; a single model trains in a few seconds (cached) and the panel shows its ID and
# OOD accuracy, its commutativity on the unseen pairs, and the cosine matrix of its W^{Q(1)} neurons.

# %%
explorer = anchors.make_composition_explorer(seed=seed)
explorer

# %% [markdown]
# ## 6. Exercises (习题)
#
# 1. With the explorer, fix γ = 1.4 and lower λ from 0.1 to 0.001: does the OOD accuracy survive? Then fix
#    λ = 0.1 and lower γ. Which knob matters more at this scale?
# 2. (图13.9) Mask the **second anchor** instead of the key (`lm_analysis.masked_last_outputs(model, probe,
#    offsets=(2,))`) and compute the cosine similarity of the outputs. Sort the sequences by g(x; a1):
#    a step-by-step (reasoning) model should give blocks of high similarity for equal g(x; a1).
# 3. Why does a small initialisation favour the reasoning solution? Relate it to condensation (chapter 8):
#    how many distinct "directions" does a solution that composes four single-anchor maps need, compared
#    with one that memorises 14 pair maps?
#
# ## Summary
#
# * The book: the same transformer fits the same data by memorising pair maps (large initialisation,
#   small λ) or by composing the four single-anchor maps (small initialisation, larger λ) — only the latter
#   solves the unseen pairs. At CPU scale we see phase 1 reliably, and the reasoning phase only at larger γ
#   than the book (≈ 1.1–1.4 instead of ≈ 0.8) and only for some seeds within 1000 steps.
# * The memorising model already treats (c, d) and (d, c) as one unit (commutativity), for every seed.
# * Small initialisation condenses the query neurons and orders the number embeddings — the low-complexity
#   signatures the chapter ties to reasoning, as the condensation chapters predict — for every seed.
