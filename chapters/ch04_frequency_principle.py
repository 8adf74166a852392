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
# # Chapter 4 — The frequency principle (频率原则)
#
# *Companion to 深度学习现象导论, chapter 4 (频率原则). Chapter 5's notebook designs networks around the
# principle (多尺度神经网络, Fourier features); chapter 6's explains its mechanism.*
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
# | 2 | 图4.2, 图4.7 | sin x + sin 5x: the outline sin x first while the loss stalls (损失停滞); equal amplitudes still converge in the order k = 1, 3, 5 |
# | 3 | 图4.9, 图4.10 | a Ricker activation with a = 0.1 (with and without ASI), and σ = sin(10x), fit the points but lose the frequency order and generalise badly |
# | 4 | 图4.4, 图4.11 | an image fitted on its odd columns: small init generalises to the even columns, large init does not |
# | 5 | 图4.12 | on noisy data the test loss is U-shaped: early stopping works; at its minimum the low frequency is fitted and the noise's high frequencies not yet |
# | 6 | 图4.13 | (a) on real data (digits) the network's spectrum agrees with the labels' at the dominant low frequencies; (b) parity, a high-frequency function: fitted perfectly, predicted at chance, its spectrum full of spurious low frequencies |
#
# Then an **explorer** for instructors and **exercises (习题)**.
#
# **Run time.** Quick profile (default): under a minute on two CPU cores. Full profile
# (`COMPANION_PROFILE=full`): the book's sizes, a GPU if present. On an NVIDIA H200 GPU shared with the other
# eleven chapters (one CPU thread each) it had not finished after 460 s; on the 2-core CPU, beside other runs, a seed
# takes 83–163 minutes on one thread (most of it the 图4.4 picture's six-layer networks). On each of seeds 0, 1, 2
# and 4, 14 of its 15 phenomenon claims held, all but 图4.2's plateau (section 2); on seed 3, 13 (图4.4's
# coarse-to-fine too, section 4); the exploration `ch04.image-small-init` failed on all five (section 4). On the fresh
# seeds 500–504, which four of its claims are judged on (and two on both sets), every claim judged on those seeds held
# on all five; 13 held on 500 and 501 (the two that failed on seed 3 failed again), 14 on 502, 503 and 504: one thread
# each, 65, 86, 95 and 92 minutes for 501–504 — `robustness/report-full.json`, `docs/full-profile.md`.

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
from dataclasses import replace

import numpy as np
import matplotlib.pyplot as plt

from companion.kit.config import pick, pick_steps, settings
from companion.kit.claims import show
from companion.core.fprinciple import (FPConfig, run_fprinciple, plot_spectrum, midway_step, nearest_index,
                                       plot_fitting_times)
from companion.experiments.ch04_frequency import (
    run_sizes, check_sizes_smooth, run_image, run_early_stopping, run_parity, outline_distances,
    check_step_outline, check_step_order, check_outline_plateau, plateau_measures, check_fp_order,
    check_ricker_no_order, check_ricker_no_asi, check_sin_rate, check_image_small, check_image_large,
    check_early_stopping, check_parity, check_early_stopping_spectra, early_stop_spectra, run_digits, label_spectra,
    check_digits_spectrum, check_parity_aliasing, check_image_coarse_to_fine, image_bands, IMAGE_LOW_LEVEL,
    IMAGE_HIGH_LEVEL, IMAGE_BAND_EDGES, radial_frequency, plot_label_spectra)
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
# data, each trained until it fits them (full-batch L-BFGS until the mean squared error is below $10^{-4}$; the
# book uses Adam, which on ten points leaves the small and the deep nets short of fitting within our budget) —
# and every one of them joins the points by a
# smooth curve (光滑连线), although
# infinitely many wiggly functions fit the ten points just as well. Why do networks prefer the smooth
# one? The rest of the chapter answers: they learn low frequencies first.

# %%
sizes = run_sizes(((20,), (100, 100), (100,) * 7), n_train=10, stop_below=1e-4, seed=seed)  # L-BFGS until it fits
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
    steps=pick_steps(quick=1000, full=10000, every=50, smoke=10),
    record_every=pick(quick=10, full=50),
    members=2,
)
step = run_fprinciple(step_config, seed)
to_sine, to_steps, outline_size = outline_distances(step)

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
axes[7].axhline(0.5 * outline_size, color="0.5", ls=":", lw=1, label="½ ‖b₁ sin x‖")
axes[7].legend(fontsize=7)
fig.suptitle("Fig. 4.3 / 4.6: round(sin x) — a sine-like outline first, the steps later")
plt.show()
print("first step with Δ_F < 0.1, per member (rows) and harmonics 1, 5, 7 (columns; nan = never):\n", step.first)

# %% [markdown]
# **Claims `ch04.step-outline` (图4.3) and `ch04.step-order` (图4.6).** Outline first: a tenth of the way through
# training (the book's snapshot at step 1000 of 10 000) each member's output must *be* the outline — within half the
# fundamental sine's own size of it, $\|f_\theta - b_1\sin x\| < \tfrac12\|b_1 \sin x\|$ with
# $b_1 = \frac{2\sqrt3}{\pi}$ (root-mean-square norms on the training grid) — and closer to that sine than to the
# steps; at the end it must lie closer to the steps than to that sine. (Closer-to-the-sine-than-to-the-steps alone
# is not enough: the zero function is, by a hair, ratio 0.956; it lies at distance 1 from the outline in the first
# measure. This part was added after the review of seeds 0–19, so it is validated on seeds 500–519.) Low before high: with $t_k$ the median over
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
# points on $[-\pi, \pi)$, Adam at $5\cdot10^{-3}$, 1200 steps (the book: 600 points, four hidden layers, Adam
# $3\cdot10^{-5}$, 10 000 steps).

# %%
plateau_config = FPConfig(
    ks=(1, 5), amps=(1.0, 1.0),
    n_train=pick(quick=128, full=600), n_test=pick(quick=256, full=1000),
    hidden=pick(quick=(100, 100), full=(200, 200, 200, 100)),
    lr=pick(quick=5e-3, full=1e-4),
    steps=pick_steps(quick=1200, full=20000, every=50, smoke=10),
    record_every=pick(quick=10, full=50),
    members=pick(quick=3, full=5, smoke=2),
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
# **Claim `ch04.outline-plateau` (图4.2).** For every member: some recorded output lies within 0.35 · $\|\sin 5x\|$
# of $\sin x$ (the outline alone), the relative error stays within 15 % of $1/\sqrt 2$ for at least 15 % of the
# recorded steps (the stalled loss), and it ends below 0.1 (the details do come). The negative control in the tests
# trains the same nets from a large initialisation (std 2, as in 图6.2), where there is no outline stage.
# *History.* At Adam $10^{-3}$ and 2000 steps the first two parts held on every seed 0–19, but on 4 of 20 seeds one
# member had not finished $\sin 5x$ by the end (16/20: an exploration). The present setting, $5\cdot10^{-3}$ for
# 1200 steps, was chosen on seeds 100–129 (30 of 30; a longer run shortens the plateau's share of it, a shorter
# one leaves $\sin 5x$ unfinished) and validated afresh on seeds 0–19 (pass count and margins: the robustness page).
#
# **At the full profile the stall is too short a share of the run for this check** (seeds 0–4, the seeds measured):
# every member passes through $\sin x$ (0.29–0.32 of $\|\sin 5x\|$ away) and ends with a relative error of 0.0003–0.015,
# but stays on the plateau for 700–950 of its 20 000 steps, 3.5–5 % of the run instead of 15 %. The full profile departs
# from the book there: Adam at $10^{-4}$ for 20 000 steps where the book uses $3\cdot10^{-5}$ for 10 000 (its middle
# snapshot, on the outline, is at step 2000). The setting was not changed after seeing this; a full-profile setting
# nearer the book's would be chosen on design seeds and validated on fresh ones.

# %%
# NBVAL_CHECK_OUTPUT
show(check_outline_plateau(plateau))

# %% [markdown]
# ### Three equal components (图4.7)
#
# In 图4.6 the peaks also fall with frequency, so the order might be set by *amplitude* rather than by
# *frequency*. To rule that out, 图4.7 uses equal amplitudes: $f(x) = \sin x + \sin 3x + \sin 5x$ on
# $[-\pi, \pi)$. We train three tanh networks at once — the nets and the training of 图4.2 (members differ only in
# their random initialisation) — and record, for each $k$, the first step at which $\Delta_F(k) < 0.1$.

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
# (Until this version the run used Adam at $10^{-3}$ for 2000 steps, 20/20 seeds; the faster setting it now shares
# with 图4.2 halves its cost and held on seeds 100–129, 30 of 30, with a larger margin; its count over seeds 0–19 is
# on the robustness page.)

# %%
# NBVAL_CHECK_OUTPUT
show(check_fp_order(fp))

# %% [markdown]
# ## 3 · Without the principle, no generalisation (图4.9, 图4.10)
#
# Is the frequency principle needed for generalisation? The book breaks it on purpose. Chapter 6 explains the
# mechanism: the Fourier transform of a tanh neuron decays like $e^{-|\pi k / 2w|}$ (6.7), so gradient descent
# feels the low frequencies first (6.11) (see chapter 6's notebook). The **Ricker** activation (4.3)
#
# $$\sigma(x) = \frac{1}{15a}\pi^{1/4}\Bigl(1 - \bigl(\tfrac{x}{a}\bigr)^2\Bigr)e^{-\frac12 (x/a)^2}$$
#
# has a spectrum that peaks at a frequency of order $1/a$: for small $a$ the high frequencies are no
# longer disadvantaged. Only 24 training points are used, so between them the network is free to oscillate —
# generalisation is measured on a 300-point grid. The book's 图4.9 has three rows: a = 0.1 as it is, a = 0.1
# with **ASI (antisymmetric initialisation, 反对称初始化)** — two identical copies of the network whose
# difference is the output, exactly zero at the start, so that the initial function's own high frequencies
# cannot be blamed for the oscillation — and a = 0.3 with ASI. We train the three as one batched computation
# (ASI chosen per member).

# %%
ricker_config = FPConfig(
    n_train=24, n_test=300, act="ricker", a=(0.3, 0.1, 0.1), asi=(True, True, False), members=3,
    hidden=pick(quick=(100, 100), full=(200, 200, 100)),
    steps=pick_steps(quick=1000, full=5000, every=10), record_every=10,
    fine_until=100,                               # every step of the first 100: the a = 0.1 peaks converge early
)
ricker = run_fprinciple(ricker_config, seed)
ricker_names = ["a=0.3, ASI", "a=0.1, ASI", "a=0.1, no ASI"]

fig, axes = panels(4, width=2.9, height=2.6)
for ax, m in zip(axes[:3], (2, 1, 0)):            # the book's order: a=0.1 without ASI, with ASI, a=0.3 with ASI
    plot_fit(ax, ricker.x_test, ricker.f_test, ricker.out_test[-1, m], x_train=ricker.x_train,
             y_train=ricker.f_train, title=f"Ricker {ricker_names[m]}\ntest MSE {ricker.test_mse[m]:.3g}")
    ax.set_ylim(-4, 4)
plot_delta_f_curves(axes[3], ricker.steps, ricker.deltas[:, :2], ricker_config.ks, ricker_names[:2])
fig.suptitle("Fig. 4.9: a Ricker activation of width a")
plt.show()
print("first step with Δ_F < 0.1 (rows: a = 0.3 ASI, 0.1 ASI, 0.1 no ASI):\n", ricker.first, "\ntest MSE:",
      ricker.test_mse)

# %% [markdown]
# How fast is each frequency fitted? The first step at which Δ_F(k) falls below 0.1 is one crossing of one curve:
# with a = 0.1 and ASI the three peaks cross within 2–10 steps of the start, and which crosses first is a matter of
# a step or two. We read the whole curve instead: the **fitting time** $\tau_k = \int_0^T \min(\Delta_F(k, t), 1)\,dt$
# (the area under the curve, in steps; for an error falling like $e^{-t/\tau}$ it is $\tau$). With the frequency
# principle $\tau_1 \ll \tau_3 \ll \tau_5$; without it the three are alike.

# %%
fig, axes = panels(1, width=4.2)
plot_fitting_times(axes[0], ricker, range(3), ricker_names, title="Fig. 4.9: fitting times τ_k")
plt.show()

# %% [markdown]
# **Claims `ch04.ricker-no-order` and `ch04.ricker-no-asi` (图4.9, rows 2 and 1).** For a = 0.1 with ASI
# (`ch04.ricker-no-order`, the book's row 2): no frequency order — the three fitting times lie within a factor 2 of
# each other, $\max_k \tau_k / \min_k \tau_k \le 2$ — and a test error more than twice that of a = 0.3 (with ASI).
# The threshold was set on design seeds 100–105, where the ratio was 1.03–1.23 at a = 0.1 and 11–13 at a = 0.3
# (the ordered contrast, which the negative control runs). An earlier version compared the first steps below 0.1
# instead; measured step by step it held on only 10 of seeds 500–519, because "within a factor 2" of a crossing at
# step 3 is decided by a step. Measured by the fitting times the claim held on 20/20 of seeds 0–19 (seen under the
# old measure) and 20/20 of 500–519 (max/min τ 1.02–1.49 at a = 0.1; margin min 0.26, median 0.39). Without ASI
# (`ch04.ricker-no-asi`, row 1) the peaks converge within 10–34 steps, so the first steps themselves are within a
# factor 2 on every seed (20/20 on 500–519), with the same test-error condition. That the a = 0.3 network keeps the order $t_1 < t_3 < t_5$ is
# chapter 6's claim `ch06.ricker-order` (图6.3). Our setting differs from the authors' code (600 training points,
# a 200-200-200-100 network, Adam at $10^{-5}$ for 1000 epochs): 24 points, 100-100 and Adam at $10^{-3}$ keep the
# run within seconds and make the overfitting between the points visible; at a hundred times the authors' learning
# rate the peaks converge within a few steps, which is why the early steps are recorded one by one. Unchecked: the
# book's heat maps of Δ_F over all frequencies (we track k = 1, 3, 5).

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
# within a few dozen steps, so Δ_F is recorded every 2 steps to resolve "within a factor 2" (with a 100-point test
# grid, four points between neighbouring samples, which keeps the frequent records cheap).

# %%
sin_config = FPConfig(
    n_train=24, n_test=100, act="sin", a=(10.0, 10.0, 1.0), asi=(False, True, True), members=3,
    hidden=ricker_config.hidden, lr=5e-3, steps=pick_steps(quick=800, full=5000, every=2), record_every=2,
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
fig, axes = panels(1, width=4.2)
plot_fitting_times(axes[0], sin_fit, range(3), sin_names, title="Fig. 4.10: fitting times τ_k")
plt.show()

# %% [markdown]
# **Claim `ch04.sin-rate` (图4.10)**, with the measure of the Ricker claim: for a = 10 with ASI the three fitting
# times lie within a factor 2 of each other, and for a = 10, with and without ASI, the test error is more than twice
# that of a = 1. Threshold set on design seeds 100–105 (ratio 1.01–1.13 at a = 10, 11–12 at a = 1, the contrast
# the negative control runs). Under the earlier measure, the first steps below 0.1 within a factor 2, it held on 13 of
# seeds 0–19 (all three peaks converge within 4–22 steps, decided by a step or two); the test-error conditions held
# on every seed. Measured by the fitting times it held on 20/20 of seeds 0–19 and 20/20 of 500–519 (max/min τ
# 1.01–1.45 at a = 10; margin min 0.28, median 0.43). The authors' code trains 200-200-200-100 networks on 600
# points with Adam at $10^{-5}$; ours are the Ricker run's.

# %%
# NBVAL_CHECK_OUTPUT
show(check_sin_rate(sin_fit))

# %% [markdown]
# ## 4 · An image as a function of its coordinates (图4.4, 图4.11)
#
# A grey photograph (scikit-image's bundled cat, resized) is a function (row, column) → grey value.
# The network sees only the **odd columns** and is asked for the even ones. With a small
# initialisation it learns the outline first and interpolates smoothly; with a large one (图4.11) it
# fits the training columns but the unseen columns are noise. We report the peak signal-to-noise
# ratio (PSNR, dB) on training and unseen columns, and compare with the best *constant* guess (the mean grey):
# a network that learned nothing would tie with it. In the quick profile (a 24×36 picture, three hidden layers of 64
# tanh neurons, 2000 steps) the
# small-initialisation network gets only the coarse outline — the book needs tens of thousands of steps for
# the fur; `COMPANION_PROFILE=full` gets much further.

# %%
image_stds = (0.1, 1.5)
img = run_image(shape=pick(quick=(24, 36), full=(75, 60)), init_stds=image_stds,
                hidden=pick(quick=(64, 64, 64), full=(500, 400, 300, 200, 200, 100)),
                steps=pick_steps(quick=2000, full=20000, every=1000, smoke=2), lr=pick(quick=1e-2, full=5e-5),
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
# **Claims `ch04.image-small-init` (图4.4) and `ch04.image-large-init` (图4.11).** Small init, after training: the
# network interpolates the unseen columns — PSNR there more than 2 dB above the constant-grey baseline, and less than
# 3 dB below the training columns. Large init: more than 10 dB below the training columns. 图4.4's own point, the
# coarse-to-fine progression over training (the rough position first, then the contours, the fur last), is not what
# these two test: it is measured in the next subsection (`ch04.image-coarse-to-fine`).
# **`ch04.image-small-init` is an exploration:** on seeds 0–19 it held on 18 on an Intel Xeon (seed 8 missed the 3 dB
# gap by 0.42 dB, seed 15 by 0.006 dB), one short of the 19/20 standard, and on 19 on an AMD EPYC, where seed 15's
# rounding falls the other way (on the seeds 500–519 it held on all 20). A statement that one machine's last bits
# move across its threshold stays an exploration; `ch04.image-large-init` held on 20.
# At the full profile (a 75×60 picture, six hidden layers of 500 down to 100 neurons, 20 000 steps; seeds 0–4) the
# small-initialisation network interpolates far better than the constant grey (26.7–27.3 dB on the unseen columns
# against 18.8) and fits the training columns better still, 8.5–11.9 dB above the unseen ones: the gap condition, set where the
# network gets only the outline, fails there once the training columns' fur is fitted; the large initialisation's
# claim holds. The coarse-to-fine claim held on seeds 0–2 and fails on seed 3: the low band is learnt by step 3000 and
# the high band by step 5000, where the claim asks for at least twice as late (with records every 1000 steps, a ratio
# of 1.7 against 2.5 on seeds 1 and 2); the outline still comes first, but not as far ahead of the fur as the book's.
# It holds again on seed 4 (low band by step 2000, high band by 5000: a ratio of 2.5; the output then holds 0.45 of
# the image's high band, 0.97 at the end).
# On the fresh seeds 500 and 501 it fails as on seed 3, by its ratio only: low band by step 3000 and 4000, high band by
# 5000 and 7000 (5/3 and 7/4); the output then holds 0.45 and 0.47 of the high band, 0.96 at the end. On seed 502 it
# holds with no margin (steps 2000 and 4000, a ratio of exactly 2), on seed 503 with a ratio of 7/3 (steps 3000 and
# 7000) and on seed 504 with no margin again (2000 and 4000). So over ten seeds the outline comes first on every one,
# at least twice as early as the fur starts on seven: at the full profile, where a claim holds only if it holds on
# every seed, 图4.4's coarse to fine is the phenomenon, weaker than the claim's factor at 20 000 steps.

# %%
# NBVAL_CHECK_OUTPUT
show(check_image_small(img))

# %%
# NBVAL_CHECK_OUTPUT
show(check_image_large(img))

# %% [markdown]
# ### Coarse to fine, measured (图4.4)
#
# The book's point in 图4.4 is the order: after 20 000 steps the network has only the cat's rough position, after
# 50 000 the contours of the face, and only after 1 000 000 the fur — it does not learn one region after another,
# it learns a blurred outline of the whole picture and then adds detail (先整体后局部). We measure this in
# frequency, on the training columns (a 24 × 18 grid in the quick profile): their 2-D DFT is cut into rings of
# radial frequency $|\xi|$ (cycles per sample) — the low band $0 < |\xi| \le 0.1$ (the outline; the constant
# grey left out), a middle band, and the high band $|\xi| > 0.25$ (the detail) — and on each ring we take the
# book's relative error $\Delta_F$ (图4.7) over all its frequencies at once,
# $\Delta_F(B) = \lVert \hat h_B - \hat f_B \rVert / \lVert \hat f_B \rVert$: 1 while the band is missing, 0 when it
# is fitted. We also record the output's *share* of the image's amplitude in the high band,
# $\lVert \hat h_B \rVert / \lVert \hat f_B \rVert$: below 1 when the detail is still missing (a blurred
# picture), above 1 when the band holds noise.

# %%
bands = image_bands(img)
t_low, t_high = (bands.first_below(0, IMAGE_LOW_LEVEL)[0], bands.first_below(-1, IMAGE_HIGH_LEVEL)[0])
band_names = ["low band |ξ| ≤ 0.1", "middle band", "high band |ξ| > 0.25"]
fig, axes = panels(6, width=3.0, height=2.5, nrows=2)
shown = [(t, label) for t, label in [(t_low, "low band fitted"), (t_high, "high band started")]
         if not np.isnan(t)] + [(img.steps[-1], "end")]
for ax, (t, label) in zip(axes[:3], shown):
    ax.imshow(np.clip(img.snapshots[nearest_index(img.steps, t), 0], 0, 1), cmap="gray", vmin=0, vmax=1)
    ax.set_title(f"std {image_stds[0]}, step {int(t)}: {label}", fontsize=8)
    ax.axis("off")
train_cols = img.image[:, 1::2]                                      # the bands are rings of this grid's 2-D DFT
axes[3].imshow(np.fft.fftshift(np.log10(np.abs(np.fft.fft2(train_cols)) + 1e-3)), cmap="viridis")
axes[3].contour(np.fft.fftshift(radial_frequency(train_cols.shape)), levels=list(IMAGE_BAND_EDGES), colors="w")
axes[3].set_title("image spectrum (training columns), band edges", fontsize=8)
axes[3].axis("off")
for ax, m in zip(axes[4:], range(2)):
    for b, name in enumerate(band_names):
        ax.plot(bands.steps, bands.delta[:, m, b], label=name)
    ax.axhline(IMAGE_LOW_LEVEL, color="0.5", ls=":", lw=1)
    ax.axhline(IMAGE_HIGH_LEVEL, color="0.5", ls="--", lw=1)
    ax.set_yscale("log")
    ax.set(xlabel="step", ylabel="Δ_F", title=f"init std {image_stds[m]}")
axes[5].legend(fontsize=6)
fig.suptitle("Fig. 4.4: training columns, relative error per frequency band")
plt.show()
print("small init: first step with Δ_F(low) < 0.5:", t_low, " with Δ_F(high) < 0.8:", t_high,
      " high-band share of the output then:", np.round(bands.share[nearest_index(bands.steps, t_low), 0, -1], 2)
      if not np.isnan(t_low) else None)

# %% [markdown]
# **Claim `ch04.image-coarse-to-fine` (图4.4).** For the small-initialisation network: the low band's $\Delta_F$ falls
# below 0.5 at a step $t_{low}$ within the first half of training, at most half as late as the step $t_{high}$ where
# the high band's falls below 0.8 (a high band that does not get there within the run counts as later still: in the
# book the fur comes fifty times later than the outline); at $t_{low}$ the output holds at most half of the image's
# high band — the outline is blurred, not noisy — and by the end at least 1.25 times what it held then: the detail is
# added afterwards. The thresholds were set on design seeds 100–115 (there $t_{low} \le 700$ of 2000 steps,
# $t_{high}/t_{low} \ge 2.3$, the share at $t_{low}$ at most 0.33 and its growth at least 1.58-fold); on the validation
# seeds 0–19 the claim held on 19 of 20 (seed 1 missed: its high band got below 0.8 at step 1300, 1.86 times its
# low band's 700; median margin 0.43). The large initialisation (std 1.5, 图4.11), trained in the same call,
# is the book's contrast: its output's high band starts at tens of times the image's (noise), still holds over twice
# the image's when its low band is fitted, and then shrinks instead of growing, so the same check on it fails (on all
# of seeds 0–19, and in `tests/test_controls_ch04.py`). *Our setting and what is not checked:* the book trains for
# up to 10⁶ steps and shows the fur; in the quick profile's 2000 steps the high band gets only part of the way
# ($\Delta_F$ from 1 to about 0.55–0.85), so "the fur last" is measured as the high band *starting* late, not as its
# completion. That the network does not learn one region after another (the book's "并非先记住某一部分") is seen in
# the snapshots, which blur and sharpen the whole picture together, but not measured.

# %%
# NBVAL_CHECK_OUTPUT
show(check_image_coarse_to_fine(img))

# %% [markdown]
# ## 5 · Early stopping, seen in frequency (图4.12)
#
# Samples of $\sin x + 0.2\,\mathcal N(0, 1)$ at 100 points. The signal is one low frequency; the noise spreads
# over all frequencies. The F-principle fits the low-frequency signal first, so the error against the clean function
# first falls, then rises again as the network starts fitting the noise's high frequencies: stopping at the bottom
# of the **U** is **early stopping (提前停止)**. The book reads it in frequency (图4.12(d)): at the test-loss minimum
# the network's spectrum matches the clean data's low-frequency peak while its high-frequency amplitude is still
# small; at the end of training the high frequencies — the noise — are fitted too.
#
# *Our setting.* The book samples random points of $[-10, 10]$. We take the 100 points on the uniform grid of three
# whole periods, $[-3\pi, 3\pi)$, so that on the training points the clean $\sin x$ is exactly DFT bin 3 and the
# noise spreads evenly over the other bins: the spectra of (d) are then those of the data themselves, with no leakage
# of the signal into the high frequencies (on random points a smooth function leaks into every frequency about as
# much as the noise itself has, and hides it). Four tanh networks 1-100-100-50-1 at once, Adam at
# $4\cdot10^{-3}$, 3000 steps (the full profile: 1-200-200-100-1, Adam $10^{-5}$, 30 000 steps, as the authors'
# script); the test loss is measured against the clean $\sin x$ on 500 equispaced points.

# %%
es_steps = pick_steps(quick=3000, full=30000, every=20)
es = run_early_stopping(n=100, noise=0.2, hidden=pick(quick=(100, 100, 50), full=(200, 200, 100)), steps=es_steps,
                        lr=pick(quick=4e-3, full=1e-5), members=4, record_every=20, n_test=pick(quick=500, full=1000),
                        periods=3, seed=seed)
es_spectra = early_stop_spectra(es)
best = es_spectra.best                              # the minimum of the member-averaged test loss

fig, axes = panels(4, width=3.0, height=2.7)
plot_curves(axes[0], es.steps, {"train": es.train_loss.mean(1), "test (clean sin x)": es.test_loss.mean(1)})
axes[0].axvline(es.steps[best], color="k", ls="--", lw=0.8)
for ax, t, name in ((axes[1], best, "at the test minimum"), (axes[2], -1, "at the end")):
    plot_fit(ax, es.x_test, es.f_test, es.out_test[t, 0], x_train=es.x_train, y_train=es.y_train,
             title=f"{name} (step {es.steps[t]})")
ks = np.arange(1, 51)
axes[3].plot(ks, np.abs(dft(es.y_train))[ks], ":", color="0.6", label="noisy data")
axes[3].plot(ks, np.abs(dft(es.f_train))[ks] + 1e-4, "--", color="0.2", label="clean sin x")
for t, name in ((best, "test minimum"), (-1, "end")):
    axes[3].plot(ks, np.abs(dft(es.out_train[t, 0]))[ks], label=name)
axes[3].axvspan(3 * es.periods + 1, ks[-1], color="0.9", zorder=0)
axes[3].set(yscale="log", xlabel="frequency index", title="spectra on the training points")
axes[3].set_ylim(top=1e4 * np.abs(dft(es.y_train))[ks].max())  # head-room: the legend sits above the curves
axes[3].legend(fontsize=6, loc="upper right")
fig.suptitle("Fig. 4.12: fitting noisy data")
plt.show()
print("test-minimum step:", es.steps[best], " final / minimal test loss (averaged):",
      es.test_loss.mean(1)[-1] / es.test_loss.mean(1).min())
print("high-frequency amplitude / noisy data's, at the test minimum:", es_spectra.high_best, " at the end:",
      es_spectra.high_end)

# %% [markdown]
# **Claim `ch04.early-stopping` (图4.12(a)):** the test loss averaged over the 4 members (the book draws one curve)
# has its minimum in the first half of training, and its final value is more than 1.5 times that minimum.
#
# **Claim `ch04.early-stopping-spectra` (图4.12(d)):** at that minimum, on the training points, (i) the output's
# spectrum matches the clean $\sin x$ at its peak — the book's relative error $\Delta_F < 0.25$ at bin 3 — and (ii)
# its high-frequency amplitude (the root mean square of $|\hat h_k|$ over the bins $k \ge 10$, above three times the
# signal's frequency: the shaded band, where the clean data have nothing and the noisy data only noise) is less than
# half the noisy data's; (iii) by the end of training that amplitude has grown at least 1.5-fold towards the noisy
# data's. Each is the median over the 4 members. The thresholds were set on design seeds 100–119 (with 2000 steps
# the worst member there had $\Delta_F$ 0.1, an amplitude 0.38 of the noisy data's and a growth of 1.8; in the final
# setting the medians were at most 0.10, at most 0.32 and at least 2.6).
#
# *Seeds.* An earlier version of the U-shape claim (random points of $[-10, 10]$, Adam $2\cdot10^{-3}$ for 2000
# steps) held on 18 of seeds 0–19 for its worst member, and, averaged over members, on 18 of seeds 500–519: an
# exploration. Both seed sets having been seen, the redesigned setting above (chosen on seeds 100–119) is validated
# on **both** 0–19 and 500–519. `ch04.early-stopping` held on 20 of 20 of each (final/minimum 2.1–5.7 and 2.3–4.3,
# the minimum at steps 220–420 of 3000; margin at least +0.40 and +0.52, median +0.75 and +0.77);
# `ch04.early-stopping-spectra` on 20 of 20 of each ($\Delta_F$ at most 0.07, the amplitude 0.11–0.38 of the noisy
# data's at the minimum, its growth 2.1–7.4-fold; margin at least +0.24 and +0.34, median +0.63 and +0.57).
#
# *Controls (tests).* The U-shape: the same check on clean labels (noise 0), where there is no noise to overfit and no
# U. The spectra: the same check on a large initialisation (std 2, 图4.11), a network without the low-frequency
# preference: at its test minimum it has already fitted much of the noise's high frequencies (about the noisy data's
# amplitude), and nothing is left to grow. *Not checked:* panels (b) and (c), the two fits, are drawn only.

# %%
# NBVAL_CHECK_OUTPUT
show(check_early_stopping(es))

# %%
# NBVAL_CHECK_OUTPUT
show(check_early_stopping_spectra(es))

# %% [markdown]
# ## 6 · Real data and parity: where the F-principle helps and where it fails (图4.13)
#
# Does the data that networks generalise well on have a low-frequency-dominated spectrum? In high dimension the book
# takes the Fourier transform along one direction $\mathbf p$ (the projection method of 习题15): for points
# $\mathbf x_j$ and labels $y_j$,
# $\hat y_{\mathbf p}(\xi) = \frac1N\sum_j y_j\, e^{-2\pi i\,\xi\, t_j}$ with $t_j = \mathbf p\cdot\mathbf x_j$. We
# standardise $t$ (mean 0, standard deviation 1 over all points), so that $\xi$ counts cycles per standard deviation,
# and centre the labels by their mean. We use this transform for both panels, the book's, rather than the Walsh
# (degree) spectrum of the cube, so that (a) and (b) are measured alike: along the diagonal of the cube it is the book's
# (4.4). For a label with several components (one-hot) the amplitude is the norm over the components.
#
# ### (a) A real data set: scikit-learn's handwritten digits
#
# The book uses CIFAR-10; we use the 1797 8×8 digit images that ship with scikit-learn. Two tanh networks 64-100-10
# learn the one-hot labels of a random 1000 of them (full-batch Adam at $3\cdot10^{-3}$, 400 steps, mean squared
# error); $\mathbf p$ is the images' first principal direction. We draw the spectrum of the labels on all points
# (training and test: the book's blue dashed line), on the training points alone (red), and of the network's output on
# all points (green).

# %%
digits = run_digits(n_train=1000, hidden=(100,), steps=pick_steps(quick=400, full=2000, every=10), lr=3e-3,
                    members=2, seed=seed)
dig_spec = label_spectra(digits)

fig, ax = plt.subplots(figsize=(6, 3))
plot_label_spectra(ax, dig_spec, "Fig. 4.13(a): digits, first principal direction")
ax.axvspan(0, 0.5, color="0.92", zorder=0)
plt.show()
print("train accuracy:", digits.train_acc, " test accuracy:", digits.test_acc)

# %% [markdown]
# **Claim `ch04.digits-spectrum` (图4.13(a)).** On this low-frequency-dominated data set (the labels' spectrum peaks
# near $\xi = 0.2$ and falls to about a seventh of that peak by $\xi = 1$) every member's spectrum agrees with the
# labels' at the low frequencies — relative error $\|\hat h - \hat y\| / \|\hat y\| < 0.3$ over $\xi \le 0.5$ (shaded) —
# and its high-frequency amplitudes are small: at $\xi \ge 1$ at most a quarter of the labels' low-frequency peak. On
# design seeds 100–119 the error was 0.11–0.19 and the high-frequency ratio 0.14–0.15 (the labels' own is 0.145).
# Validated on seeds 0–19: it held on 20 of 20 (error 0.10–0.16, high-frequency ratio 0.14–0.15; margin at least
# +0.39, median +0.43). The control (tests) is the book's contrast, a high-frequency-dominated data set: the same check
# on a network trained on parity (below) fails, for parity has almost nothing at low frequencies for the network to
# agree with. *Not checked:* that the data set is CIFAR-10, and the training-set line (red), which is drawn only.
#
# ### (b) Parity, a high-frequency function ((4.4))
#
# On $\{-1, 1\}^d$ the **parity** $f(\mathbf x) = \prod_j x_j$ has the spectrum
# $(-i)^d \prod_j \sin 2\pi k_j$ (4.4): its magnitude *grows* with frequency. Trained on 200 of the
# $2^{10} = 1024$ points, the network fits them all — and then predicts the other 824 at chance. Along
# the diagonal direction $\mathbf p = \mathbf 1/\sqrt d$ we compare the spectrum of the true function,
# of the training data alone (under-sampling creates **spurious low frequencies** by aliasing, 频率混叠),
# and of the trained network, which has spurious low frequencies too. Its test accuracy sits near — often a
# little *below* — one half: the spurious low frequencies point the wrong way as often as the right one.
# Two tanh networks 10-500-100-1 (the authors' sizes) from weights of std 0.05, Adam at $5\cdot10^{-4}$, 400 steps
# (every training point is fitted well before; 600 steps gave the same verdicts and margins on seeds 100–114).

# %%
par = run_parity(d=10, n_train=200, hidden=(500, 100), init_std=0.05, steps=pick_steps(quick=400, full=3000, every=10),
                 lr=5e-4, members=2, seed=seed)
par_spec = label_spectra(par)

fig, ax = plt.subplots(figsize=(6, 3))
plot_label_spectra(ax, par_spec, "Fig. 4.13(b): parity, d = 10, diagonal direction")
ax.set(yscale="log", ylim=(1e-5, 3))
plt.show()
print("train accuracy:", par.train_acc, " test accuracy:", par.test_acc)

# %% [markdown]
# **Claim `ch04.parity-chance` (图4.13(b)).** "Fits every training point" is measured by the largest training
# error $\max_i |f(\mathbf x_i) - y_i|$ over members, which must stay below 1 (then every sign is right; unlike a
# training accuracy of exactly 1, this has a margin); "no better than chance" by the best member's test accuracy,
# at most 0.6. The negative control in the tests is the book's contrast (图4.13(a): data dominated by low
# frequencies): the same network fits the majority sign $\operatorname{sign}\sum_j x_j$ on the same kind of cube,
# and predicts its unseen points far above chance, so the "chance" half fails there.
#
# **Claim `ch04.parity-aliasing` (图4.13(b), the spectra).** Take the low frequencies where the true spectrum is
# below 1 % of its peak (here $\xi \le 0.3$, where $|\sin(2\pi\xi/\sqrt{10})|^{10} < 0.01$). There the training
# set's spectrum (aliasing) reaches at least 5 times the true one's largest value and every member's spectrum at least
# 3 times — the spurious low frequencies — while every member keeps at most half of the true spectrum's peak (at
# $\xi \approx \sqrt{10}/4$): the network's spectrum is not the true one. On design seeds 100–119 the training set's
# ratio was 12–38, the networks' 5.7–51 (so the bound for the networks was set at 3), their share of the true peak
# 0.12–0.27. Validated on seeds 0–19: it held on 20 of 20 (training set 7.6–37, networks 9.7–39, share of the peak
# 0.11–0.27; margin at least +0.45, median +0.67). The control (tests) is the book's contrast of a complete sample:
# trained on all but one point of the cube there is no aliasing, and neither the training set nor the network has
# spurious low frequencies. *Not checked:* that the network's low frequencies *follow* the training set's (we measured
# the distance of the network's low-band spectrum to the training set's against its distance to the true one: it was
# smaller on some design seeds and larger on others, ratios 0.3–3.5, so the book's "follows the aliased spectrum" is
# drawn, not claimed).

# %%
# NBVAL_CHECK_OUTPUT
show(check_digits_spectrum(digits))

# %%
# NBVAL_CHECK_OUTPUT
show(check_parity(par))

# %%
# NBVAL_CHECK_OUTPUT
show(check_parity_aliasing(par))

# %% [markdown]
# ## Explorer (for instructors)
#
# Change the target's frequencies and amplitudes, the depth and the width of the network, the optimiser
# (习题12: plain gradient descent `sgd` or Adam) and its learning rate, and watch the fit, its spectrum and the
# Δ_F(k) heat map. Does depth change the order (习题10)? Each change retrains one network (about a second).
# The mechanism's factors — initialisation, activation, loss — are in chapter 6's explorer.

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
#
# Worked solution: run `from companion.solutions.ch04 import solution; solution(18)` (on the site: the "Solution" toggle below).

# %%
from companion.experiments.ch04_frequency import check_alias, check_parity_spectrum, check_asi, check_stopping_step

alias_bin = None  # your answer: an integer
check_alias(alias_bin)

# %% [markdown]
# **习题6 / (4.4).** Write the DFT of the parity function $f(\mathbf x) = \prod_j x_j$ on $\{-1,1\}^3$,
# $\hat f(\mathbf k) = \frac{1}{2^d}\sum_{\mathbf x} f(\mathbf x) e^{-2\pi i\,\mathbf k\cdot\mathbf x}$, as a function of the vector $\mathbf k$.
#
# Worked solution: run `from companion.solutions.ch04 import solution; solution(6)` (on the site: the "Solution" toggle below).

# %%
def parity_dft(k):
    return None  # replace by the closed form, e.g. with np.prod(...) over the components of k

check_parity_spectrum(parity_dft if parity_dft(np.zeros(3)) is not None else None)

# %% [markdown]
# **习题8 (ASI).** Build an ASI network with `companion.core.nets.ASI(MLP([1, 50, 1], "tanh", init_std=1.0))`,
# evaluate it on a few inputs before training and pass the output (as a NumPy array) to the check.
#
# Worked solution: run `from companion.solutions.ch04 import solution; solution(8)` (on the site: the "Solution" toggle below).

# %%
asi_output = None  # your code: ...
check_asi(asi_output)

# %% [markdown]
# **习题5.** Using only training-set information from section 5 (the training outputs, their spectrum,
# the training loss), choose a stopping step. Your choice is good if its test loss is within 1.5× of the best.
#
# Worked solution: run `from companion.solutions.ch04 import solution; solution(5)` (on the site: the "Solution" toggle below).

# %%
my_stopping_step = None  # an integer step between 0 and the last step
check_stopping_step(my_stopping_step, es.steps, es.test_loss[:, 0])

# %% [markdown]
# **Open questions** (习题7, 10, 11, 12, 13): is the F-principle specific to neural networks (compare a
# polynomial least-squares fit, or the Jacobi iteration of chapter 15)? Does depth change it (try the
# explorer with one and with four hidden layers)? Construct a violation (hint: section 3, and chapter 6). Does
# the optimiser change it (the explorer's `sgd`)? What does a derivative of the output in the loss do (习题13: chapter
# 6's notebook, 图6.4, asks you for the weight it puts on frequency k)?
#
# Worked solution: run `from companion.solutions.ch04 import solution; solution("Open questions")` (on the site: the "Solution" toggle below).
#
# ## Summary
#
# * Networks of every size join samples smoothly (图4.1) because they fit low frequencies first — the outline, then
#   the details (图4.2, 图4.3, 图4.6) — even when all amplitudes are equal (图4.7): the **frequency principle**.
# * When the preference is removed (a Ricker activation of small width, sin(10x), a large initialisation), networks
#   still fit the training points but oscillate between them and generalise badly (图4.9–4.11); chapter 6 explains why.
# * It explains why early stopping works on noisy data (图4.12) and why parity-like, high-frequency
#   functions are not learned from samples (图4.13).
# * Where high frequencies matter, one designs for them: multiscale inputs and Fourier features (chapter 5), a
#   derivative in the loss (chapter 6, 图6.4).
