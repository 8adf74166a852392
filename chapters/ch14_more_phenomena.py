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
# # Chapter 14 — More phenomena: grokking, lottery tickets, double descent, mode connectivity, and in-context learning as an implicit ΔW (深度神经网络的更多现象)
#
# *深度学习现象导论*, chapter 14. The chapter surveys phenomena of large and small networks that the book
# reports without a theory of its own: scaling and density laws (§14.1–14.2, 图14.1–14.2: measurements on
# large language models, not reproducible on a CPU), in-context learning (§14.3) and chains of thought (§14.4,
# illustrations only), **grokking** (§14.5, 图14.6), **lottery tickets** (§14.6, 图14.7), **double descent**
# (§14.7, 图14.8), neural collapse (§14.8, no figure; the book's "Papayan et al. (2020)" is Papyan et al.) and
# **mode connectivity** (§14.9, 图14.9).
#
# Part I (sections 1–4) reproduces the four computational figures on **CPU-sized analogues** — small
# networks on modular arithmetic or on the bundled 8×8 digits instead of transformers, ResNets, MNIST and
# CIFAR; each section says what it shrank. Part II (sections 5–9) takes the book's open question of §14.3 —
# *why* does in-context learning work? — and follows one precise answer, with the papers behind it: Dherin et
# al. (2025), "Learning without training: the implicit dynamics of in-context learning"; Akyürek et al.
# (2022), "What learning algorithm is in-context learning?".
#
# **In-context learning** (上下文学习, ICL): given a few solved examples in the prompt, a trained model
# solves a new instance of the task without any change to its weights (图14.3: sentiment analysis from a
# handful of labelled reviews). Part II:
#
# 5. **The theorem** (Dherin et al., Thm 2.2). A transformer block reads as a *contextual block*
#    (上下文块) T_W = M_W ∘ A: a contextual layer A (self-attention) followed by an MLP whose first weight
#    matrix is W. The effect of the context C on the query x is *exactly* a rank-1 weight update (秩1更新):
#    T_W(C, x) = T_{W+ΔW(C)}(x), with ΔW(C) = (W ΔA) A(x)ᵀ / ‖A(x)‖² and ΔA = A(C, x) − A(x).
#    Consuming the context token by token is an implicit gradient descent (隐式梯度下降) on W.
# 6. **A transformer that learns in context**: a small transformer trained on in-context linear regression.
# 7. **What the implicit learner learns** (Akyürek et al.): the trained learner compared with one step of
#    gradient descent, ridge regression and least squares.
# 8. **The ΔW sequence** as tokens are consumed, with an untrained control, and the comparison with
#    explicit fine-tuning.
# 9. **Where a nonlinear transformer looks** when it classifies in context (Li et al., ICML 2024).
#
# Run time: quick profile ≈ 87 CPU-seconds with an empty cache (Part I ≈ 32 of them); full profile (the book's
# prime p = 97, longer training, more tasks; not calibrated for Part I) 18–22 minutes per seed on one thread of the
# 2-core CPU (seeds 0–4, beside another run); on an NVIDIA H200 GPU shared with the other eleven
# chapters (one CPU thread each) it had not finished after 460 s. On seeds 0–4 of the full profile
# (`robustness/report-full.json`) every claim holds on every seed but three, each explained in its section: 图14.6's
# grokking delay (3.4–4×, not 10×; 0 of 5), the learner's closeness to one GD step (it has moved on towards ridge
# regression; 0 of 5) and 图14.7's re-initialised control (1.49×, not 1.5×, on one seed of five). On seeds 500–504
# (53–60 minutes a seed on an Intel Xeon, two side by side) the twelve claims that held on all of seeds 0–4 hold
# again, the grokking delay and the closeness to one GD step fail again as explained, and 图14.7's claim, judged
# there, holds on all five.

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

from companion.core import icl
from companion.experiments import ch14_phenomena as phenomena
from companion.experiments.ch14_phenomena import (check_beats_gd1, check_closer_to_gd1, check_dw_decay, check_dw_learns,
                                                  check_error_falls, check_finetune, check_identity_random,
                                                  check_identity_trained, check_pattern_attention)
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.plots import PALETTE, panels
from companion.kit.seeds import active_seed, generator

print(settings().describe())
seed = active_seed()

# %% [markdown]
# # Part I — Grokking, lottery tickets, double descent, mode connectivity (§14.5–14.9)

# %% [markdown]
# ## 1. Grokking (顿悟, 图14.6, §14.5)
#
# Power et al. (2022) trained a small decoder-only transformer on *algorithmic data sets*: the complete table
# of a binary operation modulo a prime p, of which a random half is shown in training. On modular division
# (a / b = a · b⁻¹ mod 97) the training accuracy reaches 100 % after about 10³ optimisation steps, while the
# validation accuracy stays at chance level and only climbs to 100 % near 10⁵ steps — two decades later on
# the book's logarithmic step axis. The network first memorises, and generalises long afterwards: this
# delayed generalisation is **grokking** (顿悟). Weight decay (权重衰减) is what makes it happen in
# their ablations.
#
# **CPU analogue.** The same task, modular division, with a smaller prime (p = 31 in the quick profile,
# p = 97 in the full one) and 60 % of the table for training (Power et al. vary this fraction; at p = 31, 50 %
# groks too slowly for the time budget). Instead of a transformer, a two-layer ReLU network (width 128)
# reads a and b as two one-hot vectors (`companion/core/modular.py`, `companion/core/classify.py`).
# Full-batch Adam (learning rate 0.01) with decoupled weight decay (AdamW, λ = 0.5). The same network,
# from the same initialisation and on the same split, also trains with λ = 0 in the same batched
# computation: the control.
#
# **Claim.** With weight decay, the first step at which the test accuracy reaches 0.9 is at least **10×** the
# first step at which the training accuracy reaches 0.99 (one decade, where the book's figure shows two),
# and the final test error is ≤ 0.05. On seeds 0–19 of the quick profile it held 20/20 (ratios 17–25: the
# training set is memorised by step 60–70, the test accuracy reaches 0.9 at steps 1170–1500); without
# weight decay the test accuracy stays at chance.

# %%
grok_config = phenomena.GrokConfig(p=pick(quick=31, full=97),
                                   steps=pick_steps(quick=2500, full=20000, every=10, smoke=10), seed=seed)
grok = phenomena.run_grokking(grok_config)
t_train, t_test = phenomena.grokking_steps(grok)
fig, ax = panels(2, width=4.4)
h = grok.history
for k, lam in enumerate(grok_config.weight_decay):
    style = "-" if lam > 0 else "--"
    ax[0].plot(h.steps[1:], h["train_acc"][1:, k], style, color=PALETTE[1], label=f"train, λ={lam:g}")
    ax[0].plot(h.steps[1:], h["test_acc"][1:, k], style, color=PALETTE[2], label=f"test, λ={lam:g}")
    ax[1].plot(h.steps[1:], h["test_loss"][1:, k], style, color=PALETTE[2], label=f"test, λ={lam:g}")
    ax[1].plot(h.steps[1:], h["train_loss"][1:, k], style, color=PALETTE[1], label=f"train, λ={lam:g}")
ax[0].set(xscale="log", xlabel="optimisation step", ylabel="accuracy", title=f"modular division, p={grok_config.p}")
ax[0].legend()
ax[1].set(xscale="log", yscale="log", xlabel="optimisation step", ylabel="cross-entropy", title="losses")
fig.suptitle("Fig. 14.6 analogue: grokking on modular division")
plt.show()
print(f"λ={grok_config.weight_decay[0]:g}: train accuracy ≥ 0.99 at step {t_train:.0f}, test accuracy ≥ 0.9 at step {t_test:.0f}")

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_grokking(grok))

# %% [markdown]
# **At the full profile the delay is a factor of about 4, not 10** (seeds 0–4): at p = 97 the network with weight
# decay fits its training table by step 150–170 and reaches 0.9 test accuracy at steps 580–640, 3.4–4× later, and
# its final test error is 0 on every seed. A setting that departs from the book's: 图14.6 is Power et al.'s
# decoder-only transformer trained on half of the division table, where generalisation comes about two decades after
# memorisation; the full profile keeps the quick profile's MLP, 60 % of the table and Adam at 10⁻². At p = 97, 60 %
# of the table is 5645 pairs, 58 for each answer (at p = 31: 577, 19 for each), and the MLP generalises soon after it
# memorises. The book's half of the table is the setting to try next, chosen on design seeds and validated on fresh
# ones; nothing was changed after seeing this.

# %% [markdown]
# ## 2. Lottery tickets (幸运彩票, 图14.7, §14.6)
#
# The lottery ticket hypothesis (幸运彩票假设; Frankle & Carbin, ICLR 2019): a randomly initialised dense network
# contains a subnetwork — a binary mask m on its weights — that, trained alone *from the same initial
# values*, reaches the dense network's test accuracy in no more iterations, with far fewer weights. The
# book's 图14.7 (their LeNet-300-100 on MNIST) finds such **winning tickets** (中奖彩票) by **iterative
# magnitude pruning** (迭代剪枝): train, remove a fraction of the smallest-magnitude weights, **rewind** the
# survivors to their initial values, repeat. Pruned too far, the ticket degrades; and the same mask with
# the survivors randomly *re-initialised* does much worse — the initial values matter.
#
# *A remark on the book's formal statement:* it describes the mask as drawn at random (each entry 1 with
# probability p). The hypothesis asserts the *existence* of a suitable mask, found by pruning; a random
# mask of the same density is precisely what does not work.
#
# **CPU analogue.** A ReLU MLP 64 → 100 → 100 → 10 on 500 standardised digits (the rest for testing), full-batch
# Adam, 150 steps per round; each round removes 50 % of each hidden layer's remaining weights (25 % of the
# output layer's), so 6 rounds leave about 2.5 % (`companion/core/pruning.py`). Three tickets — three
# independent initialisations, each pruned by its own magnitudes — run side by side, and beside each a control
# trains the *same* mask from a fresh random initialisation every round, all in one batched computation.
#
# **The claim.** Averaged over the three tickets, the best ticket with ≤ 20 % of the weights tests within 0.01
# of its dense network's error; at the sparsest round the tickets' error is above that best one (pruning too
# much hurts); and there the re-initialised controls' error is ≥ 1.5× the tickets' ("much worse"). On seeds
# 0–19 of the quick profile it holds on **20/20** (median margin +0.52, smallest +0.31). An earlier version
# with a single ticket held on 18/20 only: on two seeds its best sparse ticket trailed the dense network by
# 0.010 and 0.015, the size of one initialisation's luck at this scale — hence the three tickets. Random
# pruning in place of magnitude pruning (the control in `tests/test_controls_ch14.py`) removes the advantage
# of the initial values, and the check fails.

# %%
lottery_config = phenomena.LotteryConfig(steps=pick_steps(quick=150, full=1000, every=20, smoke=20),
                                         rounds=pick(quick=6, full=6, smoke=3), seed=seed)  # smoke: 14 % left
lottery = phenomena.run_lottery(lottery_config)
fig, ax = panels(2, width=4.4)
for j, r in enumerate(range(0, lottery_config.rounds + 1, 2)):
    ax[0].plot(lottery.steps[1:], lottery.curves[r, 1:, 0], color=PALETTE[j],
               label=f"{100 * lottery.remaining[r]:.1f}% left")
ax[0].set(xlabel="training step", ylabel="test accuracy", title="rewound tickets (mean of 3)", ylim=(0.5, 1.0))
ax[0].legend()
for acc, style, label in ((lottery.ticket, "o-", "tickets (rewound to θ₀)"),
                          (lottery.reinit, "s--", "same masks, random re-init")):
    ax[1].errorbar(100 * lottery.remaining, acc.mean(1), yerr=acc.std(1), fmt=style, capsize=3, label=label)
ax[1].set(xscale="log", xlabel="weights left (%)", ylabel="final test accuracy", title="pruning rounds")
ax[1].invert_xaxis()
ax[1].legend()
fig.suptitle("Fig. 14.7 analogue: lottery tickets on the digits")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_lottery(lottery))

# %% [markdown]
# **At the full profile the re-initialised control catches up a little** (seeds 0–4, 1000 Adam steps a round where
# the quick profile trains 150): the best tickets with ≤ 20 % of the weights test within 0.01 of their dense networks
# and the sparsest ones (2.5 % left) are worse on every seed, but the re-initialised controls' error there is 2.08,
# 1.68, 1.75, 1.49 and 2.01 times the tickets' — below the claim's 1.5 on seed 3, by 0.005. The claim's validation
# seeds are 500–519, so seeds 0–4 count as other seeds. With longer training the same masks from fresh values get
# closer to the tickets. A phenomenon weaker at this scale than the claim's factor; not changed after seeing this.
# **On its judged seeds 500–504** (2026-12-06 and 07) the claim holds on all five: the re-initialised
# controls' error at 2.5 % is 1.91, 1.79, **1.52**, 1.76 and 1.87 times the tickets' (the third by 0.02), the best
# sparse tickets within 0.005 of dense. Over ten seeds the factor lies at 1.49–2.08, around the claim's 1.5.

# %% [markdown]
# ## 3. Double descent (图14.8, §14.7)
#
# Classical statistics says the test error of a growing model first falls and then rises (over-fitting).
# Belkin et al. (2019) found that it falls *again* once the model is large enough to fit the training data
# exactly — **double descent**: the test error peaks at the **interpolation threshold** (插值阈值), where
# the model can just barely fit the training set, and decreases beyond it. The book's 图14.8 shows it for
# ResNet-18 of growing width on CIFAR-10/100 with label noise (Nakkiran et al. 2021), who note that without
# label noise the peak is hardly visible.
#
# **CPU analogue** (Belkin et al.'s own setting, scaled down): a two-layer ReLU network whose first layer
# is frozen at random (random features, 随机特征) and whose output weights are fitted to the **minimum-norm**
# least-squares solution — what gradient descent from zero converges to (`companion/core/random_features.py`).
# n = 200 training digits (standardised pixels) with 20 % of the labels replaced at random, m from 10 to 2000 features, 5
# feature draws per width; one SVD per fit, no training loop. The interpolation threshold is m = n.
#
# **Claim.** The test error first falls (the smallest model is worse than the best model with m ≤ n/2),
# then rises to a peak whose width lies between n/2 and 2n, then falls again (the widest model is better
# than the peak). On seeds 0–19 it held 20/20, the peak always at m = n; a ridge penalty (λ = 10) removes
# it (the negative control). The book's own contrast, no label noise, is **not** reproduced here: without
# noise this proxy still peaks at m = n, nearly as high (test error 0.69–0.82 against 0.81–0.87 with noise,
# seeds 100–111) — the minimum-norm fit at m = n amplifies whatever part of the one-hot targets the features
# cannot fit, noisy or not — so the claim does not test the role of the noise. The trained networks below do.

# %%
dd_config = phenomena.DoubleDescentConfig(n_draws=pick(quick=5, full=20, smoke=2), seed=seed)
dd = phenomena.run_double_descent(dd_config)
fig, ax = panels(2, width=4.4)
ax[0].plot(dd.widths, dd.test_error, "o-", ms=3, label="test")
ax[0].plot(dd.widths, dd.train_error, "s-", ms=3, label="train (20% noisy labels)")
ax[0].axvline(dd_config.n_train, color="0.5", ls=":", label="m = n (interpolation)")
ax[0].set(xscale="log", xlabel="number of random features m", ylabel="classification error", title="double descent")
ax[0].legend()
ax[1].plot(dd.widths, dd.test_mse, "o-", ms=3)
ax[1].axvline(dd_config.n_train, color="0.5", ls=":")
ax[1].set(xscale="log", yscale="log", xlabel="number of random features m", ylabel="test squared error")
fig.suptitle("Fig. 14.8 analogue: double descent in random features")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_double_descent(dd))

# %% [markdown]
# ### 图14.8 in trained networks, with and without label noise
#
# The random-features model above is kept as a side panel: its hidden layer never trains. Nakkiran et al.'s
# ResNets (the book's 图14.8) train every layer, and there the label noise decides whether the peak shows. Here
# two-layer ReLU networks 64 → m → 10 train **both layers**: full-batch Adam (learning rate 0.01) on the
# cross-entropy for 1000 steps, on n = 800 digits (standardised pixels; the other 997 for testing), widths
# m = 2 … 64, once with clean labels and once with 20 % of the training labels replaced at random. All 20
# networks (2 noise levels × 10 widths) train as one batched ensemble: a narrower network is the widest one
# with its extra hidden units masked off (`companion/core/pruning.py`). With the cross-entropy the
# **interpolation threshold** is not a parameter count (Belkin et al.'s p = n·classes belongs to the squared
# loss): it is measured, as Nakkiran et al. measure their "effective model complexity", as the narrowest width
# m* that fits its noisy training set (training error ≤ 1 %) — here m* = 12–16, while the clean labels are fitted
# from m = 6 on.
#
# **Claims.** (a) With 20 % label noise the test error first falls (the narrowest network is worse than the
# best narrower-than-peak one), then peaks at a width within a factor 2 of m*, at least 0.05 above both the
# best narrower network and the widest one. (b) Without label noise the same sweep's highest bump (how far the
# error rises above the best narrower network and the widest one) is at most a quarter of the noisy sweep's
# and at most 0.02 — barely visible, as the book says. Designed on seeds 100–115 (16/16 each; on seed 110 the
# peak sat at m*/2, the edge of the factor 2); validated on seeds 0–19:
# (a) **20/20** (median margin +0.48, smallest +0.24; bump 0.07–0.17, peak at m = 8–16 with m* = 12–16), (b)
# **20/20** (median margin +0.80, smallest +0.16; clean bump 0–0.014). The controls in
# `tests/test_controls_ch14.py` are the book's contrast itself: check (a) on the noise-free sweep fails (no peak),
# check (b) on the noisy sweep fails (the peak is there).
#
# *Where ours differs.* A two-layer network on 800 digits instead of ResNet-18 on CIFAR-10/100 (50 000 images,
# widths 1–64, 4000 epochs of Adam); 1000 full-batch steps; one noise level (the paper's 10 % and 20 %, the
# book's caption names only "with label noise"). Not checked: how the peak grows with the noise rate, and
# double descent over optimisation steps, which the book mentions beside the figure (the right panel shows the
# noisy sweep's peak growing during training; no claim tests it).

# %%
tdd_config = phenomena.TrainedDoubleDescentConfig(
    n_train=pick(quick=800, full=1000), steps=pick_steps(quick=1000, full=4000, every=100), seed=seed)
tdd = phenomena.run_trained_double_descent(tdd_config)
m_fit = phenomena.interpolation_width(tdd)
fig, ax = panels(3, width=3.6)
for i, noise in enumerate(tdd.label_noise):
    ax[0].plot(tdd.widths, tdd.test_error[-1, i], "o-", ms=3, color=PALETTE[i], label=f"{noise:.0%} label noise")
    ax[1].plot(tdd.widths, tdd.train_error[-1, i], "s--", ms=3, color=PALETTE[i], label=f"{noise:.0%} label noise")
for j, t in enumerate((tdd_config.steps // 10, 3 * tdd_config.steps // 10, tdd_config.steps)):
    at = min(int(np.searchsorted(tdd.steps, t)), len(tdd.steps) - 1)  # a smoke run records only a few steps
    ax[2].plot(tdd.widths, tdd.test_error[at, -1], "o-", ms=3, color=PALETTE[j + 2], label=f"step {tdd.steps[at]}")
for a in ax:
    a.axvline(m_fit, color="0.5", ls=":", label="interpolation threshold m*" if a is ax[0] else None)
    a.set(xscale="log", xlabel="hidden width m")
ax[0].set(ylabel="test error", title="trained two-layer nets")
ax[1].set(ylabel="training error", title="on the training labels")
ax[2].set(ylabel="test error", title=f"{tdd.label_noise[-1]:.0%} label noise, during training")
for a in ax:
    a.legend(fontsize=7)
fig.suptitle("Fig. 14.8: double descent in trained two-layer nets")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_trained_double_descent(tdd))

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_trained_double_descent_clean(tdd))

# %% [markdown]
# ## 4. Mode connectivity (图14.9, §14.9)
#
# Train one architecture twice from different random initialisations and you get two different minima w₁, w₂.
# Garipov et al. (2018) found that they are not isolated: a simple curve joins them along which the training
# loss stays low and the test accuracy stays close to the endpoints' — **mode connectivity** (模式连通性) —
# whereas the straight segment between them crosses a high loss barrier (图14.9: ResNet-164 on CIFAR-100). Their
# curve is a quadratic Bézier φ_θ(t) = (1 − t)² w₁ + 2t(1 − t) θ + t² w₂ whose bend θ is trained to minimise
# the loss averaged over t ∈ [0, 1].
#
# **CPU analogue.** Two ReLU MLPs 64 → 64 → 64 → 10 on 1000 standardised digits (the rest for testing),
# full-batch Adam from two independent He initialisations, then the bend θ, started at the midpoint of the
# segment, trained for 200 steps with 4 random t per step (`companion/core/connectivity.py`).
#
# **Claim.** The curve's loss barrier (its highest training loss above the endpoints' mean) is below 0.2× the
# straight line's ("much higher" read as at least 5×), and its lowest test accuracy is at most 0.02 below
# the endpoints' ("close"). On seeds 0–19 it held 20/20: the line's midpoint loses 13–30 points of test
# accuracy, the curve at most 1.

# %%
mc_config = phenomena.ConnectivityConfig(steps=pick_steps(quick=400, full=3000, every=10),
                                         bend_steps=pick_steps(quick=200, full=2000, every=10),
                                         seed=seed)
mc = phenomena.run_connectivity(mc_config)
fig, ax = panels(2, width=4.4)
ax[0].plot(mc.t, mc.line_loss, "--", label="straight line")
ax[0].plot(mc.t, mc.curve_loss, "-", label="trained Bézier curve")
ax[0].set(xlabel="t (w₁ at 0, w₂ at 1)", ylabel="training cross-entropy", yscale="log", title="loss along the path")
ax[0].legend()
ax[1].plot(mc.t, mc.line_acc, "--", label="straight line")
ax[1].plot(mc.t, mc.curve_acc, "-", label="trained Bézier curve")
ax[1].set(xlabel="t", ylabel="test accuracy", title="accuracy along the path")
fig.suptitle("Fig. 14.9 analogue: mode connectivity of two digits MLPs")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(phenomena.check_connectivity(mc))

# %% [markdown]
# # Part II — In-context learning as an implicit weight update ΔW (§14.3)

# %% [markdown]
# ## 5. The theorem on a random block (float64)
#
# Three layouts of a block, each with the update that makes the identity exact (derivations in
# `companion/core/icl.py`):
#
# | kind | block | implicit update |
# |---|---|---|
# | `plain` (the paper's) | W₂ σ(W₁ A + b₁) + b₂ | ΔW₁ = W₁ ΔA A(x)ᵀ / ‖A(x)‖² |
# | `skip` (residual) | z = h + Attn h; z + W₂ σ(W₁ z + b₁) + b₂ | ΔW₁ = W₁ (z_C − z_x) z_xᵀ / ‖z_x‖², Δb₂ = z_C − z_x |
# | `preln` (pre-LN) | z = h + Attn(LN h); z + MLP(LN z) | ΔW₁ = W₁ (u_C − u_x) u_xᵀ / ‖u_x‖² (u = LN z), Δb₂ = z_C − z_x |
#
# With a residual stream the context also shifts the output by Δb₂ — a "steering vector" that is not
# a weight of the MLP; the rank-1 ΔW₁ carries the context's effect *through* the non-linearity. Each
# random block (2 heads, causal softmax attention, D = 8, hidden 32, GELU) is checked for the whole
# context (Y = C), for half of it (Y ⊂ C: the rest stays in the prompt), in the bias form
# T_W(C, x) = T_{W, b+WΔA}(x), along the implicit GD over every prefix, and for a 2-block stack whose
# every block is patched (the query then runs alone through the stack). The claim below checks every
# relative error ‖patched − with context‖ / ‖with context‖ against 1e-12 and, for "rank 1", every ΔW's ratio σ₂/σ₁ of its two largest singular values
# against 1000 machine epsilons (a measured number, so the claim has a margin; a rank is only a count).

# %%
random_checks = phenomena.random_identity_checks(seed, n_prompts=64, n_tokens=12)  # 11 context tokens + query
for kind, v in random_checks.items():
    print(f"--- {kind}")
    for name, err in v.errors.items():
        print(f"  {name:42s} rel. error {err:.1e}   rank {v.ranks.get(name, '')}")

# %%
# NBVAL_CHECK_OUTPUT
show(check_identity_random(random_checks))

# %% [markdown]
# **Implicit gradient descent, token by token.** With prefixes C_i = [c₁ … c_i] the updates
# W_i = W_{i−1} − h ∇_W L_i(W_{i−1}), h = 1/‖A(x)‖², L_i(W) = tr(Δ_iᵀ W), Δ_i = W (A(C_{i−1}, x) − A(C_i, x)) A(x)ᵀ,
# sum to W + ΔW(C_i) (the loss is linear in W, so the sum telescopes), and all increments share the
# row factor A(x)ᵀ, so every W_i − W stays rank 1. The checks above include it
# ("implicit GD, every prefix"). The figure shows one prompt: the prediction with the prefix in context
# and the patched query-only prediction coincide at every step.

# %%
gen = generator(seed, 4)
block = icl.ContextualBlock(dim=8, hidden=32, heads=2, kind="skip", generator=gen)
prompt = torch.randn(1, 12, 8, dtype=torch.float64, generator=gen)
with torch.no_grad():
    path = icl.implicit_gd(block, prompt)
fig, ax = panels(2, width=4.2)
i = np.arange(path.dW.shape[1])
ax[0].plot(i, path.with_context[0, :, 0], "o", ms=7, mfc="none", label="T_W(C_i, x) (context)")
ax[0].plot(i, path.patched[0, :, 0], "x", color=PALETTE[1], label="T_{W_i}(x) (query only)")
ax[0].set(xlabel="tokens consumed i", title="output, coordinate 0")
ax[0].legend()
ax[1].plot(i[1:], path.increments()[0], "o-", ms=3)
ax[1].set(xlabel="token i", ylabel="‖W_i − W_{i−1}‖_F", title="implicit GD step sizes", yscale="log")
plt.show()

# %% [markdown]
# ## 6. A transformer that learns in context (Dherin et al. §4; Akyürek et al.)
#
# Tasks: w ~ N(0, I_d), x_i, x_q ~ N(0, I_d), y_i = ⟨w, x_i⟩ (d = 4). Prompt tokens (x_i; y_i) ∈ R⁵ and the
# query (x_q; 0); the model reads the prompt and predicts y_q at the last position. Model (the companion's
# tiny transformer): linear embedding 5 → 32 plus learned positions, 2 blocks of single-head softmax
# attention without causal mask and a GELU MLP 32 → 128 → 32, both with residual connections, no
# LayerNorm; Adam with a cosine schedule, 128 fresh tasks per step, one context length k ~ U{1..16} per step.
# Every task is new, so nothing can be memorised: the model can only do well by learning *from the prompt*.

# %%
config = phenomena.ICLConfig(steps=pick_steps(quick=2000, full=20000, every=50), batch=pick(quick=128, full=256), seed=seed)
trained = phenomena.train_icl(config)
model = trained.model
fig, ax = panels(1, width=4.5)
ax[0].plot(trained.history.steps, trained.history.train_loss)
ax[0].axhline(config.d, color="0.5", ls=":", label="zero predictor (MSE = d)")
ax[0].set(xlabel="step", ylabel="training MSE (k ~ U{1..16})", yscale="log", title="training the in-context learner")
ax[0].legend()
plt.show()

# %% [markdown]
# **The theorem on the trained model.** Every block of the trained transformer is a `skip` contextual
# block (a pre-LN model would be a `preln` one; the unit tests check both). The query alone sits at
# position 0, so its embedding differs from the query's inside the prompt — Δb₂ of the first block
# absorbs that too. In float32 the identities hold to rounding (relative 1e-5); in float64 to 1e-12.

# %%
test = phenomena.sample_tasks(pick(quick=256, full=256, smoke=32), config.k_max, config.d,
                              generator=generator(seed, 1))
trained_checks = phenomena.trained_identity_checks(model, test)
for dtype, v in trained_checks.items():
    print(f"--- {dtype}")
    for name, err in v.errors.items():
        print(f"  {name:45s} rel. error {err:.1e}   rank {v.ranks.get(name, '')}")

# %%
# NBVAL_CHECK_OUTPUT
show(check_identity_trained(trained_checks))

# %% [markdown]
# ## 7. Which algorithm does the learner implement? (Akyürek et al.)
#
# Baselines computed from the same k examples: **one GD step** from w = 0 on ½‖Xw − y‖² (ŵ = η Xᵀy, with
# η fitted for each k — the best a single step can do), **ridge** (λ = 0.1), **OLS** (minimum-norm
# least squares X⁺y; exact once k ≥ d in the noiseless case) and the **zero** predictor (MSE ≈ d).
# Agreement is measured by the squared prediction difference SPD(A₁, A₂) = E[(A₁(D)(x′) − A₂(D)(x′))²]
# and the implicit linear weight difference ILWD = E‖ŵ_{A₁} − ŵ_{A₂}‖², where the learner's ŵ is the
# least-squares fit of its predictions on 16 probe queries with the context held fixed.

# %%
comparison = phenomena.compare(model, config, n_tasks=pick(quick=512, full=4096, smoke=64), seed=seed + 1)
fig, ax = panels(3, width=4.0)
for j, (name, mse) in enumerate(comparison.mse.items()):
    ax[0].plot(comparison.ks, mse, "o-", ms=3, color=PALETTE[j], label=name)
ax[0].set(xlabel="context length k", ylabel="test MSE", yscale="symlog", title="learner vs baselines")
ax[0].legend()
for j, name in enumerate(phenomena.BASELINES):
    ax[1].plot(comparison.ks, comparison.spd[name], "o-", ms=3, color=PALETTE[j + 1], label=f"SPD(ICL, {name})")
    ax[2].plot(comparison.ks, comparison.ilwd[name], "o-", ms=3, color=PALETTE[j + 1], label=f"ILWD(ICL, {name})")
ax[1].set(xlabel="context length k", title="squared prediction difference")
ax[2].set(xlabel="context length k", title="implicit weight difference")
ax[1].legend()
ax[2].legend()
plt.show()
for k in (2, config.d, 8, config.k_max):
    i = list(comparison.ks).index(k)
    print(f"k={k:2d}  MSE " + "  ".join(f"{n}={v[i]:.3f}" for n, v in comparison.mse.items()))

# %% [markdown]
# At this CPU scale the learner sits **between one GD step and ridge/OLS**: it roughly matches the best
# single GD step for short prompts, beats it for long ones and keeps improving with k, but stays far from
# exact least squares, which is perfect from k = d on. Its predictions are closest to one-step GD for short
# prompts (smallest SPD), as Akyürek et al. find for shallow, narrow learners; the paper reports the move
# towards ridge/OLS with depth and width (try the explorer's depth slider, and the full profile).
#
# **How the claims measure.** The figure's comparison uses 512 tasks per k; the three claims below are
# judged on a separate, larger evaluation — 8192 fresh tasks at k = 2, 4, 8, 16, MSE and SPD only. SPD is a
# mean of heavy-tailed squares: on 512 tasks the ratio SPD(ICL, GD1) / SPD(ICL, OLS) at k = d moved by
# ±0.1 between evaluation draws of the *same* trained model (0.26–0.52 over seeds 0–4 in an earlier
# version, which is why its threshold had been widened to 1); on 8192 tasks that noise is 4× smaller.
#
# **What the SPD claim checks, and why two conditions.** In the noiseless case OLS is exact from k = d on,
# so SPD(ICL, OLS) at k = d is simply the learner's own test error: "closer to GD than to OLS" alone would
# hold for any learner that barely moves — the zero predictor itself has SPD(0, GD1) ≈ 0.4 × SPD(0, OLS).
# The claim therefore asks, at k = d, for SPD(ICL, GD1) < 0.5 × SPD(ICL, OLS) (the factor 2 of the
# digest's first version) **and** SPD(ICL, GD1) < SPD(ICL, 0): the learner's predictions follow one GD
# step more closely than they sit at zero, which an untrained network (the negative control in
# `tests/test_controls_ch14.py`) does not do. The error-falls claim likewise asks that the error at k = 16
# ends below the zero predictor's: softmax averaging alone shrinks an untrained network's outputs as the
# prompt grows, so a falling error is evidence of learning only when the learner also predicts.

# %%
evaluation = phenomena.compare(model, config, ks=[2, config.d, 8, config.k_max],
                               n_tasks=pick(quick=8192, full=8192, smoke=256), n_probes=0,
                               seed=seed + 3)

# %%
# NBVAL_CHECK_OUTPUT
show(check_beats_gd1(evaluation, config.d, k=config.k_max))

# %%
# NBVAL_CHECK_OUTPUT
show(check_error_falls(evaluation))

# %%
# NBVAL_CHECK_OUTPUT
show(check_closer_to_gd1(evaluation, config.d))

# %% [markdown]
# **At the full profile the learner has moved on from one GD step towards ridge regression** (seeds 0–4): the same
# transformer, trained 20 000 steps on batches of 256 prompts (the quick profile: 2000 of 128), makes predictions at
# k = d that lie at SPD 0.45–0.56 from ridge's, 0.85–0.99 from one GD step's and 1.21–1.30 from OLS's. It is still
# closer to one GD step than to OLS and than to the zero predictor, but not by the claim's factor 2
# (SPD(ICL, GD1)/SPD(ICL, OLS) = 0.66–0.82). Not a bug, and not the book's statement failing: Akyürek et al. find trained learners moving from
# gradient descent to ridge regression and least squares as depth, width and noise change; here more training of
# the same small learner moves it the same way. The claim states what the quick profile's learner does.

# %% [markdown]
# ## 8. The ΔW sequence as the context is consumed (Dherin et al. §4.2–4.3)
#
# For 200 new tasks with 16 examples, the implicit GD of the first block gives the sequence
# ΔW(C_1), ΔW(C_2), …; the paper's claim is that its increments ‖ΔW(C_{i+1}) − ΔW(C_i)‖_F shrink as the
# context is consumed — the implicit learning converges. **The control matters**: the same computation on
# the *untrained* network (same initialisation) is shown beside it.

# %%
tasks = phenomena.sample_tasks(pick(quick=200, full=200, smoke=32), config.k_max, config.d,
                               generator=generator(seed, 2))
incr_trained = phenomena.mean_increment(phenomena.delta_w_path(model, tasks))
incr_random = phenomena.mean_increment(phenomena.delta_w_path(phenomena.random_init(config), tasks))
FINETUNE = dict(n_tasks=pick(quick=64, full=64, smoke=16), n_test=pick(quick=32, full=32, smoke=8), seed=seed + 2)
finetune = phenomena.finetune_vs_delta_w(model, config, **FINETUNE)
untrained = phenomena.finetune_vs_delta_w(phenomena.random_init(config), config, **FINETUNE)
fig, ax = panels(2, width=4.4)
i = np.arange(1, config.k_max + 1)
ax[0].plot(i, incr_trained, "o-", ms=3, label="trained")
ax[0].plot(i, incr_random, "s--", ms=3, label="random init (control)")
ax[0].set(xlabel="token i", ylabel="mean ‖ΔW_i − ΔW_{i−1}‖_F", yscale="log", title="ΔW increments, block 0")
ax[0].legend()
ax[1].plot(finetune.history.steps, finetune.history["delta_w"], "o-", ms=3, label="ΔW(C_i) (= in context)")
ax[1].plot(finetune.history.steps, finetune.history["finetune"], "s-", ms=3, label="fine-tuning W₁, normalised SGD")
ax[1].plot(untrained.history.steps, untrained.history["delta_w"], "^--", ms=3, color="0.5",
           label="ΔW(C_i), untrained (control)")
ax[1].axhline(untrained.zero, color="0.5", ls=":", label="zero predictor")
ax[1].set_yscale("log")
ax[1].set(xlabel="examples used i", ylabel="test MSE", title="implicit vs explicit learning")
ax[1].legend()
plt.show()
decay_trained, decay_random = phenomena.increment_decay(incr_trained), phenomena.increment_decay(incr_random)
print(f"increment decay (last 3 / first 3): trained {decay_trained:.2f}, random init {decay_random:.2f}")

# %% [markdown]
# **What the control means.** The increments shrink in the untrained network too, and by a similar
# factor: softmax attention averages over the tokens it sees, so the (i+1)-th token moves A(C, x) by about
# 1/(i+1) of its size whatever the weights are. A decaying ΔW increment is therefore a property of
# attention, **not by itself evidence that the network learns from the context**. The evidence of
# learning is elsewhere: in the trained model ΔW(C_i) drives the *test* error on new queries down
# (right panel, and section 7), which the untrained network's ΔW does not do: its test error (grey curve)
# stays above the zero predictor's (dotted) at every i — its outputs move with the context but are
# unrelated to the task.
#
# **Fine-tuning comparison** (微调). Starting from the trained weights, explicit SGD on the first MLP
# matrices W₁ of both blocks (one example (x_i; 0) → y_i at a time, the query seen alone) also lowers the
# test error as examples come in, as the paper reports; at this scale the implicit update uses the examples
# more efficiently than 16 SGD steps. The step is *normalised* like the implicit one (whose step size is
# h = 1/‖A(x)‖²): W₁ ← W₁ − 0.5 · e_i ∇f / ‖∇f‖², which halves each example's error to first order. The
# paper's fixed rate 0.01 is past the stability limit for this model — its effective step 0.01 · ‖∇f‖²
# reaches 5–10 on some examples, the error then changes sign and grows, and because two blocks are tuned
# together the curvature grows with the weights — so the curve used to run away to inf and NaN on some
# seeds. The claims below check (i) the decay of the increments in both networks, (ii) that only the
# trained network's ΔW(C_i) predicts, (iii) that both fine-tuning and ΔW lower the test error.
#
# **Learning, not retrieval.** Dherin et al. ask whether a prompt makes the network learn at inference time or
# only retrieve what pre-training stored, and test on tasks w_test never seen in training. The negative
# control of (ii) and (iii) in `tests/test_controls_ch14.py` is the retrieval end: the same network trained
# on prompts that all share **one** task vector w\* (nothing to learn in context). Fine-tuning its W₁ on a
# new task's examples still lowers the test error, but its ΔW(C_i) stays far above the zero predictor's
# (MSE 6.3–10.4 against 3.6–3.8, seeds 100–102): the implicit update carries only what the network learnt to
# read from the context.

# %%
# NBVAL_CHECK_OUTPUT
show(check_dw_decay(incr_trained, incr_random))

# %%
# NBVAL_CHECK_OUTPUT
show(check_dw_learns(finetune, untrained))

# %%
# NBVAL_CHECK_OUTPUT
show(check_finetune(finetune))

# %% [markdown]
# ## 9. Where a nonlinear transformer looks (Li et al., ICML 2024; optional)
#
# Li et al. analyse a one-block, one-head softmax transformer on in-context *classification*: every input is
# a relevant pattern μ_j plus an irrelevant one ν_r (orthonormal), and the label depends on μ_j only. They
# prove that training makes the attention concentrate on the context examples that share the query's
# relevant pattern, and the MLP then reads their label embedding. Here: 4 + 4 orthonormal patterns in R⁸, a
# task labels each μ_j with a random ±1 (so only same-pattern examples are informative — the paper's
# tasks use two patterns with opposite labels, where a small model can equally read the other pattern's
# examples), 16 examples, hinge loss. Uniform attention would put about 1/4 of its mass on same-pattern
# examples. The claim asks for an error rate ≤ 0.05 (accuracy ≥ 0.95; stated as an error rate so that its
# margin is measured against the room left to 0 errors) and ≥ 80% of the query's attention on those examples.
#
# *Not reproduced:* the paper's magnitude-pruning result (pruning small MLP neurons is harmless, large
# ones is not). The companion's transformer keeps a residual connection around the MLP, through which
# the readout can take the attended label directly, so pruning MLP neurons here tests nothing.

# %%
pattern_model = phenomena.train_pattern_learner(steps=pick_steps(quick=600, full=3000, every=50), seed=seed).model
pattern_tasks = phenomena.sample_pattern_tasks(2000, generator=generator(seed, 3))
accuracy, mass, uniform = phenomena.attention_on_same_pattern(pattern_model, pattern_tasks)
with torch.no_grad():
    _, maps = pattern_model(pattern_tasks.tokens[:1], return_attention=True)
weights = maps[0][0, 0, -1, :-1].numpy()
same = (pattern_tasks.pattern[0, :-1] == pattern_tasks.pattern[0, -1]).numpy()
fig, ax = panels(1, width=5.0)
ax[0].bar(np.arange(len(weights)), weights, color=np.where(same, PALETTE[1], "0.7"))
ax[0].set(xlabel="context example", ylabel="attention weight of the query",
          title="red: same relevant pattern as the query")
plt.show()
print(f"accuracy {accuracy:.3f}; attention mass on same-pattern examples {mass:.2f} (uniform: {uniform:.2f})")

# %%
# NBVAL_CHECK_OUTPUT
show(check_pattern_attention(accuracy, mass, uniform))

# %% [markdown]
# ## 10. Explorer
#
# Context length k, label noise σ and the number of blocks. The default (σ = 0, two blocks) is the learner
# trained for 600 steps when the explorer is built; every other (σ, depth) adapts it in 75 more steps (under a
# second; a third block starts as the identity, one block drops the second), and k only changes what is shown.
# Each shows its test MSE against the baselines (ridge
# with λ = max(σ², 0.1)), one task's predictions along a line of queries, the first block's ΔW(C) for that
# task as an image, and its singular values — one non-zero, the rest at rounding level.

# %%
explorer = phenomena.make_explorer(steps=pick_steps(quick=600, full=3000, every=50, smoke=16), seed=seed)
explorer

# %% [markdown]
# ## 11. Exercises (习题)
#
# **1.** Given W (H × D), a context vector ΔA and A(x), write the ΔW of least Frobenius norm with
# (W + ΔW) A(x) = W (A(x) + ΔA). *Hint:* ΔW A(x) must equal the vector W ΔA; which matrix of rank 1 maps
# A(x) to a given vector and annihilates everything orthogonal to A(x)?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(1)` (on the site: the "Solution" toggle below).

# %%
def my_delta_w(W, dA, a_x):
    return torch.zeros_like(W)  # replace with your formula


phenomena.check_min_norm_update(my_delta_w)

# %% [markdown]
# **2.** ΔW is not unique: any ΔW with ΔW A(x) = W ΔA works. Add to the minimal ΔW a matrix whose rows are
# orthogonal to A(x) and check with `icl.patched_output` that the prediction does not change. Why does the
# theorem nevertheless single out one update?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(2)` (on the site: the "Solution" toggle below).
#
# **3.** Repeat section 8 for the second block (`phenomena.delta_w_path(model, tasks, block=1)`) and for its
# untrained control. Is the second block's implicit learning closer to, or further from, the first block's
# softmax-averaging baseline? What does the result say about where the trained model does its work?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(3)` (on the site: the "Solution" toggle below).
#
# **4.** (习题 7) Rerun section 1 with `weight_decay=(0.1, 0.25, 0.5, 1.0)` (one batched run) and plot the step
# at which each member's test accuracy reaches 0.9 against λ. How does the grokking delay scale with λ? What
# happens to the delay when `train_fraction` grows from 0.6 to 0.8?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(4)` (on the site: the "Solution" toggle below).
#
# **5.** (习题 9) Can pruning shrink a network without hurting it? From `lottery.remaining` and
# `lottery.ticket` (one column per ticket), read off the smallest fraction of weights whose tickets stay
# within 1 % of the dense network's accuracy. Repeat with `criterion="random"`: what does random pruning keep?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(5)` (on the site: the "Solution" toggle below).
#
# **6.** (习题 10) Rerun section 3 with `label_noise=0.0` and with `ridge=10.0`. The book says that without
# label noise the peak "can hardly be seen" for ResNets: is that so for the random-features model? Which of
# the two changes removes the peak?
#
# Worked solution: run `from companion.solutions.ch14 import solution; solution(6)` (on the site: the "Solution" toggle below).

# %% [markdown]
# ## Summary
#
# - **Part I.** A small network on modular division memorises its training table within ~60 steps and
#   generalises ~20× later — but only with weight decay (**grokking**, 图14.6). Minimum-norm random-features
#   models show **double descent**: a test-error peak at the interpolation threshold m = n, with label noise
#   (图14.8); two-layer networks whose both layers train show it too, peaking where they just fit the noisy
#   labels, and without label noise their peak is barely visible, as the book says. Two independently trained MLPs are joined by a trained Bézier curve of near-constant low loss,
#   while the straight line between them crosses a loss barrier (**mode connectivity**, 图14.9). Iterative
#   magnitude pruning with rewinding finds sparse **lottery tickets** that a random re-initialisation of the
#   same mask cannot match, and that test as well as their dense networks with ≤ 20 % of the weights (图14.7;
#   averaged over three tickets — one ticket alone is at the mercy of its initialisation's luck at this
#   scale). All four are CPU-sized analogues
#   of the book's transformer, LeNet, ResNet-18 and ResNet-164 experiments.
# - A transformer block's use of its context is, exactly, a **rank-1 update of its MLP's first weight
#   matrix** (plus an output shift when there is a residual stream): verified to 1e-15 on random blocks of
#   three layouts and on a trained transformer, block by block, with the query then running alone.
# - Reading the prompt token by token is an **implicit gradient descent** on W whose steps telescope to
#   ΔW(C); every partial update stays rank 1.
# - A small transformer trained on in-context linear regression lands **between one GD step and
#   ridge/OLS** at CPU scale, closest to GD for short prompts (Akyürek et al.).
# - ΔW's increments shrink as tokens are consumed — **also in an untrained network**, so that decay is
#   softmax averaging; the learning shows in the falling test error of ΔW(C_i), which explicit
#   fine-tuning (with a normalised, stable step) reproduces more slowly.
# - A one-block nonlinear transformer classifying in context puts most of its attention on the examples
#   that share the query's relevant pattern (Li et al., ICML 2024). Not reproduced: their pruning result
#   (our blocks have a residual around the MLP). The ΔW identities cover the first generated token only,
#   as in the paper.
