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
# # Chapter 10 — The optimistic estimate of sample size (乐观估计)
#
# *深度学习现象导论*, chapter 10, and Zhang, Zhang, Xu et al., "Optimistic estimate uncovers the potential of
# nonlinear models" (2023).
#
# A nonlinear model can recover a target from **fewer samples than it has parameters**; a model linear in
# its parameters cannot. Linearising the model at the best point of the target set (目标集)
# Θ_{f*} = {θ | f_θ = f*} gives the number of samples that suffices there: the **model rank** (模型秩)
# R_{f_θ}(θ′) = dim span{∂_{θ_i} f(·; θ′)} (10.6), minimised over the target set (10.7) — the **optimistic
# sample size** (乐观样本量). This notebook:
#
# 1. **A model-rank calculator** reproducing (10.9), Example 2 (例2, ranks 3, 4, 4), (10.14) and (10.15)
#    exactly, plus Table 10.1 (表10.1).
# 2. **f_L versus f_NL** (图10.1, 图10.5a): same functions, different sample needs; small init reaches the
#    optimistic size, large init does not.
# 3. **Matrix completion** (矩阵补全, 图10.2, 图10.5b): transitions near 2rd − r²; with sample orders that identify
#    the target, as the book draws it, each rank within 2 entries of it; with the book's own order (rows and columns
#    of a cross), each rank at exactly 7, 12, 15, 16.
# 4. **CNN vs CNN without sharing vs fully connected** (图10.3): the order of the sample sizes needed, and
#    (图10.3(b)–(d)) how little it changes when the nets are made ten times wider.
# 5. **Small versus large initialisation** (图10.4): the same deep net, two init variances, a smooth fit and an
#    oscillating one.
#
# Mechanism in `companion.experiments.ch10_estimate`. Run time: quick profile ≈ 63 CPU-seconds (≈ 60 before 图10.2
# with the book's sample order, ≈ 55 before 图10.2 drawn as the book draws it, ≈ 40 before the width sweep of
# 图10.3(b)–(d)); full profile, before that sweep, 138 s
# on an NVIDIA H200 GPU shared with the other eleven chapters (one CPU thread each, seed 0), every claim held.

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

from companion.experiments import ch10_estimate as est
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.seeds import active_seed
from companion.experiments.ch10_estimate import (check_architecture_order, check_completion_exact,
                                check_completion_large_init, check_completion_order, check_completion_transition,
                                check_fl_vs_fnl, check_fnl_large_init, check_init_oscillation, check_rank_examples,
                                check_rank_formulas, check_width_at_optimistic, check_width_free)
from companion.kit.plots import panels

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. The model-rank calculator
#
# R_{f_θ}(θ′) is the numerical rank (singular values above 10⁻⁸ of the largest, float64) of the Jacobian
# J_{ki} = ∂_{θ_i} f(x_k; θ′) over 2000 random inputs x_k — the dimension of the span of the tangent
# functions.
#
# * (10.9): f_NL = θ0 + θ1 x1 + θ2θ3 x2 has rank 2 where θ2 = θ3 = 0 and 3 elsewhere (4 parameters); f_L
#   has rank 3 everywhere.
# * Example 2: a1 tanh(w1·x + 1) + a2 tanh(w2·x + 1) on the three pieces Q1 (w1 = w2 = w̄, a1 + a2 = ā),
#   Q2 (a2 = 0, w2 free), Q3 (a1 = 0, w1 free) of the target set of ā tanh(w̄·x + 1): ranks 3, 4, 4, so
#   the optimistic size is 3 (习题16).
# * (10.14): AB with A, B ∈ R^{4×4} at A = [U, 0], B = [V; 0] for a rank-r target: 2rd − r² = 7, 12, 15, 16.
# * (10.15)/(10.17) for the target (10.18), f* = Σ_{i=1}^{3} tanh(W*[1]_i · x): ⚠ the book says x ∈ R⁴ but
#   W*[1] is 3×5, so d = 5. A fully connected net of width m (M = 6m), a 1-D CNN with kernel size s = 3
#   and a CNN without weight sharing, each placed at the target's best point (extra neurons zero):
#   k(d+1) = 18 independent of m; CNN 1·(d+1) = 6; without sharing 3·(s+1) = 12.

# %%
ranks = est.model_ranks(seed + 10)
print(f"f_NL: {ranks.f_nl_best} at θ2=θ3=0, {ranks.f_nl_generic} elsewhere; f_L: {ranks.f_l}; "
      f"Example 2: {ranks.example2}")
print(f"matrix factorisation d=4, r=1..4: {ranks.matrix}; (10.18) FNN widths {list(ranks.fnn)}: "
      f"{list(ranks.fnn.values())}, CNN {ranks.cnn}, CNN without sharing {ranks.cnn_no_sharing} "
      f"(max |f − f*| = {ranks.fit_error:.1e})")

# %% [markdown]
# The two claims below compare each numerical rank with the book's value (the count of ranks that differ
# must be 0) and check that the nets placed at the best point of (10.18) hold the target to float64
# rounding (max |f − f*| ≤ 10⁻¹²).

# %%
# NBVAL_CHECK_OUTPUT
show(check_rank_examples(ranks))

# %%
# NBVAL_CHECK_OUTPUT
show(check_rank_formulas(ranks))

# %% [markdown]
# ### Table 10.1 as a calculator ("width is free, connections are expensive")
#
# For a d×d image, s×s kernels and a target of k kernels (m_null zero output weights). ⚠ For d = 28, s = 3
# the book's text quotes 709k, 6760k, 530660k; the table's own CNN formula gives s² + (d+1−s)² = 9 + 676 =
# 685 per kernel (the other two agree). Likewise the "700 parameters" of its 图10.3(b) 100x row (width 300,
# d = 5: 1800 parameters) matches no count.

# %%
for d, s, k in ((28, 3, 1), (28, 5, 2), (8, 3, 1)):
    print(f"d={d:2d} s={s} k={k}:", est.table_10_1(d, s, k))

# %% [markdown]
# ## 2. f_L versus f_NL (图10.1, 图10.5a)
#
# Targets c0 + c1 x1 + c2 x2, x ~ U[−1, 1]², full-batch GD on the mean squared error from θ ~ N(0, std²);
# median test error over the trials. The optimistic sizes: 3 for f_L and every target; for f_NL 2 when
# c2 = 0 (1, x1, 1 + x1) and 3 otherwise. The book uses init variance 10⁻⁸ (std 10⁻⁴).
#
# **Step size.** Each (target, n, trial) cell takes its own step lr = 0.5/λ_max, λ_max the largest
# eigenvalue of the loss's Hessian (2/n)FᵀF on its samples (F: the features 1, x1, x2). With one fixed step
# (lr 0.05) GD converges like (1 − lr·λ_min)^t, and nearly collinear 3-point samples (tiny λ_min) were still
# unconverged after 20 000 steps — a quarter of them, enough to push the median of a target to 4·10⁻⁷ on
# some seeds. That was unfinished optimisation, not a sample count: "recovered" means a median test error
# below 10⁻⁸, where converged float64 GD ends at 10⁻³⁰ … 10⁻¹⁴ and an unrecovered target stays above 10⁻³;
# the tolerance is unchanged, the optimisation now reaches it.

# %%
TRIALS = pick(quick=20, full=100)
STEPS_L = pick_steps(quick=20_000, full=40_000, every=10)  # records only its end
fits = est.fl_vs_fnl(TRIALS, STEPS_L, seed=seed, small_std=1e-4, large_std=0.3)

fig, axes = panels(3, width=3.6)
for ax, err, title in zip(axes, (fits.f_l, fits.f_nl, fits.f_nl_large),
                          ("f_L, std 1e-4", "f_NL, std 1e-4", "f_NL, std 0.3")):
    image = ax.imshow(np.log10(np.maximum(err, 1e-16)), cmap="viridis_r", vmin=-16, vmax=0, aspect="auto")
    ax.set_xticks(range(len(fits.ns)), fits.ns)
    ax.set_yticks(range(len(fits.names)), fits.names)
    ax.set_xlabel("samples n")
    ax.set_title(title)
    ax.grid(False)
plt.colorbar(image, ax=axes[-1], label="log10 median test error")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(check_fl_vs_fnl(fits))

# %%
# NBVAL_CHECK_OUTPUT
show(check_fnl_large_init(fits))

# %% [markdown]
# ## 3. Matrix completion (图10.2, 图10.5b)
#
# 4×4 targets of rank r (Gaussian factors, ‖M*‖_F = 4), n random observed entries, f_θ = AB trained by GD
# (lr 0.2, 6000 steps) on the mean squared error of the observed entries; **success = relative error
# < 10⁻³** over all 16 entries. All 4 ranks × 16 values of n × trials train as one batched
# computation. The optimistic sizes 2rd − r² = 7, 12, 15, 16 are the red lines.
#
# ⚠ The book shows success exactly from n = R. With random masks a mask of R entries is often not
# identifying (for rank 1 a row or column can be unobserved: only ≈ 37% of 7-entry masks identify a rank-1
# matrix, 84% of 9-entry ones), so the success rate rises *from* R and reaches 50% a few entries later.

# %%
TRIALS_MC = pick(quick=40, full=100, smoke=4)  # a smoke run: a few trials per cell
INITS = pick(quick=(1e-6, 0.5), full=(1e-6, 1e-4, 1e-2, 0.1, 0.5))
STEPS_MC = pick_steps(quick=6000, full=6000, every=10)  # records only its end
completion = est.matrix_completion([1, 2, 3, 4], np.arange(1, 17), TRIALS_MC, INITS, steps=STEPS_MC, seed=seed)

fig, axes = panels(len(INITS), width=4.0)
for ax, std in zip(axes, INITS):
    ax.imshow(completion.grids[std].success, cmap="magma", vmin=0, vmax=1, aspect="auto", origin="lower",
              extent=(0.5, 16.5, 0.5, 4.5))
    for r, opt in zip(completion.ranks, completion.optimistic):
        ax.plot([opt - 0.5, opt - 0.5], [r - 0.5, r + 0.5], color="r", lw=2)
    ax.set_xlabel("observed entries n")
    ax.set_ylabel("rank r")
    ax.set_title(f"success rate, init std {std:g}")
    ax.grid(False)
plt.show()
print("smallest n with ≥ 50% success, ranks 1–4:", {std: completion.half_point(g).tolist()
                                                    for std, g in completion.grids.items()})

# %% [markdown]
# The claim of 图10.2 checks two things: below R = 2rd − r² no rank succeeds in more than 10% of the
# trials at any n, and ranks 1 and 2 reach 50% success within 4 entries of R (rank 1 at 9–10 here, against
# 16 for parameter counting). Two settings were changed so that this is measured and not left to chance:
#
# * **success = relative error < 10⁻³** (it was 10⁻²). A full-rank target with one unobserved entry
#   (rank 4, n = 15) is not determined, yet GD's guess of the missing entry came within 1% in about 6% of
#   the trials — a lucky guess that the 1% criterion counted as a recovery. Recovered matrices end at
#   10⁻⁶ or below, so 10⁻³ separates recovery from guessing.
# * **init std 10⁻⁶** (it was 10⁻³), lr 0.2. The smaller the init, the closer GD's implicit bias comes to
#   the lowest-rank completion (the chapter's point, 图10.5b): at 10⁻³ GD often settled on a rank-2
#   completion of an identifying rank-1 mask (50% success at 10–11 entries), at 10⁻⁶ it finds the rank-1
#   one (50% at 9–10).
#
# An earlier version had widened this claim after a failing seed (median error > 5% below R, 50% within 5
# entries); the first-written thresholds (≤ 10% success below R, within 4 entries) are back.

# %%
# NBVAL_CHECK_OUTPUT
show(check_completion_transition(completion))

# %% [markdown]
# 图10.5b: from the large init (std 0.5) a rank-1 target needs at least 14 entries — at this init GD recovers it
# only once (nearly) every entry is observed, as the linear model would — and more than 2 entries beyond what
# the small init needs. Both numbers must be measured: the grid runs to n = 16 = d², where every entry is
# observed and a trained large-init run recovers the target, so a run that never reaches 50% (one that did
# not train) fails instead of passing as "needs more entries".

# %%
# NBVAL_CHECK_OUTPUT
show(check_completion_large_init(completion))

# %% [markdown]
# ### 图10.2 as the book draws it: identifying samples, the mean error over inits
#
# The claim above (random masks, success rates) is weaker than the book, which reads 图10.2 as recovery at exactly
# 7, 12, 15 and 16 entries for ranks 1–4. The book's figure is drawn differently: eight fixed targets (two per
# rank) against n = 1 … 16 observed entries, the colour the **mean** error over 50 random inits, and the dashed line
# where that mean error drops (the paper: where it "first approaches zero"); init variance 10⁻⁸, GD step 0.05,
# trained until the training error is below 10⁻⁹. A mean over inits with one sample set per n only drops at the
# optimistic size if the first 2rd − r² samples determine the target, which a random set often does not (rank 1:
# only ≈ 37% of 7-entry sets do). So here every target gets one random order of its
# entries drawn until its first 2rd − r² entries **identify** it — the model rank (10.6) of AB on those entries at
# the target's best point is 2rd − r², the optimistic estimate's own test — and n observed entries are the first n
# of that order. Whether GD from a small init, which knows neither the target nor its rank, then recovers it from
# exactly those entries is what the figure shows.
#
# Our setting: 7 targets per rank (full: 9), rank-r products FG of factors with entries ±U[0.5, 1.5], ‖M*‖_F = 4,
# σ_r/σ_1 ≥ 0.1 (like the book's targets: entries of one size; its σ_r/σ_1 run from 0.04 to 0.42); 4 inits per
# target and n (full: 20; the book 50 — the inits of one target and n nearly always agree); init std 10⁻⁶ (our
# targets' entries are about 1, the book's up to 25, so its 10⁻⁴ is about 10⁻⁵ here; a design probe at 10⁻⁹ moved a
# few rank-2 targets from 13 or 14 entries to 12, but the claim was designed and validated at 10⁻⁶), GD step 0.2 for
# 20 000 steps. Transition n_t: the first n where the mean relative error over the inits falls below 10⁻³. Colour: log10
# mean relative error; red bars: 2rd − r²; white dotted ticks: n_t.

# %%
CURVE_TARGETS, CURVE_INITS = pick(quick=7, full=9, smoke=1), pick(quick=4, full=20, smoke=2)
curves = est.completion_curves(CURVE_TARGETS, CURVE_INITS, steps=pick_steps(quick=20_000, full=20_000, every=10),
                               seed=seed)

curves.draw("mean error over inits, identifying sample orders", height=6.0)
plt.show()
print("n_t per target:", curves.transition.tolist(), "  median per rank:", curves.rank_transition())

# %% [markdown]
# The claim: per rank, the median n_t over its targets increases from rank 1 to rank 3 and lies at most 2 entries
# after 2rd − r² (rank 4: at 16, where every entry is observed), and no target's mean error falls below 10⁻³
# before its optimistic size. The thresholds were set on the design seeds 100–117: rank 1 had its median n_t at
# 7–9, rank 2 at 13–14, rank 3 at 15–16, rank 4 at 16. Validated once on seeds 0–19: it held on 20 of 20. Rank 1's
# median n_t was 7 on 16 seeds (8 on 2, 9 on 2), rank 2's 12 on 4, 13 on 10 and 14 on 6, rank 3's 15 on 11 and 16
# on 9, rank 4's 16 on all 20; no target on any seed fell below 10⁻³ before its optimistic size. On 7 seeds the
# claim passed thinly, a rank at its bound (rank 2 at 14 or rank 1 at 9).
#
# What it leaves unchecked is the book's exact reading: with these random identifying orders it held on 2 of seeds
# 0–19 (both with rank 2 at 12): the rank-2 targets mostly need one or two entries more than 12, and a rank-3 target
# with one unobserved entry is completed by GD with a full-rank matrix for about one target in three (error 0.1–0.25,
# unchanged after three times as many steps), so rank 3 sits at 15 or 16. The book's own sample order brings every
# rank to exactly its optimistic size: the next subsection, `ch10.completion-exact`.
#
# The contrast (the control in `tests/test_controls_ch10.py`): the same targets and orders from a large init
# (std 0.5, 图10.5b), where the factorisation behaves like the linear model and a rank-1 target needs many more
# than 7 entries.

# %%
# NBVAL_CHECK_OUTPUT
show(check_completion_order(curves))

# %% [markdown]
# ### 图10.2 exactly: the book's sample order
#
# The authors' experiment for 图10.2 (their notebook of the chapter's experiments) does not observe the entries in a
# random order. It observes row 1, then column 1, then the rest of row 2, of column 2, and so on: after 2rd − r²
# entries it has seen r whole rows and r whole columns, a **cross** (十字形). A rank-r matrix is determined by its
# cross when the r×r block where the rows and columns meet is invertible, M = M[:, J] M[I, J]⁻¹ M[I, :], and one entry
# fewer leaves a direction of the rank-r matrices unseen. The book lays the cross through rows and columns 1 … r of
# its fixed targets; for our random targets that block is sometimes nearly singular (on the design seed 100 a rank-3
# target's leading 3×3 block had σ_min/σ_max = 0.004, and GD settled on a matrix of smaller norm with a small fourth
# singular value, 0.04, relative error 0.5: an ill-conditioned completion, not a sample count). So here the cross goes
# through each target's r×r block of largest |det| — the pivot of a cross (skeleton) approximation — chosen from the
# target alone, before any training, as the book fixes its order.
#
# Why recovery came late before, found on the design seeds 100–101 with the book's order through rows and columns
# 1 … r: not the init scale (std 10⁻¹⁰ instead of 10⁻⁶ left rank 3 on seed 100 and rank 2 on seed 101 late) and not
# unfinished training (60 000 steps instead of 20 000 changed no transition on seed 100); it was the sample order — a
# random order that identifies the target (the subsection above), or a cross through a nearly singular block.
#
# Our setting: two targets per rank as in the book (drawn as above: factors ±U[0.5, 1.5], σ_r/σ_1 ≥ 0.1, ‖M*‖_F = 4),
# 10 inits per target and n (full profile: the book's 50), init std 10⁻⁶, GD step 0.2 for 20 000 steps — the model,
# init and training of the subsection above; only the order differs. Colour: log10 mean relative error over the inits;
# red bars: 2rd − r²; white dotted ticks: the first n where the mean error falls below 10⁻³.

# %%
CROSS_INITS = pick(quick=10, full=50, smoke=2)
cross = est.completion_curves(2, CROSS_INITS, steps=pick_steps(quick=20_000, full=20_000, every=10), seed=seed,
                              order="cross")

cross.draw("mean error over inits, the book's sample order")
plt.show()
print("n_t per target:", cross.transition.tolist(), "  2rd − r²:", cross.optimistic.tolist())

# %% [markdown]
# The claim: for each rank r, the mean error over inits of each of its targets is above 10⁻³ at every n below
# 2rd − r² and below 10⁻³ at every n from 2rd − r² on — the error drops exactly between 2rd − r² − 1 and 2rd − r²,
# at 7, 12, 15 and 16 entries. Designed on the seeds 100–111: all 96 targets dropped exactly there (the smallest mean
# error below 2rd − r² was 1.8·10⁻³, a rank-3 target at 14 entries, the largest from 2rd − r² on 1.9·10⁻⁵).
# Validated once on the seeds 0–19: it held on 20 of 20, every one of the 160 targets exactly at 2rd − r² (the
# smallest mean error below it 6.4·10⁻³, the largest from it on 1.9·10⁻⁵).
#
# The contrast (the control in `tests/test_controls_ch10.py`): the same targets and cross orders from a large init
# (std 0.5, 图10.5b). There the factorisation behaves like a model linear in its parameters: on the design seeds 100
# and 101 every target, of every rank, needed all 16 entries, so the check fails at rank 1.
#
# What it leaves unchecked: the book's own eight targets (fixed matrices with positive entries, their cross at rows
# and columns 1 … r); 50 inits per cell in the quick profile (10 here: the inits of one cell nearly always agree); and
# recovery from entries in another order — from random identifying orders (above) and from random masks
# (`ch10.completion-transition`) GD needs more than 2rd − r² for some targets.

# %%
# NBVAL_CHECK_OUTPUT
show(check_completion_exact(cross))

# %% [markdown]
# ## 4. CNN versus CNN without sharing versus fully connected (图10.3)
#
# The target (10.18) f*(x) = Σ_{i=1}^{3} tanh(W*[1]_i · x), the kernel (0.6, 0.8, 1) shifted along x
# (⚠ the book says x ∈ R⁴ but W*[1] is 3×5, so d = 5; Var f* ≈ 3.1 for x ~ N(0, I₅)). Three
# architectures that all contain it: a 1-D CNN (卷积神经网络) with 2 kernels of size 3 (M = 12
# parameters), the same CNN without weight sharing (权重共享) (M = 24) and a fully connected net
# (全连接网络) of width 6 (M = 36). Their optimistic sizes (section 1) are 6, 12 and 18 (dashed lines),
# the same for any width. Full-batch GD (lr 0.3, 2500 steps, float64) from init std 10⁻⁶ on n samples
# x ~ N(0, I₅); 8 trials per n, all n × trials of one architecture trained as one batched computation
# (the three nets written in one form, Σ a tanh(u_p(x) · K), with closed-form gradients; a test checks
# them against autograd).
# n* = the smallest n from which the median test MSE stays below 10⁻² (≈ 0.3 % of Var f*).
# (Full profile: fully connected width 30, 32 trials, 8000 steps.)

# %%
WIDTHS_NET = {"CNN": 2, "CNN without sharing": 2, "fully connected": pick(quick=6, full=30)}
OPTIMISTIC_NET = {arch: est.optimistic_10_18(arch) for arch in WIDTHS_NET}
TRIALS_NET = pick(quick=8, full=32, smoke=4)  # a smoke run: a few trials per n
nets = est.architectures_10_3(TRIALS_NET, pick_steps(quick=2500, full=8000, every=10), WIDTHS_NET, seed=seed)

fig, axes = panels(2, width=4.6)
for (arch, med), color in zip(nets.median.items(), ("C0", "C1", "C2")):
    axes[0].semilogy(nets.ns, med, "o-", color=color, label=f"{arch} (M = {est.net_10_3(arch, WIDTHS_NET[arch])[1]})")
    axes[1].plot(nets.ns, nets.success[arch], "o-", color=color, label=arch)
    for ax in axes:
        ax.axvline(OPTIMISTIC_NET[arch], color=color, ls="--")
axes[0].axhline(nets.threshold, color="k", lw=0.8)
axes[0].set_title("dashed: optimistic sizes 6, 12, 18")
axes[0].set_ylabel("median test MSE")
axes[1].set_ylabel("success rate (test MSE < 1e-3)")
for ax in axes:
    ax.set_xlabel("samples n")
axes[0].legend(fontsize=8)
plt.show()
print("n* (median test MSE < 1e-2 from there on; nan: never):", nets.n_star)

# %% [markdown]
# The order of the optimistic sizes (6 < 12 < 18) reappears in training: the CNN recovers the target from
# 6–8 samples (fewer than its 12 parameters), the CNN without sharing from 16–24 and the fully connected
# net from 28–40 (seeds 0–4). Only the CNN gets close to its optimistic size; with this init and GD the
# other two need about 1.5–2× theirs (the book's 图10.3 shows them nearer; convergence within 2500 steps
# and saddles at small n are the likely gap), and the fully connected net needs about as many samples as its
# 36 parameters.

# %%
# NBVAL_CHECK_OUTPUT
show(check_architecture_order(nets))

# %% [markdown]
# ### Width is free (图10.3(b)–(d))
#
# The book's panels (b)–(d) repeat the sweep at the widths "Nx", N = 1, 3, 10, 34, 100: a fully connected net of
# width 3N (b), a CNN without sharing with N kernels (c) and a CNN with N kernels (d), from an init of variance
# 10⁻²⁰. Its finding: in every panel the samples needed stay near the dashed line, the optimistic size (6, 12,
# 18, the same at every width), however wide the net — the 100x row of (b) needs about 25 samples — far fewer
# than the parameters. Here the quick profile trains N = 1, 3, 10 (full: also 34), 8 trials per n (full 16),
# init std 10⁻⁶, GD lr 0.3 for 2500 steps (full 8000; beyond 10x the step shrinks like 10/N, the book tunes it
# per setting between 0.05 and 0.5), in single precision (enough for errors judged at 10⁻², and twice as fast);
# all rows of a panel share their training sets, so that only the width changes along a column. Colour: log10 median test MSE; red ticks: n* of the row (median test MSE < 10⁻² from
# there on); dashed: the optimistic size.

# %%
MULTIPLES = pick(quick=(1, 3, 10), full=(1, 3, 10, 34))
TRIALS_WIDTH = pick(quick=8, full=16, smoke=2)
widths = est.width_sweep_10_3(TRIALS_WIDTH, pick_steps(quick=2500, full=8000, every=10), MULTIPLES, seed=seed)

fig, axes = panels(3, width=3.8)
for ax, (arch, panel) in zip(axes, est.PANELS_10_3.items()):
    ns, n_star = widths.ns[arch], widths.n_star(arch)
    image = ax.imshow(np.log10(np.maximum(widths.median[arch], 1e-12)), cmap="viridis_r", vmin=-12, vmax=1,
                      aspect="auto", origin="lower")
    ax.set_xticks(range(len(ns)), ns)
    ax.set_yticks(range(len(MULTIPLES)), [f"{k}x (M={m})" for k, m in zip(MULTIPLES, widths.n_params(arch))])
    for row, n in enumerate(n_star):
        if not np.isnan(n):
            col = int(np.flatnonzero(ns == n)[0])
            ax.plot([col - 0.5, col - 0.5], [row - 0.5, row + 0.5], color="r", lw=2.5)
    ax.axvline(np.interp(est.optimistic_10_18(arch), ns, np.arange(len(ns))), color="w", ls="--")
    ax.set_xlabel("samples n")
    ax.set_title(f"({panel}) {arch}")
    ax.grid(False)
plt.colorbar(image, ax=axes[-1], label="log10 median test MSE")
plt.show()
for arch in est.PANELS_10_3:
    print(f"{arch}: n* = {widths.n_star(arch).tolist()} for M = {widths.n_params(arch).tolist()}, "
          f"β = {widths.growth_exponent(arch):.2f}")

# %% [markdown]
# Each panel's claim fits n* ∝ M^β over its rows. A model linear in its parameters needs as many samples as
# parameters (注18): β = 1. "Width is free" asks for β < 0.5, half-way in log scale between the two, and for n*
# at the widest width to be at most a third of that net's M. On the design seeds 100–109 the CNN needed 4–6,
# 6–10 and 8–12 samples at 1x, 3x and 10x (M = 6, 18, 60; β ≤ 0.39), the CNN without sharing 16–20, 16–24
# and 20–28 (M = 12, 36, 120; β ≤ 0.24), the fully connected net 24–40 at every width (M = 18, 54, 180;
# β ≤ 0.10). Validated once on seeds 0–19: each of the three claims held on 20 of 20 (the closest: the CNN
# without sharing at 40 = M/3 samples at 10x on one seed, the CNN at β = 0.48 on another).
#
# The contrast, each claim's negative control (`tests/test_controls_ch10.py`): the same sweep from a large init
# (std 1; lr 0.05, the low end of the book's range, so that the wide nets do not diverge). There the nets
# behave like their linearisation, where parameters count (注18, 图10.5): the 10x nets fit their samples
# (training MSE ≤ 10⁻³) but their test error stays above 10⁻¹ up to the largest n, so n* grows with the width
# (the CNN: 8, 20 and more than 20 samples at 1x, 3x, 10x on seed 1) and the check fails for all three.

# %%
# NBVAL_CHECK_OUTPUT
show(check_width_free(widths, "fully connected"))

# %%
# NBVAL_CHECK_OUTPUT
show(check_width_free(widths, "CNN without sharing"))

# %%
# NBVAL_CHECK_OUTPUT
show(check_width_free(widths, "CNN"))

# %% [markdown]
# What the three claims leave out is the book's third observation on these panels: "无论网络有多宽, 恢复目标函数所需的
# 样本量都在虚线附近" — at every width the samples needed lie near the dashed line, the optimistic size. (Its first
# observation, the order CNN < CNN without sharing < fully connected, is 图10.3(a)'s claim above; its second, the
# 100x row recovering from about 25 samples with far more parameters, is "at most a third of M" at our widest row.
# "Fewer samples than parameters" cannot be asked of the 1x rows: there M equals the optimistic size, 6, 12 and 18.)
# The exploration below asks for n* ≤ 1.5 × the optimistic size (9, 18, 27) in every row of every panel. On seeds
# 0–19 it held on 0 of 20. Only the narrow CNNs get there: the CNN needed 4–6 samples at 1x and 6–10 at 3x (within 9
# on 19 of 20 seeds) but 8–12 at 10x (within 9 on 2), the CNN without sharing 12–16 at 1x (always within 18), 16–28
# at 3x and 20–40 at 10x; the fully connected net needed 24–64 at 1x and 24–40 at 3x and 10x (within 27 on 1 or 2
# seeds per width).
#
# Why does recovery come late here? On the design seeds 102–105 (16 trials each, 64 per row) we trained every row at
# n = 1.5 × its optimistic size (9, 18, 27) and sorted the trials into recovered (test MSE < 10⁻²), a *wrong
# interpolant* (training MSE < 10⁻⁵, test MSE above 10⁻²) and *not yet fitted*:
#
# * **Too few steps** — for the fully connected net and the CNN without sharing. After the notebook's 2500 steps at lr
#   0.3 the fully connected net recovered 30, 34 and 27 of 64 trials at 1x, 3x and 10x, nearly all others not yet
#   fitted; 10 000 steps gave 39, 44 and 38, and lr 0.5 (the top of the book's range 0.05–0.5) with 10 000 steps 44,
#   48 and 41 (7 of the 10x trials diverged). The CNN without sharing went from 57, 47, 28 (2500 steps) to 58, 50, 40
#   of 64 (10 000). Beyond 10 000 steps nothing more is gained: 40 000 steps at lr 0.5 (seeds 102–103, 32 trials per
#   row) recovered 24, 28, 21 (fully connected; 10 000: 24, 26, 21) and 31, 27, 23 (CNN without sharing; 10 000: 31,
#   26, 23). The width-3 net (1x), with exactly as many neurons as the target, leaves a quarter of its trials stuck
#   with training MSE above 10⁻⁵ after 40 000 steps as after 10 000.
# * **Wrong interpolants** — at width, for every architecture. The 10x CNN fits its 9 samples exactly with another
#   function in 21 of 64 trials after 10 000 steps (lr 0.3; recovered 40): the trials that the longer run finishes
#   become wrong interpolants at least as often as recoveries (10x CNN 7 of 8, 10x CNN without sharing 14 of 26).
#   A smaller init, std 10⁻¹⁰ (the book's variance 10⁻²⁰), left the 10x CNN at 41 of 64; lr 0.1 was worse (36),
#   lr 0.5 diverged in half of the 10x CNNs.
#
# So, in the best setting we tried (lr 0.5, 10 000 steps, four times the quick profile's GD time), a single trial at
# 10x recovers the target from 1.5 × the optimistic size with probability about 0.6–0.7; the median over 8 or 16
# trials is then below 10⁻² on some seeds only, and the grid's next points (10, 20, 28 samples) are what n* usually
# lands on. The exploration held on 0 of the seeds 0–19 and on 0 of the seeds 500–519 (there the rows within 1.5×:
# the CNN at 1x and 3x on all 20, at 10x on none, n* 10–12; the CNN without sharing at 1x on 18, at 3x on 1, at 10x
# on none, n* 20–32; the fully connected net on 1, 1 and 0, n* 24–48, 24–32, 28–40). The authors'
# own account of this figure (Zhang et al., *Local linear recovery guarantee of deep neural networks at
# overparameterization*, JMLR 2025, Fig. 3) reports the same: "a postponement in the transition to accurate target
# recovery for N > 1", the transition "much closer to the model rank than to the parameter count" — which is what
# the three width-free claims above check. The quick profile keeps 2500 steps at lr 0.3.

# %%
# NBVAL_CHECK_OUTPUT
show(check_width_at_optimistic(widths))

# %% [markdown]
# ## 5. Hyper-parameters matter: small versus large initialisation (图10.4)
#
# The optimistic size is what a model *can* reach; whether training reaches it depends on hyper-parameters
# (超参数) such as the initialisation. The book's 图10.4 fits a handful of 1-D data points with a tanh net of
# four hidden layers of width 500, twice, differing only in the variance of the Gaussian initialisation: from
# the small one the fit is smooth; from the large one the learned function **oscillates strongly** between
# the data points and generalises badly.
#
# Here (the book does not give its data): n = 12 points x ~ U[−1, 1], y = sin(πx); four hidden tanh layers,
# every weight and bias of layer l drawn from N(0, c²/fan_in) with c = 0.1 (small) or c = 4 (large); both nets
# trained together (one batched computation) by full-batch Adam (lr 10⁻³) on the mean squared error. The quick
# profile is a CPU-sized analogue: width 100, 3000 steps (full: the book's width 500, 6000 steps). Test error:
# the mean squared error against sin(πx) on 401 points between the smallest and the largest sample
# (interpolation only). How much a function oscillates: its total variation (总变差) Σ|f(x_{g+1}) − f(x_g)| on
# that grid (sin(πx) itself has at most 4).
#
# (With 2000 steps the claim below failed on 2 of 20 seeds, both because the large-init net had not yet fitted
# the samples — training MSE 0.023 and 0.0015: unfinished optimisation, not a different phenomenon; hence
# 3000 steps.)

# %%
WIDTH_104 = pick(quick=100, full=500)
STEPS_104 = pick_steps(quick=3000, full=6000, every=10)  # records only its end
fits104 = est.init_scale_fits((0.1, 4.0), width=WIDTH_104, depth=4, n=12, steps=STEPS_104, lr=1e-3, seed=seed + 104)

fig, axes = panels(2, width=4.4)
for ax, out, c, tv, err in zip(axes, fits104.outputs, fits104.scales, fits104.total_variation, fits104.test_mse):
    ax.plot(fits104.grid, fits104.target, "--", color="0.5", lw=1, label="sin(πx)")
    ax.plot(fits104.grid, out, color="C0", label="learned")
    ax.plot(fits104.x, fits104.y, "*", color="C3", ms=9, label="data")
    ax.set_title(f"init c = {c:g}: TV {tv:.1f}, test MSE {err:.1e}")
    ax.set_xlabel("x")
axes[0].legend()
plt.show()
print("training MSE:", fits104.train_mse, "  test MSE:", fits104.test_mse, "  total variation:",
      np.round(fits104.total_variation, 2))

# %% [markdown]
# The claim (`est.check_init_oscillation`): both nets fit the samples (training MSE < 10⁻³), and the net from
# the large init has more than twice the total variation and more than twice the test error of the net from
# the small init. Its negative control trains both nets from the same small scale.
#
# *At the full profile* (the book's width 500, 6000 steps; measured on the CPU, seeds 0–4, `docs/full-profile.md`)
# the total-variation ratio sits at the claim's factor 2: 3.0, 2.02, 1.98 and 2.02 on seeds 0, 1, 3 and 4 (seed 3
# fails), while both nets fit the samples on every seed. The phenomenon shows at the book's width, but more weakly
# than at our width 100 (median margin +0.77 there, +0.01 here); why has not been analysed yet. On the fresh seeds
# 500–504, on which this claim is judged (2026-12-06, the 2-core CPU), the ratio is 2.36, 1.65, 1.54, 1.81 and 2.84,
# the claim's tightest part on every seed: it holds on 2 of 5, so at the full profile 图10.4 is **not reproduced as
# the claim states it — classified: the phenomenon, weaker at the book's width than the claim's factor 2** (the
# large-init net varies at least 1.5 times as much on every seed, not twice). The factor was fixed on the quick
# profile's width and is not changed after this result.

# %%
# NBVAL_CHECK_OUTPUT
show(check_init_oscillation(fits104))

# %% [markdown]
# ## Explorer
#
# Matrix completion of one rank at a time: move the init std from 10⁻⁵ to 1 to see the transition move
# from the optimistic size 2rd − r² towards the parameter-counting limit 16; raise the success threshold to
# see how much of the failure is slow convergence. Switch **model** to one of the 图10.3 architectures (CNN,
# CNN without sharing, fully connected) to see their recovery curves against the number of samples, with the
# optimistic size (6, 12, 18) marked; a large init std pushes every curve to the right.

# %%
explorer = est.make_explorer(seed=seed)
explorer

# %% [markdown]
# ## Summary
#
# * The optimistic sample size is the model rank at the best point of the target set; the calculator
#   reproduces (10.9), Example 2, (10.14), (10.15) and (10.17) exactly.
# * Small init lets a nonlinear model (f_NL, AB) recover targets near its optimistic size; large init makes
#   it behave like a linear model that needs as many samples as parameters. From samples that identify the target,
#   matrix completion reaches it within 2 entries of 2rd − r² for every rank, rank 1 mostly at exactly 7; from the
#   book's sample order, the rows and columns of a cross, at exactly 7, 12, 15 and 16 (图10.2).
# * Width is free (18 for any width m in (10.15)), connections are expensive (6 < 12 < 18 for CNN, CNN
#   without sharing, fully connected) — and trained from small init, the three need samples in that order
#   (图10.3), the CNN close to its optimistic size; ten times wider, each needs about as many samples as before,
#   far fewer than its parameters (图10.3(b)–(d)), where a large init makes the wide nets need ever more.
# * Hyper-parameters decide how close training comes: the same deep net fits the same points smoothly from a
#   small init and with strong oscillations, and a larger test error, from a large one (图10.4).
