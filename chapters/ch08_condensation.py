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
# # Chapter 8 — Condensation (凝聚现象)
#
# *深度学习现象导论*, chapter 8; Zhou et al., "Towards understanding the condensation of neural networks at
# initial training" (NeurIPS 2022); Zhang & Xu, "Implicit regularization of dropout" (2022).
#
# **Condensation** (凝聚): the neurons of a layer align on a few directions, so a wide net behaves like a
# narrow one. This notebook shows
#
# 1. **the condensation process** (图8.1–8.4): with a small initialisation the loss of a two-layer ReLU net
#    stalls more than once (损失停滞, 图8.2); on its plateau all the neurons sit on one orientation, then
#    split into more, and the output goes from one neuron's ramp to the target's kinks (图8.4);
#    dead neurons (灰色神经元) never move; a convolution layer condenses too (图8.5, digits for MNIST), and in a
#    small residual CNN trained on colour photograph patches from the default initialisation the last layer
#    condenses while the first does not (图8.6);
# 2. **initial condensation** (初始凝聚, 图8.9–8.11): the initial stage is a loss plateau (图8.9); in the
#    first steps from a tiny initialisation the
#    input weights of tanh / sigmoid / softplus nets line up on one line; cosine-similarity heat maps
#    (余弦相似度, 8.4) ordered by the leading eigenvector; read as the heat maps' blocks, tanh nets lie on one
#    line and the median x·tanh net on two (图8.10(a)–(c); x²·tanh's three lines are an exploration); the number
#    of directions is bounded by 2p, p the activation's multiplicity (1-D); every layer of a residual net
#    condenses (图8.11; the book's per-layer line counts are an exploration);
# 3. **dropout** (§8.4): the explicit regulariser R₁ (8.5) behind dropout's implicit bias, checked by Monte
#    Carlo, dropout pushing a net initialised in the linear regime to move its features (图8.12),
#    giving a tanh net a simpler fit (图8.13) and condensed features (图8.13(d,e)) far sooner than a small
#    initialisation does (图8.14), and lowering the sample size needed to recover a two-neuron teacher (图8.16).
#
# Run time: quick profile ≈ 50 CPU-seconds (one thread); full profile about an hour a seed on one thread of the
# two-core CPU (56–58 minutes with 图8.13's three-layer nets at 10 000 steps, seeds 0 and 1, plus 6–12 minutes for
# their 40 000 steps now), 49 minutes of it in 图8.16's 180 students of width 1000. On an NVIDIA H200 GPU shared with
# the other eleven chapters (one CPU thread each) it had not finished after 460 s. At the full profile (seeds 0–4;
# `robustness/report-full.json`, `docs/full-profile.md`) all 19 phenomenon claims hold on seeds 0–2 and 4, 图8.13's
# three-layer features after its step count was designed and validated (section 3); on seed 3 all but one hold:
# 图8.10's p = 1 line, whose run the full profile leaves at the book's size — the quick profile's own run, which
# fails on seed 3 too (its one failure of 20): the softplus nets reach λ₁ = 0.94, 0.80 and 0.95 after the book's
# 100 steps, 0.998, 0.92 and 0.998 after 200. On the fresh seeds 500–504 (2026-12-07) the three claims judged there
# (图8.4's plateau outputs, 图8.5's CNN line, 图8.10's p = 1 line) hold on all five; every other phenomenon claim and
# both identities hold too, except on seed 504 图8.6's residual CNN, whose first layer kept 0.61 of its effective lines
# where more than 0.65 is asked (the claim's thinnest part on every seed: it condenses a little too at this size).

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
from companion.experiments import ch08_condensation as ch8
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.exercises import feedback
from companion.kit.plots import panels
from companion.kit.seeds import active_seed

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1. The condensation process (图8.1–8.4)
#
# Target (8.2) (图8.1) on 50 points of [−1, 1]; f(x) = Σ_k a_k ReLU(w_k x + b_k) (8.3) with m = 100 and
# every parameter ~ N(0, 10⁻⁶) (std 10⁻³); full-batch gradient descent, lr 0.05. (With Adam at std 10⁻⁴
# the net stayed on the plateau in our budget, so we use plain GD, the discretised gradient flow of the
# theory.) Each neuron is drawn at angle Ω_k = atan2(b_k, w_k) and radius log₁₀ A_k, A_k = |a_k|‖(w_k, b_k)‖.
# The loss is drawn against a logarithmic step axis, on which the first few hundred steps are visible.

# %%
# run_condensation records every steps // 400; a smoke run keeps 6000 steps, which reach and leave the first
# plateau that the analysis below needs (by step 4500 on seeds 0–19)
STEPS_1 = pick_steps(quick=12_000, full=40_000, every=100, smoke=6_000)
proc = ch8.run_condensation(width=100, init_std=1e-3, steps=STEPS_1, seed=seed)
start, end = ch8.first_plateau(proc.steps, proc.loss)
snap = proc.snap_steps
mid = (start + end) // 2
shown = [0, snap[1], mid, end, (end + snap[-1]) // 2, snap[-1]]
fig = plt.figure(figsize=(12, 2.6), layout="constrained")
ax = fig.add_subplot(1, len(shown) + 1, 1)
ax.loglog(proc.steps[1:], proc.loss[1:])
ax.axvspan(start, end, color="0.85")
ax.set_title("loss (first plateau shaded)")
ax.set_xlabel("step")
for j, s in enumerate(shown):
    i = int(np.argmin(np.abs(snap - s)))
    pax = fig.add_subplot(1, len(shown) + 1, j + 2, projection="polar")
    ch8.plot_polar(pax, proc.w[i], proc.a[i], dead=proc.dead, title=f"step {snap[i]}: {ch8.clusters_at(proc, s)} cl.")
plt.show()

fig, axes = panels(4, width=2.8, height=2.3)
for ax, s in zip(axes, [snap[1], mid, end, snap[-1]]):
    i = int(np.argmin(np.abs(snap - s)))
    ax.plot(proc.grid, proc.target, "--", color="0.4")
    ax.plot(proc.grid, proc.outputs[i], color="#d62728")
    ax.set_title(f"output at step {snap[i]}: {ch8.ramp_distance(proc.grid, proc.outputs[i]):.3f}", fontsize=9)
plt.show()

# %% [markdown]
# **The loss stalls more than once** (损失停滞, 图8.2(a)). The book sees the loss stall several times and reads
# it as the mark of a strongly nonlinear training process. On the logarithmic step axis a stall is a flat
# stretch, so we call a stretch [t, 2t] — one doubling of the training time — a **stall** when the loss
# falls by less than 5% over it. The claim: there are two stalls t₁ and t₂ ≥ 2t₁ with a fall between them
# (L(t₂) < ½ L(2t₁)) and a fall after the second (L(end) < ½ L(2t₂)); the pair with the widest margin is
# chosen. Here the first is the initial stage next to the saddle θ = 0 (the first ~100 steps) and the
# second the plateau on which the neurons sit on one orientation (steps ≈ 400–4 500). The orientations
# side of 图8.2(b): at t = 0 they are random — the neurons that carry 90% of the amplitude occupy more than
# half of 36 angular bins of 10° — and in the middle of the second stall (the snapshot nearest √2·t₂) less
# than a quarter. A large initialisation (std 1) has neither stall (its negative control).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_loss_stalls(proc))

# %% [markdown]
# Through the first plateau every amplitude-carrying neuron sits on one orientation: the net is
# effectively one neuron. Leaving the plateau, new orientations split off and the fit acquires the
# target's kinks (图8.4).
#
# **The check** (图8.3). Orientation clusters (取向簇) are counted among the neurons carrying 90% of the
# amplitude: sort their orientations round the circle and split wherever two neighbours are more than
# 0.1 rad apart; a run wider than a quarter turn (π/2) is not one direction and counts as the 0.1 rad arcs
# it covers, so neurons spread round the circle count as many clusters, never as one (an earlier version
# counted a gap-free ring as one cluster). So "one cluster in the middle of the plateau" means that the
# *second*-largest gap between neighbouring orientations is ≤ 0.1 rad and the one run is at most π/2
# wide, and "at least 3 at the end" means that the third-largest gap is > 0.1 rad. Stating the counts
# through gaps and widths gives each condition a margin: how far it is from changing the count.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_plateau_condensation(proc))

# %% [markdown]
# **The outputs at those times** (图8.4). A condensed net acts as one neuron, so on the plateau its output
# should be one neuron's output, a single ramp c·ReLU(±(x − x₀)); once the orientations split, the output
# takes on the target's kinks (拐点). We measure the **distance from one ramp**: the relative L2 distance on
# [−1, 1] of the output from the best single-ReLU function (best sign, kink x₀ and height c; printed in the
# panel titles above). The target (8.2) itself is 0.27 from any single ramp. The claim: in the middle of the
# first plateau the output is within 5% of one ramp, and at the end it is at least half as far from any
# single ramp as the target is. (An earlier version counted kinks — slope jumps — and held on only 12 of
# 20 seeds: the condensed neurons share one orientation, but their kink points −b_k/w_k need not fall at
# exactly one point, and a kink count cannot tell a ramp with a slightly bent foot from two neurons; the
# distance can.) A large initialisation (no plateau) fails it (its negative control).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_plateau_outputs(proc))

# %% [markdown]
# **Dead neurons** (习题19): a ReLU neuron with w_k x_i + b_k ≤ 0 at every training input outputs 0 and gets a
# zero gradient in both a_k and (w_k, b_k), so it never moves (grey in the polar plots).

# The check: the neurons with w_k x_i + b_k ≤ 0 at every training input at initialisation have moved at
# most 10⁻⁶ of a live neuron's median move by the end (in fact exactly 0), and every live neuron has
# moved farther than any of them. (Its negative control runs the same check on a softplus net, whose
# "dead-looking" neurons still get a gradient.)

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dead_neurons(proc))

# %% [markdown]
# ### 图8.5 — condensation in a convolutional layer
#
# Condensation is not special to fully connected nets. The book trains a CNN (卷积神经网络) with one
# convolution layer — 32 kernels (卷积核) of size 3×3, tanh — and one fully connected softmax layer on MNIST
# (cross-entropy, full-batch Adam, lr 2·10⁻⁴, every parameter from the small initialisation N(0, 96⁻⁸)),
# until the training accuracy reaches 100%. It draws the cosine-similarity map (8.4) of the 32 kernels
# (32 vectors in R⁹) at the start and at the end, and that of the layer's outputs (each channel's outputs
# over all images and positions as one long vector). At the start the kernels show no structure; at the end
# kernels and outputs both show blocks — the kernels have condensed onto about two opposite directions,
# i.e. one line — and the blocks of the outputs are sharper than those of the kernels.
#
# Our CPU analogue: 300 of scikit-learn's bundled 8×8 digits standing in for MNIST (not available
# offline), the same layer (32 kernels 3×3, no padding, so 6×6 positions, tanh) and a fully connected
# layer to 10 logits, cross-entropy, full-batch Adam at lr 10⁻³ (the full profile: the book's 2·10⁻⁴ on
# 1000 images). Two nets train side by side as one batched ensemble: one with every parameter
# ~ N(0, 96⁻⁸) — we read the book's 96⁻⁸ as the variance, i.e. std 96⁻⁴ ≈ 1.2·10⁻⁸ —, and a **control**
# with the usual (LeCun) scale, std 1/√fan-in per layer. Each is looked at when its training accuracy first
# reaches 100%. The maps are ordered by their leading eigenvector, as in §8.1.2; the output maps use the
# 300 training images and 300 test images.

# %%
CNN_CONFIG = dict(n_train=pick(quick=300, full=1000, smoke=100), n_test=pick(quick=300, full=797, smoke=100),
                  channels=32, small_std=96.0 ** -4, lr=pick(quick=1e-3, full=2e-4),
                  steps=pick_steps(quick=1_500, full=20_000, every=10))
cnn = ch8.run_cnn_condensation(**CNN_CONFIG, seed=seed)
fig, axes = panels(8, width=2.3, height=2.3, nrows=2)
ch8.plot_conv_condensation(axes, cnn)
plt.show()
print("test accuracy when the training set is fitted:",
      {name: round(float(a), 3) for name, a in zip(("small init", "control"), cnn.test_accuracy)})

# %% [markdown]
# **The check.** A number for "condensed onto one line" is the share of the direction Gram's trace on its
# top line, λ₁/C (C = 32; λ₁ the top eigenvalue of the cosine matrix): 1 when all kernels lie on one line
# (±û), about 1/9 for random kernels in R⁹. With off = 1 − λ₁/C the claim requires: for the small
# initialisation off > ½ at t = 0 (no structure); when the training set is fitted, the small init's kernels
# off the line less than the control's, the control's off > ½ (no condensation), and the small init's
# outputs off the line less than its kernels (the book's "sharper blocks").

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_cnn_condensation(cnn))

# %% [markdown]
# **One line, at MNIST's resolution.** The book sees the kernels condensed onto about two opposite
# directions, one line. On the 8×8 digits above they do not get there: over seeds 0–19 the small-init kernels
# keep 0.42–0.69 of the trace off the top line, with a second line holding much of the rest — far more aligned
# than the control, but on about two lines — and neither the book's initialisation and learning rate nor more
# images (1000) changed that. The reason is the resolution. From a small initialisation every kernel first grows
# along the leading singular direction (in R⁹) of the patch–label correlation M = Σₙ (softmax − one-hot)ₙ ⊗
# patch(xₙ) (§8.2's initial condensation), and only one line appears if that direction leads clearly. On MNIST's
# 28×28 grid a 3×3 kernel sees a smooth piece of a pen stroke; on the 8×8 digits one pixel is a 4×4 block of the
# scan and the patches point in many directions: the second singular value of M is 0.94 of the first at 8×8,
# 0.60 with the digits interpolated (bilinear) to 12×12, 0.46 at 16×16 and 0.28 at 28×28 (1000 images).
#
# So here the digits are interpolated to 12×12 (10×10 positions), and everything else is the book's: 32 kernels
# 3×3, tanh, a fully connected softmax layer, cross-entropy, full-batch Adam at **lr 2·10⁻⁴**, every parameter
# ~ N(0, 96⁻⁸) (std 96⁻⁴), each net read when its training accuracy first reaches 100%, beside the LeCun-scale
# control; 150 training images (the book: 60000; time), the output maps over them and 300 test images. The
# claim (ch08.cnn-one-line, a phenomenon): for the small initialisation, when fitted, the kernels and the
# outputs each keep at most ¼ of the trace off the top line (random kernels: about 8/9), and the line's two
# opposite directions each hold at least 4 of the 32 kernels. Designed on seeds 100–105 (off ≤ 0.06 for both,
# smaller side 10–16 kernels; the control's kernels 0.76–0.82 off); validated once on seeds 0–19: 20 of 20
# (kernels off at most 0.14, median 0.03; outputs off at most 0.09, median 0.03; the smaller side 12–16 kernels;
# fitted at steps 260–640). The claim had been an exploration that held on 0 of seeds 0–19 in the 8×8 setting, so
# it is validated once more on seeds 500–519: 20 of 20 (smallest side 7 kernels, seed 507; the control failing
# on all 20). The same check on the LeCun-scale net of the same run fails on all 20 (on seeds
# 100–105 its kernels stay 0.76–0.82 off the line, its outputs 0.35–0.48): that is the negative control.
# Not checked here: MNIST itself, its 60000 images, the book's test accuracy (97.62%). The book's "(f) sharper
# than (e)" is checked above on the 8×8 run only: at 12×12 both maps lie nearly on one line and which of the two
# is closer to it varies (the outputs on 11 of seeds 0–19).

# %%
CNN_LINE_CONFIG = dict(n_train=pick(quick=150, full=1000, smoke=60), n_test=pick(quick=300, full=797, smoke=60),
                       channels=32, small_std=96.0 ** -4, lr=2e-4, image_size=12,
                       steps=pick_steps(quick=3_000, full=20_000, every=10))
cnn_line = ch8.run_cnn_condensation(**CNN_LINE_CONFIG, seed=seed)
fig, axes = panels(8, width=2.3, height=2.3, nrows=2)
ch8.plot_conv_condensation(axes, cnn_line)
plt.show()
print("kernels on each side of the top line (small init):", ch8.line_sides(cnn_line.kernel_cos[0]))

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_cnn_one_line(cnn_line))

# %% [markdown]
# ### 图8.6 — a residual network: the last layer condenses, the first does not
#
# The book trains ResNet-18 (残差神经网络: 17 convolution layers and one linear layer, batch normalisation) on
# CIFAR-10 from the **default initialisation** (默认初始化, not a small one), Adam at lr 10⁻³, and draws the cosine
# maps (8.4) of the first and of the last convolution layer — its kernels, each flattened over its input channels
# and positions, and its channels' outputs on 256 training and 256 test images — at the start and at the end. The
# last layer's kernels and outputs gain a clear block structure against their maps at the start (图8.6(g, h)
# against (c, d)); the first layer's show no obvious condensation (图8.6(e, f)). Not every layer condenses.
#
# Our CPU analogue (ResNet-18 on CIFAR-10 needs a GPU and the download). **Data**: natural colour images, as
# CIFAR's: four of scikit-image's bundled photographs (an astronaut, a cup of coffee, a cat, a rocket), each
# resized to 96 × 96 pixels and cut into 8 × 8 RGB patches every 4 pixels (2,116 patches); the task is to say
# which photograph a patch comes from; 150 patches for training and 150 for testing, each colour channel
# standardised (as CIFAR images are normalised). The first layer's kernels are then 3 × 3 × 3 = 27-dimensional,
# as in ResNet-18 on CIFAR. **Net**: a first convolution layer (16 channels, 3×3, ReLU), 2×2 average pooling, two
# residual layers h_{l+1} = ReLU(W_l * h_l + b_l) + h_l (16 channels, 3×3, the residual form of §8.3), global
# average pooling and a linear layer to 4 logits; no batch normalisation. PyTorch's default initialisation
# (U(−s, s), s = 1/√fan-in), cross-entropy, full-batch Adam at the book's lr 10⁻³ for 250 steps (the training set is
# fitted, 99–100%; test accuracy about 0.9); three nets as one batched computation. The outputs are each channel's
# ReLU outputs over the 150 training and 150 test patches and every position.
#
# **How much a layer has condensed** is read from its cosine matrix D (C × C): the effective number of lines
# 1 / mean D_ij², the participation ratio of the direction Gram (1 when all vectors lie on one line, about 10 for
# the first layer's 16 random kernels in R²⁷ at t = 0, 14 for the 16 random kernels in R¹⁴⁴ of a residual layer).
# A channel silent on every input (a dead ReLU) has no direction and is left out. As the book reads its maps, we
# compare each layer with itself at t = 0: r = (effective lines after training) / (effective lines at t = 0).

# %%
RESNET_CONFIG = dict(n_train=pick(quick=150, full=500, smoke=60), n_test=pick(quick=150, full=300, smoke=60),
                     steps=pick_steps(quick=250, full=600, every=25, smoke=50))
resnet = ch8.run_residual_cnn(**RESNET_CONFIG, seed=seed)
patches = ch8.photo_patches(RESNET_CONFIG["n_train"], 0, seed=seed)
fig, axes = panels(4, width=1.4, height=1.6)
for label, (ax, name) in enumerate(zip(axes, ("astronaut", "coffee", "cat", "rocket"))):
    patch = patches.x[patches.labels == label][0].permute(1, 2, 0).numpy()
    ax.imshow((patch - patch.min()) / (patch.max() - patch.min()), interpolation="nearest")
    ax.set(xticks=[], yticks=[], title=name)
plt.show()
fig, axes = panels(8, width=2.2, height=2.3, nrows=2)
for row, layer in enumerate(("first", "last")):
    for j, (what, key) in enumerate((("kernels, t = 0", "kernels0"), ("kernels, trained", "kernels"),
                                     ("outputs, t = 0", "outputs0"), ("outputs, trained", "outputs"))):
        mat = resnet.maps[f"{layer}_{key}"]
        ch8.plot_cosine_map(axes[4 * row + j], mat,
                            f"{layer} layer: {what}\neffective lines {ch8.cosine_participation(mat):.1f}")
plt.show()
kern_ratio, out_ratio = resnet.kernels / resnet.kernels0, resnet.outputs / resnet.outputs0
for i, name in enumerate(["first"] + [f"residual {j}" for j in range(1, len(kern_ratio))]):
    print(f"{name:10s} effective lines trained / t = 0 per net: kernels {np.round(kern_ratio[i], 2)}, "
          f"outputs {np.round(out_ratio[i], 2)}")
print("train accuracy", np.round(resnet.accuracy[-1], 3), " test accuracy", np.round(resnet.test_accuracy, 3))

# %% [markdown]
# **The check.** In the median of the three nets, the last layer's kernels and outputs each have r ≤ 0.65 (they
# keep under 65% of their effective lines: condensed) and the first layer's kernels and outputs each have r ≥ 0.65
# (not condensed) — one cut, the same measure, for both layers. The cut was set on the design seeds 100–109; on the
# design seeds 100–119 the last layer's r was 0.33–0.46 (kernels) and 0.32–0.55 (outputs), the first layer's
# 0.70–0.86 and 0.80–0.98. Validated once on the seeds 0–19: it held on 20 of 20 (smallest margin 4.6%, seed 1,
# where the first layer's kernels kept 68%; median 17.7%), and on the fresh seeds 500–519 on 20 of 20 (smallest
# margin 5.0%, median 17.3%). In the full profile (500 training patches, 600 steps) it held on the design seeds 100
# and 101 with smaller margins (the first layer's kernels kept 68% and 73%); it was not validated there.
# Its negative control trains the same net from the book's contrast, a small initialisation (1/20 of the default
# scale, the condensed regime of 图8.5): there the first layer condenses too (on seed 0 its kernels keep 29% of
# their lines) and the check fails; and from three times the default scale (the lazy regime, chapter 7), where no
# layer's map changes and the last layer's half fails.
#
# **Why our first layer used to condense.** Before this version the same net ran on the 8 × 8 grey digits; there
# the first layer's kernels kept only 71–90% of their effective lines, its outputs 69–88% (design seeds 100–109),
# too close to the last layer's kernels (57–67%) for any cut. What we ruled out and what we changed:
# * *Not the data's low rank*: the digits' 3 × 3 patches (standardised per pixel) have a participation ratio of 6.1
#   of 9 dimensions — richer than the photographs' 3 × 3 × 3 patches (2.3 of 27, dominated by brightness).
# * *Not the training length*: on the digits, design seed 100, the first layer's kernel ratio is 0.98, 0.91, 0.83
#   and 0.82 after 50, 100, 250 and 500 steps: it settles once the training set is fitted.
# * *The measure*: ReLU channels of the last layer that fall silent on every input were counted as vectors with
#   cosine 0 to all others, adding lines that are not there; left out, the last layer's output ratio falls from a
#   median 0.53 (0.42–0.72) to 0.45 (0.36–0.55) on the photographs, design seeds 100–109.
# * *The inputs*: with 27-dimensional colour kernels on natural patches the last layer condenses further (kernels
#   0.33–0.46 against 0.57–0.67 on the digits) while the first layer keeps 70–86% of its kernel lines.
#
# **What remains unchecked.** The first layer does lose some of its lines (r 0.70–0.86 for the kernels): under Adam
# every weight moves by about the learning rate per step, and our first layer, whose default scale is only
# √(144/27) ≈ 2.3 times the residual layers' (ResNet-18's is √(4608/27) ≈ 13 times its last layer's), moves by 0.7–0.8
# of its initial norm. The book's 64-channel first layer, batch normalisation, 17 layers, mini-batches of 128 and
# CIFAR-10 itself, and its pretrained-on-ImageNet counterpart (图8.7), are beyond this CPU budget.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_resnet_last_not_first(resnet))

# %% [markdown]
# ## 2. Initial condensation (图8.9–8.11)
#
# The book's setting: a 5-50-1 net, n = 80 points x ~ U[−4, 2]⁵, target Σ_k 3.5 sin(5x_k + 1), every
# parameter ~ N(0, (50⁻⁴)²), Adam, looked at after 100 steps (epoch 100: the book's 图8.9 calls epoch < 100 the
# initial stage); three seeds per activation, trained as one ensemble each, in float64. The book's panels
# use learning rates 10⁻³, 8·10⁻⁴ and 2.5·10⁻⁴; we train x·tanh and x²·tanh at 10⁻³ and the p = 1
# activations at 2.5·10⁻⁴ (see the check below for why). The activations differ in **multiplicity** p
# (重数): the first nonzero derivative at 0 is σ^{(p)}(0); tanh, sigmoid and softplus have p = 1, x·tanh p = 2, x²·tanh p = 3. The
# theory says the input weights condense on at most 2p directions; for p = 1 on one line (w and −w).
# Heat maps: cosine similarity (8.4) of the 50 input-weight vectors (w_k, b_k) ∈ R⁶, rows ordered by the
# leading eigenvector of the matrix.
#
# ### 图8.9 — the initial stage is a loss plateau
#
# The point θ = 0 is a saddle of a two-layer net; starting next to it, the loss first stalls. The book
# calls this stall the **initial stage** (初始阶段) and reads it off the loss curve of the 图8.10 experiment
# (图8.9): up to about epoch 100. Here is that curve for the tanh nets of the setting below (three
# initialisations, Adam at 2.5·10⁻⁴ as for the tanh heat map), trained for 4000 steps.

# %%
# a smoke run keeps 200 steps: 图8.9's check reads the curve past step 100
stage89 = ch8.run_initial_condensation("tanh", n_members=3, steps=pick_steps(quick=4_000, full=10_000, every=50, smoke=200),
                                       record_every=50,
                                       seed=seed)
fig, ax = plt.subplots(figsize=(4.4, 3.0), layout="constrained")
ax.semilogy(stage89.steps, stage89.risk / stage89.risk[0], lw=1.2)
ax.axvline(100, color="0.5", ls=":", label="epoch 100")
ax.set(xlabel="epoch (full-batch Adam step)", ylabel="R_S(t) / R_S(0)", title="Fig. 8.9: loss of the Fig. 8.10 setting (tanh)")
ax.legend()
plt.show()

# %% [markdown]
# **The check.** "The loss stalls, then falls": in every net the loss has fallen by at most 10% at epoch
# 100, and at the end of the run it is below half of its value at epoch 100. At this learning rate the
# stall is in fact longer than 100 epochs (about 1000–1500), and at the book's larger rate 10⁻³ the
# initial stage ends before epoch 100 on some seeds (on 3 of 20 data seeds the worst of the three nets had
# already lost more than 10% by then).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_initial_plateau(stage89))

# %%
initial = {act: ch8.run_initial_condensation(act, n_members=3, steps=100, seed=seed) for act in ch8.MULTIPLICITY}
line = {act: [cond.alignment_eigenvalue(w) for w in r.w] for act, r in initial.items()}
fig, axes = panels(5, width=2.4, height=2.5)
for ax, (act, r) in zip(axes, initial.items()):
    ch8.plot_cosine_heatmap(ax, r.w[0], title=f"{act} (p={ch8.MULTIPLICITY[act]}): λ₁={line[act][0]:.2f}")
plt.show()
for act in initial:
    print(f"{act:9s} top eigenvalue of the direction Gram per seed: {np.round(line[act], 3)}   "
          f"loss ratio after 100 steps: {np.round(initial[act].loss_ratio, 3)}")

# %% [markdown]
# **The one-line check** (一条线). The direction Gram (1/m) Σ ŵ_kŵ_kᵀ of the 50 unit input weights has top
# eigenvalue λ₁ = 1 when they all lie on one line (ŵ and −ŵ alike) and about 1/6 when they are spread in
# R⁶. The claim requires, in the worst of the three nets of each p = 1 activation, 1 − λ₁ ≤ 0.01 (λ₁ ≥ 0.99,
# the threshold this check was first written with; it had been relaxed to 0.95 after a seed failed). At
# lr 10⁻³ the nets have already left the initial stage by epoch 100 on some data seeds: on 20 seeds the
# tanh line had begun to split on 5 (λ₁ down to 0.97) and softplus on 4 (down to 0.81). At the book's
# smallest learning rate 2.5·10⁻⁴, epoch 100 lies inside the initial stage and 19 of 20 seeds pass
# (the exception a softplus net on one data seed).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_p1_one_line(initial))

# %% [markdown]
# At this initialisation x²·tanh has not moved at all (loss ratio 1.0): its gradients here are ~10⁻²⁰, far
# below Adam's ε = 10⁻⁸.
#
# ### 图8.10(a)–(c) — how many lines: tanh, x·tanh, x²·tanh
#
# The book's panels (a)–(c): after 100 epochs x²·tanh nets condense on three lines (six directions), x·tanh
# nets on two (four directions), tanh nets on one. We rerun the same setting with every parameter
# ~ N(0, 50⁻⁴) read as a *variance* (std 50⁻² = 4·10⁻⁴, still small), at which all three move within 100
# epochs, with the book's learning rates (10⁻³ for x·tanh and x²·tanh, 2.5·10⁻⁴ for tanh). The activations
# are σ_p(z) = z^{p−1}·tanh z, so the three nets of each (nine nets) train as one batched ensemble.
#
# **Counting lines** (凝聚的直线条数). The angle between the lines of two neurons is arccos |D(u, v)| (8.4),
# so w and −w lie on one line. Single linkage (单链聚类) joins the two nearest groups again and again; its
# link angles, largest first, say how many lines there are: cut at 0.3 rad (|cos| ≥ 0.955), a net lies on
# 1 + #{links > 0.3} lines. Heat maps as above (rows ordered by the leading eigenvector); the bottom row is
# the contrast of the book's phase diagram, every parameter ~ N(0, 1) (the linear regime), where the weights
# hardly turn in 100 epochs.

# %%
lines10 = ch8.run_activation_lines(n_members=3, seed=seed)
lines10_large = ch8.run_activation_lines(n_members=3, init_std=1.0, seed=seed)
fig, axes = plt.subplots(2, 3, figsize=(7.5, 5.2), layout="constrained")
for row, (r, label) in zip(axes, ((lines10, "std 50⁻²"), (lines10_large, "std 1"))):
    for i, (ax, act) in enumerate(zip(row, r.acts)):
        ch8.plot_cosine_heatmap(ax, r.w[i, 0], title=f"{act} (p={ch8.MULTIPLICITY[act]}), {label}:\n"
                                f"{r.lines()[i, 0]} lines")
plt.show()
for r, label in ((lines10, "std 50⁻²"), (lines10_large, "std 1")):
    for i, act in enumerate(r.acts):
        print(f"{label:8s} {act:7s} (p={ch8.MULTIPLICITY[act]}) lines per net {r.lines()[i].tolist()}   "
              f"loss ratio {np.round(r.loss_ratio[i], 3)}")

# %% [markdown]
# **The checks.** Both are explorations: they did not hold on 19 of the 20 seeds 0–19.
#
# * *The count depends on the activation* (the book's summary: 凝聚方向的个数与激活函数有关): in every net,
#   tanh on one line (largest link ≤ 0.3 rad), x·tanh and x²·tanh on more than one (largest link > 0.3 rad)
#   but at most 10 (the 10th largest link ≤ 0.3 rad; random directions of 50 neurons in R⁶ lie on about 48).
#   Designed on seeds 100–109 (10/10), it held on 18 of seeds 0–19: on one seed two x·tanh nets used 12
#   lines, on another an x²·tanh net 11.
# * *The book's counts* — exactly 1, 2 and 3 lines — held on 0 of seeds 0–19: the tanh nets always lie on
#   one line, but the x·tanh nets use 2–12 lines (median 4.5; exactly two in 1 of 60 nets) and the x²·tanh
#   nets 3–11 (median 6; exactly three in 2 of 60), more than the bound of 2p directions (p lines) of Zhou
#   et al. allows. What we tried first, on seeds 100–104 (three nets each): init std 50⁻⁴ (the book's code),
#   10⁻⁶, 10⁻⁵, 2·10⁻⁵, 5·10⁻⁵, 10⁻⁴, 4·10⁻⁴, 10⁻³, 10⁻², with Adam at 10⁻³ and 2.5·10⁻⁴, looked at after
#   25–800 epochs; at std 4·10⁻⁴, counting only the neurons carrying 50% or 90% of the amplitude; plain gradient
#   descent (lr 2·10⁻³, 10 000 steps, seeds 100–101: x·tanh and x²·tanh do not leave the saddle). The best
#   x·tanh setting (std 10⁻⁶, epoch 50–100) put half the
#   nets on two lines; no setting put more than a fifth of the x²·tanh nets on three. Adam moves each weight by
#   about its learning rate whatever the gradient's size once the gradient exceeds ε, which is not the gradient
#   flow of the theory.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_activation_lines(lines10))

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_activation_line_counts(lines10))

# %% [markdown]
# ### 图8.10(a)–(c) read as the book reads its heat maps: blocks of neurons
#
# **Why the counts above are not the book's.** Three things, each seen on the design seeds (≥ 100):
#
# * *Stragglers.* Single linkage over all 50 neurons makes every neuron that has not turned its own line. In the
#   initial stage a neuron grows at a rate proportional to its output weight |a_k|, so the few with a small a_k keep
#   their random directions; a heat map shows each of them as a thin stripe, and the book reads the **blocks**
#   (块状结构) — the groups of neurons with |D(u, v)| ≈ 1.
# * *Adam's ε.* At std 4·10⁻⁴ the x·tanh gradients (∝ std²) exceed Adam's ε = 10⁻⁸ from the first step; Adam then
#   moves every weight by about its learning rate along the gradient's signs, and the neurons head for several
#   sign patterns of R⁶ (5–7 blocks in some nets). At the authors' std 50⁻⁴ (their code draws every parameter from
#   N(0, 50⁻⁸)) the gradients start near 10⁻¹³, far below ε: Adam's step is then lr·g/ε, gradient descent with a step
#   of 10⁵, and with σ(z) ≈ z² the input weights follow ẇ_k = 2a_k M w_k, M = (1/n) Σ_i y_i x̃_i x̃_iᵀ — they
#   grow along the eigenvector of M's largest eigenvalue (a_k < 0) or of its smallest (a_k > 0): two lines.
# * *The data draw.* How far the neurons have turned by epoch 100 depends on the gaps between M's eigenvalues, that
#   is on the 80 data points: when M has almost no negative eigenvalue the a_k > 0 neurons hardly grow and the net
#   lies on one line; when its two largest eigenvalues are close the neurons spread between their eigenvectors.
#   One net is one sample of the count.
#
# **Our setting.** For each activation 15 nets, net k on its own draw of the book's 80 points (the same draw for
# the three activations); every parameter ~ N(0, std²) with the authors' std 50⁻⁴ for tanh and x·tanh and 10⁻⁴
# for x²·tanh (at 50⁻⁴ its signal, ∝ std³, does not move it in 100 epochs; the book does not state its panels'
# initialisation); Adam at the book's learning rates as above, 100 epochs, float64; all 45 nets one batched
# ensemble. **A line** is a block: a single-linkage group (0.3 rad, as above) holding at least 10% of the
# neurons (5 of 50). Heat maps of a median net of each activation (the first whose count is the median), and how
# many nets lie on how many blocks.

# %%
blocks10 = ch8.run_line_blocks(n_nets=15, seed=seed)
fig, axes = plt.subplots(1, 4, figsize=(10.5, 2.9), layout="constrained")
for i, (ax, act) in enumerate(zip(axes, blocks10.acts)):
    k = int(np.flatnonzero(blocks10.blocks[i] == int(np.median(blocks10.blocks[i])))[0])  # the first median net
    ch8.plot_cosine_heatmap(ax, blocks10.w[i, k], title=f"{act} (p={ch8.MULTIPLICITY[act]}), median net {k + 1}:\n"
                            f"{blocks10.blocks[i, k]} lines")
bar = 0.27
for i, act in enumerate(blocks10.acts):
    counts = np.bincount(blocks10.blocks[i], minlength=7)[:7]
    axes[3].bar(np.arange(7) + (i - 1) * bar, counts, bar, label=f"{act} (p={ch8.MULTIPLICITY[act]})")
axes[3].set(xlabel="lines (blocks)", ylabel="nets", title="Fig. 8.10: lines per net")
axes[3].legend(fontsize=7)
plt.show()
for i, act in enumerate(blocks10.acts):
    print(f"{act:7s} (p={ch8.MULTIPLICITY[act]}) nets on 0, 1, 2, … lines: "
          f"{np.bincount(blocks10.blocks[i]).tolist()}   "
          f"median share of neurons in the blocks {np.median(blocks10.in_blocks[i]):.2f}   "
          f"loss ratio (median) {np.median(blocks10.loss_ratio[i]):.3f}")

# %% [markdown]
# **The check.** The tanh nets lie on one line: at least 80% of them on exactly one block. The median x·tanh net
# lies on two: more than half of the x·tanh nets on at most two blocks and more than half on at least two. Designed
# on seeds 100–139, where it held on all 40 (every tanh net on one block; the x·tanh nets on two blocks in 40–87%
# of each seed's 15). Validated once on seeds 0–19: it held on all 20 (median margin 25%, the smallest 6.7%), and
# on 500–519: all 20 (every margin 25%). Of the 300 x·tanh nets of seeds 0–19, 189 lie on two blocks, 51 on one
# and 60 on three or more; the 300 tanh nets all on one. The negative control: the same nets from std 1 (the
# linear regime of the book's phase diagram), where in 100 epochs no five neurons share a line (no blocks).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_line_blocks(blocks10))

# %% [markdown]
# **x²·tanh's three lines (exploration).** That the median x²·tanh net lies on three blocks held on 4 of seeds
# 0–19 and 3 of 500–519 (18 of the design seeds 100–139): of the 300 nets of seeds 0–19, 74 lie on three blocks,
# 85 on one, 95 on two and 46 on four or more. Its leading term is cubic (σ(z) ≈ z³), whose attracting directions
# are not the eigenvectors of one matrix, and in our runs the count spreads. What stays unchecked in 图8.10: the
# book's three lines for x²·tanh, the count of every single x·tanh net (the claim is about the median net), and
# panels (d)–(e) (sigmoid, softplus) in this block count (their one line is checked above by λ₁).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_x2tanh_blocks(blocks10))

# %% [markdown]
# The multiplicity bound is therefore also checked in a 1-D setting where every activation moves in float32.
#
# ### The number of directions and the multiplicity p (图8.10, 1-D version)
#
# Each net fits n = 40 points of sin(3x + 1) on [−1, 1] with m = 50 neurons (w_k, b_k) ∈ R², all parameters
# ~ N(0, 10⁻⁸) (x²·tanh: N(0, 10⁻⁶), because at 10⁻⁴ its loss has not moved after 150 steps), Adam
# lr 10⁻³, float32, four nets per activation as one batched ensemble. A direction in R² is an
# orientation Ω_k = atan2(b_k, w_k), so a line is a pair of opposite orientations and "≤ 2p directions"
# means "≤ 2p orientation clusters". Each net is looked at when its **first descent ends** (图8.9's
# initial stage): the loss has dropped by 10%, or it stalls after a smaller drop. We count the
# clusters (gaps > 0.3 rad) among the neurons that carry 90% of the amplitude A_k = |a_k|·‖(w_k, b_k)‖;
# every such cluster counts, however little amplitude it holds (an earlier version ignored clusters
# with < 5% of the amplitude; that rule is gone). "At most 2p clusters" is checked as: the (2p+1)-th
# largest gap between neighbouring orientations is ≤ 0.3 rad (nothing splits off a (2p+1)-th cluster)
# and no cluster is wider than π/2 (the neurons are not spread round the circle), in every net.
#
# *How the stopping rule was settled, for the record.* A fixed 150 steps failed once in 40 data seeds (a
# tanh net whose initial stage had ended by step 100 and whose line had begun to split on the following
# plateau); a 10%-drop rule alone failed once in 60 (a tanh net that stalls at 0.94·R_S(0)).

# %%
multiplicity = {act: ch8.run_multiplicity(act, n_members=4, seed=seed,
                                          max_steps=pick_steps(quick=400, full=400, every=10, smoke=30))
                for act in ch8.MULTIPLICITY}
fig, axes = panels(5, width=2.5, height=2.6, subplot_kw={"projection": "polar"})
for ax, (act, r) in zip(axes, multiplicity.items()):
    ch8.plot_polar(ax, r.w[0], r.a[0], title=f"{act} (p={ch8.MULTIPLICITY[act]}): {r.clusters[0]} clusters")
plt.show()
for act, r in multiplicity.items():
    print(f"{act:9s} p={ch8.MULTIPLICITY[act]}  clusters per net {r.clusters.tolist()}  (bound 2p = "
          f"{2 * ch8.MULTIPLICITY[act]})  stopped at steps {r.steps.tolist()}  loss ratio {np.round(r.loss_ratio, 2)}")
p1_counts = np.concatenate([multiplicity[a].clusters for a in ("tanh", "sigmoid", "softplus")])
p23_counts = np.concatenate([multiplicity[a].clusters for a in ("xtanh", "x2tanh")])
print(f"mean clusters per net: p = 1 {p1_counts.mean():.2f}, p ≥ 2 {p23_counts.mean():.2f}")

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_multiplicity_bound(multiplicity))

# %% [markdown]
# The polar plots show one net per activation: orientation Ω_k as angle, log₁₀ A_k as radius (as in 图8.2).
# tanh puts its neurons on one line (two opposite orientations); sigmoid and softplus, whose σ(0) ≠ 0 or
# whose line is tilted by the bias, often use only one side of it; x·tanh uses up to two lines, x²·tanh
# up to three (the book's 图8.10(a), (b)). The bound is an upper bound: a p = 3 net often shows 3 or 4
# clusters rather than 6.
#
# ### 图8.11: a residual network
#
# The book's residual net: h_{l+1} = σ_l(W_l h_l + b_l) + h_l with x²·tanh, x·tanh, sigmoid, tanh and
# softplus in hidden layers 1–5, d = 3, m = 18, n = 80 points of Σ_k 4 sin(12x_k + 1) on [−4, 2]³,
# init N(0, 0.01²), Adam lr 4·10⁻⁵; each layer is shown at the epoch of its panel in the book (1000, 900,
# 900, 1400, 1400). Three nets (full profile: five), batched. The book sees the input weights of layers 1–5 on
# three, two, one, one and one lines, and reads from it first that every layer condenses, second that the number
# of lines follows the activation as in 图8.10. Heat maps of the first net; each title gives its effective number
# of lines (the participation ratio 1 / Σ λ_i² of the direction Gram's eigenvalues λ_i:
# 1 for one line, about 9.5 for 18 random vectors in R¹⁹) and the number of eigenvalues needed for 95% of the trace.

# %%
# a smoke run looks at each layer after a hundredth of the book's epochs
residual = ch8.run_residual_condensation(n_members=pick(quick=3, full=5), seed=seed,
                                         epochs=pick(quick=ch8.RESIDUAL_EPOCHS, full=ch8.RESIDUAL_EPOCHS,
                                                     smoke=(10, 9, 9, 14, 14)))
eff_lines, lines95 = residual.effective_lines(), residual.lines()
fig, axes = panels(5, width=2.4, height=2.5)
for i, (ax, (act, epoch), w) in enumerate(zip(axes, ch8.RESIDUAL_LAYERS, residual.weights)):
    ch8.plot_cosine_heatmap(ax, w[0], title=f"layer {i + 1}: {act}, epoch {epoch}\n"
                             f"effective lines {eff_lines[i, 0]:.1f}, {lines95[i, 0]} lines")
plt.show()
for i, (act, epoch) in enumerate(ch8.RESIDUAL_LAYERS):
    print(f"{act:9s} (p={ch8.MULTIPLICITY[act]}) at epoch {epoch}, per net: effective lines "
          f"{np.round(eff_lines[i], 2)}, lines for 95% {lines95[i].tolist()}")

# %% [markdown]
# **The check: every layer condenses.** In each of the five layers the median over the three nets of the effective
# number of lines is at most 4.5 — fewer than half of the ≈ 9.5 of random weights, which is what the weights have at
# t = 0 and what they keep from the usual scale (std 1/√18 ≈ 0.24 instead of 0.01: the book's phase-diagram
# contrast, this claim's negative control, where 1400 Adam steps of 4·10⁻⁵ hardly turn them). The threshold was set
# on the design seeds 100–124, where the worst layer's median was 1.2–3.9 (the tanh layer, at epoch 1400, is the
# one that sometimes lags). Validated on seeds 0–19: it held on all 20 (median margin 64%, the smallest 22%).

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_residual_condensation(residual))

# %% [markdown]
# **The book's counts (exploration).** That the layers lie on exactly 3, 2, 1, 1 and 1 lines, the multiplicity
# of their activations, counted as the eigenvalues needed for 95% of the trace in the median net, held on 1 of
# the 25 design seeds 100–124 and on 1 of the validation seeds 0–19: in the median net the x²·tanh layer needs 1–4
# lines, the x·tanh layer 1–5, the p = 1 layers 1–3 and the tanh layer sometimes many more (up to 10, with one
# line carrying most of the trace), so the per-layer match with the book's 3/2/1/1/1 is not robust at this size.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_residual_line_counts(residual))

# %% [markdown]
# ### 图8.11 read as the book reads its heat maps: blocks per layer
#
# The book reads its heat maps as **blocks** (块状结构), as in 图8.10 above: a line is a group of neurons with
# |D(u, v)| ≈ 1. We count them the same way: single linkage of the lines at 0.3 rad, a block being a group holding
# at least 10% of the layer's neurons (2 of 18; two random directions in R¹⁹ almost never lie within 0.3 rad of
# one line). As in 图8.10, each net fits **its own draw** of the book's 80 points, so that one net is one sample
# of a layer's count: the data decide how far apart the directions a layer's neurons head for are, and the nets
# of one data set agree closely with each other. Our setting is the book's otherwise (the net, N(0, 0.01²), Adam
# 4·10⁻⁵, each layer at the epoch of its panel); 15 nets (full profile: 30), one batched computation. Heat maps of
# a median net of each layer (the first whose count is the layer's median) and how many nets lie on how many lines.

# %%
residual_blocks = ch8.run_residual_condensation(
    n_members=pick(quick=ch8.RESIDUAL_BLOCK_NETS, full=2 * ch8.RESIDUAL_BLOCK_NETS), seed=seed, own_data=True,
    epochs=pick(quick=ch8.RESIDUAL_EPOCHS, full=ch8.RESIDUAL_EPOCHS, smoke=(10, 9, 9, 14, 14)))
layer_blocks = residual_blocks.blocks()  # (5 layers, nets)
fig, axes = panels(6, width=2.2, height=2.5)
for i, (ax, (act, epoch)) in enumerate(zip(axes, ch8.RESIDUAL_LAYERS)):
    k = int(np.flatnonzero(layer_blocks[i] == int(np.median(layer_blocks[i])))[0])  # the first median net
    ch8.plot_cosine_heatmap(ax, residual_blocks.weights[i][k], title=f"layer {i + 1}: {act} (p={ch8.MULTIPLICITY[act]})"
                            f"\nmedian net {k + 1}: {layer_blocks[i, k]} lines")
bar = 0.16
for i, (act, _) in enumerate(ch8.RESIDUAL_LAYERS):
    axes[5].bar(np.arange(5) + (i - 2) * bar, np.bincount(np.minimum(layer_blocks[i], 4), minlength=5), bar,
                label=f"{act} (p={ch8.MULTIPLICITY[act]})")
axes[5].set(xlabel="lines (blocks)", ylabel="nets", title="Fig. 8.11: lines per net")
axes[5].legend(fontsize=6)
plt.show()
for i, (act, epoch) in enumerate(ch8.RESIDUAL_LAYERS):
    print(f"layer {i + 1} {act:9s} (p={ch8.MULTIPLICITY[act]}) at epoch {epoch}: nets on 0, 1, 2, … lines "
          f"{np.bincount(layer_blocks[i]).tolist()}")

# %% [markdown]
# **What reproduces and what does not.** Over the 300 nets of seeds 0–19, the x²·tanh layer (p = 3) lies on 1, 2,
# 3 and 4 or more lines in 122, 145, 29 and 4 nets (median two, not the book's three); the x·tanh layer (p = 2) in
# 170, 119, 9 and 2 (median one, not the book's two); the p = 1 layers lie on one line in 276 (sigmoid), 187 (tanh)
# and 220 (softplus) of their 300 nets. The tanh layer, looked at at epoch 1400, has no block at all in 83 of them:
# there its weights have lost the line they were on earlier (on design seed 104 every tanh net was on one line at
# epoch 900, and at 1400 its weights had shrunk and spread out again). So the count still follows the activation,
# but in the order of its lines rather than the book's exact numbers.
#
# **The check.** Counted over the nets of the three p = 1 layers together, more than half lie on exactly one
# line; and each p ≥ 2 layer (x²·tanh, x·tanh) has a larger share of its nets on two or more lines than the p = 1
# layers have. Designed on seeds 100–139 (where it held on all 40, the smallest margin 33%); validated once on
# seeds 0–19: it held on all 20 (median margin 56%, the smallest 24%). The negative control: the same nets from the
# usual scale std 1/√18 (the linear regime of the book's phase diagram), where no two neurons of any layer come to
# share a line. What stays unchecked in 图8.11: the book's exact counts — three lines for the x²·tanh layer, two
# for the x·tanh layer — and the ordering between those two layers (the x²·tanh layer has the larger share of nets
# on more than one line on 15 of the 20 validation seeds, the x·tanh layer on 3, a tie on 2), and one line in every
# single net of the p = 1 layers.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_residual_line_blocks(residual_blocks))

# %% [markdown]
# By the epochs of the book's panels the loss has dropped only 2–11% (the initial stage of 图8.9): the condensation
# seen here happens before the net fits anything.

# ## 3. Dropout (§8.4)
#
# Dropout multiplies each hidden output by 1 + η_k with η_k = (1−p)/p with probability p and −1 with
# probability 1 − p; **p is the keep probability** (torch's `Dropout` takes the drop probability 1 − p).
# For the loss ½(f − y)² the expected dropout risk is E_η R_S^drop = R_S + R₁ with (8.5)
# R₁ = (1−p)/(2np) Σ_i Σ_j (a_j h_j(x_i))², a penalty on every neuron's output.
#
# Setting of 图8.12 (Zhang & Xu): target ½ReLU(−x − ⅓) + ½ReLU(x − ⅓) on 8 points, m = 1000 as in the book, ReLU,
# a, w ~ N(0, 1), α = √m — the NTK scaling, γ = ½, i.e. the **linear regime** of chapter 7 — Adam. One
# ensemble trains p = 1 and p = 0.9 side by side. The book's learning rate is 10⁻³ (the full profile: 50 000
# steps); the quick profile takes 10 000 steps at 2.5·10⁻³. Adam moves each weight by about lr per step, so
# this covers roughly the way of 20 000 steps at 10⁻³ (at m = 500, on seeds 100–104, the RD ratio below came
# out within −10% to −2% of that run's, and the occupied fractions the same or lower). The width is the
# book's: at m = 500 (an earlier quick setting) the RD ratio of the check below fell short of 5 on 2 of the 10
# seeds 100–109 in either setting — without dropout RD shrinks like 1/√m (the linear regime), so the
# contrast is clearer at m = 1000 (6.6–13.8 on those seeds).

# %%
M_DROP, KEEP = 1000, 0.9
drop = ch8.run_dropout_relu(width=M_DROP, keep=KEEP, steps=pick_steps(quick=10_000, full=50_000, every=1250, smoke=200),
                             lr=pick(quick=2.5e-3, full=1e-3), n_masks=pick(quick=40_000, full=200_000, smoke=4_096),
                             seed=seed)
print(f"R_S = {drop.r_s:.5f}, R_1 = {drop.r_1:.5f}, Monte Carlo E R_drop = {drop.mc_mean:.5f} "
      f"± {drop.mc_se:.5f}")

# %% [markdown]
# The check of (8.5): the Monte-Carlo mean over masks (float64, on the trained dropout net) differs from
# R_S + R₁ by at most 3 of its standard errors.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_risk(drop))

# %%
drop_net, drop_hist, x8, y8 = drop.net, drop.hist, drop.x, drop.y
grid8 = torch.linspace(-1, 1, 401).reshape(-1, 1)
with torch.no_grad():
    out8 = drop_net(grid8).numpy()
names = ("p = 1", f"p = {KEEP}")
fig, axes = panels(6, width=2.9, height=2.6, nrows=2)
for k, name in enumerate(names):
    axes[0].semilogy(drop_hist.steps, drop_hist["risk"][:, k], label=name)
    axes[1].plot(grid8.ravel(), out8[k], label=name)
    a, w = drop_net.a.detach()[k].numpy(), drop_net.w.detach()[k].numpy()
    cond.plot_feature_scatter(axes[2 + k], a, w, a0=drop_net.a0[k].numpy(), w0=drop_net.w0[k].numpy(),
                              title=f"{name}: RD = {drop.rd[k]:.3f}")
    top = cond.carrying_mask(cond.amplitude(a, w), 0.5)
    ch8.plot_cosine_heatmap(axes[4 + k], w[top], title=f"{name}: cos of top-A neurons")
axes[0].set_title("R_S (no dropout at evaluation)")
axes[0].legend()
axes[1].plot(x8.ravel(), y8, "*", ms=8, color="k")
axes[1].set_title("outputs")
axes[1].legend()
plt.show()
print({names[k]: f"{drop.clusters[k]} clusters, {drop.occupied[k]:.0%} of 36 angular bins" for k in range(2)},
      "(neurons carrying half the amplitude)")

# %% [markdown]
# The check of 图8.12: RD with dropout > 5 × RD without; the neurons carrying half of the amplitude occupy
# fewer than 50% of 36 angular bins with dropout and more than 80% without.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_condenses(drop))

# %% [markdown]
# Without dropout the net interpolates the 8 points while its input weights hardly move (RD ≈ 0.02-0.05):
# the linear regime, neurons spread over every orientation. With dropout the R₁ penalty keeps working after
# the data are fitted: the input weights travel an order of magnitude farther, and the neurons that carry
# half of the total amplitude gather on a handful of orientations (blocks in the sorted cosine heat map).
# The collapse is partial at this budget — the small neurons still sit where they started; 图8.12–8.13
# train much longer.
#
# ### 图8.13: a tanh net, with and without dropout
#
# Target f(x) = tanh(x − 6) + tanh(x + 6) on 10 evenly spaced points of [−10, 10]; a two-layer tanh net,
# m = 500 (book 1000), again in the linear regime (a, w ~ N(0, 1), α = √m), Adam lr 10⁻³; p = 1 and
# p = 0.9, three initialisations each. The same ensemble also trains, for each initialisation, the net of
# 图8.14 below (a small initialisation without dropout): nine nets in one batched computation (the figure
# shows the first initialisation). (The book's text of 图8.13 also mentions a three-layer net with dropout
# after both hidden layers; it follows in its own section after 图8.14.) We compare the fits by their
# **total variation** (全变差) TV(f) = ∫|f′(x)|dx on [−10, 10], measured on a grid of 2001 points: the target
# rises monotonically from −2 to 2, so TV(f*) ≈ 4; every extra wiggle of a fit adds to its TV. The claim
# uses the mean over the three initialisations (a single net occasionally lands at a ratio near ½).

# %%
fit13 = ch8.run_tanh_dropout(keep=KEEP, trials=pick(quick=3, full=3, smoke=2), width=pick(quick=500, full=1000),
                              steps=pick_steps(quick=5_000, full=50_000, every=500, smoke=100), seed=seed)
x13, y13, grid13 = fit13.x, fit13.y, fit13.grid
tv_each, tv_target = fit13.tv, fit13.tv_target  # tv_each: (trial, 3): p = 1, p = 0.9, small init
risk13, zero_risk13 = fit13.final_risk, fit13.zero_risk
fig, axes = panels(5, width=2.6, height=2.5)
ch8.plot_dropout_fits(axes, fit13, names, fit13.a, fit13.a0,
                      [f"{n}: RD = {rd:.2f}" for n, rd in zip(names, fit13.rd)])
plt.show()
print(f"TV of the target {tv_target:.2f}; of the fits (per initialisation): p = 1 {np.round(tv_each[:, 0], 2)}, "
      f"p = {KEEP} {np.round(tv_each[:, 1], 2)}; mean final R_S {risk13[0]:.1e} / {risk13[1]:.1e} "
      f"(zero function: {zero_risk13:.2f})")

# %% [markdown]
# The check of 图8.13: |TV̄ − TV*| with dropout (mean TV over the three initialisations) is less than half of
# that without, and the larger of the two mean final training risks is below 2% of the zero function's.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_simpler_fit(fit13))

# %% [markdown]
# Without dropout the net interpolates the 10 points with extra oscillations between them (图8.13(b)); with
# p = 0.9 the fit is a smooth sigmoid-like step pair whose total variation is close to the target's
# (图8.13(c)). The price at this budget is visible too: the dropout net keeps a small training error
# (R_S ≈ 10⁻², where the p = 1 nets reach 10⁻⁵–10⁻³), since R₁ keeps shrinking every neuron's output.
# The feature scatters above do not yet show a clear condensation after 5 000 Adam steps at lr 10⁻³: the
# amplitude-carrying neurons of both nets still cover most orientations, as at their initialisation (the book
# trains far longer). The next run trains long enough to show the book's panels (d,e).
#
# ### 图8.13(d,e): dropout condenses the features
#
# The book's point in panels (d,e) is the parameters: from the same large (linear-regime) initialisation, the
# input weights of the net trained without dropout end close to where they started, while with dropout the
# non-zero neurons gather on a few discrete orientations — condensation (凝聚). Each neuron is a point
# (orientation atan2(b, w), amplitude A = |a|‖(w, b)‖ over the largest A), at the start (cyan) and at the end
# (red). Here two nets start from the **same** initialisation (a, w ~ N(0, 1), α = √m, m = 500; the book:
# 1000), see the same 10 points and train side by side with Adam, p = 1 and p = 0.9; they differ in dropout
# alone. The quick profile takes 6 000 steps at lr 10⁻² (Adam moves each weight by about lr per step, so this
# covers about the way of the book's 6·10⁴ steps at 10⁻³; the full profile: m = 1000, lr 10⁻³, 60 000 steps).
# Condensation is measured as in 图8.12: the fraction of 36 angular bins occupied by the neurons that carry
# half of the total amplitude.

# %%
feat = ch8.run_tanh_features(keep=KEEP, width=pick(quick=500, full=1000), lr=pick(quick=1e-2, full=1e-3),
                             steps=pick_steps(quick=6_000, full=60_000, every=600, smoke=200), seed=seed)
fig, axes = panels(4, width=2.9, height=2.6)
for k, name in enumerate(names):
    cond.plot_feature_scatter(axes[k], feat.a[k], feat.w[k], a0=feat.a0[k], w0=feat.w0[k],
                              title=f"({'de'[k]}) {name}: {feat.occupied[k]:.0%} of the bins")
    top = cond.carrying_mask(cond.amplitude(feat.a[k], feat.w[k]), 0.5)
    ch8.plot_cosine_heatmap(axes[2 + k], feat.w[k][top], title=f"{name}: cos of top-A neurons")
plt.show()
print({names[k]: f"{feat.occupied[k]:.0%} of 36 bins (start {feat.occupied0[k]:.0%}), {feat.clusters[k]} clusters, "
      f"RD {feat.rd[k]:.2f}, R_S/R_S(zero) {feat.final_risk[k] / feat.zero_risk:.1e}" for k in range(2)})

# %% [markdown]
# The check of 图8.13(d,e): the dropout net fits the data (R_S below 2% of the zero function's), and the neurons
# carrying half of its amplitude occupy fewer than 50% of the 36 bins (图8.12's threshold) and fewer than half
# as many as those of the same net trained without dropout. Its negative control is that net: the identical
# run with p = 1.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_tanh_features(feat))

# %% [markdown]
# Without dropout the large neurons stay spread over the orientations, as they started (their occupied
# fraction drops only a little: Adam at lr 10⁻² moves them some way), and they fit the points far more closely
# than the dropout net. With dropout the neurons carrying half of the amplitude gather in (on seeds 100–109
# always) four narrow clusters, at
# atan2(±6, 1) ≈ ±1.41 and atan2(±6, −1) ≈ ±1.73: these are the teacher's two neurons tanh(x ∓ 6), each with
# its sign-flipped twin (tanh is odd, so (w, b, a) and (−w, −b, −a) give the same output). Dropout has found
# the two-neuron function behind the data, the width-2 net that the condensed width-500 net is equivalent to.
#
# ### 图8.14: dropout, a fast route to condensation
#
# A small initialisation condenses the neurons too (§8.1–8.3), but at a price: the net starts next to the
# saddle θ = 0 and its loss stalls on plateaus (图8.2). The book compares the two routes (图8.14): dropout
# from the usual initialisation brings the loss down far sooner than training from a small initialisation,
# and its output is smooth. The third net of each initialisation above is the small one: every parameter
# ~ N(0, 10⁻⁶) (std 10⁻³, as in §1) with α = 1 — the condensed regime of chapter 7 — same data, same Adam,
# no dropout.

# %%
first13 = ch8.fit_steps(fit13)  # (trial, 3): first step with R_S < 2% of the zero function's, NaN if never
fig, axes = panels(3, width=3.0, height=2.5)
for k, (name, color) in enumerate(((f"normal init, p = {KEEP}", "#1f77b4"), ("small init, p = 1", "#ff7f0e")),
                                  start=1):
    axes[0].semilogy(fit13.steps, fit13.risk[:, k] / zero_risk13, color=color, label=name)
    axes[k].plot(grid13.ravel(), ch8.target_8_13(grid13).ravel(), "--", color="0.4")
    axes[k].plot(grid13.ravel(), fit13.outputs[k], color=color)
    axes[k].plot(x13.ravel(), y13, "*", ms=7, color="k")
    axes[k].set_title(f"{name}: TV = {tv_each[0, k]:.2f}", fontsize=9)
axes[0].axhline(ch8.FIT_SHARE, color="0.5", ls=":", label="2% of the zero function's")
axes[0].set(xlabel="step", title="R_S / R_S(zero function)")
axes[0].legend(fontsize=7)
plt.show()
print(f"first step below 2%: dropout {first13[:, 1]}, small init {first13[:, 2]} (nan: not within the run), "
      f"p = 1 {first13[:, 0]}; small init's final R_S / R_S(zero) {risk13[2] / zero_risk13:.3f}")

# %% [markdown]
# **The check of 图8.14.** The time to fit is the first recorded step at which R_S falls below 2% of the zero
# function's (the level at which 图8.13's claim calls the data fitted). The claim: 3 × the slowest dropout
# net's time is less than the fastest small-initialisation net's; a small-init net that does not get there
# within the run (here none does: within a few dozen steps they reach a plateau at R_S ≈ 0.11 of the zero
# function's and stay there — a condensed fit that is nearly a straight line, TV < TV*) is counted at the
# run's length T = 5 000, a lower bound of its
# time. The book trains on to a loss of order 10⁻⁵, which dropout reaches within about 10⁵ epochs and the
# small initialisation only after many more; at our length the claim is "at least 3 times sooner" to the 2%
# level, not the book's ratio. Note what it does not say: the p = 1 net from
# the usual initialisation is as fast as the dropout net (its times are printed above), but it fits with the
# oscillating, uncondensed output of 图8.13(b); dropout is fast *and* condenses the output. The negative
# control replaces the small initialisation by the usual one, where the claim fails.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_fast_route(fit13))

# %% [markdown]
# ### 图8.13, the three-layer net: dropout after both hidden layers
#
# The book runs 图8.13 on a three-layer net too, with a dropout layer between the two hidden layers and one
# after the last hidden layer, and shows the same two things: without dropout the output oscillates between
# the points, with dropout it is smooth, and the features of the first layer gather on a few orientations
# with dropout and stay near their start without. Our version: a 1-m-m-1 tanh net in the linear regime
# (every parameter ~ N(0, 1), each layer after the first scaled by 1/√m, as the two-layer net's α = √m), m = 100
# (book 1000), Adam at lr 2·10⁻² for 4 000 steps (book 10⁻³; a width of 100 and the larger rate keep the
# run to a few seconds), p = 1 and p = 0.9, three initialisations, the two nets of each starting from the
# same parameters: six nets in one batched computation. As in the book only the first layer's input weights
# w_j = (w_j, b_j) are drawn; a neuron's amplitude is A_j = ‖W⁽²⁾_j‖·‖w_j‖, the norm of its outgoing weights
# in place of the two-layer net's |a_j|.

# %%
deep = ch8.run_three_layer_dropout(keep=KEEP, trials=pick(quick=3, full=3, smoke=2),
                                   width=pick(quick=100, full=500), lr=pick(quick=2e-2, full=1e-2),
                                   steps=pick_steps(quick=4_000, full=40_000, every=400, smoke=100), seed=seed)
fig, axes = panels(5, width=2.6, height=2.5)
ch8.plot_dropout_fits(axes, deep, names, deep.out_norm, deep.out_norm0,
                      [f"{n}: {c} clusters" for n, c in zip(names, deep.clusters[0])])
plt.show()
print(f"three-layer nets, per initialisation: TV p = 1 {np.round(deep.tv[:, 0], 2)}, p = {KEEP} "
      f"{np.round(deep.tv[:, 1], 2)} (target {deep.tv_target:.2f}); clusters {deep.clusters.tolist()}; "
      f"occupied bins at the end {np.round(deep.occupied, 2).tolist()}, "
      f"at the start {np.round(deep.occupied0[:, 0], 2)}")

# %% [markdown]
# Two checks on these six nets, the two-layer claims' tests on the three-layer run. The fit: |TV̄ − TV*| with
# dropout (mean over the three initialisations) is less than half of that without, and both fit the data
# (the larger mean final R_S below 2% of the zero function's). The features: the neurons carrying half of the
# first layer's amplitude fall into fewer than half as many orientation clusters with dropout as without, they
# occupy fewer than half of the 36 angular bins they occupied at the start, and the dropout nets fit the data.
# Their negative control is the same run with p = 1 in both nets of each pair.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_three_layer_simpler_fit(deep))

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_three_layer_features(deep))

# %% [markdown]
# The three-layer nets behave like the two-layer ones: without dropout the output overshoots between the
# points, with dropout it follows the target's two steps, and the first layer's large neurons gather on about
# four orientations — the teacher's two neurons tanh(x ∓ 6) with their sign-flipped twins — where without
# dropout they stay spread over 8–16 clusters. The bounds (½ in each comparison, as in the two-layer claims)
# were set on seeds 100–107; on the validation seeds 0–19 both claims hold on 20 of 20 (smallest margins 0.07
# and 0.08, medians 0.36 and 0.25). Not checked: the book's width (1000) and rate (10⁻³, about 10⁵ steps) and the
# second hidden layer's features, which the book does not draw.
#
# **At the full profile** (m = 500, lr 10⁻², 40 000 steps; the book: m = 1000, lr 10⁻³, about 10⁵ steps) both claims
# hold on seeds 0, 1 and 2: |TV̄ − TV*| 0.05, 0.06 and 0.07 with dropout against 1.96, 1.49 and 0.90 without; the
# dropout nets' large first-layer neurons lie on 3.7, 4.0 and 3.7 orientation clusters against 13.7, 13.3 and 14.7
# without, on 0.22, 0.21 and 0.22 of the angular bins (start 1.0, 0.99 and 0.96), R_S ≤ 0.07 % of the zero function's. The full profile first trained 10 000 steps,
# a setting never designed: there the fit claim held and the features claim failed on both seeds (19.0 and 19.7
# clusters with dropout against 21.3 and 19.7 without) — at m = 500 the features gather more slowly than at m = 100,
# and 10 000 steps stop before they do. 40 000 steps was designed on seeds 100 and 101 (the only change; 3–4 clusters
# with dropout against 12–16 without) and validated on the fresh seeds 500–505, where both claims hold on all six
# (clusters 4.0 against 11.0–14.7, occupied 0.21–0.22; fit margins ≥ 0.57); seeds 0 and 1 were run again with it
# after that, and seed 2 ran with it from the start. The book's own width and rate are not measured.

# %% [markdown]
# ### 图8.16: dropout and the sample size
#
# The book fits the same two-neuron teacher f* = tanh(x − 6) + tanh(x + 6) (6 free parameters) with a
# width-1000 student and reports that with dropout the test error becomes small once n > 6, without dropout
# not: dropout lowers the sample size needed, towards the optimistic estimate (乐观样本量, chapter 10). Our
# version: n evenly spaced samples of [−10, 10], students in the linear regime as above (m = 200 in the quick
# profile, 1000 in the full one), Adam, p = 1 and p = 0.9, test error ½⟨(f − f*)²⟩ on 401 points of [−10, 10].
# An earlier quick setting (3 000 steps at lr 10⁻³, the rate of 图8.13's run) contradicted the book: the dropout
# students were no better at n = 6 and worse from n = 10 on, their R₁ penalty still biasing the fit. Trained
# as long as the feature run above needs to condense (4 000 steps at lr 10⁻², about the way of 4·10⁴ steps at
# 10⁻³; the full profile: 50 000 steps at 10⁻³, the mean over 10 initialisations as in the book), the
# dropout students condense onto the teacher and the book's picture appears. All students — every n, p and
# initialisation — train as one batched ensemble, each on its own samples.

# %%
SIZES = pick(quick=(4, 6, 8, 9, 12), full=(2, 4, 6, 8, 9, 10, 12, 16, 20), smoke=(4, 8, 9))
err16 = ch8.run_dropout_sample_size(SIZES, keeps=(1.0, KEEP), trials=pick(quick=1, full=10, smoke=2),
                                     width=pick(quick=200, full=1000), lr=pick(quick=1e-2, full=1e-3),
                                     steps=pick_steps(quick=4_000, full=50_000, every=10), seed=seed)  # (len(SIZES), 2)
fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
for k, name in enumerate(names):
    ax.semilogy(SIZES, err16[:, k], "o-", label=name)
ax.axvline(6, color="0.5", ls=":", label="6 teacher parameters")
ax.set_xlabel("sample size n")
ax.set_ylabel("test error")
ax.legend()
plt.show()
print({n: {name: f"{e:.4f}" for name, e in zip(names, row)} for n, row in zip(SIZES, err16)})

# %% [markdown]
# The check of 图8.16: at n = 8 and 9, just above the teacher's 6 parameters, the mean test error of the
# dropout students is below 2% of the zero function's (½⟨f*²⟩ ≈ 0.70) and below a quarter of the students'
# without dropout. Its negative control runs the same students with p = 1 in both columns.

# %%
# NBVAL_CHECK_OUTPUT
show(ch8.check_dropout_sample_size(err16, SIZES))

# %% [markdown]
# At n = 8–9 the students without dropout interpolate the samples with the oscillating fit of 图8.13(b) and
# miss the teacher between them; the dropout students have condensed onto the teacher's two neurons and
# recover it. With fewer samples (n ≤ 6) neither recovers it, with more (n = 12) the students without dropout
# come within about 10⁻² too: what dropout changes is the sample size at which the error drops.
# The book's figure has two rows only, p = 1 and p = 0.9 (its source, Zhang & Xu 2022, Fig. 8, is a heat map
# over n = 1–14), so no other keep probability is left out. In it the students without dropout stay well above
# the dropout students up to n = 14; ours (m = 200, 4 000 steps) reach about 10⁻² from n = 10 on (design seeds
# 100–102), so the claim checks the window n = 8, 9 and the larger n remain unchecked.
#
# ## 4. Explorer
#
# Change the initial scale, activation, keep probability p and width; the scrubber moves through 41
# snapshots of training (polar scatter, output, loss). It starts from the run of §1 (shown without training
# it again); every other setting trains a tenth of the GD steps with a larger step size η, over the same
# training time t = η·step (about 1 s on one core; each snapshot's title gives t, the step and η). Try init std 1 (linear regime: no condensation) and then p = 0.8 with it.

# %%
explorer = ch8.make_explorer(seed=seed, steps=STEPS_1, initial=proc)
explorer

# %% [markdown]
# ## 5. Exercises (习题)
#
# **习题19.** In 图8.3 some (grey) neurons never move. Which ones, and why? Write the gradient of R_S with
# respect to (a_k, w_k, b_k) for a neuron with w_k x_i + b_k ≤ 0 at every training point and enter how far
# such a neuron moves in the GD run of §1.
#
# Worked solution: run `from companion.solutions.ch08 import solution; solution(19)` (on the site: the "Solution" toggle below).

# %%
answer19 = None  # ← your number: the total distance a dead neuron travels
feedback("习题19", answer19, lambda v: float(v) == 0.0,
         "at every training point σ'(w_k x_i + b_k) = 0 and σ(w_k x_i + b_k) = 0: what are ∂R_S/∂a_k and ∂R_S/∂w_k?");

# %% [markdown]
# **习题13 / 20(c).** Quantify condensation: compare the three measures used here (orientation clusters of
# the amplitude-carrying neurons, the top eigenvalue of the direction Gram, the cosine heat map) on the
# explorer's nets for init std 10⁻³ and 1. Which one separates the regimes best at m = 500?
#
# Worked solution: run `from companion.solutions.ch08 import solution; solution(13)` (on the site: the "Solution" toggle below).
#
# ## Summary
#
# * Small initialisation ⇒ the loss stalls more than once (图8.2); the neurons condense on one orientation
#   during the plateau, where the output is one neuron's ramp, then split as the fit takes on the target's
#   kinks (图8.3–8.4); dead ReLU neurons stay where they started. The kernels of a convolution
#   layer condense from a small initialisation and not from the usual one (图8.5): on the 8×8 digits onto about
#   two lines; with the digits interpolated to 12×12 (smooth strokes, as on MNIST's grid) kernels and outputs
#   condense onto the book's one line, two opposite directions. In a small residual CNN trained from the default
#   initialisation the last layer's kernels and outputs condense while the first layer's keep most of their
#   effective lines
#   (图8.6, on colour photograph patches).
# * The initial stage is a loss plateau (图8.9); in it, p = 1 activations line up on one line (图8.10), and read as
#   blocks of the heat map the median x·tanh net lies on two lines (x²·tanh's three lines do not reproduce robustly);
#   the number of directions is bounded by 2p, p the activation's multiplicity, and x·tanh and x²·tanh use more
#   directions than p = 1
#   activations (1-D version); a residual net condenses in every layer (图8.11; its per-layer line counts 3/2/1/1/1
#   are an exploration).
# * Dropout adds R₁ (8.5), a penalty on each neuron's output, verified by Monte Carlo; it drives a
#   linear-regime net's features to move, the route by which it induces condensation (§8.4).
# * On a tanh net dropout gives a simpler fit, with a total variation near the target's (图8.13), and
#   condenses its features onto the teacher's two neurons, where the same net without dropout keeps them spread
#   (图8.13(d,e)); it gets there far sooner than a small initialisation, which stalls on a plateau (图8.14): condensation
#   without the price of the saddle. With 8–9 samples of a two-neuron teacher, dropout students recover it
#   and students without dropout do not (图8.16).
# * The book's p in §8.4 is the keep probability; "96^{−8}" in 图8.5 is most likely a variance.
