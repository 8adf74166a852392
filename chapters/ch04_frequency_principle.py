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
# # Chapter 4–6 — The frequency principle (频率原则)
#
# *Companion to 深度学习现象导论, chapters 4 (频率原则), 5 (基于频率原则设计高效神经网络) and
# 6 (频率原则的机制分析).*
#
# **The phenomenon.** A deep network trained by gradient descent fits its training data *from low
# to high frequency*: first the smooth outline, then the details. This is the **frequency principle**
# (F-Principle), also called **spectral bias (谱偏差)**.
#
# **What you will see and check automatically**
#
# | section | book figure | claim checked in this run |
# |---|---|---|
# | 0 | 图4.1 | nets of several sizes all join ten samples of sin x smoothly |
# | 1 | 图4.3, 图4.6 | a three-level step function: a sine-like outline first, the steps later; its spectral peaks converge from low to high frequency |
# | 2 | 图4.2, 图4.7 | sin x + sin 5x: the outline sin x first while the loss stalls (损失停滞) (an exploration at this scale); equal amplitudes still converge in the order k = 1, 3, 5 |
# | 3 | 图4.9, 图4.10, 图6.3 | a Ricker activation with a = 0.3 keeps the order and generalises; a = 0.1 destroys both, with or without ASI; so does sin(10x) |
# | 4 | 图6.2 | a large initialisation breaks the order and injects frequencies the data never had |
# | 5 | 图6.4 | a gradient term in the loss (6.3) speeds up the high frequencies |
# | 6 | 图4.4, 图4.11 | an image fitted on its odd columns: small init generalises to the even columns, large init does not |
# | 7 | 图4.12 | on noisy data the test loss is U-shaped: early stopping works |
# | 8 | 图4.13(b) | parity, a high-frequency function: fitted perfectly, predicted at chance |
# | 9 | chapter 5, 图5.7 | a multiscale DNN and Fourier features learn high frequencies a plain net cannot; too large a Fourier scale overfits |
#
# Then an **explorer** for instructors and **exercises (习题)**.
#
# **Run time.** Quick profile (default): about a minute on two CPU cores. Full profile
# (`COMPANION_PROFILE=full`): the book's sizes, several minutes, a GPU if present.

# %%
from dataclasses import replace

import numpy as np
import matplotlib.pyplot as plt

from companion.kit.config import pick, settings
from companion.kit.claims import show
from companion.experiments.ch04_frequency import (
    FPConfig, plot_spectrum, run_fprinciple, run_sizes, check_sizes_smooth, run_image, run_early_stopping,
    run_parity, run_multiscale, midway_step, nearest_index, outline_distances, check_step_outline,
    check_step_order, check_outline_plateau, plateau_measures, check_fp_order, check_ricker_order,
    check_ricker_no_order, check_ricker_no_asi, check_sin_rate, check_small_init_order, check_large_init_no_order,
    check_large_init_high_freq, check_grad_loss, check_image_small, check_image_large, check_early_stopping,
    check_parity, check_mscale, check_fourier_features, check_fourier)
from companion.core.spectral import dft, projection_spectrum, uniform_grid
from companion.kit.plots import panels, plot_fit, plot_delta_f, plot_delta_f_curves, plot_curves
from companion.kit.seeds import active_seed

S = settings()
seed = active_seed()
print(S.describe())

# %% [markdown]
# ## 0 · Why ask: nets of every size interpolate smoothly (图4.1)
#
# The chapter opens with a puzzle. Fit ten samples of $\sin x$ with networks of very different sizes — here
# one hidden layer of 20 neurons, two of 100, seven of 100 (the book's largest), far more parameters than
# data, each trained to convergence (full-batch L-BFGS; the book uses Adam, which on ten points leaves the
# small and the deep nets short of fitting within our budget) — and every one of them joins the points by a
# smooth curve (光滑连线), although
# infinitely many wiggly functions fit the ten points just as well. Why do networks prefer the smooth
# one? The rest of the chapter answers: they learn low frequencies first.

# %%
sizes = run_sizes(((20,), (100, 100), (100,) * 7), n_train=10, seed=seed)  # L-BFGS to convergence
fig, axes = panels(2, width=4.2)
for size, out in zip(sizes.sizes, sizes.out_test):
    axes[0].plot(sizes.x_test, out, lw=1.2, label=f"{len(size)} × {size[0]}")
axes[0].plot(sizes.x_test, sizes.f_test, "--", color="0.4", lw=1, label="sin x")
axes[0].plot(sizes.x_train, sizes.f_train, "ko", ms=4, label="samples")
axes[0].set(xlabel="x", title="Fig. 4.1: nets of several sizes, 10 samples")
axes[0].legend(fontsize=7)
axes[1].bar([f"{len(s)}×{s[0]}" for s in sizes.sizes], sizes.variation_ratio(), color="0.6")
axes[1].axhline(1.0, color="k", lw=0.8)
axes[1].set(ylabel="total variation / that of sin x", title="no extra wiggles")
plt.show()

# %% [markdown]
# **Claim `ch04.sizes-smooth` (图4.1).** Every net fits the samples (RMS error < 0.02) and adds no wiggles
# between them: its total variation $\int |f_\theta'|$ is at most 1.2 times that of $\sin x$ on the same
# interval. Over seeds 0–19 every net's ratio lies within 1 % of 1. The negative control in the tests
# trains the same nets from a large initialisation (std 3): the one-layer net fits the ten points with 1.2 to
# 8 times the variation, the two-layer one with 60 to 80 times.

# %%
# NBVAL_CHECK_OUTPUT
show(check_sizes_smooth(sizes))

# %% [markdown]
# ## 1 · Outline first, then the steps (图4.3, 图4.6)
#
# The book's defining experiment fits a **periodic step function (周期跳跃函数)** with three levels,
# $f(x) = \operatorname{round}(\sin x) \in \{-1, 0, 1\}$ — think of three class labels, fitted by regression with
# the mean squared error. Its Fourier series holds only the odd harmonics that are not multiples of 3, with
# amplitudes falling like $1/k$:
#
# $$\operatorname{round}(\sin x) = \frac{2\sqrt3}{\pi}\Bigl(\sin x - \tfrac15\sin 5x - \tfrac17\sin 7x
# + \tfrac1{11}\sin 11x + \tfrac1{13}\sin 13x - \dots\Bigr).$$
#
# 图4.3 shows the network's output at three moments: first a sine-like outline (the fundamental, 基频), then,
# much later, the jumps. 图4.6 shows the same moments in frequency: the peaks of the output's spectrum
# rise to the target's from the left. The book measures the fit of each frequency with the **relative error**
# (相对误差)
#
# $$\Delta_F(k) = \frac{|\hat h_k - \hat f_k|}{|\hat f_k|},$$
#
# where $\hat h_k$ and $\hat f_k$ are the discrete Fourier coefficients of the network output and of
# the target on the training grid; we record, for each peak, the first step at which $\Delta_F(k) < 0.1$.
#
# *Setting.* The book samples $[-10, 10]$ (3.2 periods) densely, so that the data keep the jumps' high
# frequencies. We sample whole periods, so that harmonic $k$ lands in one DFT bin with no leakage between peaks:
# the full profile three periods, $[-3\pi, 3\pi)$, with the authors' 1-200-200-200-100-1 network, 600 points,
# Adam at $10^{-4}$ and 10 000 steps; the quick profile, a CPU-sized analogue, one period $[-\pi, \pi)$ at 128
# points — the same frequencies per unit of $x$ — and two 1-100-100-1 tanh networks trained at once (one batched
# computation) for 1000 steps of Adam at a learning rate of $2\cdot10^{-2}$, large enough for the jumps to arrive
# within the budget. *Note.* The authors' scripts compare magnitudes $\bigl||\hat h_k| - |\hat f_k|\bigr|$;
# we use the book's complex form, which also requires the right phase.

# %%
step_config = FPConfig(
    target="step", ks=(1, 5, 7),                 # round(sin x); track the peaks of harmonics 1, 5, 7
    periods=pick(quick=1, full=3),               # quick: one period, [−π, π); full: [−3π, 3π), like the book's [−10, 10]
    n_train=pick(quick=128, full=600), n_test=pick(quick=256, full=1000),
    hidden=pick(quick=(100, 100), full=(200, 200, 200, 100)),
    lr=pick(quick=2e-2, full=1e-4),
    steps=pick(quick=1000, full=10000),
    record_every=pick(quick=10, full=50),
    members=2,
)
step = run_fprinciple(step_config, seed)
to_sine, to_steps = outline_distances(step)

# three moments, as in the book (its steps 0, 1000 and 10 000): the start, a tenth of the run, the end
moments = [0, nearest_index(step.steps, step.steps[-1] / 10), len(step.steps) - 1]
fig, axes = panels(8, width=2.7, height=2.4, nrows=2)
for j, i in enumerate(moments):
    plot_fit(axes[j], step.x_test, step.f_test, step.out_test[i, 0], title=f"Fig. 4.3: step {step.steps[i]}")
    plot_spectrum(axes[4 + j], step.f_train, step.out_train[i, 0], k_max=15, periods=step_config.periods,
                  title=f"Fig. 4.6: spectrum, step {step.steps[i]}")
axes[0].legend()
axes[4].legend()
plot_delta_f_curves(axes[3], step.steps, step.deltas[:, 0], step_config.ks, title="Δ_F at the peaks (harmonic k)")
plot_curves(axes[7], step.steps, {"to the fundamental sine": to_sine[:, 0], "to the steps": to_steps[:, 0]},
            title="rms distance of the output", ylabel="rms distance")
fig.suptitle("Fig. 4.3 / 4.6: round(sin x) — a sine-like outline first, the steps later")
plt.show()
print("first step with Δ_F < 0.1, per member (rows) and harmonics 1, 5, 7 (columns; nan = never):\n", step.first)

# %% [markdown]
# **Claims `ch04.step-outline` (图4.3) and `ch04.step-order` (图4.6).** Outline first: a tenth of the way through
# training (the book's snapshot at step 1000 of 10 000) each member's output must lie closer (root-mean-square
# distance on the training grid) to the fundamental sine $\frac{2\sqrt3}{\pi}\sin x$ than to the steps, and at the
# end closer to the steps than to that sine. Low before high: with $t_k$ the median over
# members of the first step with $\Delta_F(k) < 0.1$, $t_1 < t_5 < t_7$, and $t_7 \ge 5\,t_1$ (the book's "much
# longer": its snapshots show the outline at step 1000 and the steps only at 10 000). A peak that never converges
# fails the order.

# %%
# NBVAL_CHECK_OUTPUT
show(check_step_outline(step))

# %%
# NBVAL_CHECK_OUTPUT
show(check_step_order(step))

# %% [markdown]
# ## 2 · Equal amplitudes: frequency, not amplitude (图4.2, 图4.7)
#
# ### The outline, then a stalled loss (图4.2)
#
# The book's first picture of the F-principle fits $f(x) = \sin x + \sin 5x$, two components of **equal**
# amplitude, and shows three snapshots (steps 1, 2000 and 10 000): in the middle one the network has drawn
# $\sin x$ and nothing of $\sin 5x$, and at that point the loss **stalls** (损失停滞) for a long stretch before
# the details come. Drawing $\sin x$ alone leaves a relative error $\|f_\theta - f\| / \|f\| = \|\sin 5x\| /
# \|f\| = 1/\sqrt 2$, so the plateau sits at that level. Our run: three tanh nets 1-100-100-1 at once, 128
# points on $[-\pi, \pi)$, Adam 1e-3, 2000 steps (the book: 600 points, four hidden layers, Adam 3e-5,
# 10 000 steps).

# %%
plateau_config = FPConfig(
    ks=(1, 5), amps=(1.0, 1.0),
    n_train=pick(quick=128, full=600),
    hidden=pick(quick=(100, 100), full=(200, 200, 200, 100)),
    lr=pick(quick=1e-3, full=1e-4),
    steps=pick(quick=2000, full=20000),
    record_every=pick(quick=10, full=50),
    members=pick(quick=3, full=5),
)
plateau = run_fprinciple(plateau_config, seed)
pm = plateau_measures(plateau)
low = np.sin(plateau.x_test)
fig, axes = panels(4, width=3.0, height=2.7)
for ax, i in zip(axes[:3], (0, pm.outline_index[0], len(plateau.steps) - 1)):
    plot_fit(ax, plateau.x_test, plateau.f_test, plateau.out_test[i, 0], title=f"step {plateau.steps[i]}")
axes[1].plot(plateau.x_test, low, color="0.5", ls=":", lw=1, label="sin x")
axes[1].legend(fontsize=7)
axes[3].semilogy(plateau.steps, pm.relative_error, lw=1)
axes[3].axhline(pm.level, color="0.5", ls=":", label="1/√2: sin x alone")
axes[3].set(xlabel="step", ylabel="relative error ‖f_θ − f‖/‖f‖", title="the error stalls at 1/√2")
axes[3].legend(fontsize=7)
fig.suptitle("Fig. 4.2: sin x + sin 5x — the outline sin x first, while the loss stalls")
plt.show()
print("min distance to sin x (/‖sin 5x‖):", pm.to_outline.round(3), " share of the run on the plateau:",
      pm.plateau_share.round(2), " final relative error:", pm.final_error.round(3))

# %% [markdown]
# **Exploration `ch04.outline-plateau` (图4.2)**, not a claim at this scale. For every member: some recorded
# output lies within 0.35 ·
# $\|\sin 5x\|$ of $\sin x$ (the outline alone), the relative error stays within 15 % of $1/\sqrt 2$ for at
# least 15 % of the recorded steps (the stalled loss), and it ends below 0.1 (the details do come). The negative
# control in the tests trains the same nets from a large initialisation (std 2, as in 图6.2), where there is
# no outline stage. Over seeds 0–19 the first two parts hold on every seed (distance to $\sin x$ at most 0.28,
# plateau share at least 0.23), but on 4 of 20 seeds one member has not finished $\sin 5x$ by step 2000
# (final error 0.11–0.16): 16/20, below the 19/20 a claim needs, so it is reported as an exploration.

# %%
# NBVAL_CHECK_OUTPUT
show(check_outline_plateau(plateau))

# %% [markdown]
# ### Three equal components (图4.7)
#
# In 图4.6 the peaks also fall with frequency, so the order might be set by *amplitude* rather than by
# *frequency*. To rule that out, 图4.7 uses equal amplitudes: $f(x) = \sin x + \sin 3x + \sin 5x$ on
# $[-\pi, \pi)$. We train several tanh networks at once (members differ only in their random initialisation)
# and record, for each $k$, the first step at which $\Delta_F(k) < 0.1$.

# %%
fp_config = replace(plateau_config, ks=(1, 3, 5), amps=(1.0, 1.0, 1.0))  # the same nets and training
fp = run_fprinciple(fp_config, seed)

# snapshots: start, half-way to the first k=3 convergence (half the run if k=3 never converged), end
snaps = [nearest_index(fp.steps, step) for step in (0, midway_step(fp, peak=1), fp.steps[-1])]
fig, axes = panels(5, width=3.0, height=2.7)
for ax, i in zip(axes[:3], snaps):
    plot_fit(ax, fp.x_test, fp.f_test, fp.out_test[i, 0], title=f"step {fp.steps[i]}")
axes[0].legend()
plot_spectrum(axes[3], fp.f_train, fp.out_train[snaps[1], 0], k_max=10, title=f"spectrum at step {fp.steps[snaps[1]]}")
plot_delta_f(axes[4], fp.steps, fp.deltas[:, 0], fp_config.ks)
fig.suptitle("Fig. 4.7: sin x + sin 3x + sin 5x — outline first, details later")
plt.show()

# %%
print("first step with Δ_F(k) < 0.1, per member (rows) and k = 1, 3, 5 (columns; nan = never):\n", fp.first)

# %% [markdown]
# **Claim `ch04.fp-order` (图4.7).** With $t_k$ the median over members of the first step with
# $\Delta_F(k) < 0.1$, it checks $t_1 < t_3$, $t_3 < t_5$ and $t_5 / t_1 \ge 5$. A peak that never converges
# ("never", not a number) fails the order: the book's sentence is that *all three* converge, in that order.

# %%
# NBVAL_CHECK_OUTPUT
show(check_fp_order(fp))

# %% [markdown]
# ## 3 · The activation's spectrum decides (图4.9, 图4.10, 图6.3)
#
# Chapter 6 explains *why*: the Fourier transform of a tanh neuron decays like $e^{-|\pi k / 2w|}$
# (6.7), so gradient descent feels the low frequencies first (6.11). The **Ricker** activation (4.3)
#
# $$\sigma(x) = \frac{1}{15a}\pi^{1/4}\Bigl(1 - \bigl(\tfrac{x}{a}\bigr)^2\Bigr)e^{-\frac12 (x/a)^2}$$
#
# has a spectrum that peaks at a frequency of order $1/a$: for small $a$ the high frequencies are no
# longer disadvantaged. Only 24 training points are used, so between them the network is free to oscillate —
# generalisation is measured on a 1000-point grid. The book's 图4.9 has three rows: a = 0.1 as it is, a = 0.1
# with **ASI (antisymmetric initialisation, 反对称初始化)** — two identical copies of the network whose
# difference is the output, exactly zero at the start, so that the initial function's own high frequencies
# cannot be blamed for the oscillation — and a = 0.3 with ASI. We train the three as one batched computation
# (ASI chosen per member).

# %%
ricker_config = FPConfig(
    n_train=24, act="ricker", a=(0.3, 0.1, 0.1), asi=(True, True, False), members=3,
    hidden=pick(quick=(100, 100), full=(200, 200, 100)),
    steps=pick(quick=1000, full=5000), record_every=10,
)
ricker = run_fprinciple(ricker_config, seed)
ricker_names = ["a=0.3, ASI", "a=0.1, ASI", "a=0.1, no ASI"]

fig, axes = panels(4, width=2.9, height=2.6)
for ax, m in zip(axes[:3], (2, 1, 0)):            # the book's order: a=0.1 without ASI, with ASI, a=0.3 with ASI
    plot_fit(ax, ricker.x_test, ricker.f_test, ricker.out_test[-1, m], x_train=ricker.x_train,
             y_train=ricker.f_train, title=f"Ricker {ricker_names[m]}\ntest MSE {ricker.test_mse[m]:.3g}")
    ax.set_ylim(-4, 4)
plot_delta_f_curves(axes[3], ricker.steps, ricker.deltas[:, :2], ricker_config.ks, ricker_names[:2])
fig.suptitle("Fig. 4.9 / 6.3: a Ricker activation of width a")
plt.show()
print("first step with Δ_F < 0.1 (rows: a = 0.3 ASI, 0.1 ASI, 0.1 no ASI):\n", ricker.first, "\ntest MSE:",
      ricker.test_mse)

# %% [markdown]
# **Claims `ch04.ricker-order` (图6.3), `ch04.ricker-no-order` and `ch04.ricker-no-asi` (图4.9).** For a = 0.3:
# $t_1 < t_3 < t_5$, every peak converging. For a = 0.1, with ASI and without: "no order" is measured as
# $\max_k t_k / \min_k t_k \le 2$ — and if a peak never converged there is nothing to compare, so the claim fails
# rather than passing vacuously — plus a test error more than twice that of a = 0.3.

# %%
# NBVAL_CHECK_OUTPUT
show(check_ricker_order(ricker))

# %%
# NBVAL_CHECK_OUTPUT
show(check_ricker_no_order(ricker))

# %%
# NBVAL_CHECK_OUTPUT
show(check_ricker_no_asi(ricker))

# %% [markdown]
# The same holds for $\sigma(x) = \sin(ax)$ (图4.10): a large rate a puts the activation's energy at high
# frequency, and the book reports that with a = 10 the frequency principle weakens or disappears and the fit
# generalises badly, whether or not ASI removes the initial function; a = 1 (with ASI) is the contrast. Two
# settings differ from the Ricker run: near the origin sin(x) is almost linear, so the a = 1 network needs a
# larger learning rate ($5\cdot10^{-3}$) to reach k = 5 within the budget (at $10^{-3}$ it had not, after 1000
# steps, and the comparison was between a fitted and an unfitted network), and the a = 10 networks converge
# within a few dozen steps, so Δ_F is recorded every 2 steps to resolve "within a factor 2" (on a 300-point test
# grid, which keeps the frequent records cheap).

# %%
sin_config = FPConfig(
    n_train=24, n_test=300, act="sin", a=(10.0, 10.0, 1.0), asi=(False, True, True), members=3,
    hidden=ricker_config.hidden, lr=5e-3, steps=pick(quick=800, full=5000), record_every=2,
)
sin_fit = run_fprinciple(sin_config, seed)
sin_names = ["a=10, no ASI", "a=10, ASI", "a=1, ASI"]

fig, axes = panels(4, width=2.9, height=2.6)
for ax, m in zip(axes[:3], range(3)):
    plot_fit(ax, sin_fit.x_test, sin_fit.f_test, sin_fit.out_test[-1, m], x_train=sin_fit.x_train,
             y_train=sin_fit.f_train, title=f"σ = sin(ax), {sin_names[m]}\ntest MSE {sin_fit.test_mse[m]:.3g}")
    ax.set_ylim(-4, 4)
plot_delta_f_curves(axes[3], sin_fit.steps, sin_fit.deltas[:, 1:], sin_config.ks, sin_names[1:])
fig.suptitle("Fig. 4.10: the activation σ(x) = sin(ax)")
plt.show()
print("first step with Δ_F < 0.1 (rows: a = 10 no ASI, 10 ASI, 1 ASI):\n", sin_fit.first, "\ntest MSE:",
      sin_fit.test_mse)

# %% [markdown]
# **Exploration `ch04.sin-rate` (图4.10)**, with the thresholds of the Ricker claims: for a = 10 with ASI the peaks
# converge within a factor 2 of each other, and for a = 10, with and without ASI, the test error is more than twice
# that of a = 1. Over seeds 0–19 (quick profile) it held on 13 of 20, short of the 19/20 a claim needs: the
# test-error conditions held on every seed, but with a = 10 all three peaks converge within 4–22 steps, where
# "within a factor 2" is decided by a step or two (on the failing seeds the ratio was 2.25–3.7, the peaks still
# converging in no particular order). So it is shown as an exploration, not a claim.

# %%
# NBVAL_CHECK_OUTPUT
show(check_sin_rate(sin_fit))

# %% [markdown]
# ## 4 · Initialisation scale breaks the order (图6.2)
#
# A large initialisation makes each neuron $\tanh(w x + b)$ steep (图6.1): the initial function already
# holds frequencies **above the Nyquist frequency of the training data** (here 40 points, so above k = 20).
# Training only sees the data, so it can neither remove those frequencies nor is it slowed by them:
# the low-frequency preference is gone, the training points are still fitted, and the function between them
# is garbage. Two members, identical except for their init std.

# %%
init_config = FPConfig(
    n_train=40, hidden=pick(quick=(200, 200), full=(500, 500)), init_std=(0.07, 2.0), members=2,
    steps=pick(quick=2000, full=10000), record_every=10,
)
init = run_fprinciple(init_config, seed)
hf_energy = init.high_frequency_energy()

fig, axes = panels(3, width=3.6)
for ax, m, std in zip(axes[:2], range(2), init_config.init_std):
    ax.plot(init.x_test, init.out_test[0, m], color="0.6", lw=0.8, label="initial output")
    plot_fit(ax, init.x_test, init.f_test, init.out_test[-1, m], x_train=init.x_train, y_train=init.f_train,
             title=f"init std {std}: test MSE {init.test_mse[m]:.3g}")
    ax.set_ylim(-4, 4)   # the large network's initial output leaves this window: it is many times larger
axes[0].legend()
plot_delta_f_curves(axes[2], init.steps, init.deltas, init_config.ks, [f"std {s}" for s in init_config.init_std])
fig.suptitle("Fig. 6.2: small vs large initialisation")
plt.show()
print("first steps (rows: small, large):\n", init.first, "\nshare of output energy above k=20:", hf_energy)

# %% [markdown]
# **Claims of 图6.2.** `ch04.small-init-order`: the small-init member converges in the order $t_1 < t_3 < t_5$.
# `ch04.large-init-no-order`: the large-init member does **not** — its three peaks converge within a factor 2 of
# each other ($\max_k t_k / \min_k t_k \le 2$; a peak that never converges fails the claim), the same test as
# for Ricker a = 0.1. `ch04.large-init-high-freq`: the large-init output carries over 10× the small one's energy
# above the data's Nyquist frequency, and over 10× its test error.

# %%
# NBVAL_CHECK_OUTPUT
show(check_small_init_order(init))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_no_order(init))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_high_freq(init))

# %% [markdown]
# ## 5 · A derivative in the loss speeds up high frequencies (图6.4)
#
# With $L_{\rm grad} = L_{\rm nongrad} + \frac1n\sum_i (\nabla_x f_\theta(x_i) - \nabla_x f^*(x_i))^2$ (6.3),
# an error $\varepsilon \sin kx$ costs $\varepsilon^2(1 + k^2)$ instead of $\varepsilon^2$: the high
# frequencies get a larger weight. The baseline $L_{\rm nongrad}$ (6.2) is the run of section 2.

# %%
grad_config = FPConfig(n_train=fp_config.n_train, hidden=fp_config.hidden, lr=fp_config.lr, loss="mse+grad",
                       steps=pick(quick=1000, full=10000), record_every=10, members=2)
grad = run_fprinciple(grad_config, seed)

fig, axes = panels(2, width=4.2)
for ax, res, name in zip(axes, (fp, grad), ("L_nongrad (6.2)", "L_grad (6.3)")):
    plot_delta_f_curves(ax, res.steps, res.deltas[:, 0], res.config.ks, title=name)
    ax.set_xlim(0, fp.steps[-1])
fig.suptitle("Fig. 6.4: Δ_F(k) without and with the derivative term")
plt.show()
print("first steps with L_grad:\n", grad.first)

# %% [markdown]
# **Claim `ch04.grad-loss-speedup` (图6.4):** the median first step of k = 5 with $L_{\rm grad}$ is below half of
# that with $L_{\rm nongrad}$ (a run that never converges k = 5 with $L_{\rm grad}$ fails it).

# %%
# NBVAL_CHECK_OUTPUT
show(check_grad_loss(grad, fp))

# %% [markdown]
# ## 6 · An image as a function of its coordinates (图4.4, 图4.11)
#
# A grey photograph (scikit-image's bundled cat, resized) is a function (row, column) → grey value.
# The network sees only the **odd columns** and is asked for the even ones. With a small
# initialisation it learns the outline first and interpolates smoothly; with a large one (图4.11) it
# fits the training columns but the unseen columns are noise. We report the peak signal-to-noise
# ratio (PSNR, dB) on training and unseen columns, and compare with the best *constant* guess (the mean grey):
# a network that learned nothing would tie with it. In the quick profile (a 24×36 picture, 2000 steps) the
# small-initialisation network gets only the coarse outline — the book needs tens of thousands of steps for
# the fur; `COMPANION_PROFILE=full` gets much further.

# %%
image_stds = (0.1, 1.5)
img = run_image(shape=pick(quick=(24, 36), full=(75, 60)), init_stds=image_stds,
                hidden=pick(quick=(100, 100, 100), full=(500, 400, 300, 200, 200, 100)),
                steps=pick(quick=2000, full=20000), lr=pick(quick=1e-2, full=5e-5),
                record_every=pick(quick=100, full=1000), seed=seed)

fig, axes = panels(6, width=2.4, height=2.0, nrows=2)
axes[0].imshow(img.image, cmap="gray", vmin=0, vmax=1)
axes[0].set_title("image")
t_mid = len(img.steps) // 5
for ax, (t, m) in zip(axes[1:], [(t_mid, 0), (-1, 0), (0, 1), (t_mid, 1), (-1, 1)]):
    ax.imshow(np.clip(img.snapshots[t, m], 0, 1), cmap="gray", vmin=0, vmax=1)
    ax.set_title(f"std {image_stds[m]}, step {img.steps[t]}")
for ax in axes:
    ax.axis("off")
fig.suptitle("Fig. 4.4 / 4.11: trained on odd columns, shown on all pixels")
plt.show()
print("PSNR train / unseen columns (dB):", img.psnr_train[-1], img.psnr_test[-1],
      " constant-grey baseline:", round(img.baseline_psnr, 2))

# %% [markdown]
# **Claims `ch04.image-small-init` (图4.4) and `ch04.image-large-init` (图4.11).** Small init: PSNR on the unseen
# columns more than 2 dB above the constant-grey baseline, and less than 3 dB below the training columns. Large
# init: more than 10 dB below the training columns.

# %%
# NBVAL_CHECK_OUTPUT
show(check_image_small(img))

# %%
# NBVAL_CHECK_OUTPUT
show(check_image_large(img))

# %% [markdown]
# ## 7 · Early stopping, seen in frequency (图4.12)
#
# Samples of $\sin x + 0.2\,\mathcal N(0, 1)$ at 100 random points of $[-10, 10]$. The signal is one low
# frequency; the noise spreads over all frequencies. The F-principle fits the low-frequency signal
# first, so the error against the clean function first falls, then rises again as the network starts
# fitting the noise's high frequencies: stopping at the bottom of the **U** is **early stopping (提前停止)**.

# %%
es_steps = pick(quick=2000, full=30000)
es = run_early_stopping(n=100, noise=0.2, hidden=pick(quick=(100, 100, 50), full=(200, 200, 100)), steps=es_steps,
                        lr=pick(quick=2e-3, full=1e-5), members=4, record_every=20, seed=seed)
best = es.test_loss.argmin(axis=0)                  # (members,)
ratio = es.test_loss[-1] / es.test_loss.min(axis=0)

fig, axes = panels(4, width=3.0, height=2.7)
plot_curves(axes[0], es.steps, {"train": es.train_loss[:, 0], "test (clean sin x)": es.test_loss[:, 0]})
axes[0].axvline(es.steps[best[0]], color="k", ls="--", lw=0.8)
for ax, t, name in ((axes[1], best[0], "at the test minimum"), (axes[2], -1, "at the end")):
    plot_fit(ax, es.x_test, es.f_test, es.out_test[t, 0], x_train=es.x_train, y_train=es.y_train,
             title=f"{name} (step {es.steps[t]})")
grid_x = uniform_grid(1000, -10, 10)
ks = np.arange(1, 60)
axes[3].plot(ks, np.abs(dft(np.sin(grid_x)))[ks], "--", color="0.3", label="clean sin x")
for t, name in ((best[0], "test minimum"), (-1, "end")):
    axes[3].plot(ks, np.abs(dft(np.interp(grid_x, es.x_test, es.out_test[t, 0])))[ks], label=name)
axes[3].set(yscale="log", xlabel="frequency index", title="spectra of the output")
axes[3].legend()
fig.suptitle("Fig. 4.12: fitting noisy data")
plt.show()
print("test-minimum steps:", es.steps[best], " final / minimal test loss:", ratio)

# %% [markdown]
# **Claim `ch04.early-stopping` (图4.12):** the test loss averaged over the 4 members (the book draws one curve)
# has its minimum in the first half of training, and its final value is more than 1.5 times that minimum.
# An earlier version asked this of the *worst* of 2 members; over seeds 0–19 it held on 18 (one member's
# final/min ratio was 1.42 on seed 9 and 1.21 on seed 19), short of the 19/20 standard. Averaging 4 members —
# same data, same thresholds — measures the U-shape of the figure rather than one unlucky initialisation.

# %%
# NBVAL_CHECK_OUTPUT
show(check_early_stopping(es))

# %% [markdown]
# ## 8 · Parity: a high-frequency function (图4.13(b), (4.4))
#
# On $\{-1, 1\}^d$ the **parity** $f(\mathbf x) = \prod_j x_j$ has the spectrum
# $(-i)^d \prod_j \sin 2\pi k_j$ (4.4): its magnitude *grows* with frequency. Trained on 200 of the
# $2^{10} = 1024$ points, the network fits them all — and then predicts the other 824 at chance. Along
# the diagonal direction $\mathbf p = \mathbf 1/\sqrt d$ we compare the spectrum of the true function,
# of the training data alone (under-sampling creates **spurious low frequencies** by aliasing, 频率混叠),
# and of the trained network, which follows the spurious low frequencies. Its test accuracy sits near — often a
# little *below* — one half: the spurious low frequencies point the wrong way as often as the right one.

# %%
par = run_parity(d=10, n_train=200, hidden=(500, 100), init_std=0.05, steps=pick(quick=600, full=3000),
                 lr=5e-4, members=2, seed=seed)
p = np.ones(10) / np.sqrt(10)
freqs = np.linspace(0, 1.6, 81)
spec_true = projection_spectrum(par.x, par.y, p, freqs)
spec_train = projection_spectrum(par.x[par.train_idx], par.y[par.train_idx], p, freqs)
spec_net = projection_spectrum(par.x, par.output[0], p, freqs)

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(freqs, np.abs(spec_true), "--", color="0.3", label="true function (all 1024 points)")
ax.plot(freqs, np.abs(spec_train), label="training data (200 points)")
ax.plot(freqs, np.abs(spec_net), label="trained network (all points)")
ax.set(xlabel="frequency along p", ylabel="|spectrum|", title="Fig. 4.13(b): parity, d = 10")
ax.legend()
plt.show()
print("train accuracy:", par.train_acc, " test accuracy:", par.test_acc)

# %% [markdown]
# **Claim `ch04.parity-chance` (图4.13(b)).** "Fits every training point" is measured by the largest training
# error $\max_i |f(\mathbf x_i) - y_i|$ over members, which must stay below 1 (then every sign is right; unlike a
# training accuracy of exactly 1, this has a margin); "no better than chance" by the best member's test accuracy,
# at most 0.6.

# %%
# NBVAL_CHECK_OUTPUT
show(check_parity(par))

# %% [markdown]
# ## 9 · Designing for high frequencies (chapter 5: MscaleDNN, Fourier features, 图5.7)
#
# Stretching the input turns a high frequency into a low one: $\mathcal F[f(a\,\cdot)](\xi) =
# \frac1{|a|}\hat f(\xi / a)$ (5.1). The **multiscale DNN (多尺度神经网络)** (5.2) feeds neuron group $i$
# with the input scaled by $a_i$; with a compactly supported activation such as
# $\mathrm{sReLU}(x) = \mathrm{ReLU}(x)\,\mathrm{ReLU}(1-x)$ each group resolves its own frequency band (with
# ReLU, positively homogeneous, scaling does nothing). **Fourier features** (5.11) map
# $v \mapsto [\cos 2\pi Bv, \sin 2\pi Bv]$ with $B \sim \mathcal N(0, \sigma^2)$ before the network;
# too large a $\sigma$ puts energy above what the samples can pin down, and the network overfits.
#
# Target: $\sin 2\pi x + \frac12\sin(2\pi\cdot10x) + \frac14\sin(2\pi\cdot25x)$ at equispaced points of
# $[0, 1)$ (200 in the quick profile, 300 in the full one); the test grid lies between the training points.
# In the quick profile (2000 steps, width 100, scales 1…25: four neurons per scale) the multiscale net masters
# k = 10 but is still on its way at k = 25; the full profile (width 200, scales 1…100, 5000 steps) gets k = 25
# below 0.1 as well.

# %%
ms_kw = dict(width=pick(quick=100, full=200), steps=pick(quick=2000, full=5000), lr=2e-3, n_train=pick(quick=200, full=300),
             record_every=50, seed=seed)
ms_runs = {
    "plain (sReLU)": run_multiscale("plain", **ms_kw),
    # quick: 25 scales, 4 neurons each at width 100 (with 50 scales, 2 neurons per scale left k=10 short on 2 of
    # 20 seeds); full: scales 1…100 at width 200
    "MscaleDNN (sReLU)": run_multiscale("mscale", scales=tuple(float(s) for s in range(1, pick(quick=26, full=101))),
                                        **ms_kw),
    # Fourier features fit every component within a few dozen steps: 500 steps are plenty
    "Fourier σ=10": run_multiscale("fourier", sigma=10.0, **(ms_kw | {"steps": pick(quick=500, full=5000)})),
    "Fourier σ=100": run_multiscale("fourier", sigma=100.0, **(ms_kw | {"steps": pick(quick=500, full=5000)})),
}

fig, axes = panels(4, width=2.9, height=2.6)
for ax, (name, res) in zip(axes, ms_runs.items()):
    plot_delta_f_curves(ax, res.steps, res.deltas, res.ks, title=f"{name}\ntest MSE {res.test_mse:.2g}")
    ax.set_ylim(1e-3, 3)
fig.suptitle("Chapter 5: Δ_F(k) for k = 1, 10, 25")
plt.show()

fig, ax = plt.subplots(figsize=(8, 2.6))
res = ms_runs["Fourier σ=100"]
ax.plot(res.x_test, res.f_test, "--", color="0.3", label="target")
ax.plot(res.x_test, res.out_test, lw=0.8, label="Fourier σ=100 between the training points")
ax.set(xlim=(0, 0.25), title="too large a Fourier scale: exact on the samples, wrong between them")
ax.legend()
plt.show()
final_d25 = {name: r.deltas[-1, 2] for name, r in ms_runs.items()}
print("final Δ_F(25):", final_d25)
print("test MSE:", {name: r.test_mse for name, r in ms_runs.items()})

# %% [markdown]
# **Claims `ch04.mscale-k10` (§5.2), `ch04.fourier-features` (图5.7) and `ch04.fourier-overfit` (§5.3).** The
# MscaleDNN's $\Delta_F(10)$ falls below 0.1 at some recorded step while the plain net's stays at or above 0.1
# throughout, and the MscaleDNN's final $\Delta_F(25)$ is below the plain net's. 图5.7 (from Tancik et al. 2020)
# compares image fits with and without Fourier features: with them the picture gains its high-frequency detail.
# Our 1-D analogue compares the runs above: with Fourier features (σ = 10) every component ends with
# $\Delta_F < 0.1$, without them (the plain net, trained four times longer) $\Delta_F(25)$ ends at or above 0.1, and
# the off-grid test error is lower with them. Finally, the off-grid test error of Fourier features with σ = 100
# exceeds 100× that with σ = 10.

# %%
# NBVAL_CHECK_OUTPUT
show(check_mscale(ms_runs["plain (sReLU)"], ms_runs["MscaleDNN (sReLU)"]))

# %%
# NBVAL_CHECK_OUTPUT
show(check_fourier_features(ms_runs["plain (sReLU)"], ms_runs["Fourier σ=10"]))

# %%
# NBVAL_CHECK_OUTPUT
show(check_fourier(ms_runs["Fourier σ=10"], ms_runs["Fourier σ=100"]))

# %% [markdown]
# ## Explorer (for instructors)
#
# Change the target's frequencies and amplitudes, the initialisation, the activation (try `ricker`
# with a = 0.1 and ASI on, or `tanh` with init std 2), the width, the learning rate or the loss, and
# watch the fit, its spectrum and the Δ_F(k) heat map. Each change retrains one network (about a second).

# %%
from companion.experiments.ch04_frequency import make_explorer

explorer = make_explorer()
explorer

# %% [markdown]
# ## Exercises (习题)
#
# Each cell holds `None` where your answer goes; the check underneath says whether it is right and
# gives a hint otherwise.
#
# **习题18 (aliasing, 频率混叠).** Sample $\sin(11x)$ at 16 points of $[-\pi, \pi)$. In which DFT bin
# $k \in [0, 8]$ does it show up? Answer without computing, then check.

# %%
from companion.experiments.ch04_frequency import check_alias, check_parity_spectrum, check_gradient_weight, check_asi, \
    check_stopping_step

alias_bin = None  # your answer: an integer
check_alias(alias_bin)

# %% [markdown]
# **习题6 / (4.4).** Write the DFT of the parity function $f(\mathbf x) = \prod_j x_j$ on $\{-1,1\}^3$,
# $\hat f(\mathbf k) = \frac{1}{2^d}\sum_{\mathbf x} f(\mathbf x) e^{-2\pi i\,\mathbf k\cdot\mathbf x}$, as a function of the vector $\mathbf k$.

# %%
def parity_dft(k):
    return None  # replace by the closed form, e.g. with np.prod(...) over the components of k

check_parity_spectrum(parity_dft if parity_dft(np.zeros(3)) is not None else None)

# %% [markdown]
# **习题13.** By which factor does $L_{\rm grad}$ (6.3) weight the squared error of a frequency-$k$
# component $\varepsilon\sin kx$, compared with $L_{\rm nongrad}$ (6.2)? Write it as a function of $k$.

# %%
gradient_weight = None  # e.g. lambda k: ...
check_gradient_weight(gradient_weight)

# %% [markdown]
# **习题8 (ASI).** Build an ASI network with `companion.core.nets.ASI(MLP([1, 50, 1], "tanh", init_std=1.0))`,
# evaluate it on a few inputs before training and pass the output (as a NumPy array) to the check.

# %%
asi_output = None  # your code: ...
check_asi(asi_output)

# %% [markdown]
# **习题5.** Using only training-set information from section 7 (the training outputs, their spectrum,
# the training loss), choose a stopping step. Your choice is good if its test loss is within 1.5× of the best.

# %%
my_stopping_step = None  # an integer step between 0 and the last step
check_stopping_step(my_stopping_step, es.steps, es.test_loss[:, 0])

# %% [markdown]
# **Open questions** (习题7, 10, 11, 12): is the F-principle specific to neural networks (compare a
# polynomial least-squares fit, or the Jacobi iteration of chapter 15)? Does depth change it (try the
# explorer with one and with three hidden layers)? Construct a violation (hint: sections 3 and 4). Does
# the optimiser change it (train with `optimizer="sgd"` in `FPConfig`)?
#
# ## Summary
#
# * Networks fit low frequencies first, even when all amplitudes are equal (图4.7): the **frequency
#   principle**.
# * The preference comes from the activation's decaying spectrum and a small initialisation (chapter 6);
#   when either is removed, networks still fit the training points but oscillate between them and
#   generalise badly (图4.9, 图4.11, 图6.2).
# * It explains why early stopping works on noisy data (图4.12) and why parity-like, high-frequency
#   functions are not learned from samples (图4.13).
# * Where high frequencies matter, one designs for them: a derivative in the loss (图6.4), multiscale
#   inputs and Fourier features (chapter 5) — with the caveat that too much high-frequency capacity overfits.
