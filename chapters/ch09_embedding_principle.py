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
# 2. **The loss spectrum** (损失谱, 图9.5): where many runs of every width spend their time.
# 3. **The frequency view** (图9.4): the plateau function is a low-frequency approximation (link to ch. 4).
# 4. **Splitting embeddings and the Hessian** (图9.3, 图9.7): the one-step splitting embedding T^α_s keeps
#    the output and the gradient exactly; each split adds zero eigenvalues and a minimum turns into a saddle.
# 5. **Compression** (图9.8): merging condensed neurons shrinks a wide net on digits to a narrow one that
#    predicts the same labels.
#
# Two-layer nets follow (9.1), f_θ(x) = Σ_j a_j σ(w_jᵀx̃) with the bias folded in, x̃ = (x, 1). Mechanism in
# `companion.embedding` (embeddings, batched GD, merging) and `companion.landscape` (Hessians).
#
# Run time: quick profile ≈ 40 CPU-seconds; full profile (100 seeds per width, 40 000 steps, widths to
# 500) some minutes.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from companion import condensation as cond
from companion import embedding as emb
from companion.claims_legacy import claim
from companion.config import generator, pick, seed_everything, settings
from companion.plots import panels
from companion.spectral import dft

print(settings().describe())
seed = seed_everything()

# %% [markdown]
# ## 1. Width similarity: shared plateaus (图9.1, 图9.2)
#
# Task: 64 points x ∈ [−4, 4], f*(x) = tanh(2(x+2)) + tanh(2x) + tanh(2(x−2)); tanh nets, every parameter
# N(0, 10⁻⁶) (std 10⁻³), full-batch gradient descent with lr 0.2 on R = (1/2n) Σ (f − y)², float64. The
# book's 图9.1 uses ReLU nets and 图9.2 the width-2 minimum; here the first plateau is at the **width-1
# optimum**, which we compute independently by 16-restart L-BFGS (with Newton polishing, ‖∇R‖ ≈ 10⁻¹⁵).

# %%
x, xa, y = emb.three_tanh_target()
narrow = emb.best_fits(xa, y, 1, restarts=16, seed=seed)[0]
out_narrow = emb.two_layer(torch.as_tensor(narrow.a), torch.as_tensor(narrow.w), xa).numpy()
print(f"width-1 optimum: L1* = {narrow.loss:.6f}, ‖∇R‖ = {narrow.grad_norm:.1e}")

WIDTHS = pick(quick=(1, 2, 3, 5, 10, 50), full=(1, 2, 3, 5, 10, 50, 200, 500))
N_SEEDS = pick(quick=8, full=100)
STEPS = pick(quick=6000, full=40_000)
runs = emb.run_widths(xa, y, WIDTHS, N_SEEDS, init_std=1e-3, lr=0.2, steps=STEPS, snap_every=100,
                      generator=generator(9))
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
    axes[0].semilogy(runs[m].losses[:, 0], label=f"m={m}")
axes[0].axhline(narrow.loss, ls="--", color="0.3", lw=1)
axes[0].set_xlabel("step")
axes[0].set_ylabel("loss")
axes[0].legend(ncol=2)
axes[0].set_title("training loss")
axes[1].plot(x, y[:, 0], ":", color="0.5", label="target")
axes[1].plot(x, out_narrow[:, 0], color="k", lw=3, alpha=0.3, label="width-1 optimum")
for m in wide:
    r, s = runs[m], int(np.flatnonzero(runs[m].snap_steps == match[m].step[0])[0])
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
# Every seed of every width ≥ 3 is checked: at its plateau the relative loss gap |L/L1* − 1|, the largest
# output difference from the width-1 optimum, and the smallest |cos| between the input weights of its
# significant neurons (amplitude ≥ 1% of the largest).

# %%
# NBVAL_CHECK_OUTPUT
gap = max(match[m].gap.max() for m in wide)
sup = max(match[m].sup_diff.max() for m in wide)
cos_min = min(match[m].min_abs_cos.min() for m in wide)
claim("图9.1/9.2", "every net of width ≥ 3 stalls within 1% of the width-1 optimum's loss, with the same output "
      "(‖f − f1*‖∞ < 0.02) and all significant neurons on one line (|cos| > 0.99)",
      passed=bool(gap < 1e-2 and sup < 0.02 and cos_min > 0.99),
      loss_star=narrow.loss, max_rel_gap=gap, max_sup_diff=sup, min_abs_cos=cos_min)

# %% [markdown]
# ## 2. The loss spectrum (图9.5)
#
# All steps of all seeds of one width go into a histogram of log₁₀(loss) (200 bins on [−5, 0]); the colour
# is log₁₀ of the fraction of (step, seed) pairs in each bin. Bright lines are losses where training
# stalls. The book runs 100 seeds per width; the quick profile 8 seeds and 6000 steps, so it mostly shows
# the first plateau; the full profile (40 000 steps) also shows the escapes to lower lines.
#
# Widths 1 and 2 do not reach L1* in this time: a narrow net whose neurons cannot share the work moves
# slowly (the effective step of k aligned neurons grows with k), and width 1 from a tiny init is pulled to
# other critical points first.

# %%
losses = np.concatenate([runs[m].losses for m in WIDTHS], axis=1)
member_width = np.concatenate([runs[m].widths for m in WIDTHS])
uniq, edges, frac = emb.loss_spectrum(losses, member_width)
star_bin = int(np.searchsorted(edges, np.log10(narrow.loss)) - 1)
brightest = frac.argmax(axis=1)

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

# %%
# NBVAL_CHECK_OUTPUT
bright_ok = [bool(brightest[i] == star_bin) for i, m in enumerate(uniq) if m >= 3]
claim("图9.5", "for every width ≥ 3 the brightest line of the loss spectrum is the width-1 critical loss",
      passed=bool(all(bright_ok)), star_bin=star_bin,
      brightest_bins=[int(b) for b, m in zip(brightest, uniq) if m >= 3],
      fraction_at_star=[float(frac[i, star_bin]) for i, m in enumerate(uniq) if m >= 3])

# %% [markdown]
# ## 3. The frequency view of the plateau (图9.4)
#
# The book fits tanh(x−7) + tanh(x) + tanh(x+7) with a width-500 tanh net and sees that at the plateau the
# output is a single-tanh function that has fitted the **low** frequencies only — the frequency principle
# (频率原则, chapter 4) seen from the landscape. The same holds here: below, |ĥ_k| of the plateau output of a
# width-50 net against the target's |f̂_k| (DFT over the 64 sample points).
# This is an illustration, not a claim: with data on a non-periodic interval the spectrum is only a rough
# guide.

# %%
r50 = runs[max(wide)]
s50 = int(np.flatnonzero(r50.snap_steps == match[max(wide)].step[0])[0])
h_plateau = emb.two_layer(torch.as_tensor(r50.a[s50, 0]), torch.as_tensor(r50.w[s50, 0]), xa).numpy()[:, 0]
h_final = emb.two_layer(torch.as_tensor(r50.a[-1, 0]), torch.as_tensor(r50.w[-1, 0]), xa).numpy()[:, 0]
ks = np.arange(13)
fig, axes = panels(2, width=4.2)
axes[0].plot(x, y[:, 0], "--", color="0.4", label="target")
axes[0].plot(x, h_plateau, label=f"plateau (step {match[max(wide)].step[0]})")
axes[0].legend()
axes[0].set_xlabel("x")
axes[1].plot(ks, np.abs(dft(y[:, 0].numpy()))[ks], "o--", color="0.4", label="target |f̂_k|")
axes[1].plot(ks, np.abs(dft(h_plateau))[ks], "s-", label="plateau |ĥ_k|")
axes[1].set_xlabel("frequency k")
axes[1].legend()
plt.show()

# %% [markdown]
# ## 4. Splitting embeddings and the Hessian (图9.3, 图9.7)
#
# The one-step splitting embedding T^α_s copies neuron s (same input weights) and shares its output weight
# as α a_s and (1 − α) a_s. For **any** α ∈ R and **any** θ (not only critical points) the output is
# unchanged and the gradient obeys ∂_{a′_s}R = ∂_{a′_{m+1}}R = ∂_{a_s}R, ∇_{w′_s}R = α∇_{w_s}R,
# ∇_{w′_{m+1}}R = (1 − α)∇_{w_s}R — so critical points map to critical points. We check this at random
# points of a width-3 net for α = −0.5, 0.3, 1.7.

# %%
gen = generator(97)
errors = []
for alpha in (-0.5, 0.3, 1.7):
    a0 = torch.randn(3, 1, generator=gen, dtype=torch.float64)
    w0 = torch.randn(3, 2, generator=gen, dtype=torch.float64)
    errors.append(emb.gradient_identity_error(a0, w0, xa, y, s=1, alpha=alpha))
out_err, grad_err = np.max(errors, axis=0)

# %%
# NBVAL_CHECK_OUTPUT
claim("图9.3", "splitting keeps the output and obeys the gradient identities exactly, also for α outside [0, 1]",
      passed=bool(out_err < 1e-12 and grad_err < 1e-12), max_output_error=out_err, max_gradient_error=grad_err)

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

# %%
# NBVAL_CHECK_OUTPUT
counts = {alpha: [c.counts.as_tuple() for c in chain] for alpha, chain in chains.items()}
monotone = all(all(n1 <= n2 and z1 <= z2 for (n1, z1, _), (n2, z2, _) in zip(cs, cs[1:])) for cs in counts.values())
zeros_grow = all(all(z2 > z1 for (_, z1, _), (_, z2, _) in zip(cs, cs[1:])) for cs in counts.values())
preserved = max(c.out_diff for chain in chains.values() for c in chain)
critical_kept = max(c.grad_norm for chain in chains.values() for c in chain)
claim("图9.7", "splitting a strict minimum keeps output and criticality; negative and zero counts never decrease "
      "and every split adds zero eigenvalues",
      passed=bool(monotone and zeros_grow and preserved < 1e-12 and critical_kept < 1e-11 and counts[0.5][0][:2] == (0, 0)),
      counts_alpha_0_5=counts[0.5], counts_alpha_0_3=counts[0.3], counts_alpha_m0_5=counts[-0.5],
      max_output_change=preserved, max_grad_norm=critical_kept)

# %% [markdown]
# Whether the split point becomes a **saddle** (a negative eigenvalue appears) depends on α and on which
# neuron is split: the book's "a narrow local minimum typically becomes a strict saddle of the wider net"
# is visible in the counts above whenever the negative count rises. Wider nets thus see more escape
# directions at the same loss — one reason why they end lower.
#
# ## 5. Compression by merging condensed neurons (图9.8)
#
# The book trains a width-400 net on MNIST and, at a slow point, finds 58 groups of similar neurons; the
# merged width-58 net predicts like the wide one. Here: sklearn digits (1000 training, 797 test images,
# x/16 with a 1 appended), width 400 ReLU, init N(0, 10⁻¹²), one-hot targets, R = (1/2n) Σ ‖f − y‖², GD
# lr 1.0. After 200 steps, neurons with amplitude ‖a_j‖‖w_j‖ ≥ 2% of the largest are grouped greedily by
# cosine ≥ 0.95 of their input weights; each group becomes one neuron (ReLU is positively homogeneous, so
# a_j σ(w_jᵀx) = a_j‖w_j‖ σ(ŵ_jᵀx)) — the inverse of splitting.

# %%
STEPS_98 = pick(quick=200, full=1500)
WIDTH_98 = pick(quick=400, full=400)
xd, yd, lab_d, xd_test, lab_test = emb.digits_data(1000, seed=seed)
a, w, mask, per = emb.init_batch([WIDTH_98], 1, xd.shape[1], 10, 1e-6, generator(98), dtype=torch.float32)
run98 = emb.train_batch(xd, yd, a, w, mask, per, lr=1.0, steps=STEPS_98, act="relu", snap_every=STEPS_98)
a_w, w_w = run98.a[-1, 0], run98.w[-1, 0]
labels = emb.group_neurons(a_w, w_w, cos_threshold=0.95, amp_cutoff=0.02)
a_m, w_m = emb.merge_groups(a_w, w_w, labels, act="relu")


def predict(a_: np.ndarray, w_: np.ndarray, x_: torch.Tensor) -> np.ndarray:
    return emb.two_layer(torch.as_tensor(a_), torch.as_tensor(w_), x_, "relu").numpy()


def half_mse(out: np.ndarray) -> float:
    return float(0.5 * ((out - yd.numpy()) ** 2).sum(1).mean())


wide_test, merged_test = predict(a_w, w_w, xd_test).argmax(1), predict(a_m, w_m, xd_test).argmax(1)
agreement = float((wide_test == merged_test).mean())
loss_wide, loss_merged = half_mse(predict(a_w, w_w, xd)), half_mse(predict(a_m, w_m, xd))
print(f"width {WIDTH_98} → {len(a_m)} neurons ({int((labels >= 0).sum())} significant); "
      f"test accuracy {float((wide_test == lab_test).mean()):.3f} (wide) vs {float((merged_test == lab_test).mean()):.3f} "
      f"(merged); training loss {loss_wide:.4f} vs {loss_merged:.4f}")

order = np.argsort(labels + (labels < 0) * 10**6, kind="stable")
sig = order[labels[order] >= 0][:120]
fig, axes = panels(2, width=4.2)
axes[0].imshow(cond.cosine_similarity_matrix(w_w[sig]), cmap="RdBu_r", vmin=-1, vmax=1)
axes[0].set_title("cosine of input weights (grouped)")
axes[0].grid(False)
axes[1].bar(["wide", "merged"], [loss_wide, loss_merged], color=["#1f77b4", "#d62728"])
axes[1].set_title(f"training loss: width {WIDTH_98} vs {len(a_m)}")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
claim("图9.8", "merging condensed neurons shrinks the width at least 4× while ≥ 97% of test predictions agree and "
      "the training loss changes by < 10%",
      passed=bool(WIDTH_98 >= 4 * len(a_m) and agreement >= 0.97 and abs(loss_merged / loss_wide - 1) < 0.1),
      width=WIDTH_98, merged_width=len(a_m), agreement=agreement, loss_wide=loss_wide, loss_merged=loss_merged)

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

# %%
x20 = torch.linspace(-10, 10, 80, dtype=torch.float64)
x20a, y20 = emb.augment(x20), (torch.tanh(x20 - 7) + torch.tanh(x20) + torch.tanh(x20 + 7))[:, None]
for m in (1, 2):  # try (1, 2, 3) and more restarts (each restart takes about a second)
    print(m, np.round(emb.distinct_losses(emb.best_fits(x20a, y20, m, restarts=4, seed=seed)), 5))

# %% [markdown]
# ## Summary
#
# * Nets of every width ≥ 3 stall at the width-1 optimum's loss, with the same output and fully condensed
#   neurons: the wide net passes through the image of a narrow critical point (图9.1/9.2, 9.5).
# * The splitting embedding T^α_s preserves outputs and gradients exactly for any α; splitting a minimum
#   adds zero eigenvalues and never removes negative ones (图9.7).
# * Condensed nets can be merged back: width 400 → a few dozen neurons with the same predictions (图9.8).
