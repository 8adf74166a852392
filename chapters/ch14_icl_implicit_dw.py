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
# # Chapter 14.3 — In-context learning as an implicit weight update ΔW
#
# *深度学习现象导论*, §14.3 大型语言模型的上下文内学习, with the papers behind it: Dherin et al. (2025),
# "Learning without training: the implicit dynamics of in-context learning"; Akyürek et al. (2022), "What
# learning algorithm is in-context learning?".
#
# **In-context learning** (上下文内学习, ICL): given a few solved examples in the prompt, a trained model
# solves a new instance of the task without any change to its weights (图14.3: sentiment analysis from a
# handful of labelled reviews). The book calls *why* this happens an open question. This notebook follows
# one precise answer and tests it:
#
# 1. **The theorem** (Dherin et al., Thm 2.2). A transformer block reads as a *contextual block*
#    (上下文块) T_W = M_W ∘ A: a contextual layer A (self-attention) followed by an MLP whose first weight
#    matrix is W. The effect of the context C on the query x is *exactly* a rank-1 weight update (秩1更新):
#    T_W(C, x) = T_{W+ΔW(C)}(x), with ΔW(C) = (W ΔA) A(x)ᵀ / ‖A(x)‖² and ΔA = A(C, x) − A(x).
#    Consuming the context token by token is an implicit gradient descent (隐式梯度下降) on W.
# 2. **What the implicit learner learns** (Akyürek et al.): a small transformer trained on in-context
#    linear regression, compared with one step of gradient descent, ridge regression and least squares.
# 3. **The ΔW sequence** as tokens are consumed, with an untrained control, and the comparison with
#    explicit fine-tuning.
#
# Run time: quick profile ≈ 80 CPU-seconds (most of it training the small transformer and the explorer's
# learner); full profile (longer training, more tasks) a few minutes on a CPU.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from companion.core import icl
from companion.experiments import ch14_icl as icl_tasks
from companion.experiments.ch14_icl import (check_beats_gd1, check_closer_to_gd1, check_dw_decay, check_dw_learns,
                                            check_error_falls, check_finetune, check_identity_random,
                                            check_identity_trained, check_pattern_attention)
from companion.kit.claims import show
from companion.kit.config import pick, settings
from companion.kit.plots import PALETTE, panels
from companion.kit.seeds import active_seed, generator

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. The theorem on a random block (float64)
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
random_checks = icl_tasks.random_identity_checks(seed, n_prompts=64, n_tokens=12)  # 11 context tokens + query
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
# ## 2. A transformer that learns in context (Dherin et al. §4; Akyürek et al.)
#
# Tasks: w ~ N(0, I_d), x_i, x_q ~ N(0, I_d), y_i = ⟨w, x_i⟩ (d = 4). Prompt tokens (x_i; y_i) ∈ R⁵ and the
# query (x_q; 0); the model reads the prompt and predicts y_q at the last position. Model (the companion's
# tiny transformer): linear embedding 5 → 32 plus learned positions, 2 blocks of single-head softmax
# attention without causal mask and a GELU MLP 32 → 128 → 32, both with residual connections, no
# LayerNorm; Adam with a cosine schedule, 128 fresh tasks per step, one context length k ~ U{1..16} per step.
# Every task is new, so nothing can be memorised: the model can only do well by learning *from the prompt*.

# %%
config = icl_tasks.ICLConfig(steps=pick(quick=2000, full=20000), batch=pick(quick=128, full=256), seed=seed)
trained = icl_tasks.train_icl(config)
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
test = icl_tasks.sample_tasks(256, config.k_max, config.d, generator=generator(seed, 1))
trained_checks = icl_tasks.trained_identity_checks(model, test)
for dtype, v in trained_checks.items():
    print(f"--- {dtype}")
    for name, err in v.errors.items():
        print(f"  {name:45s} rel. error {err:.1e}   rank {v.ranks.get(name, '')}")

# %%
# NBVAL_CHECK_OUTPUT
show(check_identity_trained(trained_checks))

# %% [markdown]
# ## 3. Which algorithm does the learner implement? (Akyürek et al.)
#
# Baselines computed from the same k examples: **one GD step** from w = 0 on ½‖Xw − y‖² (ŵ = η Xᵀy, with
# η fitted for each k — the best a single step can do), **ridge** (λ = 0.1), **OLS** (minimum-norm
# least squares X⁺y; exact once k ≥ d in the noiseless case) and the **zero** predictor (MSE ≈ d).
# Agreement is measured by the squared prediction difference SPD(A₁, A₂) = E[(A₁(D)(x′) − A₂(D)(x′))²]
# and the implicit linear weight difference ILWD = E‖ŵ_{A₁} − ŵ_{A₂}‖², where the learner's ŵ is the
# least-squares fit of its predictions on 16 probe queries with the context held fixed.

# %%
comparison = icl_tasks.compare(model, config, n_tasks=pick(quick=512, full=4096), seed=seed + 1)
fig, ax = panels(3, width=4.0)
for j, (name, mse) in enumerate(comparison.mse.items()):
    ax[0].plot(comparison.ks, mse, "o-", ms=3, color=PALETTE[j], label=name)
ax[0].set(xlabel="context length k", ylabel="test MSE", yscale="symlog", title="learner vs baselines")
ax[0].legend()
for j, name in enumerate(icl_tasks.BASELINES):
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
evaluation = icl_tasks.compare(model, config, ks=[2, config.d, 8, config.k_max], n_tasks=8192, n_probes=0,
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
# ## 4. The ΔW sequence as the context is consumed (Dherin et al. §4.2–4.3)
#
# For 200 new tasks with 16 examples, the implicit GD of the first block gives the sequence
# ΔW(C_1), ΔW(C_2), …; the paper's claim is that its increments ‖ΔW(C_{i+1}) − ΔW(C_i)‖_F shrink as the
# context is consumed — the implicit learning converges. **The control matters**: the same computation on
# the *untrained* network (same initialisation) is shown beside it.

# %%
tasks = icl_tasks.sample_tasks(200, config.k_max, config.d, generator=generator(seed, 2))
incr_trained = icl_tasks.mean_increment(icl_tasks.delta_w_path(model, tasks))
incr_random = icl_tasks.mean_increment(icl_tasks.delta_w_path(icl_tasks.random_init(config), tasks))
finetune = icl_tasks.finetune_vs_delta_w(model, config, seed=seed + 2)
untrained = icl_tasks.finetune_vs_delta_w(icl_tasks.random_init(config), config, seed=seed + 2)
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
decay_trained, decay_random = icl_tasks.increment_decay(incr_trained), icl_tasks.increment_decay(incr_random)
print(f"increment decay (last 3 / first 3): trained {decay_trained:.2f}, random init {decay_random:.2f}")

# %% [markdown]
# **What the control means.** The increments shrink in the untrained network too, and by a similar
# factor: softmax attention averages over the tokens it sees, so the (i+1)-th token moves A(C, x) by about
# 1/(i+1) of its size whatever the weights are. A decaying ΔW increment is therefore a property of
# attention, **not by itself evidence that the network learns from the context**. The evidence of
# learning is elsewhere: in the trained model ΔW(C_i) drives the *test* error on new queries down
# (right panel, and section 3), which the untrained network's ΔW does not do: its test error (grey curve)
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
# ## 5. Where a nonlinear transformer looks (Li et al., ICML 2024; optional)
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
pattern_model = icl_tasks.train_pattern_learner(steps=pick(quick=600, full=3000), seed=seed).model
pattern_tasks = icl_tasks.sample_pattern_tasks(2000, generator=generator(seed, 3))
accuracy, mass, uniform = icl_tasks.attention_on_same_pattern(pattern_model, pattern_tasks)
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
# ## 6. Explorer
#
# Context length k, label noise σ and the number of blocks. Each (σ, depth) trains its own learner
# (600 steps, cached, a few seconds the first time), then shows its test MSE against the baselines (ridge
# with λ = max(σ², 0.1)), one task's predictions along a line of queries, the first block's ΔW(C) for that
# task as an image, and its singular values — one non-zero, the rest at rounding level.

# %%
explorer = icl_tasks.make_explorer(steps=pick(quick=600, full=3000), seed=seed)
explorer

# %% [markdown]
# ## 7. Exercises (习题)
#
# **1.** Given W (H × D), a context vector ΔA and A(x), write the ΔW of least Frobenius norm with
# (W + ΔW) A(x) = W (A(x) + ΔA). *Hint:* ΔW A(x) must equal the vector W ΔA; which matrix of rank 1 maps
# A(x) to a given vector and annihilates everything orthogonal to A(x)?

# %%
def my_delta_w(W, dA, a_x):
    return torch.zeros_like(W)  # replace with your formula


icl_tasks.check_min_norm_update(my_delta_w)

# %% [markdown]
# **2.** ΔW is not unique: any ΔW with ΔW A(x) = W ΔA works. Add to the minimal ΔW a matrix whose rows are
# orthogonal to A(x) and check with `icl.patched_output` that the prediction does not change. Why does the
# theorem nevertheless single out one update?
#
# **3.** Repeat section 4 for the second block (`icl_tasks.delta_w_path(model, tasks, block=1)`) and for its
# untrained control. Is the second block's implicit learning closer to, or further from, the first block's
# softmax-averaging baseline? What does the result say about where the trained model does its work?

# %% [markdown]
# ## Summary
#
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
