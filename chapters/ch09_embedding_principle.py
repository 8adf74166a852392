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
# # Chapter 9 — The embedding principle of the loss landscape (损失景观的嵌入原则)
#
# *深度学习现象导论*, chapter 9, and Zhang, Zhang, Luo & Xu, "Embedding principle of loss landscape of deep
# neural networks" (NeurIPS 2021) and "Embedding principle: a hierarchical structure of loss landscape"
# (2021b).
#
# Nets of different widths trained from a small initialisation stall (停滞) at the *same* loss values. The
# chapter's explanation: the loss landscape of a network "contains" every critical point (临界点) of every
# narrower network — not geometrically, but through **critical embeddings** (临界嵌入) that map a narrow
# critical point to a wide one with the same output function. This notebook:
#
# 1. **Width similarity** (宽度相似性, 图9.1/9.2): nets of widths 3 … 50 stall at the loss of the width-1
#    optimum; there their outputs coincide with it and their neurons are condensed (凝聚) on one direction.
# 2. **The loss spectrum** (损失谱, 图9.5): where many runs of every width spend their time — on discrete lines at
#    narrower nets' critical losses, the wider net on a lower one.
# 3. **One wide net's learning path** (图9.4): a wide tanh net first fits the low frequencies and stalls at
#    the embedded width-1 optimum, then fits the target (link to the frequency principle, ch. 4).
# 4. **Splitting embeddings and the Hessian** (图9.3, 图9.7): the one-step splitting embedding T^α_s keeps
#    the output and the gradient exactly; each split adds zero eigenvalues and a minimum turns into a saddle.
# 5. **Compression** (图9.8): merging condensed neurons shrinks a wide net on digits to a narrow one that
#    predicts the same labels.
#
# Two-layer nets follow (9.1), f_θ(x) = Σ_j a_j σ(w_jᵀx̃) with the bias folded in, x̃ = (x, 1). Mechanism in
# `companion.experiments.ch09_embedding` (embeddings, batched GD, merging) and `companion.core.landscape` (Hessians).
#
# Run time: quick profile 24 s on a quiet 2-core machine (AMD EPYC, `benchmarks/reproduce_timing.py`); full profile (100 seeds per width, 40 000 steps, widths to
# 500): 224 s on an NVIDIA H200 GPU shared with the other eleven chapters (one CPU thread each, seed 0), 79 minutes on
# one thread of the 2-core CPU (seed 0, beside another run; `robustness/report-full.json`). On the CPU's seed 0 the
# claims of 图9.5, 图9.3 and 图9.7 hold and three fail, as they did on the GPU; each section says why: 图9.1/9.2 (every
# net passes through the width-1 optimum, but the check reads a later moment of the wide nets that have left it),
# 图9.4 (the width-500 net has not left the plateau after 40 000 steps) and 图9.8 (the width shrinks 3.3×, not 4×).
# Seed 1 (121 minutes on one thread, beside two other runs): the same two of 图9.1/9.2 and 图9.4 fail for the same
# reasons (12 nets read at a later passage, steps 24 800–39 100, after a first one at 3000–3700; the width-500 net at
# 1.001 L1* at the end), and 图9.8 holds (400 → 91, 4.4×). Seed 2 (103 minutes on one thread, beside another run):
# the same as seed 1 (14 nets read at a later passage, steps 28 000–40 000, after a first one at 2900–4000; the
# width-500 net at 1.001 L1*; 图9.8 400 → 88, 4.5×). Seed 3 (76 minutes on one thread, beside another run): 图9.1/9.2
# and 图9.4 as before (14 nets of width 500 read at a later passage), and 图9.8 fails the other way: the width shrinks
# 7.8× (400 → 51), but the merged net's training loss is 12 % above the wide net's, where the claim allows 10 % (its
# section says why). Seed 4 ran on an NVIDIA H200 (200 s, sharing the GPU with fifteen other full-profile runs, one
# CPU thread each): 图9.1/9.2 and 图9.4 fail as on seeds 0–3 (margins −4.73 and never), 图9.8 holds (its tightest
# condition the merge factor, 6 % above the control's, margin +0.057). Over seeds 0–4: 图9.5, 图9.3 and 图9.7 on all five, 图9.8
# on three, 图9.1/9.2 and 图9.4 on none. On the fresh seeds 500–504 (2026-12-07; 70–127 minutes each on one thread
# of an Intel Xeon) 图9.5 holds on all five (smallest margin +0.159), so its claim, judged on both seed sets, holds at
# the full profile; 图9.3 and 图9.7 hold too; 图9.8 holds on 500, 501 and 504 and on 502 and 503 misses its 4× by a
# little (400 → 101 and 106 neurons, 3.96× and 3.8×: the departure of seed 0 above); 图9.1/9.2 and 图9.4 fail for the
# reasons above.

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
import torch

from companion.core import neurons as cond
from companion.experiments import ch09_embedding as emb
from companion.kit.claims import show
from companion.core.data import digits
from companion.kit.config import pick, pick_steps, settings
from companion.kit.seeds import active_seed
from companion.experiments.ch09_embedding import (check_embedded_saddle, check_learning_path, check_merge,
                                 check_split_hessian, check_split_identities, check_width_plateau)
from companion.kit.plots import panels
from companion.core.spectral import dft

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. Width similarity: shared plateaus (图9.1, 图9.2)
#
# Task: 64 points x ∈ [−4, 4], f*(x) = tanh(2(x+2)) + tanh(2x) + tanh(2(x−2)); tanh nets, every parameter
# N(0, 10⁻⁶) (std 10⁻³), full-batch gradient descent with lr 0.1 on R = (1/2n) Σ (f − y)², float64. The
# book's 图9.1 uses ReLU nets and 图9.2 the width-2 minimum; here the first plateau is at the **width-1
# optimum**, which we compute independently by 16-restart L-BFGS (with Newton polishing, ‖∇R‖ ≈ 10⁻¹⁵).
#
# **Why lr 0.1.** Gradient descent can only settle on a plateau whose sharpness (the largest Hessian
# eigenvalue λ_max, 锐度) is below 2/lr. The width-m image of the width-1 optimum (its neuron split into m
# equal copies) has the λ_max printed below: about 10 at m = 3, so with the earlier lr 0.2 (2/lr = 10) some
# width-3 nets bounced off the plateau (the loss jumped up) and the claim failed on some seeds. With lr 0.1
# (2/lr = 20) every width ≥ 2 can stall there; width 1 (λ_max ≈ 28) still cannot.

# %%
x, xa, y = emb.three_tanh_target()
RESTARTS = pick(quick=16, full=16, smoke=2)  # L-BFGS restarts for a width-1 optimum (a smoke run: two)
narrow = emb.best_fits(xa, y, 1, restarts=RESTARTS, seed=seed)[0]
out_narrow = emb.two_layer(torch.as_tensor(narrow.a), torch.as_tensor(narrow.w), xa).numpy()
print(f"width-1 optimum: L1* = {narrow.loss:.6f}, ‖∇R‖ = {narrow.grad_norm:.1e}")

WIDTHS = pick(quick=(1, 2, 3, 5, 10, 50), full=(1, 2, 3, 5, 10, 50, 200, 500))
N_SEEDS = pick(quick=8, full=100, smoke=4)  # a smoke run: a few seeds, the full widths
STEPS = pick_steps(quick=6000, full=40_000, every=100)  # RECORD_EVERY below
LR = 0.1
sharp = emb.plateau_sharpness(narrow, xa, y, (1, 2, 3, 5, 10, 50))
print(f"2/lr = {2 / LR:g}; λ_max at the width-m image of the width-1 optimum:",
      ", ".join(f"m={m}: {v:.1f}" for m, v in zip((1, 2, 3, 5, 10, 50), sharp)))
RECORD_EVERY = pick(quick=10, full=100)
runs = emb.run_widths(xa, y, WIDTHS, N_SEEDS, init_std=1e-3, lr=LR, steps=STEPS, record_every=RECORD_EVERY,
                      seed=seed + 9)
wide = [m for m in WIDTHS if m >= 3]
match = {m: emb.plateau_match(runs[m], narrow.loss, out_narrow, xa) for m in wide}

# %% [markdown]
# ### 图9.1 — loss curves of several widths (seed 0 of each) and 图9.2 — the plateau
#
# Left: the loss curves all stall at L1* (dashed). Middle: at the recorded step whose loss is closest to
# L1*, the outputs of every width lie on the width-1 optimum. Right: the neurons of those nets (orientation
# atan2(b, w) against normalised amplitude A = |a|·‖w‖): one direction (and its mirror image ±w, the same
# function for the odd tanh) — the condensed state that is exactly the image of a width-1 net under
# splitting embeddings.

# %%
fig, axes = panels(3, width=3.8)
for m in WIDTHS:
    axes[0].semilogy(runs[m].steps, runs[m].losses[:, 0], label=f"m={m}")
axes[0].axhline(narrow.loss, ls="--", color="0.3", lw=1)
axes[0].set_xlabel("step")
axes[0].set_ylabel("loss")
axes[0].legend(ncol=2)
axes[0].set_title("training loss")
axes[1].plot(x, y[:, 0], ":", color="0.5", label="target")
axes[1].plot(x, out_narrow[:, 0], color="k", lw=3, alpha=0.3, label="width-1 optimum")
for m in wide:
    r, s = runs[m], int(np.flatnonzero(runs[m].steps == match[m].step[0])[0])
    out = emb.two_layer(torch.as_tensor(r.a[s, 0]), torch.as_tensor(r.w[s, 0]), xa).numpy()
    axes[1].plot(x, out[:, 0], lw=1, label=f"m={m}")
    amp = cond.amplitude(r.a[s, 0, :, 0], r.w[s, 0])
    axes[2].scatter(cond.orientation(r.w[s, 0]), amp / amp.max(), s=12, label=f"m={m}")
axes[1].set_xlabel("x")
axes[1].legend()
axes[1].set_title("outputs at the plateau")
axes[2].set_xlabel("orientation atan2(b, w)")
axes[2].set_ylabel("A / max A")
axes[2].set_title("neurons at the plateau")
plt.show()

# %% [markdown]
# Every seed of every width ≥ 3 is checked (`emb.check_width_plateau`): at its plateau (the recorded step
# whose loss is closest to L1*) the relative loss gap |L/L1* − 1| < 1%, the largest output difference from
# the width-1 optimum < 0.02, and its significant neurons (amplitude ≥ 1% of the largest) on one line,
# written 1 − min |cos| < 0.01 (the same condition as |cos| > 0.99, with a margin that is not squeezed
# against 1). Its negative control: nets started from a large init (std 0.5) cross L1* without condensing.

# %%
# NBVAL_CHECK_OUTPUT
show(check_width_plateau(match))

# %% [markdown]
# **At the full profile (seed 0) the check fails on 13 of the 600 nets, and the phenomenon does not.** All 400 nets of
# widths 3–50 pass (‖f − f1*‖∞ ≤ 0.002); so do 99 of 100 at width 200 and 88 of 100 at width 500, the widths only the
# full profile trains. The other 13 reach the plateau like the rest: their first records within 1 % of L1* (steps
# 3000–3900) are within 0.001–0.007 of the width-1 optimum's output. Later, like most wide nets, they leave for a
# slightly lower loss (0.956 L1*), and their loss comes back within 1 % of L1* now and then with another function;
# the check, which reads the one record whose loss is closest to L1* in the whole run, lands on such a late record
# (steps 30 000–38 900, ‖f − f1*‖∞ 0.07–0.12). At widths 200 and 500 the width-m image of the width-1 optimum is also
# sharper than gradient descent at lr 0.1 can settle on (λ_max 57 and 142 against 2/lr = 20; 10–15 at widths 3–50),
# which the choice of lr 0.1 avoided for the quick profile's widths. The check's choice of record assumes the net
# passes L1* once; reading the first passage instead would change the claim after seeing this result (to be
# validated on fresh seeds) and is not done here. Seeds 1 and 2 fail the same way: 12 and 14 nets (of widths 200 and
# 500) first pass within 1 % of L1* at steps 3000–3700 and 2900–4000 (on seed 2 within 0.004–0.007 of f1*'s output
# there) and are read at a later passage (steps 24 800–40 000, ‖f − f1*‖∞ 0.07–0.12); every net of widths 3–50 passes.
# Seed 3 the same: 14 nets, all of width 500 (every net of widths 3–200 passes, ‖f − f1*‖∞ ≤ 0.004), first pass within
# 1 % of L1* at steps 3100–3900, 0.003–0.005 from f1*'s output there, and are read at steps 28 300–39 600
# (‖f − f1*‖∞ 0.07–0.12; one of those late records also has its neurons off one line, 1 − |cos| = 0.0105).
# Seed 4, run on a GPU: the check fails by the same margin (−4.73: the largest ‖f − f1*‖∞ 0.115 against 0.02); that
# run's per-net records were not kept, so which passage it read is not known for seed 4.

# %% [markdown]
# ## 2. The loss spectrum (图9.5)
#
# The losses of all seeds of one width, recorded every 10 steps (full profile: every 100), go into a
# histogram of log₁₀(loss) (200 bins on [−5, 0]); the colour is log₁₀ of the fraction of (recorded step, seed)
# pairs in each bin. Bright lines are losses where training
# stalls. The book runs 100 seeds per width; the quick profile 8 seeds and 6000 steps, so it mostly shows
# the first plateau; the full profile (40 000 steps) also shows the escapes to lower lines.
#
# Width 1 does not settle at L1*: its own optimum is too sharp for lr 0.1 (λ_max ≈ 28 > 2/lr, printed
# above), so gradient descent oscillates around it.
#
# What 图9.5 adds to 图9.1 is *several* discrete lines — the critical losses of narrower nets — and wider nets
# reaching lower lines. These runs spend 94–98 % of their steps on the first line (in 30 000 steps at lr 0.1 the
# widths 3–50 hardly leave it), so the claim below uses a second task on which lines below L1* are reached in a
# few thousand steps.

# %%
uniq, edges, frac = emb.spectrum_of(runs)

fig, ax = plt.subplots(figsize=(8, 3))
image = ax.imshow(np.log10(np.maximum(frac, 1e-6)), aspect="auto", origin="lower", cmap="magma",
                  extent=(edges[0], edges[-1], -0.5, len(uniq) - 0.5), vmin=-6, vmax=0, interpolation="nearest")
ax.set_yticks(range(len(uniq)), [str(m) for m in uniq])
ax.axvline(np.log10(narrow.loss), color="c", ls=":", lw=1)
ax.set_xlabel("log10(loss)")
ax.set_ylabel("width m")
ax.grid(False)
plt.colorbar(image, ax=ax, label="log10 fraction of steps")
plt.show()

# %% [markdown]
# ### 图9.5 with several lines: a ladder of ten steps
#
# The book's three findings need a target on which narrow nets have critical points at well-separated losses and which
# none of the widths shown fits exactly — else the wider nets all end at zero loss and nothing orders them. Ours:
# f*(x) = Σ_{i=0}^{9} 0.75^i tanh(2(x − s_i)) on 80 points x ∈ [−10, 10], ten steps of falling heights at shuffled
# positions s_i (`emb.ladder_target`); each extra neuron can take one more step, so the best loss falls with the
# width. Widths 1, 2, 3, 4, 6, 8 and 16, 16 runs each (the book: 100; the full profile: 100), all trained as **one
# ensemble** (`emb.spectrum_runs`, narrower members padded with zero neurons), every parameter N(0, 10⁻⁸) (std 10⁻⁴,
# the condensed regime of the phase diagram, ch. 7), full-batch Adam (lr 3·10⁻³; Adam for the reason given in section
# 3) for 9000 steps, the loss recorded every 20. The spectrum is drawn as above, with the lines where the widths 1, 2
# and 3 end dotted; on the right the median loss of each width against the step. Printed first: the critical losses of
# widths 1 and 2 that L-BFGS finds (restarts that converged, ‖∇R‖ < 10⁻⁸) — the lines where the width-1 and width-2
# runs end are among them; the lowest width-2 critical loss is not where the runs go.
#
# **What the claim checks** (`emb.check_loss_spectrum`), the book's (i)–(iii) on every width shown: (i) *discrete
# lines*: for every width, 3 of the 200 bins hold ≥ 15 % of all (step, run) pairs — a loss falling at a steady pace
# through the two to three decades these runs cross would put 3–4 % there; (ii) *shared lines*: widths 8 and 16 each
# spend ≥ 8 % of their pairs within one bin (±0.025 in log₁₀) of the line on which the width-2 runs end (its brightest
# bin) — a narrower net's critical point, embedded in the wide nets' landscapes; (iii) *wider ends lower*: the median
# final loss falls strictly from each width to the next wider one. The thresholds were set on seeds 101–103 (there
# every width's 3 brightest bins held ≥ 19 %, widths 8 and 16 had 14–16 % of their pairs on the width-2 line). The
# claim was redesigned after the earlier staircase version's results on seeds 0–19 were seen, so it is validated on
# seeds 0–19 and 500–519: **20/20 on seeds 0–19 and 20/20 on 500–519**, margin min +0.155 / +0.132, median +0.169 /
# +0.169 (relative; the thin line is 0.05). On most seeds the tightest condition is width 2's final loss 17 % below
# width 1's, the same on every seed (both end at their own critical points); of the conditions that vary with the seed
# the tightest were width 6's top-3 share (least margin +0.132: a share of 0.17) and width 16's final loss below width
# 8's (least margin +0.188). A first version of (ii) measured the share around the lowest width-2 critical loss that
# L-BFGS finds; on seed 0, the first validation seed run, its restarts found a lower one (0.0110) than the runs ever
# reach and the check failed; (ii) now looks at the width-2 runs' own line — the only change made after a validation
# seed was seen.
#
# Its negative control is the book's contrast: the embedding principle shows up in training only in the condensed
# regime (§9.2.1 starts every net there on purpose). From a large initialisation (std 0.5, the linear, non-condensed
# side of ch. 7's phase diagram) the wide nets' losses fall through the width-2 line without stalling on it and the
# width-16 spectrum spreads out, and the same check fails.
#
# **What is not checked.** The wide nets do not stall on *every* narrow line, as the book says they need not: here
# widths ≥ 3 spend at most about 3 % of their pairs on the width-1 line and width 4 only about 2 % on the width-2 line
# — Adam carries them past those critical points — so (ii) is checked on the width-2 line in widths 8 and 16 only.
# Order (iii) needs the whole run: after 3000 steps (printed below, "at 1/3") widths 6–16 still sit higher than width
# 4, having stalled longer on the upper lines; they end lower. And (iii) holds in the large-init control runs as well:
# with this target the order of the final losses comes from the wider nets' capacity as much as from their escaping
# saddles, which the claim does not separate.

# %%
x95, xa95, y95 = emb.ladder_target()
STEPS_95 = pick_steps(quick=9000, full=9000, every=20)
spectrum95 = emb.spectrum_runs(xa95, y95, emb.SPECTRUM_WIDTHS, pick(quick=16, full=100, smoke=4), init_std=1e-4,
                               lr=3e-3, steps=STEPS_95, record_every=20, seed=seed + 95)
ends = {m: float(np.median(emb.members(spectrum95, m).losses[-1])) for m in (1, 2, 3)}  # where widths 1–3 end
for m in (1, 2):
    fits = [f for f in emb.best_fits(xa95, y95, m, restarts=RESTARTS, seed=seed) if f.grad_norm < 1e-8]
    print(f"width-{m} critical losses (L-BFGS, {RESTARTS} restarts): {np.round(emb.distinct_losses(fits, 1e-3), 5)}; "
          f"the width-{m} runs end at {ends[m]:.5f} (median)")
line_two = emb.brightest_line(emb.members(spectrum95, 2)).loss  # the line the claim's (ii) looks at
third = spectrum95.history.at(STEPS_95 // 3)
for m in emb.SPECTRUM_WIDTHS:
    losses = emb.members(spectrum95, m).losses
    print(f"m={m:2d}: {emb.line_share(spectrum95, m, line_two):4.0%} of (step, run) pairs on the width-2 line, "
          f"{emb.line_share(spectrum95, m, ends[1]):4.0%} on the width-1 line; "
          f"median loss at 1/3 {np.median(losses[third]):.1e}, final {np.median(losses[-1]):.1e}")

uniq95, edges95, frac95 = emb.loss_spectrum(spectrum95.losses, spectrum95.widths)
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.5, 3.3), gridspec_kw={"width_ratios": [3, 2], "wspace": 0.5})
image = ax.imshow(np.log10(np.maximum(frac95, 1e-6)), aspect="auto", origin="lower", cmap="magma",
                  extent=(edges95[0], edges95[-1], -0.5, len(uniq95) - 0.5), vmin=-6, vmax=0, interpolation="nearest")
ax.set_yticks(range(len(uniq95)), [str(m) for m in uniq95])
for value, colour in zip(ends.values(), ("c", "w", "y")):
    ax.axvline(np.log10(value), color=colour, ls=":", lw=1)
ax.set_xlim(-4.5, 0)
ax.set_xlabel("log10(loss)")
ax.set_ylabel("width m")
ax.set_title("ladder target, Adam (dotted: where widths 1, 2, 3 end)")
ax.grid(False)
plt.colorbar(image, ax=ax, label="log10 fraction of steps")
for m in uniq95:
    ax2.semilogy(spectrum95.steps, np.median(emb.members(spectrum95, m).losses, axis=1), label=f"m={m}")
ax2.set_xlabel("step")
ax2.set_ylabel("median loss")
ax2.legend(ncol=2, fontsize=8)
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(emb.check_loss_spectrum(spectrum95))

# %% [markdown]
# ## 3. One wide net, from a narrow critical point to the target: outputs and spectra (图9.4)
#
# The book links the embedding principle with the frequency principle (频率原则, chapter 4): a two-layer tanh
# net of width 500 fits f*(x) = tanh(x − 7) + tanh(x) + tanh(x + 7), and its output is watched in two views,
# the function itself (图9.4(a)) and its spectrum (图9.4(b)). Low frequencies are fitted first; on the way the
# net sits for a long time at a **single-tanh function**, the global minimum of a width-1 net embedded in the
# width-500 landscape, and only later reaches the target, the minimum of a width-3 net.
#
# Here: the same target, 80 points x ∈ [−10, 10], every parameter N(0, 10⁻⁸) (std 10⁻⁴), full-batch Adam
# (lr 10⁻³) on R = (1/2n) Σ (f − y)² (float64); full-batch, so a step is an epoch. The width-1 optimum f1*
# (loss L1*) comes from 16 L-BFGS restarts. **CPU-sized analogue:** the quick profile trains width 100 for
# 6000 steps, the full profile the book's width 500 for 40 000. The wider the net, the longer it sits at L1*:
# at width 500 it was still there after 6000 steps (seed 94), at width 100 it leaves after about a thousand.
# **Why Adam:** with inputs up to |x| = 10 the loss is far steeper along the input weights than along the
# biases, so plain gradient descent needs a small step (lr 0.05 already bounced on the plateau) at which the
# biases — the ±7 offsets the net must find to leave the plateau — hardly move: with GD (lr 0.05) a width-500
# net (init std 10⁻³) and width-100 nets (std 10⁻², 5·10⁻²) were all still at L1* after 20 000 steps. Adam
# scales each parameter's step separately.
#
# The spectra are DFTs over the 80 sample points (the interval is not periodic, so the
# spectrum also carries the jump between its ends — the same for the target and the output, which is what
# Δ_F compares). Δ_F(k) = |ĥ_k − f̂_k| / |f̂_k| is the relative error of frequency k (as in chapter 4).

# %%
WIDTH_94 = pick(quick=100, full=500)
STEPS_94 = pick_steps(quick=6000, full=40_000, every=100)
path = emb.learning_path(WIDTH_94, init_std=1e-4, lr=1e-3, optimizer="adam", steps=STEPS_94,
                         record_every=pick(quick=20, full=100), restarts=RESTARTS, seed=seed + 94)
first = dict(zip(path.ks.tolist(), path.first_fitted()))
print(f"width-1 optimum: L1* = {path.narrow.loss:.5f}; its own Δ_F(k), k = 1…8:", np.round(path.narrow_delta(), 3))
print(f"plateau (closest to L1*) at step {path.plateau_step:.0f}: |L/L1* − 1| = {path.plateau_gap:.1e}, "
      f"‖f − f1*‖∞ = {path.plateau_sup:.3f}; final loss {path.losses[-1]:.1e}")
print("first step with Δ_F(k) < 0.1:", ", ".join(f"k={k}: {first[k]:.0f}" for k in (1, 2, 3, 4)))

# %%
shown = [int(np.argmin(np.abs(path.steps - t))) for t in
         (path.plateau_step * 0.1, path.plateau_step, (path.plateau_step + path.steps[-1]) / 2, path.steps[-1])]
fig, axes = panels(3, width=3.9)
axes[0].semilogy(path.steps, path.losses)
axes[0].axhline(path.narrow.loss, ls="--", color="0.3", lw=1, label="L1* (width-1 optimum)")
axes[0].set_xlabel("step")
axes[0].set_title("training loss")
axes[0].legend()
axes[1].plot(path.x, path.y, "--", color="0.4", label="target")
axes[1].plot(path.x, path.out_narrow, color="k", lw=3, alpha=0.25, label="width-1 optimum")
for i in shown:
    axes[1].plot(path.x, path.outputs[i], lw=1, label=f"step {path.steps[i]}")
axes[1].set_xlabel("x")
axes[1].set_title("(a) outputs")
axes[1].legend(fontsize=7)
ks = np.arange(1, 13)
axes[2].semilogy(ks, np.abs(dft(path.y))[ks], "o--", color="0.4", label="target")
for i in shown:
    axes[2].semilogy(ks, np.abs(dft(path.outputs[i]))[ks], ".-", lw=1, label=f"step {path.steps[i]}")
axes[2].set_xlabel("frequency k")
axes[2].set_title("(b) |DFT| of the outputs")
axes[2].legend(fontsize=7)
plt.show()

# %% [markdown]
# The claim (`emb.check_learning_path`) turns the book's sentence into five conditions. At the recorded step
# whose loss is closest to L1* the loss is within 1% of it and the output within 0.02 of f1* (the thresholds of
# 图9.1/9.2): the net *is* the embedded width-1 optimum there. The lowest frequency k = 1 was fitted
# (Δ_F < 0.1) before that step, the frequency k = 3 — where the three steps, 7 apart on an interval of length
# 20, put their weight, and which the width-1 optimum itself misses (its Δ_F(3) is printed above) — only after
# it. Finally the loss falls below 1% of L1*: the target is fitted. Its negative control starts from a large
# init (std 0.5), where the net never condenses onto the width-1 optimum.
#
# At width 100 the net does not rest long *at* L1*: it reaches the single-tanh function around step 800, then
# sits on a second, slightly lower plateau (about 0.85·L1*, visible in the loss panel) before fitting the
# steps. We have not identified that plateau's critical point (a width-2 net's minimum is the natural guess);
# the claim is about the width-1 one only.

# %%
# NBVAL_CHECK_OUTPUT
show(check_learning_path(path))

# %% [markdown]
# **At the full profile the width-500 net has not left the plateau by the end** (seed 0, CPU and GPU alike): it
# fits the lowest frequency first (Δ_F(1) < 0.1 from step 100) and reaches the width-1 optimum (|L/L1* − 1| =
# 8·10⁻⁴, ‖f − f1*‖∞ = 0.001), but after 40 000 Adam steps its loss is still 1.0008 L1*, where the claim asks for
# less than 1 % of L1*. The book's net has fitted the target by epoch 40 000; the book gives no initialisation or
# learning rate, and ours (std 10⁻⁴, Adam 10⁻³) were chosen at the quick profile's width 100, where the net leaves
# after about a thousand steps. A setting that departs from the book's at width 500, not changed after seeing this.
# Seeds 1 and 2 the same: the net reaches the width-1 optimum and is still at 1.001 L1* after 40 000 steps; so do
# seeds 3 and 4 (seed 4 on a GPU: never within 1 % of the target's loss in 40 000 steps).

# %% [markdown]
# ## 4. Splitting embeddings and the Hessian (图9.3, 图9.7)
#
# The one-step splitting embedding T^α_s copies neuron s (same input weights) and shares its output weight
# as α a_s and (1 − α) a_s. For **any** α ∈ R and **any** θ (not only critical points) the output is
# unchanged and the gradient obeys ∂_{a′_s}R = ∂_{a′_{m+1}}R = ∂_{a_s}R, ∇_{w′_s}R = α∇_{w_s}R,
# ∇_{w′_{m+1}}R = (1 − α)∇_{w_s}R — so critical points map to critical points. We check this at random
# points of a width-3 net for α = −0.5, 0.3, 1.7: both errors must stay below 10⁻¹² (round-off). Its
# negative control moves the copy's input weights by 10⁻⁶ (a near-split that is not an embedding).

# %%
errors = emb.split_identity_errors(xa, y, seed + 97, alphas=(-0.5, 0.3, 1.7))

# %%
# NBVAL_CHECK_OUTPUT
show(check_split_identities(errors))

# %% [markdown]
# ### 图9.7 — Hessian spectra before and after splitting
#
# Data: 20 points x ∈ [−1, 1], y = sin 3x + 0.5 cos 7x; a width-2 tanh net. L-BFGS restarts (in batches of 8) give
# critical points; some run off to infinity along a valley (two huge neurons whose difference mimics a
# derivative), so we take the lowest one that is a **strict** minimum (‖∇R‖ ≤ 10⁻¹², bounded, all Hessian
# eigenvalues positive). Its largest-amplitude neuron is split into k = 2 and 3 copies (shares α, then
# (1 − α)/(k − 1)). Eigenvalues are counted negative / zero / positive at the threshold
# max(10⁻¹¹, 10³‖∇R‖) (`landscape.zero_threshold`): at a critical point found to round-off, |λ| below it is
# numerically zero. Float64 dense Hessians (6, 9 and 12 parameters).

# %%
xs, xsa, ys = emb.sine_task()
critical, used = emb.strict_minimum(xsa, ys, 2, seed=seed)
print(f"width-2 strict minimum: loss {critical.loss:.6f}, ‖∇R‖ = {critical.grad_norm:.1e} (after {used} restarts)")
chains = {alpha: emb.split_spectra(critical, xsa, ys, ks=(1, 2, 3), alpha=alpha) for alpha in (0.5, 0.3, -0.5)}
for alpha, chain in chains.items():
    print(f"α = {alpha:+.1f}:", "  →  ".join(f"m={c.m} {c.counts.as_tuple()}" for c in chain))

fig, axes = panels(3, width=3.6)
for ax, (alpha, chain) in zip(axes, chains.items()):
    for c in chain:
        lam = np.sort(np.abs(c.eigenvalues))
        ax.semilogy(np.arange(1, len(lam) + 1), np.maximum(lam, 1e-20), ".-", label=f"m={c.m} {c.counts.as_tuple()}")
    ax.axhline(chain[0].counts.threshold, color="0.4", ls=":")
    ax.set_title(f"sorted |λ|, α = {alpha}")
    ax.set_xlabel("index")
    ax.legend(title="(neg, zero, pos)")
plt.show()

# The claim (`emb.check_split_hessian`) measures each part against the zero threshold: the unsplit point is
# a strict minimum (its smallest eigenvalue above the threshold); after every split the (z+1)-th smallest
# |λ| (z = the zero count before the split) is below it, i.e. the split added a zero eigenvalue; no split
# lowers the negative count; outputs move by < 10⁻¹² and ‖∇R‖ stays < 10⁻¹¹. Its negative control splits
# a point that is not critical (an L-BFGS run stopped after a few iterations).

# %%
# NBVAL_CHECK_OUTPUT
show(check_split_hessian(chains))

# %% [markdown]
# ### 图9.7(a), (b) — the embedded critical point becomes a saddle (鞍点)
#
# The book splits one neuron of a trained width-2 net into k = 2, 3 **equal** copies (output weight a/k each, the
# same input weights): widths m = 3 and 4. Each split adds zero eigenvalues — that part holds by construction
# (the claim above) — and, more importantly, **negative** eigenvalues: the width-2 minimum of panel (a) (all
# eigenvalues positive) turns into a saddle, the negative count rising 0 → 1 → 2; on Iris (panel (b)) from 3 to 5
# to 7. Whether negative eigenvalues appear is not guaranteed: it depends on the trained point. For one output,
# moving the copies' input weights apart (w_s + (1 − α)u and w_s − αu) changes the loss by ½ α(1 − α) uᵀS_s u,
# where S_s = (1/N) Σ_i a_s r_i σ''(w_sᵀx̃_i) x̃_i x̃_iᵀ is the split neuron's **stability matrix** (r = f − y, the
# residual; Fukumizu & Amari 2000, Zhang et al. 2021b): every negative eigenvalue of S_s becomes a descent
# direction of the wider net. With several outputs (Iris) the residual also couples the copies' output weights
# to their input weights, which adds more.
#
# (a) is the width-2 strict minimum of the sine data above; (b) is **Iris** (150 flowers, 3 classes; scikit-learn's
# copy, offline): the four features standardised, targets the one-hot classes minus 1/3 (the net (9.1) has no
# output bias), tanh, half-MSE; its lowest strict minimum among L-BFGS restarts (the book's Iris point was a saddle
# with 3 negative eigenvalues; ours is a minimum). The largest-amplitude neuron is split. Markers as in the book:
# positive eigenvalues red circles, negative ones blue triangles, |λ| on a log scale; the dotted line is 10⁻¹¹.

# %%
xia, yia = emb.iris_task()
iris_min, iris_used = emb.strict_minimum(xia, yia, 2, seed=seed)
panels_97 = {"(a) 1-D data": (critical, xsa, ys), "(b) Iris": (iris_min, xia, yia)}
equal = {name: emb.split_spectra(fit, xa_, y_, ks=(1, 2, 3), alpha=None) for name, (fit, xa_, y_) in panels_97.items()}
for name, (fit, xa_, y_) in panels_97.items():
    s_split = int(np.argmax(cond.amplitude(np.linalg.norm(fit.a, axis=1), fit.w)))
    print(f"{name}: loss {fit.loss:.5f}, ‖∇R‖ = {fit.grad_norm:.1e}; counts (neg, zero, pos) m = 2, 3, 4:",
          "  →  ".join(str(c.counts.as_tuple()) for c in equal[name]),
          "; eigenvalues of S_s:", np.round(np.linalg.eigvalsh(emb.stability_matrix(fit, xa_, y_, s_split)), 5))

fig, axes = plt.subplots(2, 3, figsize=(11, 7.5), sharey="row", layout="constrained")
for row, (name, chain) in zip(axes, equal.items()):
    for ax, c in zip(row, chain):
        lam = c.eigenvalues[np.argsort(-np.abs(c.eigenvalues))]
        idx = np.arange(1, len(lam) + 1)
        pos, neg = lam > c.counts.threshold, lam < -c.counts.threshold
        ax.semilogy(idx[pos], lam[pos], "o", color="tab:red", ms=5, label="λ > 0")
        ax.semilogy(idx[neg], -lam[neg], "v", color="tab:blue", ms=6, label="λ < 0")
        ax.semilogy(idx[~pos & ~neg], np.maximum(np.abs(lam[~pos & ~neg]), 1e-18), "x", color="0.5", ms=4,
                    label="|λ| ≤ zero threshold")
        ax.axhline(1e-11, color="0.3", ls=":", lw=1)
        ax.set_title(f"{name}, m = {c.m}: {c.counts.as_tuple()}", fontsize=9)
        ax.set_xlabel("index")
    row[0].set_ylabel("sorted |λ|")
axes[0, 0].legend(fontsize=7)
plt.show()

# %% [markdown]
# Each panel's claim (`emb.check_embedded_saddle`): the trained width-2 point is critical (‖∇R‖ ≤ 10⁻¹⁰; in (a) also
# a minimum, no negative eigenvalue), each of the two splits adds at least one negative eigenvalue (counted beyond
# the zero threshold, as in the book's counts above its 10⁻¹¹ line), and after the first split the most negative
# eigenvalue exceeds 10⁻⁶ of the largest — far above round-off (≈ 10⁻¹⁴ relative), so the point is a **strict**
# saddle. The contrast (the negative controls, and the cell below): the same procedure with targets that a width-2
# net fits *exactly* (the outputs of the trained width-2 net itself). There the residual r is zero, S_s = 0, and an
# embedding of a zero-loss global minimum cannot open a descent direction: the splits add only zero eigenvalues —
# the book's Exercise 8 ("does every narrow local minimum become a saddle after embedding?") answered no.

# %%
for name, (fit, xa_, y_) in panels_97.items():
    y_fit = torch.as_tensor(emb.predict(fit.a, fit.w, xa_, "tanh"))
    exact = emb.strict_minimum(xa_, y_fit, 2, seed=seed + 1000)[0]
    counts = [c.counts.as_tuple() for c in emb.split_spectra(exact, xa_, y_fit, ks=(1, 2, 3), alpha=None)]
    print(f"contrast {name}, targets fitted exactly (loss {exact.loss:.1e}):", "  →  ".join(map(str, counts)))

# %%
# NBVAL_CHECK_OUTPUT
show(check_embedded_saddle(equal["(a) 1-D data"], emb.SADDLE_1D))

# %%
# NBVAL_CHECK_OUTPUT
show(check_embedded_saddle(equal["(b) Iris"], emb.SADDLE_IRIS, base_minimum=False))

# %% [markdown]
# Wider nets thus see more escape directions at the same loss — one reason why they end lower (图9.5).
#
# ## 5. Compression by merging condensed neurons (图9.8)
#
# The book trains a width-400 net on MNIST and, at a slow point, finds 58 groups of similar neurons; the
# merged width-58 net predicts like the wide one. Here: sklearn digits (1000 training, 797 test images,
# x/16 with a 1 appended), width 400 ReLU, init N(0, 10⁻¹²), one-hot targets, R = (1/2n) Σ ‖f − y‖², GD
# lr 1.0. After 200 steps, neurons with amplitude ‖a_j‖‖w_j‖ below 2% of the largest are **pruned**
# (剪枝, dropped: the book's "low-amplitude" neurons); the others are grouped greedily by cosine ≥ 0.95 of
# their input weights and each group is **merged** (合并) into one neuron (ReLU is positively homogeneous,
# so a_j σ(w_jᵀx) = a_j‖w_j‖ σ(ŵ_jᵀx)) — the inverse of splitting.
#
# Most of the width reduction 400 → merged width comes from pruning, which says little about the embedding
# principle. The claim therefore measures what **merging** contributes, against two references:
# * the **merge factor** (significant neurons per merged neuron) against a **control run**: the same
#   procedure on a net trained from a larger init N(0, 10⁻⁴), which does not condense, so merging finds
#   little to merge (a factor near 1);
# * **dropping instead of merging**: keeping the same number of largest-amplitude neurons unchanged and
#   discarding the rest changes the training loss more than merging them does.
#
# It also keeps the earlier conditions: ≥ 97% of test predictions agree (written: disagreement ≤ 3%),
# the training loss changes < 10%, and pruning plus merging shrink the width ≥ 4×. Its negative control
# runs the same check on an untrained net (no condensation: merging finds nothing).

# %%
STEPS_98 = pick_steps(quick=200, full=1500, every=10)  # records only its end
WIDTH_98 = pick(quick=400, full=400)
data = digits(1000, None, seed=seed)
comp = emb.compress(data, width=WIDTH_98, init_std=1e-6, steps=STEPS_98, lr=1.0, seed=seed + 98)
control = emb.compress(data, width=WIDTH_98, init_std=1e-2, steps=STEPS_98, lr=1.0, seed=seed + 99)
for name, r in (("condensed (init 1e-6)", comp), ("control (init 1e-2)", control)):
    print(f"{name}: width {r.width} → {r.n_significant} significant (pruning) → {r.n_groups} merged "
          f"(merge factor {r.merge_factor:.2f}); test accuracy {r.accuracy_wide:.3f} (wide) vs {r.accuracy_merged:.3f} "
          f"(merged); training loss {r.loss_wide:.4f} wide, {r.loss_merged:.4f} merged, {r.loss_pruned:.4f} dropped")

labels = comp.labels
order = np.argsort(labels + (labels < 0) * 10**6, kind="stable")
sig = order[labels[order] >= 0][:120]
fig, axes = panels(2, width=4.2)
axes[0].imshow(cond.cosine_similarity_matrix(comp.w[sig]), cmap="RdBu_r", vmin=-1, vmax=1)
axes[0].set_title("cosine of input weights (grouped)")
axes[0].grid(False)
axes[1].bar(["wide", "merged", "dropped"], [comp.loss_wide, comp.loss_merged, comp.loss_pruned],
            color=["#1f77b4", "#d62728", "0.6"])
axes[1].set_title(f"training loss: width {comp.width} vs {comp.n_groups}")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(check_merge(comp, control))

# %% [markdown]
# **At the full profile the width shrinks 3.3×, not 4×** (seed 0, CPU and GPU alike): after 1500 steps (the quick
# profile: 200) pruning keeps 163 of the 400 neurons and merging makes them 121 (400/121 = 3.3). Everything else the
# claim asks holds: 99.9 % of the test predictions agree, the training loss changes by 3 %, the merge factor is 1.35
# against the control's 1.10, and dropping instead of merging changes the loss by 103 %. The book merges at a slow
# point of training (the blue dot of 图9.8(a)), where its MNIST net has 58 groups; the full profile merges at a fixed
# step, when more neurons have grown apart than at the quick profile's 200 steps. A setting that departs from the
# book's, not changed after seeing this. On seeds 1 and 2 the claim holds: fewer neurons have grown apart there
# (126 and 110 significant, merged to 91 and 88: 4.4× and 4.5×, 99.7 % and 99.9 % of the test predictions kept).
#
# **On seed 3 the merge goes deeper than the book's, and the loss condition fails: a condition of ours, not the
# book's.** Fewer neurons have grown apart (75 significant), and merging leaves 51: 7.8× (the book: 6.9×), 99.5 % of
# the test predictions kept (the book: 98.5 %), merge factor 1.47 against the control's 1.10, and dropping instead of
# merging raises the loss by 59 %. But the merged net's training loss is 12.4 % above the wide net's (0.0256 against
# 0.0228), where the claim allows 10 %. The book compares losses differently: it trains the reduced net on for a few
# steps and sees its loss stall at the wide net's plateau value; the claim compares them at the moment of merging,
# with a 10 % bound that is ours. The bound is not changed after seeing this. On seed 4 (run on a GPU) the claim
# holds again; its tightest condition is the merge factor, 6 % above the control's (margin +0.057).

# %% [markdown]
# ## Explorer
#
# Left: one net of the chosen width and init std on the three-tanh task (3000 GD steps) against the width-1
# optimum — large inits skip the plateau, small ones sit on it. Middle: its neurons at the end. Right:
# sorted |λ| of the width-2 critical point split into up to k copies with share α; move the zero threshold
# (a multiple of ‖∇R‖) to see which counts are robust.

# %%
explorer = emb.make_explorer(seed=seed, narrow=narrow, critical=critical)
explorer

# %% [markdown]
# ## Exercise (习题 20)
#
# For f*(x) = tanh(x − 7) + tanh(x) + tanh(x + 7) and widths m = 1, 2, 3, list the critical losses you can
# find by many-restart L-BFGS (`emb.best_fits(..., m, restarts=...)`, then `emb.distinct_losses`). Which
# losses of width m reappear at width m + 1 (embedded critical points)? Change the cell below.
#
# Worked solution: run `from companion.solutions.ch09 import solution; solution(20)` (on the site: the "Solution" toggle below).

# %%
x20 = torch.linspace(-10, 10, 80, dtype=torch.float64)
x20a, y20 = emb.augment(x20), (torch.tanh(x20 - 7) + torch.tanh(x20) + torch.tanh(x20 + 7))[:, None]
for m in (1, 2):  # try (1, 2, 3) and more restarts (each restart takes about a second)
    fits = emb.best_fits(x20a, y20, m, restarts=pick(quick=4, full=4, smoke=2), seed=seed)
    print(m, np.round(emb.distinct_losses(fits), 5))

# %% [markdown]
# ## Summary
#
# * Nets of every width ≥ 3 stall at the width-1 optimum's loss, with the same output and fully condensed
#   neurons: the wide net passes through the image of a narrow critical point (图9.1/9.2, 9.5).
# * On a ladder of ten tanh steps the loss spectrum (图9.5) of widths 1–16 is made of discrete lines, widths 8 and 16
#   share the line where the width-2 nets end (an embedded critical point), and the wider the net, the lower it ends.
# * One wide net shows both principles at once (图9.4): it fits the lowest frequency first, sits at the
#   embedded width-1 optimum, and fits the higher frequency and the target only after leaving it.
# * The splitting embedding T^α_s preserves outputs and gradients exactly for any α; splitting a minimum
#   adds zero eigenvalues and never removes negative ones; splitting a trained width-2 point into equal copies
#   adds negative ones at every split, on 1-D data (a minimum becomes a strict saddle, 0 → 1 → 2 here as in the
#   book) and on Iris (0 → 3 → 6 here, the book 3 → 5 → 7) — unless the narrow net fits the data exactly (图9.7).
# * Condensed nets can be merged back: width 400 → a few dozen neurons with the same predictions (图9.8);
#   merging (beyond pruning the low-amplitude neurons) removes far more neurons than in a non-condensed
#   control run and keeps the loss, where dropping the same neurons does not.
