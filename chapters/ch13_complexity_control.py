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
# 1. the **three phases** over γ (图13.5) and the γ × λ map (图13.6): phase 1 memorises (记忆) — it answers its
#    training sequences far more often than new ones and generalises neither ID nor OOD — on a run with fewer
#    training sequences (section 2); phase 2 fits ID but not OOD, yet is **commutative** (交换性: f(x; c, d) = f(x; d, c)); phase 3 is good
#    OOD — at this scale at a larger γ than the book's, on the mean of three seeds, and as a gain over
#    weak control rather than a guaranteed level (section 2);
# 2. mechanisms: masking attention (图13.7): with the key masked, the unseen pairs (c, d) and (d, c) share
#    one cluster of outputs (图13.8); the cosine similarity of the outputs with the second anchor masked
#    (图13.9); **condensation** of the first-layer query neurons grows with γ (图13.10), at every depth
#    (图13.11); token embeddings are ordered in the reasoning phase and not in phase 1 (图13.12);
# 3. the authors' own stored results beside ours, and an explorer over γ, λ and depth.
#
# The chapter's last two steps — addition learned from scratch (§13.6, 图13.14(C)) and the chapter's prediction on
# fitting speed (§13.7, 图13.17, 图13.19) — are the second part, `ch13b_real_tasks_and_prediction`.
#
# Model: a 2-layer, 1-head post-LN decoder (d_model 32, d_ff 128, learned positions, causal mask,
# `companion.core.transformer`, eq. (13.3)–(13.6)); AdamW (the book's "Adam with weight decay"), warm-up +
# cosine learning rate, cross-entropy on the last token. Every (γ, λ, seed) of a run is one member of
# **one batched ensemble** (cached on disk).
#
# Run time: the chapter map (README) gives the quick profile's measured time; the three runs of section 2 are most
# of it (the batched runs borrow the second core), and a rerun reads the cache. Full profile (finer grid, 5 seeds,
# d_model 64, 80 000 training sequences, 3000 steps): 62–70 minutes a seed on one CPU thread (two seeds at once on a
# 2-core machine; the second part's fit-speed models take about 2¼ hours more), and about 15 more for 图13.5's sweep
# trained for 105 epochs (section 2, measured before that sweep was added). Its verdicts on the seeds measured so
# far are in `robustness/report-full.json` and `docs/full-profile.md`, and under the claims below ("At the full
# profile"). On an NVIDIA H200 GPU shared with the other eleven chapters (one CPU thread each) it had not finished
# after 460 s; in a second window (2026-12-04), seeds 0–4 side by side with ten other full-profile runs on the one
# GPU, none had finished after 507 s. Its time alone on a GPU is still to be measured.

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

from companion.core import attention
from companion.experiments import ch13_complexity as complexity
from companion.experiments import ch13_scale as complexity_scale
from companion.experiments import ch13_scale_figures as figures
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.plots import panels
from companion.kit.seeds import active_seed

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. The data (§13.2)
#
# Sequence length 6 (the book: 9), vocabulary 0–99 with arithmetic mod 100, anchors are the tokens
# 1–4 (a–d), keys and noise 20–99. The key sits at position p ∈ {0, …, 3}, the anchors right after it.
# Training keys satisfy key mod 4 ≠ p, ID test keys key mod 4 = p; the OOD set uses the pairs (c, d) and
# (d, c) with any key. The book's example (23, a, b, 43, …) ↦ 23 + 5 + 1 = 29.

# %%
example = complexity.composition_data(4, 4, seed)
print("train:", example.train.x.numpy().tolist(), "→", example.train.y.numpy().tolist())
print("OOD:  ", example.tests["OOD"].x.numpy().tolist(), "→", example.tests["OOD"].y.numpy().tolist())

# %% [markdown]
# ## 2. Phases over γ and λ (图13.5, 图13.6)
#
# Three batched runs (each cached on disk):
#
# * **the grid** — γ ∈ {0.2, 0.5, 0.8, 1.1, 1.4} × λ ∈ {0.01, 0.1} on data seed s₀, 1000 steps: the
#   analogues of 图13.5 and 图13.6, and the material of the condensation and embedding analyses of section 3;
# * **the contrast** — weak complexity control (γ = 0.8, λ = 0.01) against strong complexity control
#   (γ = 1.4, λ = 0.1), each on three data seeds (three initialisations too), 1500 steps, because the
#   small-initialisation models learn slowly and single runs vary: the central claims are on its means, and
#   the masking analyses of section 3 read its models.
# * **the memorisation run** — 3000 training sequences instead of 20000, 2000 steps, γ ∈ {0.1, 0.2, 0.3, 0.5} at
#   λ = 0.01: phase 1, which needs data that the model can go over many times (below).
#
# **What reproduces at CPU scale, and what does not.** The book's phases at λ = 0.01 are: phase 1 near
# γ = 0.2, phase 2 near γ = 0.5, phase 3 from γ ≈ 0.8 (GPT-2-sized models, learning rate ≤ 2.5·10⁻⁴,
# thousands of epochs). With our tiny width, 1000–1500 steps and a 40× larger learning rate:
#
# * the γ axis is **shifted**: γ = 0.8 with λ = 0.01 memorises, and the reasoning phase appears at
#   γ ≈ 1.1–1.4 with λ = 0.1. Over 21 data seeds × 1500 steps we measured OOD accuracy 0.00–0.17 for
#   weak control (ID 0.88–1.00) and 0.23–0.93 for strong control (ID 0.59–1.00);
# * strong control learns **slowly**: at 1000 steps its ID accuracy is 0.51–0.79 and one run in six had
#   not left the small-initialisation plateau at all (ID 0.01); at 2·10⁻² the learning rate is too large
#   for either setting. Its OOD accuracy follows its ID accuracy closely: what it learns carries over to
#   the unseen pairs, the reasoning signature;
# * in the grid, phase 1 (γ = 0.2) is poor on ID at 1000 steps, but it is **slow fitting**, not the book's
#   memorisation: the training accuracy is as low as the ID accuracy, and with 1500 steps γ = 0.2 reached
#   ID 0.74–0.91 in our runs. With fewer training sequences gone over many times it memorises: a third run
#   (3000 sequences, 2000 steps) shows phase 1 and claims it (below);
# * at γ = 0.5 the outcome depends on the seed (OOD 0.0–0.88 at λ = 0.1 over ten seeds): the boundary
#   between the phases runs through this region at our scale;
# * the reasoning phase firms up with **data** more than with width (the scale curve at the end of this section):
#   with 20 000 training sequences, d_model 64 and 3000 steps (learning rate 3·10⁻³) gave strong control OOD
#   0.63–0.95 in single runs (mean 0.80) on design seeds 300–305 but 0.47–0.83 on 330–332, and d_model 128 only
#   0.10–0.35; with 80 000 sequences d_model 64 gave 0.67–0.92, the curve's clearest phase 3, and the full profile
#   now trains on 80 000. At the quick size single runs end anywhere in 0.23–0.93. The full profile's report is
#   not measured yet (about 3½ hours per seed on one CPU thread);
# * the memorising model's **commutativity**, and the structural signatures of the small-initialisation
#   solutions (condensation, ordered embeddings, section 3), reproduce on every design seed (the robustness report
#   gives the counts over the validation seeds); the embeddings' factor-2 contrast of variance does not (15 of 20),
#   and neither does the book's contrast inside phase 2 — a larger initialisation with *poor* commutativity (an
#   exploration, section 2).
#
# **Why these two runs are this size.** They are two thirds of the notebook's run time, and we tried to
# shrink them (on tuning seeds 100–104, see the chapter's report): a batch of 64 instead of 128 leaves most
# models unfit after 1000 steps; a grid of width 16 or 24 weakens the γ-trend of condensation (the former trend
# claim of 图13.10 failed on one tuning seed in five at either width); a width of 16 or 24 for the contrast lets weak
# control leak to the unseen pairs (OOD up to 0.3–0.5), and 1000 steps instead of 1500 leave strong control on
# its plateau for some seeds. So both stay as they are.

# %%
GAMMAS = pick(quick=(0.2, 0.5, 0.8, 1.1, 1.4), full=(0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 1.1, 1.25, 1.4, 1.55),
              smoke=(0.2, 0.5, 0.8, 1.4))  # a smoke run: the γ the chapter reads (0.5, weak 0.8, strong 1.4), full sizes
LAMBDAS = pick(quick=(0.01, 0.1), full=(0.01, 0.03, 0.1, 0.3, 1.0), smoke=(0.01, 0.1))
WEAK, STRONG = complexity.WEAK_CONTROL, complexity.STRONG_CONTROL  # (0.8, 0.01) / (1.4, 0.1): weak / strong control
DATA_SEEDS = pick(quick=(3 * seed, 3 * seed + 1, 3 * seed + 2), full=tuple(range(5 * seed, 5 * seed + 5)),
                  smoke=(5 * seed, 5 * seed + 1))
S0 = DATA_SEEDS[0]
MODEL = dict(n_train=pick(quick=20000, full=80000),  # the full profile: the scale curve's clearest phase 3 (below)
             n_test=pick(quick=1000, full=1000, smoke=300),  # a smoke run: smaller test sets
             d_model=pick(quick=32, full=64), n_layers=2, batch_size=128)
run = complexity.run_composition([(g, l, S0) for g in GAMMAS for l in LAMBDAS], **MODEL,
                              steps=pick_steps(quick=1000, full=3000, every=250, smoke=5),
                              lr=pick(quick=1e-2, full=3e-3), record_every=250)
contrast = complexity.run_composition([(*setting, s) for s in DATA_SEEDS for setting in (WEAK, STRONG)], **MODEL,
                                   steps=pick_steps(quick=1500, full=3000, every=300, smoke=5),
                                   lr=pick(quick=1e-2, full=3e-3), record_every=300)
print(f"grid: {len(run.settings)} members in {run.seconds:.0f} CPU-s; "
      f"contrast: {len(contrast.settings)} members in {contrast.seconds:.0f} CPU-s")


# %%
fig, axes = panels(3, width=3.6)
for ax, lam in zip(axes, LAMBDAS[:2]):
    ax.plot(GAMMAS, [run.final("ID", g, lam) for g in GAMMAS], "o-", label="ID")
    ax.plot(GAMMAS, [run.final("OOD", g, lam) for g in GAMMAS], "s-", color="#d62728", label="OOD")
    ax.plot(GAMMAS, [float(run.commutativity[run.members(g, lam)].mean()) for g in GAMMAS], ":", color="0.4",
            label="commutativity")
    ax.set(xlabel="initialisation rate γ", ylabel="accuracy", title=f"Fig. 13.5 analogue, λ = {lam}",
           ylim=(-0.03, 1.03))
    ax.legend()
ood_map = np.array([[run.final("OOD", g, l) for g in GAMMAS] for l in LAMBDAS])
id_map = np.array([[run.final("ID", g, l) for g in GAMMAS] for l in LAMBDAS])
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
for k, (g, l, s) in enumerate(contrast.settings):
    print(f"contrast: γ={g:<4} λ={l:<5} data seed {s}:  ID {contrast.accuracy['ID'][-1, k]:.2f}  "
          f"OOD {contrast.accuracy['OOD'][-1, k]:.2f}  commutativity {contrast.commutativity[k]:.2f}")

# %% [markdown]
# ### Phase 1: a large initialisation relies on memory (图13.5)
#
# The book's phase 1 (差 ID 和差 OOD 泛化) generalises poorly even in distribution because the model relies on
# memorisation (模型主要依赖记忆): it learns the answers of the sequences it was trained on, not the arithmetic of
# the anchors. The grid above cannot show this: with 20000 training sequences and 1000 steps (six passes over
# the data) the γ = 0.2 model is still **fitting slowly** — its training accuracy is as low as its ID accuracy —
# and when trained longer it generalises ID too. Memorising needs data the model can go over many times. The
# authors' own γ = 0.1 run (their published log, d_model 400, 810 000 training sequences, 210 epochs) shows the
# signature without fitting everything either: training accuracy 0.30, ID 0.02, OOD 0.01.
#
# So phase 1 gets its own run (the **memorisation run**): the same model and task, 3000 training sequences and
# 2000 steps (85 passes), γ ∈ {0.1, 0.2, 0.3, 0.5} at the book's λ = 0.01; γ = 0.2 and γ = 0.5 on the three data
# seeds of the contrast run, the others on s₀. The claim reads γ = 0.2, the book's own phase-1 value in 图13.10
# (means over the three seeds): its training accuracy exceeds its ID accuracy by at least 0.2, its ID accuracy is
# below 0.9 (the book's line for poor ID, hatched in 图13.6) and its OOD accuracy below 0.2. Its negative control
# is the same check on the run's γ = 0.5 models, phase 2, which generalise ID. Designed on single models of data
# seeds 100–111 (γ = 0.2: training − ID 0.26–0.49, ID 0.03–0.51, OOD ≤ 0.02; γ = 0.5: ID 0.95–0.99, training − ID
# ≤ 0.05; γ = 0.1: training 0.20–0.37 against ID 0.02–0.14); the mean of three makes the slowest single model
# (training 0.29, ID 0.03 on seed 108) harmless. This claim replaces an exploration that asked a training accuracy
# ≥ 0.9 of the grid's γ = 0.2 model (0 of 20 seeds); because its id was seen on seeds 0–19, it is validated on
# `COMPANION_SEED` 500–519, where it held on **20 of 20** (training − ID 0.26–0.46, ID 0.09–0.46, OOD ≤ 0.01;
# 20 of 20 on 0–19 as well). Its control failed on all 40 seeds (γ = 0.5: training − ID 0.01–0.05, ID
# 0.95–0.99). With 1500 training sequences every γ memorises (γ = 0.5: training 1.0, ID 0.03–0.06), with 20000
# none does within the budget: the phase is a matter of the initialisation *and* of how much data there is to
# memorise.

# %%
MEMO_GAMMAS = pick(quick=(0.1, 0.2, 0.3, 0.5), full=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.8), smoke=(0.2, 0.5))
MEMO_SETTINGS = [(g, 0.01, S0) for g in MEMO_GAMMAS if g not in (0.2, 0.5)] + \
                [(g, 0.01, s) for s in DATA_SEEDS for g in (0.2, 0.5)]  # the claim's γ on every data seed
memo = complexity.run_composition(MEMO_SETTINGS, n_train=complexity.MEMORISATION_DATA, n_test=MODEL["n_test"],
                                  d_model=32, n_layers=2, batch_size=128, lr=1e-2, record_every=250,
                                  steps=pick_steps(quick=complexity.MEMORISATION_STEPS,
                                                   full=complexity.MEMORISATION_STEPS, every=250, smoke=5))
fig, axes = panels(2, width=4.2)
for split, style in (("train", "^-"), ("ID", "o-"), ("OOD", "s-")):
    axes[0].plot(MEMO_GAMMAS, [memo.final(split, g, 0.01) for g in MEMO_GAMMAS], style, label=split)
axes[0].axvspan(min(MEMO_GAMMAS) - 0.03, 0.25, color="0.9", zorder=0)
axes[0].set(xlabel="initialisation rate γ", ylabel="accuracy", ylim=(-0.03, 1.03),
            title="3000 training sequences, λ = 0.01 (shaded: phase 1)")
axes[0].legend()
for g in MEMO_GAMMAS:
    ks = memo.members(g, 0.01)
    gap = (memo.accuracy["train"][:, ks] - memo.accuracy["ID"][:, ks]).mean(axis=1)
    axes[1].plot(memo.steps, gap, label=f"γ = {g}")
axes[1].set(xlabel="step", ylabel="train − ID accuracy", title="over training (mean over seeds)")
axes[1].legend()
plt.show()
for k, (g, _, s) in enumerate(memo.settings):
    print(f"γ={g:<4} λ=0.01 data seed {s}, 3000 sequences:  train {memo.accuracy['train'][-1, k]:.2f}  "
          f"ID {memo.accuracy['ID'][-1, k]:.2f}  OOD {memo.accuracy['OOD'][-1, k]:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_phase_one(memo))

# %% [markdown]
# ### Weak against strong complexity control (图13.5, 图13.6)
#
# The claim is on the **gap** between the two settings (means over the three data seeds of the contrast
# run): weak control fits ID (ID error ≤ 0.05, i.e. accuracy ≥ 0.95) while strong control raises the OOD
# accuracy by at least 0.3. The **level** that strong control reaches — a mean OOD accuracy ≥ 0.5, the
# condition of the first version of this claim — is shown as an **exploration**, not claimed: single runs
# of strong control end anywhere between OOD 0.2 and 0.9 (the same data seed reached 0.90 in the grid and
# 0.40 in the contrast run, with a different initialisation), so a mean of three is below 0.5 on about a
# third of the seeds (it failed for two of the first four values of `COMPANION_SEED`, 0.43 and 0.44, with
# ID ≈ 1.0: those runs fit the trained pairs and solve only part of the unseen ones). Over `COMPANION_SEED`
# 0–19 it held on 18 of 20 seeds (robustness report, measured again on an Intel Xeon on 2026-12-06; 17 of 20 on
# the first run). Over `COMPANION_SEED` = 0–6 (21 data sets per setting) we measured:
# weak control OOD 0.00–0.17 (ID 0.88–1.00), strong control OOD 0.23–0.93 (ID 0.59–1.00) in single runs;
# means of three 0.43–0.73 against 0.02–0.06, gaps 0.37–0.72. The neighbouring settings (1.4, 0.3),
# (1.1, 0.3) and (1.1, 1.0) gave mean OOD accuracies of 0.52–0.68 over four data sets: at this scale
# strong control makes reasoning likely, not certain.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_complexity_control(contrast))

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_reasoning_level(contrast))

# %% [markdown]
# ### Commutativity of the memorising solution (§13.3)
#
# With weak complexity control the model fits ID perfectly, and on the unseen pairs it mostly answers
# wrongly — yet it gives the **same** answer for (c, d) and (d, c): it treats the symmetric pair as one
# unit, the "symmetric maps" level of the book's solution hierarchy. The claim (means over the three data
# seeds): commutativity (交换性) ≥ 0.8; commutativity − OOD accuracy ≥ 0.5 (the shared answer is mostly not the
# right one); and commutativity − agreement with (a, b) ≥ 0.5, where the agreement with (a, b) compares the answer
# to (c, d) with the answer to the same sequence with the anchors (a, b), a map with another shift, in their place.
# A model that has not learned what the anchors do answers from the key and the noise: it scores high on both (an
# untrained one 0.70 and 0.61), while a model with one map for the two orders scores about 0 on the second — the
# shared answer belongs to the pair. That weak control fits ID is
# the condition of the claim above and is not counted again here (the first version repeated it). Changed after
# its results on seeds 0–19 were seen, it is validated on `COMPANION_SEED` 500–519: it held on all 20 (smallest
# margin 0.07, commutativity 0.86–0.97, agreement with (a, b) 0 on every seed).
#
# The book's point is a contrast inside phase 2 (图13.6's green triangles): a *larger* initialisation treats each
# pair as its own map, with poor commutativity (< 70%). The exploration after the claim asks this of the grid's
# γ = 0.5, λ = 0.01 model (it fits ID ≥ 0.9; is its commutativity < 0.7, and are (c, d) and (d, c) separate
# clusters with the key masked, 图13.8's middle panel?). At this scale it does not reproduce: it held on 0 of 20
# seeds (`COMPANION_SEED` 500–519: commutativity below 0.7 on 3 of them, merge ratio 0.03–0.32, never above 0.5)
# — the γ = 0.5 models are mostly commutative too (0.86 on `COMPANION_SEED` 0) and always merge the two orders. So
# the claim shows commutativity at weak control, not its dependence on γ.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_commutativity(contrast))

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_phase_two_contrast(run))

# %% [markdown]
# **At the full profile** (d_model 64, 80 000 sequences, 3000 steps; `COMPANION_SEED` 0–4, on the CPU) phase 1 and
# commutativity hold on all five seeds: γ = 0.2 on 3000 sequences answers 0.60–0.74 of its training sequences and
# 0.21–0.36 of new ones, OOD ≤ 0.01; weak control's commutativity is 0.90–0.96. Complexity control holds on four of
# five: strong control's mean OOD accuracy exceeds weak control's by 0.52–0.72 on every seed (strong 0.52–0.72,
# single runs 0.25–0.94, the exploration `ch13.reasoning-level` holding on all five, thinly on seed 2; weak
# 0.00–0.03), but on seed 4 weak control's mean ID accuracy is 0.949 where 0.95 is asked (seed 3: 0.952). On those
# two seeds 4 of the 10 weakly controlled models (data seeds 17, 19, 22, 24) fit every training sequence yet stop at
# an ID accuracy of 0.84–0.94 from step 1200 on; the other 21 of the 25 reach 0.99–1.00. **Classified: the
# phenomenon, thinner than the book draws it at this scale** — weak control sometimes fits its training set without
# generalising to all new sequences of the trained pairs (between phase 1 and phase 2), while the contrast with
# strong control holds with a wide margin; not a bug, and no setting or threshold was changed. The contrast inside phase 2 does not reproduce at
# this size either: the grid's γ = 0.5, λ = 0.01 models are commutative on four seeds (0.87–0.96) and just below 0.7
# on one (seed 2: 0.69, 图13.6's green triangle), but they merge (c, d) with (d, c) on all five (merge ratio
# 0.045–0.33, where > 0.5 is asked); on 80 000 sequences they also answer 0.10–0.77 of the unseen pairs.
#
# **On the fresh seeds** (`COMPANION_SEED` 500–504, the full profile's validation seeds for this claim, 2026-12-06)
# commutativity holds on four of five: weak control's mean commutativity is 0.87, **0.76**, 0.90, 0.83 and 0.88 —
# seed 501 under the 0.8. Read model by model over all ten seeds, 7 of the 50 weakly controlled models (data seeds 5,
# 18, 2501, 2507, 2509, 2519 and 2522) answer (c, d) and (d, c) alike on only 0.39–0.61 of the unseen sequences
# while fitting their training set and 97–100 % of ID (OOD 0.02–0.50); on seed 501 two of its five do (0.41, 0.54).
# That is the poorly commutative phase-2 solution which 图13.6 marks at a *larger* initialisation, appearing at
# d_model 64 on 80 000 sequences inside the weak-control cell itself, about one model in seven. **Classified: the
# phenomenon, thinner than the book draws it at this scale** — the memorising solution is commutative in 43 of the
# 50 models and on average on 9 of the 10 seeds, not on every one; not a bug, and no setting or threshold was
# changed. At the quick profile the claim holds on all 40 of its seeds.

# %% [markdown]
# ### How the phases move with scale (the scale curve)
#
# Everything above is at the quick size, and the book's phases come from models more than ten times wider trained on
# forty times more data (the authors: d_model 400, 810 000 sequences, 210 epochs). Which of the differences matter?
# `companion.experiments.ch13_scale` trains the task of this chapter over 图13.5's γ sweep at the book's λ = 0.01
# (γ = 0.2, 0.5, 0.8, 1.1, 1.4) and two strongly controlled settings at λ = 0.1 (γ = 1.1 and 1.4), three data seeds
# each (330–332, i.e. the design seed `COMPANION_SEED` = 110), at seven sizes: d_model 32, 48, 64 and 128 with 1500,
# 2000, 3000 and 4000 steps (learning rates 10⁻², 5·10⁻³, 3·10⁻³, 2·10⁻³) on this notebook's 20 000 training
# sequences, then d_model 32, 64 and 128 on 80 000. Measuring it took about 70 CPU-minutes (35 minutes on two
# cores), so it is measured once and committed (`python -m companion.experiments.ch13_scale --seed 110` measures it again); the cells below read it.
#
# In the first figure each panel is 图13.5 at one size: mean ID (blue) and OOD (red; the band spans the three data
# seeds) accuracy over γ at λ = 0.01, the OOD accuracy at λ = 0.1 as hollow diamonds, the book's phase of each mean
# under the axis (1: ID < 0.9; 2: good ID, OOD < 0.5; 3: good ID and OOD ≥ 0.5), and a green triangle over a setting
# whose commutativity is below 0.7 (图13.6's mark). The second figure gives the trends against d_model. What the
# curve shows, in means over the three data seeds:
#
# * **Phases 1 and 2 hold at every size.** γ = 0.2 never generalises ID (ID 0.22–0.59) or OOD (≤ 0.01), and as the
#   model widens it memorises more of what it fits — training − ID accuracy 0.08 at d_model 32, 0.22 at 64, 0.17 at
#   128 (20 000 sequences) — the signature of the authors' γ = 0.1 run (0.30 against 0.02). γ = 0.8 fits ID and
#   fails OOD at every size (OOD ≤ 0.13).
# * **Phase 3 does not firm up with width alone.** With 20 000 sequences the OOD accuracy of γ = 1.4 at λ = 0.01 is
#   0.44–0.59 at every width, and strong control's is 0.49–0.68 up to d_model 64 and 0.25 at 128: a wider model
#   memorises more of the same data. With four times the data, d_model 64 gives the curve's clearest phase 3 —
#   γ = 1.4 at the book's λ = 0.01 reaches 0.70 (0.56–0.86) and strong control 0.81 (0.67–0.92) — but d_model 128
#   does not (0.52 and 0.32), and d_model 32 does not fit within its 1500 steps at γ = 1.4 (ID 0.59). So the
#   phase-3 level depends on data and training together, and the sizes a CPU can reach do not settle it.
# * **图13.6's green triangles: once, not robustly.** At d_model 64 with 80 000 sequences the phase-2 model γ = 0.8
#   had commutativity 0.60 — it treats (c, d) and (d, c) as two maps, the book's contrast inside phase 2 — where every
#   phase-2 setting at λ = 0.01 with 20 000 sequences had 0.80–0.98, and at d_model 128 with 80 000 it is 0.87; on a
#   second draw of data seeds (below) the same point gave 0.94. Elsewhere the triangles mark phase 1 (0.46–0.67: its
#   models fit little) and three settings at d_model 128 or short of fitting (0.55–0.70).
# * **A second draw** (data seeds 333–335; five of the seven points — d_model 128 was not measured again — and not in
#   the figures): the levels move with the draw as much as with the size. γ = 1.4 at λ = 0.01 gave 0.37 (d_model 32),
#   0.72 (48) and 0.47 (64; one model short of fitting, mean ID 0.80) with 20 000 sequences, 0.43 (32) and 0.64 (64;
#   mean ID 0.89) with 80 000; strong control 0.61, 0.46, 0.65 and 0.56, 0.70. So one sweep at d_model 32 shows phase 3
#   on the first draw and not on the second; four times the data helped strong control at d_model 64 on both draws
#   (0.81 and 0.70 against 0.68 and 0.65), by less on the second; and γ = 0.8's commutativity was 0.94–0.96 at every
#   point.
# * **The γ axis is not monotone here.** γ = 0.5 solves part of the unseen pairs at d_model 32 and 64 (means
#   0.36–0.65, single seeds 0.00–0.94) while γ = 0.8 does not at any size; at d_model 48 and 128 it does not either
#   (≤ 0.05). (The initialisation scale at a given γ also shrinks as the model widens: d_in^{−γ}.)
# * **Condensation (图13.10) grows with γ at every size:** no W^{Q(1)} neuron of γ = 0.2 is grouped (cosine > 0.7) at any
#   size, 0–27 % of γ = 0.5's, and 90–100 % of γ = 1.4's. From d_model 48 on, the phase-2 model γ = 0.8 is grouped as
#   strongly (93–99 %) as the phase-3 side.
#
# **Per figure, where it holds.** 图13.10 holds at the quick size (its claim) and its trend at every size measured.
# 图13.5's three phases from one sweep at λ = 0.01 appear in the means at d_model 32, 48 and 128 (20 000 sequences)
# and 64 (80 000) on the first draw, and at d_model 48 alone on the second: no size measured shows them on every draw;
# the notebook's claims establish them at the quick size from three runs.
# 图13.6's poor-commutativity cell appeared once (d_model 64, 80 000 sequences, seeds 330–332) and not on the second
# draw: it is not reproduced at any size measured. The **full profile now trains the grid and the contrast on 80 000
# sequences** (d_model 64, 3000 steps), where strong control reached its highest OOD accuracy on both draws.
# The mechanism figures were read at every point of the curve too (`companion.experiments.ch13_scale_figures`, the
# curve's runs trained again on an Intel Xeon, means over the data seeds 330–332, the bounds of this chapter's claims;
# the table is in `docs/full-profile.md`): 图13.8's clusters hold at every size (phase 2: 0.86–1.00 of the outputs
# nearest their own map's centre, phase 1: 0.23–0.44); its middle panel at none (γ = 0.5 commutative, 0.80–0.94, and
# merging (c, d) with (d, c)); 图13.9 at one of seven, d_model 64 on 20 000 sequences, on its bound (weak control shows
# the blocks nearly as strongly elsewhere); 图13.10's order of the three phases at d_model 32 only (its rise with γ
# holds everywhere, but from d_model 48 on phase 2 is grouped as fully as phase 3); 图13.12's ordered phase 3 against phase 1 at every size, its unstructured phase 2 at none (gap 3.4–4.3,
# ordered). So, read with this chapter's cells, the sizes a CPU reaches bring none of the missing statements back.
# Read as the book draws 图13.10 and 图13.12 — at λ = 0.01, with its own γ = 0.5 as phase 2 and our γ = 1.4 as
# phase 3 (the axis is shifted), rather than weak and strong control — 图13.10 holds at all seven sizes and 图13.12
# at five (not at d_model 32, where γ = 0.5's embeddings are ordered too). And trained for the book's 210 epochs
# (the quick size, 32 800 steps; design seeds 120–123), the γ = 0.2 model memorises inside the one sweep (training −
# ID 0.198–0.47) and both figures hold on all four seeds; γ = 1.4 at λ = 0.01 does not always fit ID there, so
# 图13.5's three phases from one sweep held on one seed of four. The full profile therefore judges 图13.10 and
# 图13.12 on that sweep trained for half the book's length (the next subsection); whether the book's size brings back
# the rest is a GPU's question. 图13.17 and
# 13.19 are chapter 13's second part. 图13.11 on trained models is measured at the full profile's size (d_model 64,
# depths 2–6, section 3).

# %%
scale_curve = complexity_scale.read_curve()
fig, axes = panels(len(complexity_scale.POINTS), width=2.6, height=2.4, nrows=3)
complexity_scale.plot_curve(axes, scale_curve)
plt.show()
fig, axes = panels(3, width=2.6, height=2.6)
complexity_scale.plot_trends(axes, scale_curve)
plt.show()

# %% [markdown]
# ### Trained for the book's length: 图13.5, 图13.10 and 图13.12 from one sweep (the full profile)
#
# The scale curve trains 5–10 epochs; the book's models train 210 (the authors' configuration: 370 batches of 2048 an
# epoch, 77 700 steps, AdamW warmed up to 2·10⁻⁴ and then cosine). Trained that long, the quick-size model shows what
# no size of the curve showed: the largest initialisation memorises inside the same sweep, and the phase-2 model
# γ = 0.5 no longer orders its embeddings. So the **full profile** also trains 图13.5's own sweep at the book's
# λ = 0.01 — γ = 0.2, 0.5 and 1.4 (the book's 0.2, 0.5 and 0.8: our γ axis is shifted, section 2) — at the quick size
# (d_model 32, 20 000 training sequences, batch 128) for **105 epochs**, half the book's length (16 400 steps at a peak
# learning rate of 10⁻³: the summed learning rate of the authors' run, Σ lr ≈ 8.2), on its five data seeds, one
# batched run of 15 models (`companion.experiments.ch13_scale_figures.run_book_length`), and reads 图13.5, 13.10 and
# 13.12 from the same models, as the book draws them ("与图 13.10 相同设置下"):
#
# * `ch13.sweep-condensation` (图13.10), with the bounds of `ch13.wq-condensation`: phase 1 (γ = 0.2) under 10 % of
#   its query neurons grouped, phase 2 (γ = 0.5) a mean |cos| at least 0.05 above phase 1's, phase 3 (γ = 1.4) at
#   least half grouped with a mean |cos| ≥ 0.3 and a grouped share at least 0.2 above phase 2's. Its negative control
#   reads phase 1 (γ = 0.2) as phase 3.
# * `ch13.sweep-embeddings` (图13.12): phase 3's number embeddings ordered (a number's 5 nearest neighbours at least 3
#   times closer in value than random numbers, chapter 12's bound) and **in steps of 3 and 4**, not in the order of the
#   values (§13.5.2: the differences between the single-anchor shifts +5, +1, −2, −8 are sums of 3 and 4): at least
#   30 % of each number's 4 nearest neighbours lie 3 or 4 away in value (chance: about 5 %), more than lie 1 or 2 away;
#   phases 1 and 2 below the order bound. Negative control: phase 1 read as phase 3.
# * `ch13.one-sweep` (图13.5), an **exploration**: γ = 0.2 relies on memory (training − ID ≥ 0.2, ID < 0.9, OOD < 0.2,
#   the bounds of `ch13.phase-one`), γ = 0.5 fits ID (≥ 0.9) but not the unseen pairs (OOD < 0.5), γ = 1.4 fits ID and
#   solves them (OOD ≥ 0.5).
#
# Designed on `COMPANION_SEED` 120–124 (data seeds 360–374; one run of the curve's seven cells each, committed in
# `companion/experiments/measured/ch13_half_training.json` and drawn below at the quick profile) and on the book's
# full 210 epochs (seeds 120–123, `ch13_long_training.json`), means of three models. At 105 epochs
# `ch13.sweep-condensation` held on all five design seeds (phase 1: no neuron grouped; phase 2's mean |cos| 0.16–0.24
# above it; phase 3: 99–100 % grouped, mean |cos| 0.91–0.98, 0.47–0.75 more grouped than phase 2) and
# `ch13.sweep-embeddings` on all five (phase 3: value-gap ratio 4.3–5.8, 0.46–0.54 of the nearest neighbours 3 or 4
# away in value against 0.07–0.14 1 or 2 away; phase 1: 1.09–1.18; phase 2: 1.66–2.26); at 210 epochs both on all
# four (phase 3's ratio 3.2–5.4, 0.40–0.49 of its neighbours 3 or 4 away). Read with the chapter's cells instead (weak
# control as phase 2) both fail on every one of the nine: weak control condenses and orders like phase 3. The
# memorising phase 1 is inside the sweep at this length (γ = 0.2 fits 0.92–1.00 of its training sequences and 0.72–0.81
# of new ones, OOD ≤ 0.07), but `ch13.one-sweep` held on one design seed of five (seed 120, thinly: training − ID
# 0.204) and one of four at 210 epochs: each part holds on most seeds, rarely all at once — γ = 0.2's training − ID
# 0.18–0.23 (under 0.2 on two seeds), γ = 0.5's OOD 0.17–0.54 (over 0.5 on two), γ = 1.4's ID 0.85–1.00 (under 0.9 on
# two; at 210 epochs on three of four) — so it stays an exploration: at this size one sweep shows all three phases
# about one time in four (2 of 9). At the quick profile the cells below draw that committed design measurement and
# judge nothing; at the full profile they train the sweep (15 models, 14–16 CPU-minutes with two runs side by side on a
# 2-core machine) and judge the three.

# %%
if pick(quick=False, full=True):  # the full profile (and its smoke run): train the sweep for 105 epochs
    book_run = figures.run_book_length(DATA_SEEDS, steps=pick_steps(quick=1, full=figures.HALF_LENGTH.steps,
                                                                    every=figures.HALF_LENGTH.steps // 8, smoke=5))
    book_rows = figures.book_length_rows(book_run)
    print(f"book length: {len(book_run.settings)} members in {book_run.seconds:.0f} CPU-s")
else:  # the quick profile: the committed design measurement (COMPANION_SEED 120–124, data seeds 360–374)
    book_rows = figures.read_half()
    print(f"book length: the committed design runs, {len(book_rows)} members (data seeds "
          f"{min(r['data_seed'] for r in book_rows)}–{max(r['data_seed'] for r in book_rows)}), not this seed's")
fig, axes = panels(4, width=3.3, height=3.0)
figures.plot_book_length(axes, book_rows)
plt.show()
book_means = figures.cell_means(book_rows)  # (γ, λ) → the means over the data seeds, as the claims below read them
for (g, lam), m in book_means.items():
    if (g, lam) in (figures.PHASE_ONE, figures.LARGER_INIT_PHASE_TWO, figures.SMALL_INIT_SWEEP):
        print(f"γ={g:<4} λ={lam} (means over the data seeds): train {m['train']:.2f}  ID {m['ID']:.2f}  "
              f"OOD {m['OOD']:.2f}  grouped {m['grouped']:.2f}  |cos| {m['mean_abs_cos']:.2f}  value-gap ratio "
              f"{m['embedding_order']:.1f}  3 or 4 away {m['steps_3_4']:.2f}  1 or 2 away {m['steps_1_2']:.2f}")

# %% [markdown]
# At the full profile the book's figures themselves: the cosine matrix of the first-layer query neurons (图13.10) and
# the first two principal components of the number embeddings, each point labelled with its number (图13.12), for one
# model of each phase.

# %%
if pick(quick=False, full=True):  # the book's figures themselves, one model of each phase (its first data seed)
    book_model = book_run.model()
    fig, axes = panels(6, width=3.0, height=2.9, nrows=2)
    for i, (phase, (g, lam)) in enumerate(zip((1, 2, 3), (figures.PHASE_ONE, figures.LARGER_INIT_PHASE_TWO,
                                                            figures.SMALL_INIT_SWEEP))):
        k = book_run.members(g, lam)[0]
        axes[i].imshow(attention.sorted_neuron_cosine(book_model.member_weight("w_q", k, layer=0).numpy()),
                       cmap="RdBu_r", vmin=-1, vmax=1)
        axes[i].set(title=f"Fig. 13.10, phase {phase}: γ = {g}", xlabel="neuron", ylabel="neuron")
        axes[i].grid(False)
        xy, _ = attention.pca(book_model.member_weight("w_em", k)[20:100].numpy(), 2)
        axes[3 + i].scatter(xy[:, 0], xy[:, 1], c=np.arange(20, 100), cmap="viridis", s=8)
        for value, (x, y) in zip(range(20, 100), xy):
            axes[3 + i].annotate(str(value), (x, y), fontsize=5)
        axes[3 + i].set(title=f"Fig. 13.12, phase {phase}: γ = {g}", xlabel="PC1", ylabel="PC2")
    plt.show()
else:
    print("the trained models of this section are drawn at the full profile (COMPANION_PROFILE=full)")

# %%
# NBVAL_CHECK_OUTPUT
if pick(quick=False, full=True):
    show(figures.check_sweep_condensation(book_means))
else:
    print("ch13.sweep-condensation (图13.10 on 图13.5's sweep, 105 epochs): judged at the full profile only")

# %%
# NBVAL_CHECK_OUTPUT
if pick(quick=False, full=True):
    show(figures.check_sweep_embeddings(book_means))
else:
    print("ch13.sweep-embeddings (图13.12 on 图13.5's sweep, 105 epochs): judged at the full profile only")

# %%
# NBVAL_CHECK_OUTPUT
if pick(quick=False, full=True):
    show(figures.check_one_sweep(book_means))
else:
    print("ch13.one-sweep (图13.5's three phases in one sweep, 105 epochs; exploration): judged at the full profile only")

# %% [markdown]
# **Measured at the full profile** (`robustness/report-full.json`, validation seeds 0–4, the chapter's code of
# 2026-12-04; about 85 minutes a seed with two seeds side by side on a 2-core CPU): `ch13.sweep-condensation` holds on
# 5 of 5 seeds (smallest margin +0.99) and `ch13.sweep-embeddings` on 5 of 5 (smallest margin +0.34; the tightest part
# is phase 2's value-gap ratio, under the order bound by a third of it or more). So 图13.10 and 图13.12 are reproduced
# as the book draws them, from one sweep at λ = 0.01 trained for half the book's length — 图13.12 at this profile only:
# at the quick profile's length the phase-2 model orders its embeddings too. `ch13.one-sweep` (all three phases of
# 图13.5 in that one sweep) held on 3 of these 5 seeds (1, 3 and 4) after 1 of 5 design seeds: it stays an exploration.
# On the seeds 500–504, run for the claims judged there (2026-12-06), the two claims held on all five again (smallest
# margins +0.98 and +0.33) and `ch13.one-sweep` on three (500, 501, 503): 6 of 10 in all.

# %% [markdown]
# ## 3. Mechanisms (图13.7–13.12)
#
# ### Masking after the softmax and the PCA of outputs (图13.7, 图13.8)
#
# Remove, in every layer, all attention paid to the **key** (multiply its column of the attention matrix
# by 0 after the softmax). What the last position then outputs is what the network computed from the
# anchors alone. 图13.8 projects these outputs on two principal components, 50 sequences per anchor
# pair, in three phases: in phase 1 the pairs overlap, in phase 2 they form separate clusters, and a
# commutative model puts the symmetric pairs — above all the unseen (c, d) and (d, c) — into **one** cluster.
# Our four panels: the slow-fitting γ = 0.2 cell of the grid (phase 1), its γ = 0.5 cell (phase 2 at a larger
# initialisation, the book's middle panel), and the first models of the contrast with weak and with strong control.

# %%
model = run.model()  # the grid (γ × λ), for the analyses of section 3
probe = complexity.key_masked_probe(run.data(S0))  # 50 test sequences per anchor pair; grid and contrast share S0
shift = complexity.composite_shift(probe.anchors)  # colour: the pair's composite map
masked = {"grid": complexity.key_masked_outputs(run, probe),  # (K, N, V): key masked
          "contrast": complexity.key_masked_outputs(contrast, probe)}
fig, axes = panels(4, width=3.2, height=3.0)
for ax, (source, (g, lam)) in zip(axes, (("grid", (0.2, 0.01)), ("grid", (0.5, 0.01)), ("contrast", WEAK),
                                          ("contrast", STRONG))):
    k = (run if source == "grid" else contrast).members(g, lam)[0]
    xy, ratio = attention.pca(masked[source][k], 2)
    merge = complexity.pair_merge_ratio(masked[source][k], probe.anchors.numpy())
    points = ax.scatter(xy[:, 0], xy[:, 1], c=shift, cmap="coolwarm", s=6)
    for a, b in complexity.UNSEEN_PAIRS:
        sel = ((probe.anchors[:, 0] == a) & (probe.anchors[:, 1] == b)).numpy()
        ax.scatter(xy[sel, 0], xy[sel, 1], marker="x" if a == 3 else "+", color="k", s=14,
                   label=complexity.pair_name((a, b)))
    ax.set(title=f"γ = {g}, λ = {lam}: merge ratio {merge:.2f}", xlabel=f"PC1 ({ratio[0]:.0%})",
           ylabel=f"PC2 ({ratio[1]:.0%})")
    ax.legend()
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="total shift of the pair")
plt.show()

# %% [markdown]
# With only the anchors visible, the trained models' outputs form clusters per anchor pair, and the unseen
# pairs (black × and +) land on top of each other: the two orders act as one unit, although the model never
# saw either. The γ = 0.2 model, which has not yet fit its training set, shows no such order. How cleanly the
# clusters line up by total shift (colour) varies between seeds at this scale; we do not claim it.
#
# The claim measures the merge with a **merge ratio**: the distance between the centroids of the (c, d) and
# (d, c) outputs over the mean distance between the centroids of pairs whose composite shifts differ (0: one
# cluster; about 1: no closer than unrelated pairs). For weak and for strong control its median over the
# three data seeds must be ≤ 0.5 — the two unseen pairs lie closer together than half the typical distance
# between different maps. The median, not the mean: a model now and then shows no cluster structure at all at
# this scale (ratio ≈ 1, typically a run whose commutativity is low), and the claim is about the typical
# model. We chose the measure and the bound on tuning seeds (`COMPANION_SEED` 100–104); an untrained model
# scores about 1. Over `COMPANION_SEED` 0–19 the claim held on all 20 seeds: the
# larger of the two medians was at most 0.33, and 0.07 on the typical seed.
#
# What the claim does **not** check is the book's contrast: 图13.8's middle panel, a phase-2 model at a larger
# initialisation that keeps (c, d) and (d, c) in separate clusters. Both of our tested settings are expected to
# merge; the larger-initialisation γ = 0.5 model of the grid merges them too at this scale (the exploration of the
# previous section: merge ratio 0.03–0.32 on `COMPANION_SEED` 500–519, never above 0.5). The negative control is
# still an untrained model: neither contrasting panel of 图13.8 reproduces robustly at this scale.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_symmetric_merge(contrast))

# %% [markdown]
# ### Phase 1 against phase 2: overlapping clusters, or one per map (图13.8)
#
# 图13.8's first contrast is between its left panel and the others: in phase 1 "不同锚对的表示组织混乱，簇之间存在
# 显著重叠" (the pairs' representations are disorganised and their clusters overlap), in phase 2 clear, well
# separated clusters appear. The memorisation run has both phases trained on the same 3000 sequences for the same
# steps, differing only in γ. The measure: with the key masked, how often an output's nearest cluster centre — the
# centres of the ten composite maps g(g(·; a1); a2), pairs with the same total shift together, each output's own
# centre computed without it — is the centre of its own map (`map_cluster_accuracy`: about 0.1 when the clusters
# overlap completely, 1 for one tight cluster per map). We group by map rather than by pair because a commutative
# model rightly merges (a, b) with (b, a). The claim (mean over the three data seeds): the phase-2 models (γ = 0.5)
# score ≥ 0.7; its negative control, the same check on the phase-1 models (γ = 0.2) of the same run, fails.
# Designed on single models of seeds 100–110: γ = 0.5 scored 0.80–1.00, γ = 0.2 0.16–0.65 (the highest where
# phase 1 had begun to generalise, ID 0.56–0.60). Over `COMPANION_SEED` 0–19 it held on **20 of 20** (means
# 0.88–0.99; 20 of 20 on 500–519, 0.90–1.00), and its control failed on all 40 (phase 1: 0.17–0.53).

# %%
memo_probe = complexity.key_masked_probe(memo.data(S0))
memo_shift = complexity.composite_shift(memo_probe.anchors)
memo_masked = complexity.key_masked_outputs(memo, memo_probe)  # (K, N, V): key masked
fig, axes = panels(2, width=3.8, height=3.2)
for ax, g in zip(axes, (0.2, 0.5)):
    k = next(k for k in memo.members(g, 0.01) if memo.settings[k][2] == S0)
    xy, ratio = attention.pca(memo_masked[k], 2)
    points = ax.scatter(xy[:, 0], xy[:, 1], c=memo_shift, cmap="coolwarm", s=6)
    score = complexity.map_cluster_accuracy(memo_masked[k], memo_probe.anchors.numpy())
    ax.set(title=f"γ = {g} (phase {1 if g < 0.3 else 2}): nearest own map {score:.2f}",
           xlabel=f"PC1 ({ratio[0]:.0%})", ylabel=f"PC2 ({ratio[1]:.0%})")
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="total shift of the pair")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_map_clusters(memo))

# %% [markdown]
# ### Second anchor masked: is g(x; a1) computed first? (图13.9)
#
# Now remove, in every layer, the attention paid to the **second** anchor a2 (图13.7B). The last position
# then sees only the key x and the first anchor a1. A model that computes step by step (逐步计算) first
# forms g(x; a1) = x + shift(a1), so inputs that reach the **same** g(x; a1) through **different** (x, a1)
# — x = v − 5 with a, v − 1 with b, v + 2 with c, v + 8 with d — should give similar outputs: in the
# book's cosine-similarity (余弦相似度) matrix they form groups of four blocks, bright in phase 3 and
# faint in phase 2. Our probe: nine values v = 26, 34, …, 90 of g(x; a1); for each, the four first anchors
# with four sequences each (random a2, key position and noise), sorted by v and then by a1 (the grey lines
# separate the groups of equal v). The models are those of the contrast run (weak and strong control).
# Unlike the book (which does not say), we **centre** the outputs over the probe before taking cosines,
# so that what all outputs share (a common offset of the logits) does not count as similarity.

# %%
probe = complexity.first_anchor_probe(S0)  # 144 sequences, ordered by g(x; a1), then a1
g1, a1 = complexity.first_step_values(probe), probe.anchors[:, 0].numpy()
masked2 = complexity.second_anchor_masked(contrast, probe)  # (K, N, V): second anchor masked
group = 4 * 4  # sequences per value of g(x; a1)
fig, axes = panels(2, width=4.0, height=3.6)
for ax, (g, lam) in zip(axes, (WEAK, STRONG)):
    k = contrast.members(g, lam)[0]
    within, across = complexity.first_anchor_blocks(masked2[k], g1, a1)
    image = ax.imshow(complexity.first_anchor_cosine(masked2[k]), cmap="RdBu_r", vmin=-1, vmax=1)
    for edge in np.arange(group, len(probe), group) - 0.5:
        ax.axhline(edge, color="0.5", lw=0.4)
        ax.axvline(edge, color="0.5", lw=0.4)
    ax.set(title=f"γ = {g}, λ = {lam}: {within:.2f} (equal), {across:.2f} (other)",
           xlabel="sequence (by g(x; a1), then a1)", ylabel="sequence")
    ax.grid(False)
plt.colorbar(image, ax=axes[-1], fraction=0.05, label="cosine (centred outputs)")
plt.show()

# %% [markdown]
# The claim (means over the three data seeds of the contrast run): under strong control, the mean cosine
# of pairs with equal g(x; a1) but different a1 (the off-diagonal blocks of a group; pairs with the same
# (x, a1) are alike in any model and are left out) exceeds that of pairs with different g(x; a1) by
# ≥ 0.25, and exceeds the same within-group cosine under weak control by ≥ 0.25. We read the book's
# "significantly higher" as a quarter of the cosine's range and fixed 0.25 before measuring.
#
# **It does not reproduce at this scale, so it is an exploration.** The first half holds clearly — under
# strong control the groups of equal g(x; a1) stand out (within − across 0.77–0.83 on `COMPANION_SEED`
# 0 and 1) — but the weak-control models show the same groups almost as strongly (within-group cosine
# 0.59–0.60 against 0.68–0.73 for strong control, a gap of 0.09–0.13): our memorising models, too, carry
# g(x; a1) at the last position once a2 is hidden. The book's phase-2 picture (faint blocks) is not what
# our weak setting gives; whether a larger model or a setting deeper in phase 2 would give it is open here.
# On tuning seeds (100–104) we also read the masked outputs as softmax probabilities, as last hidden states,
# and without the sequences whose last token is a2 itself (where masking cannot hide it): none of these
# separated weak from strong control consistently (the γ = 0.5 cells of the grid, deeper in phase 2 by the
# book's axis, showed blocks too). Over `COMPANION_SEED` 0–19 the exploration held on 0 of 20 seeds (robustness
# report).

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_first_anchor_blocks(contrast))

# %% [markdown]
# **At the full profile** (seeds 0–4) the two claims of 图13.8 hold on all five — the unseen pairs merge under weak and
# strong control (median merge ratios 0.04–0.14), and the phase-2 models sort 0.94–0.98 of the probe into their own
# map's cluster — and this exploration fails on all five: strong control's outputs are alike within a block (mean
# centred cosine 0.42–0.65, 0.49–0.74 above that across blocks) but weak control's as much (0.46–0.57), a difference
# of −0.03 to 0.08 where 0.25 is asked. The wider model does not make 图13.9's blocks particular to phase 3.

# %% [markdown]
# ### Condensation of W^{Q(1)} (图13.10)
#
# The cosine similarity between the input-weight vectors of the 32 query neurons of layer 1. Small
# initialisation (large γ) drives neurons to a few shared directions — **condensation** (凝聚, chapter 8) —
# a low-complexity solution. Neurons are ordered by the leading eigenvector so that aligned groups appear
# as blocks. The book shows γ = 0.2, 0.5, 0.8 at λ = 0.01 for its phases 1, 2, 3: in phase 1 the neurons keep
# independent directions (low cosine), in phase 2 they condense slightly, in phase 3 they gather in a few isolated
# directions, groups of high cosine. At our scale the phases come from the three runs of section 2, so the top row
# shows one model of each phase as the chapter's other claims establish it: phase 1 is the memorisation run's
# γ = 0.2 (it memorises), phase 2 weak control (γ = 0.8, λ = 0.01: it fits ID, not the unseen pairs), phase 3 strong
# control (γ = 1.4, λ = 0.1); the bottom row shows the grid at the book's λ = 0.01 for γ = 0.2, 0.5, 0.8 and 1.4.
# Each title gives the mean |cos| and the share of neurons that 图13.11 would put in a group: those with a
# cosine > 0.7 to another neuron.

# %%
cond = complexity.grid_measure(run, "wq_condensation")  # (γ, λ) → mean |cos| of the W_Q(1) neurons
grouped = complexity.grid_measure(run, "wq_grouped")  # (γ, λ) → share of neurons with cos > 0.7 to another one
memo_cond, memo_grouped = complexity.wq_condensation_by_member(memo)  # (K,) each, per member
contrast_cond, contrast_grouped = complexity.wq_condensation_by_member(contrast)
rho_cond = complexity.rank_correlation([g for g, _ in cond], list(cond.values()))
fig, axes = panels(8, width=3.0, height=2.9, nrows=2)
phases = (("phase 1: memorisation run, γ = 0.2", memo, (complexity.PHASE_ONE_GAMMA, 0.01), memo_cond, memo_grouped),
          ("phase 2: weak control", contrast, WEAK, contrast_cond, contrast_grouped),
          ("phase 3: strong control", contrast, STRONG, contrast_cond, contrast_grouped))
for ax, (title, source, setting, c, share) in zip(axes[:3], phases):
    k = source.members(*setting)[0]
    ax.imshow(attention.sorted_neuron_cosine(source.model().member_weight("w_q", k, layer=0).numpy()), cmap="RdBu_r",
              vmin=-1, vmax=1)
    ax.set(title=f"{title}\n|cos| {c[k]:.2f}, grouped {share[k]:.0%}", xlabel="neuron", ylabel="neuron")
axes[3].axis("off")
for ax, g in zip(axes[4:], (0.2, 0.5, 0.8, 1.4)):
    w = model.member_weight("w_q", run.members(g, 0.01)[0], layer=0).numpy()
    ax.imshow(attention.sorted_neuron_cosine(w), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set(title=f"grid, γ = {g}, λ = 0.01\n|cos| {cond[(g, 0.01)]:.2f}, grouped {grouped[(g, 0.01)]:.0%}",
           xlabel="neuron", ylabel="neuron")
for ax in axes:
    ax.grid(False)
plt.show()
print("mean |cos| of W_Q(1) neurons:", {f"γ={g},λ={l}": round(v, 2) for (g, l), v in cond.items()},
      f"Spearman ρ(γ, |cos|) = {rho_cond:.2f}")
print("share of grouped W_Q(1) neurons:", {f"γ={g},λ={l}": round(v, 2) for (g, l), v in grouped.items()})
for title, source, setting, c, share in phases:
    ks = source.members(*setting)  # one model per data seed
    print(f"{title}, per data seed: mean |cos| " + ", ".join(f"{c[k]:.2f}" for k in ks) +
          "; grouped " + ", ".join(f"{share[k]:.0%}" for k in ks))

# %% [markdown]
# The claim reads the three phases. **Phase 3** at the grid's phase-3 end γ = 1.4, with λ = 0.1 and with the book's
# λ = 0.01: at least half of the query neurons have a cosine > 0.7 with another neuron (the book's grouping
# threshold of 图13.11) and their mean |cos| is ≥ 0.3 — about twice what independent random directions in 32
# dimensions give (0.14). **Phase 1**, the memorisation run's γ = 0.2 models: fewer than 10 % of the neurons grouped
# ("没有表现出显著的凝聚"). **Phase 2** in between ("轻微的凝聚"), on the contrast run, whose two settings share data
# seeds: weak control's mean |cos| is at least 0.05 above phase 1's, and its grouped share at least 0.2 below strong
# control's (means over the three data seeds each). Two negative controls (`tests/test_controls_ch13.py`): the
# phase-3 conditions on the grid's γ = 0.2 cells fail (no neuron grouped), and with strong and weak control
# exchanged the phase order fails. Designed on `COMPANION_SEED` 100–105 (data seeds 300–317), means of three models:
# phase 1 had no neuron grouped and mean |cos| 0.15–0.16; phase 2 0.29–0.36 (0.13–0.20 above phase 1) with
# 34–59 % grouped; phase 3 0.51–0.87 with 94–100 % grouped (0.35–0.66 above phase 2). So at our scale phase 2's
# "slight" condensation is about half the neurons in loose groups, against nearly all in tight ones in phase 3.
# The claim changed after seeds 0–19 had been seen, so `COMPANION_SEED` 500–519 validate it: it held on **20 of 20**
# (phase 1: none grouped, mean |cos| 0.15–0.17; phase 2: 0.29–0.39, 33–70 % grouped, 0.13–0.23 above phase 1; phase 3:
# 0.49–0.74, 92–100 % grouped, 0.29–0.67 above phase 2), and on 20 of 20 of 0–19 as well.
#
# The first version of this claim asked for phase 3 alone (81–100 % of the neurons grouped and mean |cos|
# 0.43–0.75 at γ = 1.4 on tuning seeds 100–104, none and 0.15–0.18 at γ = 0.2; 20 of 20 on seeds 500–519); the
# rank correlation printed above shows the whole γ-trend of the grid (an earlier trend claim, ρ ≥ 0.7 and a factor 2
# between γ = 1.4 and 0.2, held on 19 of seeds 0–19, but no trained setting the book contrasts with lacked the trend).
#
# The book reads its three phases from one sweep at λ = 0.01 (γ = 0.2, 0.5, 0.8), not from weak and strong control;
# read that way — γ = 0.2, 0.5 and our shifted 1.4 — on the sweep trained for 105 epochs, the same conditions are the
# claim `ch13.sweep-condensation`, judged at the full profile (section 2). At the full profile's own size (d_model 64,
# 3000 steps) this claim fails on its phase-2 condition (below): weak control is grouped as fully as phase 3.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_wq_condensation(run, contrast, memo))

# %% [markdown]
# **At the full profile** (seeds 0–4) the claim fails on all five, on its phase-2 condition only: weak control's query
# neurons are as condensed as strong control's — per data seed 88–100 % grouped and mean |cos| 0.55–0.85, against
# 98–100 % and 0.55–0.98 — while phase 1 stays uncondensed (none grouped, 0.15–0.17). Weak control still answers
# almost no unseen pair (OOD 0.00–0.03) where strong control reasons (0.52–0.72): at this size condensation no
# longer tells phase 2 from phase 3. It still follows γ: at the book's λ = 0.01 the book's three γ of 图13.10 (0.2,
# 0.5, 0.8) give mean |cos| 0.10, 0.25–0.29 and 0.55–0.78 (grouped 0 %, 0–11 %, 84–100 %). Reasoning does not follow γ
# there: the grid's γ = 0.5 model answers 0.10–0.77 of the unseen pairs (0.77 on seed 0, with no neuron grouped),
# γ = 0.8 at most 0.04. **Classified: a phenomenon that does not hold as the book states it at this scale** — the
# figure ties slight condensation to phase 2 and strong condensation to phase 3; at d_model 64 the two come apart.
# Nothing was changed after seeing it.

# %% [markdown]
# ### Condensation over depth and γ (图13.11)
#
# The book repeats 图13.10 for depths 2–6 and γ = 0.3–0.7: at every depth the query neurons condense more as
# γ grows. (Its text says condensation grows "as the initialisation scale grows"; the figure, and 图13.10,
# show it growing with the initialisation **rate** γ, i.e. as the initialisation gets *smaller* — an
# erratum.) Our analogue is cheaper than the grid above: depths 2, 3, 4 and γ ∈ {0.3, 0.6, 0.9, 1.2} at
# λ = 0.01, a narrower model (d_model 16, 4000 training sequences) and only **300 steps**. That is early in
# training — the models are still near chance on the task (ID accuracy printed below) — so what we see is
# the initial-stage condensation of chapter 8, which the book's trained models keep; whether ours keep it
# after fitting is beyond this budget (the full profile trains the chapter's model for 3000 steps).
# Each depth is one batched run over γ (cached).

# %%
DEPTH_GAMMAS = pick(quick=(0.3, 0.6, 0.9, 1.2), full=(0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 1.1),
                    smoke=(0.3, 0.5, 0.7))  # a smoke run: three of the book's columns (the claim below needs three)
DEPTHS = pick(quick=(2, 3, 4), full=(2, 3, 4, 5, 6), smoke=(2, 6))  # a smoke run: the shallowest and the deepest
depth_cond = complexity.run_depth_condensation(
    DEPTH_GAMMAS, DEPTHS, lam=0.01, seed=S0,
    steps=pick_steps(quick=300, full=3000, every=10, smoke=5),  # records its end
    **pick(quick=dict(n_train=4000, n_test=300, d_model=16),
           full=dict(n_train=20000, n_test=1000, d_model=64, lr=3e-3, batch_size=128),
           smoke=dict(n_train=20000, n_test=100, d_model=64, lr=3e-3, batch_size=128)))
fig, axes = panels(len(DEPTHS) * len(DEPTH_GAMMAS), width=2.4, height=2.1, nrows=len(DEPTHS))
for i, depth in enumerate(DEPTHS[::-1]):  # deepest on top, as in the book
    row = len(DEPTHS) - 1 - i
    for j, g in enumerate(DEPTH_GAMMAS):
        ax = axes[i * len(DEPTH_GAMMAS) + j]
        ax.imshow(depth_cond.cosine[row, j], cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set(title=f"depth {depth}, γ = {g}: {depth_cond.condensation[row, j]:.2f}, "
                     f"{depth_cond.grouped[row, j]:.0%}", xticks=[], yticks=[])
        ax.grid(False)
plt.show()
print(f"{depth_cond.seconds:.0f} CPU-s; ID accuracy after the short training:",
      {f"depth {d}": np.round(a, 2).tolist() for d, a in zip(DEPTHS, depth_cond.id_accuracy)})

# %% [markdown]
# The claim, with the conditions of the 图13.10 claim applied at **every** depth to the largest γ (1.2): at
# least half of the query neurons grouped (cosine > 0.7 with another neuron) and mean |cos| ≥ 0.3 (independent
# random directions in 16 dimensions: 0.20). The titles above give both (mean |cos|, share grouped). Its negative
# control applies it to the smallest γ, 0.3, at every depth: the book's own 图13.11 starts there, between its phase
# 1 (γ = 0.2) and phase 2 (near 0.5) and nearer phase 1, and so it is on our grid (γ = 0.2 slow-fitting phase 1,
# γ = 0.5 fits ID). After 300 steps no model of this run has fitted anything, so the phase is read from γ, not
# from the accuracies. On tuning seeds (data seeds 100–104) γ = 1.2 had 69–100 % of its neurons grouped
# and mean |cos| 0.43–0.87, γ = 0.3 at most 2 of 16 neurons grouped and 0.18–0.22. The γ values in between are not
# claimed (the previous version, a rank correlation ≥ 0.7 over four γ values per depth, passed thinly: ρ moves in
# steps of 0.2). The claim changed after seeds 0–19 were seen, so `COMPANION_SEED` 500–519 validate it.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_wq_depth(depth_cond))

# %% [markdown]
# **At the full profile** (seeds 0–4) the claim holds on all five, at the full profile's own depths and γ: depths 2–6,
# γ = 1.1 (the largest of that run), at least 95 % of the query neurons grouped at every depth, mean |cos| ≥ 0.54.

# %% [markdown]
# **图13.11 as the book draws it (the full profile).** The run above is early in training, and the claim reads only the
# ends of its γ range. The book's figure is on trained models, at depths 2–6 and the five columns γ = 0.3, 0.4, 0.5,
# 0.6, 0.7, and says condensation grows across them. The full profile's depth run is that figure at our scale (d_model
# 64 instead of 400, 20 000 training sequences, 3000 steps at learning rate 3·10⁻³, λ = 0.01, one model per cell; γ =
# 0.9 and 1.1 beyond the book's range). There the models from γ = 0.5 on fit (86–100 % of their ID test set over
# seven seeds); the large initialisations γ = 0.3 and 0.4 fit at depths 2–3 and not always deeper (at depth 6
# down to 1 %) — the book's phase 1 does not fit either.
# Its claim, `ch13.wq-depth-book`, asks at every depth: the query neurons of γ = 0.7 are condensed (the conditions
# above: at least half grouped, mean |cos| ≥ 0.3) in a model that answers at least 80 % of its ID test set — a
# trained model's condensation, not the initial one of chapter 8 — those of γ = 0.3 are not (under 10 % grouped:
# independent directions in 64 dimensions have a mean |cos| of 0.10), and the mean |cos| rises with γ over the five
# columns (Spearman ρ ≥ 0.8: at most two adjacent pairs out of order). Its negative control is the book's left column in the
# condensed role (γ = 0.3 read as the condensed end): it fails at every depth. At the quick profile the cell below
# judges nothing — 300 steps on near-chance models is not this figure; `COMPANION_PROFILE=full` runs it (about
# 31 CPU-minutes for the five depths on one thread).
#
# First designed on `COMPANION_SEED` 100 and 101 (data seeds 500 and 505): at γ = 0.7 64–100 % of the query neurons grouped
# and mean |cos| 0.40–0.70 at depths 2–6, each model answering ≥ 99.6 % of its ID test set; at γ = 0.3 none grouped,
# 0.10–0.12; ρ = 1 at every depth on both seeds. The book's left column need not fit (it lies by its phase 1): the
# γ = 0.3 model fits at depths 2 and 3 but at depth 6 answers only 3 and 37 % of ID, so the condition of a trained
# model reads the condensed end (a first version asking every cell to fit was changed on the design seeds, before any
# other was run). That version asked ρ ≥ 0.9 and ID ≥ 0.9.
#
# **At the full profile** (seeds 0–4, on the CPU, from the runs of the report's sweep) that version passed on all five,
# but **thinly**: ρ is 1 at every depth on seed 1 only; on seeds 0, 2, 3 and 4 one depth has one adjacent pair of columns
# out of order — γ = 0.5 above 0.6, at depth 5 on seeds 0, 2, 4 and depth 2 on seed 3 — so ρ = 0.9, exactly the bound
# (and on seed 2 the γ = 0.7, depth-2 model answers 90.5 % of ID). The report counts a claim whose median margin is
# on its bound as below the standard, so 图13.11 stays partial. The ends hold with room on every seed: γ = 0.7 59–100 %
# grouped, mean |cos| 0.41–0.67, ID ≥ 0.905; γ = 0.3 none grouped, 0.10–0.12. The control fails every condition on
# all seven seeds. One bug was found on seeds 0–4 and fixed: ρ = 0.9 came out of SciPy as 0.8999999999999998 and
# failed its own "≥ 0.9" on those four seeds (the check now reads ρ and the accuracy at their resolution); nothing
# else changed. Beyond the book's range the rise goes on to γ = 0.9 (at 23 of the 25 depths over seeds 0–4) and
# then stops: from γ = 0.9 to 1.1 the mean |cos| falls at 16 of 25. A redesign is fixed here before any other seed
# is seen — ρ ≥ 0.8 (at most two adjacent swaps) and ID ≥ 0.8 at γ = 0.7, so that the bounds lie between the values
# one model per cell gives rather than on one of them — validated on fresh seeds (`COMPANION_SEED` 500–504).
#
# **On the fresh seeds** (2026-12-05, this depth run on seeds 500–504, on an Intel Xeon): the redesign held on all
# five, median margin +0.125 — ρ never below 0.9 at any depth (one adjacent pair swapped, γ = 0.5 and 0.6 six times
# of seven, 0.6 and 0.7 once), γ = 0.7 67–100 % grouped with mean |cos| 0.42–0.80 in models answering ≥ 89.7 % of
# ID, γ = 0.3 none grouped. The first version would have held on four of five (seed 503's γ = 0.7 model at depth
# 2 answers 89.7 % of ID, under its 90 %) and on its ρ bound on two more. The cell below judges the redesign (in the
# check since 2026-12-06). Being changed after seeds 0–4 were seen, it is validated in the full-profile report on
# `COMPANION_SEED` 500–504 — the chapter's full profile run on those seeds, not the depth run alone — and its
# results on 0–4 are shown there as in-sample. **In the report** (2026-12-06) it holds on all five of those seeds,
# margins +0.125, +0.25, +0.25, +0.121 and +0.125 (the same numbers as the depth runs alone): 图13.11 is reproduced
# as the book draws it, at the full profile.

# %%
# NBVAL_CHECK_OUTPUT
if pick(quick=False, full=True):  # the full profile (and its smoke run, which prints ◇ SMOKE)
    show(complexity.check_wq_depth_book(depth_cond))
else:
    print("ch13.wq-depth-book (图13.11 on trained models, depths 2–6, γ 0.3–0.7): judged at the full profile only")

# %% [markdown]
# ### Token embeddings (图13.12)
#
# PCA of the embedding vectors of the number tokens 20–99. A reasoning model must represent "x + 5" for
# every x, so the numbers need an ordered, low-dimensional layout; a memorising model does not. The
# measure is the share of variance in the top two principal components (random vectors in 32 dimensions
# give ≈ 0.15), over the whole γ × λ grid; the scatter plots show weak vs strong control.

# %%
emb_var = complexity.grid_measure(run, "embedding_variance")  # (γ, λ) → top-2 PCA variance share
rho_emb = complexity.rank_correlation([g for g, _ in emb_var], list(emb_var.values()))
emb_by_gamma = {g: float(np.mean([emb_var[(g, l)] for l in LAMBDAS])) for g in GAMMAS}
fig, axes = panels(2, width=4.0, height=3.3)
for ax, c in zip(axes, (WEAK, STRONG)):
    xy, ratio = attention.pca(model.member_weight("w_em", run.members(*c)[0])[20:100].numpy(), 2)
    points = ax.scatter(xy[:, 0], xy[:, 1], c=np.arange(20, 100), cmap="viridis", s=12)
    ax.set(title=f"γ = {c[0]}, λ = {c[1]}: top-2 variance {ratio.sum():.2f}", xlabel="PC1", ylabel="PC2")
plt.colorbar(points, ax=axes[-1], fraction=0.05, label="token value")
plt.show()
print("top-2 PCA variance of the number embeddings by γ (mean over λ):",
      {g: round(v, 2) for g, v in emb_by_gamma.items()}, f"Spearman ρ(γ, variance) = {rho_emb:.2f}")

# %% [markdown]
# How low-dimensional the embeddings are is not yet the book's statement, which is about their *order* (below).
# The book's stronger statement, that the variance at γ = 1.4 is at least **twice** that at γ = 0.5 (the
# digest behind this notebook measured 0.63 against 0.13 with a wider model), is an **exploration**: the
# ratio was 1.8–2.5 over `COMPANION_SEED` = 0–6 and fell below 2 for seed 6 (0.60 against 0.34); over
# seeds 0–19 it held on 15 of 20 (robustness report). An earlier version of the claim kept only
# "larger at γ = 1.4 than at γ = 0.5" after that failure: a threshold loosened after a failure is not a
# claim, so the factor stays stated and measured here, not claimed. Random vectors would give about 0.15:
# even the memorising models' embeddings carry some order (0.3–0.4), and the reasoning models' carry more.

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_embedding_contrast(run))

# %% [markdown]
# **The order itself.** A low-dimensional layout is not yet an ordered one: on a task without arithmetic (each
# anchor pair maps the key through its own random permutation of 20–99) the top-2 variance share rises with γ just
# as it does here. The book's statement (§13.5.2) is about order: in phase 3 the token embeddings are "以有序和规则的
# 方式排列" (arranged in an ordered, regular way), in phases 1 and 2 they show no clear structure. We measure the
# order as in chapter 12 (图12.7), in the embedding space itself: for every number 20–99, the mean |value
# difference| to its 5 nearest neighbours in embedding space, compared with that to a random other number
# (`anchor_tasks.embedding_order`: about 1 for an embedding blind to order).

# %%
emb_order = complexity.grid_measure(run, "embedding_order")  # (γ, λ) → random / 5-NN value gap
print("random / 5-NN value gap of the number embeddings:")
for g in GAMMAS:
    print(f"  γ = {g}: " + ", ".join(f"λ = {l}: {emb_order[(g, l)]:.1f}" for l in LAMBDAS))

# %% [markdown]
# The claim: in phase 3 (γ = 1.4) the ratio is ≥ 3 at every λ of the grid (the threshold of chapter 12's claim on
# the same measure). Its negative control applies the same check to the phase-1 cells (γ = 0.2) of the same grid,
# which must fail. On the tuning seeds (`COMPANION_SEED` 100–104) the ratio at γ = 1.4 was 4.3–7.3 (smallest over
# λ: 4.3, 5.2, 6.0, 4.3, 5.0), at γ = 0.2 1.3–2.6. What is **not** checked: the book's phase 2 without structure
# does not reproduce at this scale — the cells at γ = 0.5 and 0.8, which fit ID, were ordered too (2.9–5.6) — and
# the book's finer statement, that the order is not that of the values but runs in steps of 3 and 4 (the
# differences between the single-anchor shifts +5, +1, −2, −8), is not claimed: a number's nearest neighbour in
# embedding space lay 3 or 4 away in value for 26–97 % of the numbers at γ ≥ 0.5 (over half in 34 of those 40
# cells; chance: about 5 %), but also for 11–36 % at γ = 0.2, too close a contrast for a claim.
#
# Phase 2 is ordered in the other runs of section 2 as well (design seeds 100–105, the 4 nearest neighbours of each
# number, means of three models): 36–46 % of the neighbours lay 3 or 4 away in value for the memorisation run's
# phase-2 models (γ = 0.5), 57–64 % for weak control, 43–58 % for strong control (phase 3) and 12–17 % for the
# memorising phase 1 (γ = 0.2); 1 or 2 away — the order of the values — only 1–13 %, except one strong-control
# triple (38 %). So the form the book describes (steps of 3 and 4, not the values' order) is there, in phase 2 and
# phase 3 alike: the contrast the figure draws between them does not reproduce at our scale. Trained for 105 epochs
# it does: on 图13.5's sweep at λ = 0.01 phase 2's (γ = 0.5) embeddings are no longer ordered and phase 3's run in
# steps of 3 and 4 — the claim `ch13.sweep-embeddings`, judged at the full profile (section 2).

# %%
# NBVAL_CHECK_OUTPUT
show(complexity.check_ordered_embeddings(run))

# %% [markdown]
# **At the full profile** (seeds 0–4) the claim holds on seeds 1–4 (gap 5.4–14.6 over the five λ at γ = 1.4) and
# fails on seed 0 in one cell: γ = 1.4, λ = 0.03 gives 2.7 where the other four give 5.3–6.8 — a model that reasons
# (OOD 0.73). Phase 1's cells stay near 1 (γ = 0.2: 1.1–2.0 for λ ≤ 0.3). **Classified: the phenomenon, thinner than
# the book draws it at this scale** (one cell of twenty-five over the five seeds); not a bug (the measure is chapter
# 12's), and no setting was changed.

# %% [markdown]
# ## 4. The authors' stored results (their composition task)
#
# The authors' repository (understanding_dl, `code/book_jupyter_composition_task/result_*`) stores one
# run per init rate of their GPT-2-style model (2 layers, 1 head, d_model 400, d_ff 1200, 9-token sequences over
# the numbers 20–100, 810 000 training sequences, batch 2048, AdamW with its default weight decay 0.01, warmed up
# over 10 epochs to 2·10⁻⁴ then cosine, 210 epochs); each took about 75 GPU-minutes. Their logs give, at the last
# epoch:
#
# | init rate γ | authors: train / ID / OOD accuracy | phase | this notebook |
# |---|---|---|---|
# | 0.1 | 0.30 / 0.02 / 0.01 | 1: memorises what it fits | memorisation run, γ = 0.2: training accuracy ≥ 0.2 above ID, ID < 0.9 (claimed); the grid's γ = 0.2 fits slowly |
# | 0.5 | 1.00 / 1.00 / 0.00 (stopped at epoch 26) | 2 | γ = 0.8, λ = 0.01 (weak control): ID ≥ 0.95, OOD 0.00–0.17 |
# | 0.8 | 1.00 / 1.00 / 0.97 | 3 | γ = 1.4, λ = 0.1 (strong control): OOD 0.23–0.93 (means of 3: 0.43–0.73) |
#
# Two differences from the book's text: their ID test holds out, at each key position p, the keys x ≡ p (mod 9)
# (ours: mod 4 over our 6-token sequences), and their OOD set is (d, c) alone, while the training data keep
# (c, d) with its target moved by +4, so that symmetry alone cannot answer (d, c); the book (and this notebook)
# hold out both (c, d) and (d, c). The printed line below gives this run's OOD accuracy at each γ; our γ axis is
# shifted (section 2).

# %%
ood_ours = {g: round(run.final("OOD", g, 0.1), 3) for g in GAMMAS}
print("this run, OOD accuracy at λ = 0.1:", ood_ours)
print("this run, OOD accuracy at λ = 0.01:", {g: round(run.final("OOD", g, 0.01), 3) for g in GAMMAS})

# %% [markdown]
# ## 5. Explorer
#
# Choose γ, λ, the depth and the training steps; the panel shows the model's ID and OOD accuracy, its
# commutativity on the unseen pairs, and the cosine matrix of its W^{Q(1)} neurons. At the default 100 steps a
# model trains in about a second and shows the W^{Q(1)} condensation, but nothing is fitted yet; at 1000 steps
# (precomputed for the grid's γ and λ, about 10 s live for other values) it shows memorising against reasoning.

# %%
explorer = complexity.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## 6. Exercises (习题)
#
# 1. With the explorer at 1000 steps, fix γ = 1.4 and lower λ from 0.1 to 0.001: does the OOD accuracy survive?
#    Then fix λ = 0.1 and lower γ. Which knob matters more at this scale?
#
#    Worked solution: run `from companion.solutions.ch13 import solution; solution(1)` (on the site: the "Solution" toggle below).
# 2. (图13.9) Repeat the second-anchor masking on the **grid** run (`complexity.second_anchor_masked(run,
#    probe)`) and compute `complexity.first_anchor_blocks` for every γ at λ = 0.1. Where along γ does the
#    within-group cosine rise? Then leave the outputs uncentred (`attention.neuron_cosine` of the raw
#    outputs): how much of the similarity is a shared offset?
#
#    Worked solution: run `from companion.solutions.ch13 import solution; solution(2)` (on the site: the "Solution" toggle below).
# 3. Why does a small initialisation favour the reasoning solution? Relate it to condensation (chapter 8):
#    how many distinct "directions" does a solution that composes four single-anchor maps need, compared
#    with one that memorises 14 pair maps?
#
#    Worked solution: run `from companion.solutions.ch13 import solution; solution(3)` (on the site: the "Solution" toggle below).
#
# ## Summary
#
# * The book: the same transformer fits the same data by memorising pair maps (large initialisation,
#   small λ) or by composing the four single-anchor maps (small initialisation, larger λ) — only the latter
#   solves the unseen pairs. At CPU scale the contrast between weak and strong complexity control holds on
#   the mean of three seeds, with the reasoning phase at a larger γ than the book's (≈ 1.1–1.4 instead of
#   ≈ 0.8) and single runs that vary (the level strong control reaches, mean OOD ≥ 0.5, is an exploration).
#   Phase 1 — memorising without generalising even in distribution — needs data the model can go over many
#   times: with 3000 training sequences the large initialisation (γ = 0.2) answers its training sequences far
#   more often than new ones, and with the key masked its outputs overlap where the phase-2 model's form one
#   cluster per composite map (图13.5, 图13.8, both claimed); with 20000 sequences and our budget it only fits
#   slowly.
# * The memorising model already treats (c, d) and (d, c) as one unit (commutativity), and with the key
#   masked both the memorising and the reasoning models put the two unseen orders into one cluster (图13.8).
#   The book's contrast — a larger initialisation inside phase 2 keeping the two orders apart — does not
#   reproduce at this scale (an exploration).
# * Small initialisation condenses the query neurons, more from phase to phase — none grouped in phase 1, about
#   half in loose groups in phase 2, nearly all in tight groups in phase 3 (图13.10, claimed) — and at every depth
#   we tried (图13.11; on trained models at depths 2–6 the rise over the book's γ 0.3–0.7 holds at the full profile
#   with at most one pair of columns out of order at any depth, on the design seeds, on seeds 0–4 in-sample and on
#   the fresh seeds 500–504 that judge it); it also orders the number embeddings — the low-complexity signatures the chapter ties
#   to reasoning, as the condensation chapters predict.
# * One of the chapter's finer mechanism pictures stays an exploration at this scale: with the second anchor
#   masked, strong control groups inputs by g(x; a1) as the book's phase 3 does, but our weak-control
#   models do so nearly as much (图13.9).
# * The second part (`ch13b_real_tasks_and_prediction`) takes the finding to addition learned from scratch
#   (图13.14(C)) and tests the chapter's prediction on fitting speed (图13.17, 图13.19).

# %% [markdown]
# **Where each figure stands.** The chapter's ten figures that fit a CPU, the scale at which each is checked, and
# its verdict (`python -m companion coverage`; the counts are `robustness/report.json` for the quick profile, 20
# validation seeds, and `robustness/report-full.json` for the full one, five).
#
# | figure | the book's statement | quick profile (d_model 32, minutes) | full profile (d_model 64 and the 105-epoch sweep, hours on a CPU) | status |
# |---|---|---|---|---|
# | 图13.5 | three phases along γ at λ = 0.01 | phase 1 claimed (memorisation run, 20/20); weak against strong control claimed (20/20); phase 3's level an exploration (18/20) | all three in one sweep: exploration `one-sweep`, 3 of seeds 0–4 | partial |
# | 图13.6 | OOD rises over the γ × λ map; poorly commutative cells in phase 2 | two cells compared (claimed); the poorly commutative cells do not appear (exploration, 0/20) | the same (0/5) | partial |
# | 图13.8 | key masked: phase 1's clusters overlap, phase 2's one per map; a larger-initialisation phase 2 keeps (c, d) and (d, c) apart | the clusters claimed (20/20 each); the middle panel does not reproduce | the clusters 5/5; the middle panel 0/5 | partial |
# | 图13.9 | phase 3's step-by-step blocks | exploration, 0/20 (weak control shows them nearly as much) | 0/5 | drawn |
# | 图13.10 | query-neuron condensation grows from phase to phase | claimed, 20/20 | the book's own sweep 5/5 (smallest margin +0.99); read with the chapter's cells 0/5 (weak control condenses like phase 3 at d_model 64) | **faithful** |
# | 图13.11 | the same at every depth 2–6 over γ 0.3–0.7, trained models | an analogue on near-chance models (300 steps) | claimed on trained models: 5/5 on the fresh seeds 500–504 (smallest margin +0.12), 5/5 in-sample on 0–4 | **faithful at the full profile** |
# | 图13.12 | phase 3's embeddings ordered in steps of 3 and 4; phases 1 and 2 not | a side statement (phase 3 ordered; phase 2 is ordered too) | the book's own sweep 5/5 (smallest margin +0.34) | **faithful at the full profile** |
# | 图13.14(C) | addition from scratch: small initialisation generalises, large does not | part two: exploration, 17/20 on each seed set | part two | drawn |
# | 图13.17 | small initialisation fits data of higher reasoning complexity more slowly | part two: exploration, 0/20 | part two (0/5) | drawn |
# | 图13.19 | the broken symmetric pairs are fitted more slowly | part two: exploration, 0/20 | part two (0/5) | drawn |
#
# What holds back the partial ones is scale rather than the reading: in the scale curve (section 2) phase 3's level
# and the poorly commutative phase-2 model of 图13.6 and 图13.8's middle panel come and go with the data draw at every
# size a CPU reaches, and the authors' run — d_model 400, 810 000 sequences, 210 epochs — is a GPU's work.
