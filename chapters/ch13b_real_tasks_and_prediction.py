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
# # Chapter 13 — Complexity control, part two: real tasks and the chapter's prediction (复杂度控制（二）：现实任务上的验证与机制预测)
#
# *深度学习现象导论*, chapter 13 (§13.6, §13.7), after Zhang, Wang, Yao, Zhang, Xu et al., "Initialization is critical
# to whether transformers fit composite functions by reasoning or memorizing" (NeurIPS 2024). The first part of the
# chapter (`ch13_complexity_control`) trains the composite anchor task (复合锚函数任务) over the **initialisation
# rate** γ (初始化率: every weight ~ N(0, (d_in^{−γ})²); a large γ is a small initialisation) and the **weight decay**
# λ (权重衰减), and finds the phases in which a transformer memorises (记忆型解) or reasons (推理型解), and the
# mechanisms behind them. This part takes the chapter's last two steps:
#
# 1. **beyond anchor functions** (§13.6, 在现实任务上的进一步验证): addition learned from scratch with a held-out
#    square of operands, solved by a small initialisation with a large weight decay on most seeds and by a large
#    initialisation with a small one on none (图13.14(C), an exploration: the first one fails on one seed in five);
# 2. **the chapter's prediction** (§13.7, 对不同解决方案背后机制的预测): a model that prefers the reasoning solution
#    should fit data of higher **reasoning complexity** (推理复杂度) more slowly, a memorising one should not
#    (图13.17), and inside one run the pairs an exception disturbs should be the slow ones (图13.19) — both measured
#    and stated with their pass rates (explorations) at this scale.
#
# Model: the chapter's 2-layer, 1-head post-LN decoder (`companion.core.transformer`, eq. (13.3)–(13.6)) with AdamW
# (the book's "Adam with weight decay") and a warm-up + cosine learning rate, cross-entropy on the last token; each
# (γ, λ) of a run is one member of **one batched ensemble** (cached on disk), and
# `companion.experiments.ch13b_prediction` has the runs and the checks. This part was split from the first when the
# whole chapter ran over its quick-profile budget; the chapter map (README) gives each part's measured time. Full
# profile: section 1 as in the quick profile; section 2 at depths 2–6 with nine replicas a setting (about 2½ hours on
# one CPU thread — depths 2–6 took 12–13, 18–19, 27–28, 34–35 and 40–41 minutes on seeds 1–4 — cached per depth
# so that a stopped run resumes).
# On an NVIDIA H200 (2026-12-04), seeds 0–4 side by side with ten other full-profile runs on the one GPU, none had
# finished after 507 s; its time alone on a GPU is still to be measured. The full report holds seeds 0–4, run on the
# CPU (section 2 gives what they show); the first runs of seeds 0 and 1 had shown a flaw in the data of section 2,
# fixed before they finished (below).

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

from companion.experiments import ch13b_prediction as prediction
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.plots import panels
from companion.kit.seeds import active_seed

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. Addition from scratch (§13.6, 图13.14(C))
#
# §13.6 carries the finding beyond anchor functions. One of its tests is plain addition: a + b = c with
# a, b ∈ [0, 999], every pair with **both** a and b in [400, 600] held out as the test set and all other
# pairs trained. No training pair lies near a test pair on both operands, so a model that answers the square
# has learned the rule, and one that has memorised the table has nothing to go on. 图13.14(C): a 2-layer,
# 1-head model trained from scratch generalises with a small initialisation or a large weight decay and does
# not with a large initialisation or a small weight decay (the book also fine-tunes GPT-2, which needs its
# pretrained weights: not here).
#
# **Our analogue.** Numbers 0–99, each one token, and the square [40, 60]² held out (441 test pairs,
# 9559 training pairs, each once): the same fifth of each axis as the book's. A sequence is (a, b) and the
# model answers the token a + b at the last position. The book's range was tried first: with 1000 number
# tokens (d_model 64, 1000 steps) nothing was learned, train and test accuracy ≤ 0.01. The model is the
# chapter's 2-layer, 1-head decoder at d_model 64, trained 4000 steps (batches of 256, AdamW at 2·10⁻²,
# warm-up + cosine); two settings, as the figure's two colours:
#
# * **large initialisation, small weight decay** (γ = 0.3, λ = 0.01) and
# * **small initialisation, large weight decay** (γ = 1.0, λ = 0.5).
#
# The γ and λ here are not those of part one (its section 2): they were chosen on design seeds 110–131. A weaker pair first,
# (γ = 0.8, λ = 0.5) against (γ = 0.3, λ = 0.1), generalised on 9 of 10 design seeds and not on `COMPANION_SEED`
# 0 (65 % of the square), so the check moved to (1.0, 0.5) against (0.3, 0.01), to be judged on the fresh seeds
# 500–519. On design seeds 120–130 the small-initialisation model answered 87–100 % of the square and the
# large-initialisation model 1–5 % (seeds 128–130), fitting every training pair; design seed 131, whose result came in
# after the settings were fixed, already showed the failure seen below (24 %). The budget matters: at 6000 steps a
# large initialisation with λ = 0.1 reached 92 % of the square on one design seed of four (the weight decay catches
# up late), and with λ = 1.0 the small-initialisation model was still fitting at 4000 steps.
#
# **What the validation seeds showed.** The contrast of the figure is there on almost every seed, but the level is
# not robust, so the check below is an **exploration**: it held on 16 of 20 seeds of 0–19 and 16 of 20 of 500–519.
# The large-initialisation model fitted every training pair and answered at most 22 % of the square on all 40
# seeds (median 7 %). The small-initialisation model answered ≥ 80 % of it on 32 of 40 seeds (on 21 of them
# ≥ 99.5 %), and 10–76 % on the other eight; on seed 12 it answered 10 %, as little as the large one: it had
# memorised too. (Those are the numbers of the first sweep, on an AMD EPYC. The report's sweep of 2026-12-06, on an
# Intel Xeon, whose sums differ in their last bits, gave 17 of 20 on each set, 34 of 40, the small initialisation
# short of 80 % on seeds 9, 16, 17, 504 and 505 and short of the gap on 514.) One model per setting and seed is what the notebook's budget allows (two models are about 40
# CPU-seconds on one thread; the count printed below includes a borrowed second core); the maps below show each
# model's error for every pair, the square outlined.
#
# **Other trainings tried** (design seeds 140–151, after the validation above; the small-initialisation model alone,
# how many of the 12 seeds answer ≥ 80 % of the square): the setting above 9 of 12 (0.24, 0.52 and 0.63 on the
# others); a learning rate of 10⁻² 7; 6000 steps 11 (seed 144: 0.14, after reaching 0.27 and falling back);
# 6000 steps at 3·10⁻² 10; λ = 0.7 with 6000 steps 8; γ = 1.4 7; λ = 1.0 none — still fitting at 4000 steps
# (training accuracy 0.54–0.73). Every one fails on one seed in ten or more, each time by memorising (a model that
# generalises answers 0.9–1.0 of the square, one that does not 0.1–0.6), so no setting within this budget makes the
# check a claim; which seeds fail changes with the setting.
#
# **Three models a setting** (2026-12-04, after all of the above): one large initialisation and three small ones, each
# with its own initialisation and mini-batches, 6000 steps, the check read on the small ones' median. Designed on seeds
# 170–181: at d_model 48, 3 of the 36 small-initialisation models answered less than 80 % of the square (0.39, 0.50,
# 0.77) and every seed's median at least 90 % (d_model 64 did the same on seeds 170–178 at 1.6 times the cost: 3 of
# 27). Judged as a claim would be — on seeds 500–519, and shown on 0–19 — the median held on 19 of 20 and 18 of 20
# (seeds 8, 11 and 509: medians 0.48, 0.73, 0.76), while the large initialisation fitted every training pair and
# answered at most 21 % of the square on all 40 seeds. On those 40 seeds 19 of the 120 small-initialisation models
# missed, one in six (the design seeds had one in twelve), and with one model in six missing, a median of three misses
# on about one seed in fourteen: three replicas do not make the check robust either, at 70 s for this notebook rather
# than 53. The notebook keeps one model per setting.
#
# **Towards the book's numbers** (2026-12-07, a measurement on design seeds 100–105, not a claim). The book adds
# numbers 0–999 and holds out [400, 600]²; ours are 0–99 and [40, 60]². At 0–199, with [80, 120]² held out (38 319
# training pairs, 1681 in the square) and the same two models (d_model 64, learning rate 2·10⁻², batches of 256):
# after 4000 steps neither fits its training pairs (seeds 100–102: large initialisation 0.57–0.99, small 0.62–0.91);
# after 16 000 steps the large initialisation fits every one of them and answers 4–10 % of the square on all six
# seeds, and the small initialisation answers all of it on five and 79 % on the sixth (seed 101, still rising: 39 %,
# 61 %, 79 % at steps 12 800, 14 400, 16 000). Its answer comes late on every seed — at most 51 % of the square at
# step 12 800, the training pairs long fitted — so the step budget decides the level, at this size as at ours. One
# seed in six short of 80 %, as at 0–99, so twice the numbers do not make the check robust either; each seed took
# 490–550 s on one thread of the Intel Xeon (with subnormal floats flushed to zero; 1005 s without, the same
# numbers), the book's 0–999 is a GPU's work.

# %%
ADDITION = dict(steps=pick_steps(quick=4000, full=4000, every=400, smoke=5), record_every=pick(quick=400, full=400,
                                                                                                smoke=1))
addition = prediction.run_addition((prediction.ADDITION_WEAK, prediction.ADDITION_STRONG), seed=seed, **ADDITION)
answers = addition.sums()  # (2, 100, 100): each model's answer to every pair (a, b)
truth = np.add.outer(np.arange(addition.top + 1), np.arange(addition.top + 1))
lo, hi = addition.held
fig, axes = panels(3, width=3.4)
for k, (g, lam) in enumerate(addition.settings):
    axes[0].plot(addition.steps, addition.accuracy["OOD"][:, k], label=f"γ = {g}, λ = {lam}")
    axes[0].plot(addition.steps, addition.accuracy["train"][:, k], ":", color=axes[0].lines[-1].get_color())
    image = axes[k + 1].imshow(np.abs(answers[k] - truth).clip(max=10), origin="lower", cmap="magma_r", vmin=0, vmax=10)
    axes[k + 1].add_patch(plt.Rectangle((lo - 0.5, lo - 0.5), hi - lo + 1, hi - lo + 1, fill=False, ec="#1f77b4", lw=1.5))
    axes[k + 1].set(xlabel="b", ylabel="a", title=f"|answer − (a + b)|, γ = {g}, λ = {lam}")
axes[0].plot([], [], "k-", label="held-out square")
axes[0].plot([], [], "k:", label="training pairs")
axes[0].set(xlabel="step", ylabel="accuracy", title="Fig. 13.14(C) analogue", ylim=(-0.03, 1.03))
axes[0].legend(fontsize=6)
plt.colorbar(image, ax=axes[2], fraction=0.05, label="error (clipped at 10)")
plt.show()
print(f"2 models in {addition.seconds:.0f} CPU-s")

# %% [markdown]
# The check (an exploration: 16/20 on seeds 0–19 and on 500–519): the small-initialisation model answers at
# least 80 % of the held-out square; the large-initialisation model fits its training pairs (≥ 0.9) and answers
# the square at least 0.3 less often. The levels were fixed on the design seeds; `tests/test_controls_ch13.py`
# puts the large-initialisation model in the small one's place, where the check fails.

# %%
# NBVAL_CHECK_OUTPUT
show(prediction.check_addition(addition))

# %% [markdown]
# ## 2. The chapter's prediction: fitting speed and reasoning complexity (§13.7, 图13.17, 图13.19)
#
# §13.7 turns the analysis into a prediction that can fail. Make data whose **reasoning complexity**
# (推理复杂度) k is the number of symmetric anchor groups that break the composition rule:
# f(x; a_i, a_j) = f(x; a_j, a_i) ≠ g(g(x; a_i); a_j). A model that prefers the low-complexity,
# reasoning solution (small initialisation) should need **more** steps to fit data with larger k, since
# every broken group is an exception it must memorise; a model that memorises anyway (large
# initialisation) should need about the **same** number of steps whatever k is. 图13.19 looks inside one
# such run: with the group {a, b} broken (k = 1), the small-initialisation model fits the pairs (a, b),
# (b, a), (a, a), (b, b) — those whose single-anchor maps the exception disturbs — more slowly than the rest.
#
# Our analogue: all 16 pairs in training; the j-th broken group maps x ↦ x + shift(a_i) + shift(a_j) + o_j in both
# orders, with its own offset o_j (30, 55, 15, 70, 40, 85), groups broken in the order {a, b}, {c, d}, {a, c}, …;
# k ∈ {0, 1, 3}. 1536 training sequences
# (96 per pair), so that a memoriser can fit them; d_model 16, one layer (the book: larger models, depths
# on the x-axis, 9 trials per setting), one model per (init, k), 1000 steps. The book's "large" and "small"
# initialisations are γ = 0.5 and 0.8; at our scale the reasoning side needs stronger control (part one, section 2),
# so we compare γ = 0.5, λ = 0.01 with γ = 1.4, λ = 0.1. The book counts epochs until the training accuracy
# reaches 100 %. Within our budget the models do not reach 100 % (nor, at k = 3, 0.9): a count of steps to
# a level would be cut off at the budget, which is what defeated the first version of this check (steps to
# 0.9, 0 of 10 seeds, every ratio capped at 1.0–1.19). We measure instead the **mean training error over the
# run**, 1 − accuracy averaged over the recorded steps — the area above the training-accuracy curve as a
# fraction of the budget. A curve that reaches 1 at step T scores about T/budget, and a slower curve scores
# more whether or not it fits in time, so the ratio between two settings has no ceiling.
#
# **Why each broken group has its own offset.** Until 2026-12-04 every broken group was moved by the same +30. The
# full profile's first runs (seeds 0 and 1 on the CPU; depths 2, 3 and 4 of its 2–6 finished) showed what that does:
# the four groups broken at k = 4 — {a, b}, {c, d}, {a, c}, {b, d} — are exactly the pairs that cross the partition
# {a, d} | {b, c}, so one rule ("+30 across") covers all four exceptions. The small-initialisation models fitted
# k = 4 as fast as k = 0 (ratio of mean errors 0.96–1.02 at each depth and seed) while k = 2 and 3 were 1.07–1.29 ×
# slower. With an offset per group, k counts k exceptions, as the book's definition intends. On design seeds 100 and
# 101 at depth 2 (the full profile's other settings, three replicas) the ratio at k = 4 became 1.43 and 1.52, where
# the same seeds with one offset gave 0.99 and 1.04. Deeper models do not follow. The full profile's own runs with
# the new data (on the CPU: seeds 0–2 at depths 2–4, seed 0 at 5 and 6, seed 2 at 5) show the small initialisation
# slowing down at every depth (1.07–1.44 × at k = 4) but the large one too: by as much at depths 2 and 3
# (1.06–1.31 ×); from depth 4 on it does not fit data with exceptions (mean error 0.64–0.90), and at depths 5 and 6
# it does not train at all (0.98, chance). That last failure is our learning rate, not the phenomenon: we warm up to
# a peak of 10⁻², the authors' code to 2·10⁻⁴. On design seed 100 at depth 5 a peak of 2·10⁻³ trains the large
# initialisation (final training accuracy 1.00) — but then it slows down with one exception (1.36 ×) and the small
# one does not (1.02 ×), as at depth 4 with 3·10⁻³ on the same seed (1.34 × against 0.98 ×) and at depths 2 and 3
# with 2·10⁻³ (k = 4: the large initialisation 1.53 and 1.23 ×, the small one 1.00 and 1.02 ×): at a rate nearer the
# book's the contrast comes out the other way round. It stays reversed at depth 2 with the book's own pair of
# initialisations (γ 0.5 and 0.8, both λ 0.01: 1.53 × against 1.35 ×) and with the book's own measure, the steps
# until every pair is fitted (the large initialisation 2175–2475 steps at k = 0, 2875 to more than 4000 at k = 4; the
# small one 2550–3450, then 2125–2350). Whether the book's scale (d_model 400, 900 000 sequences) turns it round is
# for a GPU (a deep ensemble takes most of an hour on one CPU thread); `docs/full-profile.md` has the tables. The
# full report holds seeds 0–4 (on the CPU): both explorations fail on each (means over depths 2–6: the small
# initialisation 1.23, 1.24, 1.19, 1.24 and 1.22 × slower at k = 4, the large one 1.38, 1.38, 1.37, 1.31 and 1.38 ×;
# the disturbed pairs 1.08, 1.04, 1.05, 1.04 and 1.06 × the others).

# %%
FIT_INITS = ((0.5, 0.01), (1.4, 0.1))  # (γ, λ): large initialisation first, then small
FIT = dict(depths=pick(quick=(1,), full=(2, 3, 4, 5, 6), smoke=(2, 6)),
           complexities=pick(quick=(0, 1, 3), full=(0, 1, 2, 3, 4), smoke=(0, 1, 4)),  # smoke: k = 1 for 图13.19
           replicas=pick(quick=1, full=9, smoke=1), n_train=pick(quick=1536, full=4000), d_model=pick(quick=16, full=32),
           steps=pick_steps(quick=1000, full=4000, every=25, smoke=5))
fit = prediction.run_fit_speed(FIT_INITS, seed=seed, **FIT)
levels = sorted({s[2] for s in fit.settings})
depths = sorted({s[1] for s in fit.settings})
fig, axes = panels(3, width=3.6)
for ax, (i, (g, lam)) in zip(axes, enumerate(fit.inits)):
    for k in levels:
        ax.plot(fit.steps, fit.accuracy[:, fit.members(i, complexity=k)].mean(1), label=f"k = {k}")
    ax.set(xlabel="step", ylabel="training accuracy", title=f"γ = {g}, λ = {lam} (mean over depths)",
           ylim=(-0.03, 1.03))
    ax.legend()
for i, (g, lam) in enumerate(fit.inits):
    for d in depths:
        axes[2].plot(levels, [fit.mean_error(fit.members(i, d, k)) for k in levels], "o-" if i else "s--",
                     label=f"γ = {g}, depth {d}")
axes[2].set(xlabel="reasoning complexity k", ylabel="mean training error over the run",
            title="Fig. 13.17 analogue", xticks=levels)
axes[2].legend(fontsize=7)
plt.show()
print(f"{len(fit.settings)} models in {fit.seconds:.0f} CPU-s")

# %% [markdown]
# The prediction as a check: for the small initialisation, the mean training error at the highest k is at
# least 1.25 × that at k = 0 ("more steps"; the factor is the one the first version fixed before measuring),
# and the large initialisation's ratio moves away from 1 by less than half as much ("about the same").
# It stays an **exploration**: on tuning seeds (100–102) the small initialisation's ratio was 1.03–1.09 (with one
# offset for every group, 1.01–1.05), and the large initialisation's 1.05–1.10: at this scale neither model fits its
# data within the budget (mean errors 0.60–0.73), so both slow down a little and the prediction has nothing to show.
# Over `COMPANION_SEED` 0–19 and 500–519 it held on 0 of 40 seeds (robustness report; with one offset for every
# broken group, 0 of 20). The older settings (depths 1 and 2, 1500 steps, steps to 0.9) cost three times as much and
# held on 0 of 10 seeds.

# %%
# NBVAL_CHECK_OUTPUT
show(prediction.check_fit_speed(fit))

# %% [markdown]
# 图13.19 from the same run: the small-initialisation model with k = 1 (the group {a, b} broken), the mean
# training error of each pair on its own training sequences. The book's red pairs (a, b), (b, a), (a, a),
# (b, b) should be the slow ones; the check asks for ≥ 1.25 × the error of the other twelve. This too is an
# **exploration**: 0 of 40 over seeds 0–19 and 500–519 (0 of 20 with one offset for every broken group; with steps
# to 60 % in the first version: 1 of 10).

# %%
pair_error = fit.mean_error(fit.members(1, complexity=1), per_pair=True)  # (16,)
red = [p in prediction.HIGHLIGHTED_PAIRS for p in prediction.ALL_PAIRS]
fig, axes = panels(1, width=7.0, height=2.8)
axes[0].bar([prediction.pair_name(p) for p in prediction.ALL_PAIRS], pair_error,
            color=["#d62728" if r else "#1f77b4" for r in red])
axes[0].set(xlabel="anchor pair", ylabel="mean training error",
            title=f"Fig. 13.19 analogue: γ = {fit.inits[1][0]}, k = 1 ({{a, b}} broken; red: affected pairs)")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(prediction.check_pair_speed(fit))

# %% [markdown]
# ## Summary
#
# * Beyond anchor functions, addition learned from scratch shows the chapter's split (图13.14(C)), but not robustly
#   enough for a claim: with every pair of operands in [40, 60] held out, the large-initialisation, small-decay
#   model fits every training pair and answers at most 22 % of the square, while the small-initialisation,
#   large-decay model answers ≥ 80 % of it on 32 of 40 seeds (34 of 40 in the current report's sweep; an
#   exploration).
# * The prediction of §13.7 — a small initialisation slows down on data that break the composition rule, a large one
#   does not (图13.17), and the disturbed pairs are the slow ones (图13.19) — is measured and stated with its pass
#   rate rather than claimed: at this scale neither model fits its data within the budget, the small initialisation
#   slows down by 3–9 % (tuning seeds 100–102) and the large one by 5–10 %. At the full profile's depth 2 the
#   prediction shows on two design seeds (the small initialisation 1.43–1.52 × slower at k = 4, the large one
#   1.19–1.21 ×) once each broken group is an exception of its own; on the full profile's seeds 0–4 the large one
#   slows down as much, and at a learning rate nearer the book's the contrast reverses (section 2).
