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
# # Chapter 11 — Flatness of solutions and the Edge of Stability (解的平坦性)
#
# *Companion to 深度学习现象导论, chapter 11.*
#
# **The phenomenon.** Minima of a network's loss differ in **flatness (平坦性)**: around a flat minimum
# the loss changes slowly, around a **sharp (尖锐)** one quickly. The **sharpness (锐度)** is the
# largest eigenvalue λ_max of the Hessian (Hessian 矩阵) of the training loss. Small batches, the
# peculiar structure of SGD noise and dropout all steer training towards flatter minima; plain
# gradient descent instead drives the sharpness *up* to its stability limit 2/η and keeps it there —
# the **Edge of Stability (稳定边缘, EoS)**.
#
# | section | book | claim checked in this run |
# |---|---|---|
# | 1 | (11.8)–(11.11), 图11.1 | GD on ½λx² converges iff η < 2/λ and oscillates in sign iff η > 1/λ |
# | 2 | 图11.8, 表11.4 | full-batch GD: the sharpness rises to 2/η and hovers there (two η), the loss still falls, non-monotonically; the final sharpness within 10% of 2/η for six η, following 2/η across them, between 0.9 and 1.3 times 2/η over η = 0.005–0.1, a factor 20, and within 10% of 2/η for at least 5 of the book's six η = 0.01–5, a factor 500 (表11.4) |
# | 3 | 表11.1, 图11.3 | smaller batches end at flatter minima (sharpness ordering) and, over an ensemble, at a higher mean test accuracy |
# | 4 | (11.4)–(11.7), 图11.4, 图11.5 | SGD noise is aligned with the Hessian, Tr(HΣ) ≫ Tr(H)Tr(Σ)/D, and beyond what its low-rank span alone gives; its variance falls with the directional flatness, and, measured as Feng & Tu do (PCA of the SGD weight trajectory), as F_i^−ψ with ψ ≈ 4 at three (B, η) (图11.5); SGD ends flatter than isotropic Langevin noise of the same size, and its ensemble's mean test accuracy is higher than GD's and than each of 表11.2's three GLDs' (图11.4; above Zhu et al.'s two Hessian-aligned GLDs, which the figure does not show, only on some seeds: an exploration) |
# | 5 | 图11.6, 表11.3, 图11.7(a) | dropout finds flatter minima than the plain network at the same training loss (sharpness and filter-normalised profiles); on a digits classifier (the book's FNN on MNIST) both fit the training set, and dropout's solutions are flatter and more accurate on the test set |
# | 6 | 习题11 | rescaling a ReLU layer leaves the function unchanged but changes λ_max |
#
# Then an **explorer** (η, batch size, keep probability, width) and **exercises (习题)**.
#
# The tables and figures of the chapter are cited from other papers (Keskar et al. 2016 on VGG/CIFAR,
# Zhu et al. 2018, Feng & Tu 2021 on MNIST, Wu et al. 2018, Cohen et al. 2020); here the *phenomena* are
# reproduced on sklearn's 8×8 digits with small tanh MLPs, not their numbers.
#
# Each claim prints one ✔/✘ line and a `measured:` line with its conditions and margin; its check lives in
# `companion.experiments.ch11_flatness` (ids `ch11.…`), where the negative-control tests run it too.
#
# **Run time.** Quick profile (default): 32 s on a quiet 2-core machine (AMD EPYC, `benchmarks/reproduce_timing.py`). Full
# profile (`COMPANION_PROFILE=full`): more samples and steps, a few minutes:
# 304 s on an NVIDIA H200 GPU shared with the other eleven chapters (one CPU thread each, seed 0),
# where 10 of its 12 claims held (not 表11.1 and 图11.4: see section 3; measured before the 表11.4 claim and the
# de-duplicated 图11.4 and §11.3.1 claims); 219 s per seed on the 2-core CPU, where on seeds 0–4 every claim held on
# all five except the same two, on none (`robustness/report-full.json`, `docs/full-profile.md`).

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
from IPython.display import HTML

from companion.core.data import digits
from companion.experiments import ch11_flatness as fl
from companion.kit.claims import show
from companion.kit.config import pick, pick_steps, settings
from companion.kit.plots import offline_jshtml, panels
from companion.kit.seeds import active_seed, generator

print(settings().describe())
seed = active_seed()

# %% [markdown]
# ## 1 · Curvature and the stability of gradient descent ((11.1), (11.8)–(11.11), 图11.1)
#
# For f(x) = ½λx² (11.8), GD reads x_{t+1} = (1 − ηλ)x_t (11.9): it converges iff |1 − ηλ| < 1, i.e.
# 0 < η < 2/λ (11.10). For 1/λ < η < 2/λ the factor 1 − ηλ is negative: the iterate still converges but
# **flips sign every step** — the oscillation that, in a network, is the signature of the Edge of
# Stability. In many dimensions every eigen-direction of the Hessian obeys its own condition, so the
# sharpest one decides: η < 2/λ_max (11.11). The book's example 5x² + y² has H = diag(10, 2) (11.1):
# below, GD on it with η·λ_max = 0.5, 1.5, 1.9 and 2.1.
#
# (The book says that beyond 2/λ the optimisation "will diverge"; exactly at η = 2/λ it does neither —
# the iterate bounces between ±x₀ forever.)

# %%
LAMBDAS = (1.0, 2.0, 10.0)
ETA_LAMBDA = np.array([0.1, 0.5, 0.9, 1.1, 1.5, 1.9, 2.1, 2.5])   # η·λ
sweep = fl.quadratic_sweep(LAMBDAS, ETA_LAMBDA, steps=400)   # converged: |x_400| < 1e-3; flips: first 49 steps

fig, axes = panels(2, width=4.2)
for r in (0.5, 1.5, 1.9, 2.1):
    axes[0].plot(fl.gd_on_quadratic(10.0, r / 10, steps=20), "o-", ms=3, label=f"eta*lam={r:g}")
axes[0].set(xlabel="step t", ylabel="x_t", title="GD on 5x^2 (lam = 10)", ylim=(-3, 3))
axes[0].legend()
print("regimes for lam = 10:", {r: fl.gd_regime(10.0, r / 10) for r in (0.5, 1.0, 1.5, 2.0, 2.1)})
axes[1].semilogy(ETA_LAMBDA, np.abs(np.abs(1 - ETA_LAMBDA)), "o-")
axes[1].axhline(1, color="k", ls="--", lw=1)
axes[1].set(xlabel="eta * lambda", ylabel="|1 - eta*lambda|", title="contraction factor per step")
plt.show()

# %% [markdown]
# The claim runs GD on ½λx² for λ = 1, 2, 10 and eight values of η·λ (24 cases) and counts the cases whose
# behaviour disagrees with (11.10): converging although η ≥ 2/λ (or not although η < 2/λ), flipping sign
# although η ≤ 1/λ (or not although η > 1/λ). Both counts must be 0. (The negative control runs the same
# sweep with heavy-ball momentum, whose limit is 2(1 + β)/λ: there the count is not 0.)
#
# An animation of GD on 5x² + y² (η = 0.05, 0.15, 0.19, 0.21; λ_max = 10, so 2/λ_max = 0.2): the path
# zig-zags along the sharp x-axis once η > 1/λ_max = 0.1 and escapes once η > 0.2.

# %%
with plt.rc_context({"savefig.dpi": 60}):  # small frames: the animation is stored in the notebook
    animation = HTML(offline_jshtml(fl.quadratic_animation((0.05, 0.15, 0.19, 0.21), steps=14), default_mode="once"))
animation

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_quadratic_stability(sweep))

# %% [markdown]
# ## 2 · The Edge of Stability (图11.8, 表11.4)
#
# Full-batch GD on the first n digits (standardised pixels), a tanh MLP 64-64-64-64-10 with every
# parameter ~ N(0, 1/fan_in), the loss R_S = ½·(1/n)Σ‖f(x_i) − y_i‖² on one-hot targets. The sharpness
# λ_max is tracked **during** training: every few steps a power iteration (幂迭代) on Hessian-vector
# products, warm-started from the previous eigenvector, so that each measurement costs a handful of
# gradient evaluations (`companion.core.landscape.top_eigenvalue`).
#
# Eight learning rates: η = 0.1, whose limit 2/η = 20 lies far above anything this network reaches in the
# run; η = 0.2, whose limit 10 it reaches on some seeds and is still approaching on others when the run ends;
# and the six η = 0.25, 0.3, 0.35, 0.4, 0.45, 0.5 of our 表11.4, whose limits 8 … 4 it reaches (at η = 0.6 GD
# diverges on some seeds). The claim of 图11.8 uses η = 0.3 and 0.4, which reach their edge early in every
# seed; η = 0.25 is also the full-batch run of section 3.

# %%
N_TRAIN = pick(quick=128, full=512)
WIDTHS = [64, 64, 64, 64, 10]
EOS_STEPS = pick_steps(quick=800, full=3000, every=10)  # TRACK_EVERY below
EOS_ETAS = (0.3, 0.4)     # 图11.8
TABLE_ETAS = fl.TABLE_11_4_ETAS   # 表11.4: 0.25, 0.3, 0.35, 0.4, 0.45, 0.5
BS_ETA = 0.25            # also the full-batch run of section 3
SMALL_ETAS = (0.1, 0.2)  # edges 2/η = 20 and 10: not reached (0.1), or only on some seeds (0.2), within the run
TRACK_EVERY = pick(quick=20, full=10)
data = digits(N_TRAIN, None, standardise=True)   # test: the other 1669 images
y, y_test = data.one_hot(), data.one_hot(test=True)
# every run of sections 2–4 starts from one initialisation, the stream (seed, 1) (`fl.train_fresh`, cached)
eos = {eta: fl.train_fresh(WIDTHS, data.x, y, seed=seed, batches=2, eta=eta, steps=EOS_STEPS, track_every=TRACK_EVERY)
       for eta in (*SMALL_ETAS, *TABLE_ETAS)}

fig, axes = panels(2, width=4.6)
fl.plot_sharpness(axes[0], list(eos.values()), title="sharpness under full-batch GD")
axes[0].set_ylim(0, 2 / min(SMALL_ETAS) * 1.1)
for i, run in enumerate(eos.values()):
    axes[1].semilogy(run.steps, run.loss, color=f"C{i}", lw=0.8, label=f"eta={run.eta:g}")
axes[1].set(xlabel="step", ylabel="training loss", title="loss: falling, but not monotonically")
axes[1].legend()
plt.show()

print("表11.4 analogue — final sharpness against the prediction 2/eta")
print(f"{'eta':>6} {'final lambda_max (median, last quarter)':>40} {'2/eta':>8} {'ratio':>6}")
for eta, run in eos.items():
    final = np.median(run.tail(0.25))
    print(f"{eta:6g} {final:40.3f} {2 / eta:8.3f} {final * eta / 2:6.3f}")
table_finals = [np.median(eos[eta].tail(0.25)) for eta in TABLE_ETAS]
print(f"log-log slope of final lambda_max against eta over the six eta = {fl.table_slope(TABLE_ETAS, table_finals):.3f} "
      "(2/eta: -1)")

# %% [markdown]
# The sharpness first drops (the outputs shrink from their random start), then **progressive
# sharpening (渐进锐化)** lifts it until it reaches 2/η (dashed lines in the run's colour); there it
# stops rising and hovers, while the loss keeps falling through short spikes — each spike is a brief
# excursion along the sharpest direction, which GD corrects by moving to a slightly flatter region.
# For η = 0.1 the limit 20 is never reached within the run: λ_max only sharpens. With η = 0.4 the
# sharpness at initialisation is already above 2/η: GD first throws the parameters to a flatter region
# (a "catapult"), then the same hovering follows.
#
# The book (quoting Wu et al. 2018) writes that "the learning rate and 2/λ_max are very close"; it means
# λ_max ≈ 2/η.

#
# Three claims on these runs. **Settling** (图11.8): for η = 0.3 and 0.4, the median of λ_max·η/2 over the
# last half of the run lies between 0.9 and 1.1 and its maximum there stays below 1.2. **Non-monotone
# descent**: from the first measurement at which λ_max ≥ 0.95·2/η (after any initial drop) the loss ends
# lower than it was there, with at least 5 increases on the way; a run that never reaches its edge fails
# this claim. **The table: final sharpness ≈ 2/η** (表11.4, Wu et al. 2018: 39.3 against 40 at η = 0.05,
# 19.6 against 20 at η = 0.1, 3.9 against 4 at η = 0.5): for each of the six η, the median of λ_max·η/2 over
# the last quarter of training lies between 0.9 and 1.1, and the six final sharpnesses follow the prediction
# row 2/η — the slope of log λ_final against log η lies between −1.1 and −0.9. (Below the edge the final
# sharpness hardly depends on η: the claim's negative control, six η = 0.02 … 0.08 whose edges a small net
# never reaches, gives a slope near 0.) On seeds 0–19 it held on 20 of 20 (margin at least +0.076, median +0.082:
# every final λ_max·η/2 lay between 0.995 and 1.017, every slope between −1.009 and −0.979).
#
# Not every learning rate gets there, in the book either: FashionMNIST at η = 0.01 ends at 53.5, far below
# 200. Here η = 0.1 ends far below 20, and η = 0.2 below 10 on some seeds — the run is too short for
# progressive sharpening to reach so high a limit. (η = 0.2 was one of the table's six in an earlier version,
# an exploration that held on 16 of seeds 500–519: η = 0.2 ended at 0.87–0.89 of its edge on the other four.)

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_eos_settles([eos[eta] for eta in EOS_ETAS]))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_eos_loss_nonmonotone([eos[eta] for eta in EOS_ETAS]))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_eos_table([eos[eta] for eta in TABLE_ETAS]))

# %% [markdown]
# **表11.4 over the book's span of η.** The six η above span a factor 2 (edges 8 … 4); the book's span a factor
# 500 (0.01 … 5, edges 200 … 0.4). From a flat start, progressive sharpening takes this network to an edge of 20
# (η = 0.1) only after many thousands of steps, so a second setting reaches a wide span within seconds: a smaller
# tanh MLP 64-32-32-10 on the first 64 digits whose **output layer starts 12 times larger** than the others
# (N(0, 144/fan_in)), so that the network starts sharper (λ_max ≈ 1200) than every edge of the span. GD at a given
# η cannot stay where λ_max > 2/η (11.11): it is thrown out of the initial region ("catapult") until it finds one
# flat enough for its η, and then keeps fitting there — the dynamical-stability selection Wu et al. (2018) used to
# explain their table. Five η, the book's 0.01, 0.05 and 0.1 with 0.005 and 0.02: **a factor 20, edges 400 … 20**
# (the book's 0.5 … 5 are not run here: at η ≥ 0.2 this network either diverges or oscillates well below its edge).
# Each η from the same **5 initialisations** (the book: 5 repetitions), 600 steps of full-batch GD (full profile:
# 1200), all 25 runs one batched network (`fl.edge_span`), λ_max by batched power iteration every 50 steps and at
# every step of the last quarter.
#
# The claim: at every η, the final sharpness — per run the median, over the last quarter of training, of the mean
# of λ_max at two consecutive steps, then the median over the 5 initialisations — lies between 0.9 and 1.3 times
# 2/η. The band is asymmetric because the book (图11.8's text) says the sharpness hovers around 2/η "or slightly
# above it", and that is what these runs do at the larger η: GD settles into a period-2 oscillation across the
# sharpest direction, and at its iterates λ_max exceeds 2/η (design seeds 100–119: every η's median between 0.97
# and 1.26 of its edge, the largest η highest). The two-step mean is the orbit's own sharpness: its two iterates
# can sit at, say, 0.85 and 1.38 times 2/η, alternating, and λ_max at every 50th step alone (this check's first
# version) read whichever phase the run's parity gave — down to floating-point rounding, so that seed 0 held on the
# report's AMD EPYC and failed on an Intel Xeon (η = 0.1 at 1.40 of its edge). Changed after its results on seeds
# 0–19 were seen, the check is validated on seeds 500–519: 20 of 20 (margin at least +0.052, median +0.104; the
# tightest η is 0.1 or 0.05, at up to 1.23 of its edge), and 20 of 20 on 0–19 (Intel Xeon, 2026-12-05). Negative
# control: the same runs with SGD (batches of 8 of the 64 samples) in GD's place, Wu et al.'s contrast — SGD's noise
# keeps it away from the sharp edge, ending below 0.9 of 2/η at every η (0.35–0.83 at seed 0). What stays
# unchecked: η above 0.1 (the book's 0.5 … 5), and the book's own exception, FashionMNIST at η = 0.01 ending at
# 53.5, far below 200 — whether a run reaches its edge depends on how sharp the network can get, which this setting
# fixes by construction.

# %%
SPAN_STEPS = pick_steps(quick=600, full=1200, every=50)
span = fl.edge_span(fl.SPAN_ETAS, steps=SPAN_STEPS, seed=seed)
fig, axes = panels(2, width=4.6)
fl.plot_edge_span(axes, span, title="表11.4 over a span of eta")
plt.show()
print("表11.4 analogue over a span — final sharpness (median of 5 initialisations, range in brackets)")
print(fl.edge_table_text(span, width=15))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_eos_table_span(span))

# %% [markdown]
# **表11.4 at the book's six η.** The book's table runs η = 0.01, 0.05, 0.1, 0.5, 1, 5, edges 2/η from 200 down to
# 0.4, a factor 500. Two changes let the same small network run all six (`fl.edge_book`). First, the squared error
# is averaged over the 10 outputs as well (as torch's `MSELoss` does): every Hessian is divided by 10, and the output
# biases' own curvature, 1 with a sum over outputs, drops to 0.1 — below η = 5's edge of 0.4, where GD could not
# otherwise be stable at all. Second, each η has its own initial output scale, ×2.85/√η (28.5 at η = 0.01, 1.27 at
# η = 5; the book's runs are independent per η): every network starts **about 3 times sharper than its own edge**
# (2.3–3.5 times on design seeds 100–109), where (11.11) forbids GD to stay. The start is thus tied to 1/η by
# construction; what the run decides is the factor: GD ends near 1 times 2/η, not near its starting 3. (Started at
# half its edge instead, only η = 5 sharpened up to it on design seeds 100–101; η = 0.1, 0.5 and 1 stayed at 0.3–0.45
# of theirs for 2000 steps — this small network hardly sharpens progressively.) Each η from
# the same 5 initialisations (the book: 5 repetitions), 400 steps (full profile: 1200), all 30 runs one batched
# network, λ_max every 50 steps and at every step of the last quarter. The right panel adds the book's FashionMNIST
# row (open squares, "book").
#
# The claim, in the book's words "大部分情况下" (in most cases): for at least 5 of the 6 η the final sharpness —
# as above, the median over the last quarter of training of the two-step mean, then over the 5 initialisations —
# lies within 10% of 2/η. The tolerance and the start (3 times the edge) were fixed on design seeds 100–111: at 2
# times some η ended at 0.90 of its edge, at 4 times two of five η = 5 runs diverged on every seed. With the
# two-step mean (it replaced λ_max at every 50th step with the span's check above; the per-η medians moved by at most
# 0.007 of the edge on design seeds 100–109) it is validated on seeds 500–519: 20 of 20, every seed all six η inside
# (per-η ratio 0.948–1.013; its margin is counted in η, 1 on every seed); on 0–19 likewise 20 of 20 (0.924–1.011).
# Of the 100 η = 5 runs, 3 diverged on seeds 500–519 and 5 on 0–19 (never 3 of an η's 5, which would make the
# median a diverged run). Negative control: the same initialisations trained at η/10, far below their edge — GD is
# stable there and the sharpness stays near its start, at 0.25 of the edge 2/(η/10). What stays unchecked: the
# book's exception itself (FashionMNIST at η = 0.01 ending at 53.5, far below 200) — here every network is made sharp
# enough to reach its edge from above, so whether one that sharpens from below gets there in time is not tested at
# these six η (section 2's η = 0.1 and 0.2 show that case for one network).

# %%
BOOK_STEPS = pick_steps(quick=400, full=1200, every=50)
book = fl.edge_book(fl.BOOK_ETAS, steps=BOOK_STEPS, seed=seed)
fig, axes = panels(2, width=4.6)
fl.plot_edge_span(axes, book, title="表11.4 at the book's six eta", book=fl.BOOK_FASHION_MNIST)
plt.show()
print("表11.4 at the book's six eta — final sharpness (median of 5 initialisations, range in brackets)")
print(fl.edge_table_text(book, width=17))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_eos_table_book(book))

# %% [markdown]
# ## 3 · Batch size and flatness (表11.1, 图11.3)
#
# Keskar et al. (2016, 表11.1) found that large batches reach *sharp* minima that generalise worse,
# small batches *flat* ones. Same network, same initialisation, same η = 0.25 and number of steps,
# now with mini-batches of B = 8 and 32 (the η = 0.25 GD run of section 2 is B = n).
#
# The interpolation θ = αθ_L + (1 − α)θ_S (图11.3) between the small-batch solution θ_S (α = 0) and the
# large-batch one θ_L (α = 1) shows the loss and accuracy along the segment and beyond it.

# %%
BATCHES = (8, 32)
sgd_runs = {}
for b in BATCHES:
    sgd_runs[b] = fl.train_fresh(WIDTHS, data.x, y, seed=seed, batches=2 + b, eta=BS_ETA, steps=EOS_STEPS,
                                 batch_size=b, track_every=EOS_STEPS // 8, loss_every=10)
bs_runs = {**sgd_runs, N_TRAIN: eos[BS_ETA]}
bs_sharp = {b: r.final_sharpness for b, r in bs_runs.items()}

print(f"{'batch':>6} {'lambda_max':>11} {'train loss':>11} {'train acc':>10} {'test acc':>9}")
for b, r in bs_runs.items():
    print(f"{b:6d} {bs_sharp[b]:11.3f} {r.loss[-1]:11.2e} {fl.accuracy(r.model, data.x, data.labels):10.3f} "
          f"{fl.accuracy(r.model, data.x_test, data.labels_test):9.3f}")

alphas = np.linspace(-1.0, 2.0, 61)
theta_s, theta_l = bs_runs[8].theta, bs_runs[N_TRAIN].theta
net = fl.DropoutMLP(WIDTHS, "tanh", generator=generator(seed, 1))   # only its architecture is used
tr_loss, tr_acc = fl.interpolation_profile(net, theta_s, theta_l, alphas, data.x, y, labels=data.labels)
te_loss, te_acc = fl.interpolation_profile(net, theta_s, theta_l, alphas, data.x_test, y_test,
                                           labels=data.labels_test)

fig, axes = panels(2, width=4.6)
axes[0].bar([str(b) for b in bs_runs], list(bs_sharp.values()), color=["C0", "C1", "C2"])
axes[0].axhline(2 / BS_ETA, color="k", ls="--", lw=1, label="2/eta")
axes[0].set(xlabel="batch size", ylabel="lambda_max(H)", title="final sharpness")
axes[0].legend()
ax = axes[1]
ax.semilogy(alphas, tr_loss, "C0-", label="train loss")
ax.semilogy(alphas, te_loss, "C0--", label="test loss")
ax.set(xlabel="alpha  (0: B=8, 1: full batch)", ylabel="loss", title="theta = a*theta_L + (1-a)*theta_S")
ax2 = ax.twinx()
ax2.plot(alphas, tr_acc, "C1-", label="train acc")
ax2.plot(alphas, te_acc, "C1--", label="test acc")
ax2.set_ylabel("accuracy")
ax.legend(loc="upper left")
ax2.legend(loc="upper right")
plt.show()

# %% [markdown]
# The small-batch solution is markedly flatter. Does it also **generalise better** (表11.1: the same training
# accuracy, a higher test accuracy)? For one pair of networks the answer depends on the initialisation: B = 8
# is usually 2–4 points ahead on the 1669 test images, but on 4 of seeds 0–19 it came level with or behind
# full-batch GD (an earlier, single-network version of this check held on 16 of 20). Keskar et al.'s table
# reports means over several runs, and so does this one: **an ensemble (集成) of K = 8 networks**, the same
# 8 initialisations trained by SGD with B = 8 and by full-batch GD (and, for 图11.4 below, by five GLDs), all at
# η = 0.25, each dynamics one batched computation (`fl.train_ensembles`; each SGD member draws its own
# mini-batches). 300 steps suffice for every member to fit the 128 training images (full: K = 16, 800 steps).
#
# **The full profile does not reproduce this yet.** With its n = 512 training images the small batch's mean gain
# was negative on each of seeds 0–4 (seed 0: −0.68 points, −2.7 standard errors), so this claim prints ✘ there
# (as did 图11.4's below when it still compared SGD with GD too). Measured on seed 0 with K = 16 and 800 steps: +2.1 points at n = 128, +0.9 at n = 256,
# −0.7 at n = 512, and +0.5 (1.7 standard errors) at n = 512 trained for 2400 steps — the gain shrinks as the
# training set grows at this size of network, and 800 steps of B = 8 are 12.5 passes over 512 images (the quick
# profile: 19 over 128). On seeds 0–4 the gain at 800 steps was −0.50 to −0.88 points; the full profile's step count
# was not changed after seeing that.
#
# The claim (表11.1): every member of both ensembles fits ≥ 99% of the training images, and the mean test
# accuracy is **higher** with B = 8 — the mean over members of the paired gain (same initialisation) is above
# zero; the margin is that mean in units of its standard error. (Negative control: "SGD" with B = n, the full
# batch, which is GD: no gain.)

# %%
ENSEMBLE = pick(quick=8, full=16, smoke=4)  # a smoke run: a few members
ENSEMBLE_STEPS = pick_steps(quick=300, full=800, every=20)  # noise re-estimated every 20 steps
ens = fl.train_ensembles(WIDTHS, data, members=ENSEMBLE, eta=BS_ETA, steps=ENSEMBLE_STEPS, batch_size=8,
                         seed=seed)
print(f"表11.1 analogue — {ENSEMBLE} networks per column (mean ± sd over members)")
print(f"{'':>14} {'B=8':>15} {'full batch':>15}")
for what, acc in (("train accuracy", ens.train_accuracy), ("test accuracy", ens.test_accuracy)):
    print(f"{what:>14} " + " ".join(f"{100 * acc[i].mean():7.2f}% ± {100 * acc[i].std():4.2f}" for i in (0, 1)))
print(f"paired test-accuracy gain of B=8: {100 * ens.gain('SGD', 'GD').mean():.2f} points")

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_small_batch_generalises(ens))

# %% [markdown]
# The claim compares the final λ_max of the three runs: λ(B=8) < λ(B=32), and λ(B=8) < 0.7·λ(full batch).
# Since the full-batch run is GD, this is also section 4's "SGD flatter than GD"; that comparison is made here
# only. (Negative control: the same comparison at a tiny η, where mini-batch noise is too weak to matter.)

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_small_batch_flatter(bs_runs[8], bs_runs[32], bs_runs[N_TRAIN]))

# %% [markdown]
# ## 4 · The structure of SGD noise ((11.4)–(11.7), 图11.4, 图11.5)
#
# SGD is GD plus a noise term, θ_{t+1} = θ_t − η∇L(θ_t) + ηε_t with ε_t ~ N(0, Σ_sgd) (11.4), and for
# batches of B samples Σ_sgd = (1/B)[(1/n)Σ_i ∇ℓ_i∇ℓ_iᵀ − ∇L∇Lᵀ]. **Gradient Langevin dynamics** (梯度
# Langevin 动力学, GLD, (11.5)) adds isotropic noise N(0, σ²I) instead.
#
# **Alignment (Zhu et al. 2018).** If the noise had no preferred direction, Tr(HΣ) would equal
# Tr(H)Tr(Σ)/D (D = number of parameters). At the B = 8 solution of section 3 we compute Tr(HΣ) exactly
# (n Hessian-vector products with the rows of a factor of Σ), Tr(H) by Hutchinson's estimator and
# Tr(Σ) from per-sample gradients (`torch.func.vmap`).
#
# That comparison alone is weak: the per-sample gradients g_i = J_iᵀ(f(x_i) − y_i) lie in the row space
# of the network's Jacobian, where the Gauss–Newton part of the Hessian lives, so *any* noise built from
# them sees far more curvature than a random direction (≈ 60× here) whatever its structure. The claim
# therefore also compares Tr(HΣ) with a real baseline noise of the same total size spread **evenly over
# the same span** (Π = projector on the span of the centred gradients, rank r ≤ n − 1):
# Tr(HΠ)·Tr(Σ)/r. SGD noise beats it only if, among its own directions, it puts more variance on the
# sharper ones. (Negative control: the GLD noise of the same size, whose ratio is ≈ 1.)

# %%
NOISE_B = 8
sgd_model = bs_runs[NOISE_B].model
align = fl.noise_alignment(sgd_model, data.x, y, NOISE_B, generator=generator(seed, 3))
print(f"D = {align.dim}: Tr(H Sigma) = {align.tr_h_sigma:.3e},  Tr(H) Tr(Sigma) / D = {align.isotropic:.3e} "
      f"(ratio {align.ratio:.1f}),  Tr(H Pi) Tr(Sigma) / r = {align.span_uniform:.3e} (r = {align.rank}, "
      f"ratio {align.span_ratio:.2f})")

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_noise_alignment(align))

# %% [markdown]
# **Directional flatness (Feng & Tu 2021, (11.2)–(11.3), 图11.5).** Along the i-th eigenvector p_i of Σ
# (noise variance σ_i²) the flatness F_i = θ_i^r − θ_i^l is the width of the interval around the minimum
# where L(θ + δp_i) < e·L₀. The book reports σ_i² ∝ F_i^{−ψ} with ψ ≈ 4 (11.6) "under different
# hyper-parameter settings" — 图11.5 has one panel per batch size B and learning rate: the noise is largest
# exactly where the loss is sharpest. Here three settings (B, η): the SGD solutions of section 3 (B = 8 and 32,
# η = 0.25) and one more SGD run, B = 8 at η = 0.1, from the same initialisation.

# %%
K_DIRECTIONS = pick(quick=40, full=80, smoke=10)  # a smoke run: fewer noise directions
ft_models = {(NOISE_B, BS_ETA): sgd_model, (32, BS_ETA): sgd_runs[32].model}
for b, eta in fl.FENG_TU_SETTINGS:
    if (b, eta) not in ft_models:
        ft_models[b, eta] = fl.train_fresh(WIDTHS, data.x, y, seed=seed, batches=2 + b, eta=eta, steps=EOS_STEPS,
                                           batch_size=b, track_every=EOS_STEPS // 8, loss_every=10).model
fts = {f"B={b}, eta={eta:g}": fl.feng_tu(ft_models[b, eta], data.x, y, b, k=K_DIRECTIONS)
       for b, eta in fl.FENG_TU_SETTINGS}
fig, axes = panels(len(fts), width=3.6)
for ax, (name, ft) in zip(axes, fts.items()):
    ax.loglog(ft.flatness, ft.variances, "o", ms=4)
    fit = np.exp(np.polyval(np.polyfit(np.log(ft.flatness), np.log(ft.variances), 1), np.log(ft.flatness)))
    order = np.argsort(ft.flatness)
    ax.loglog(ft.flatness[order], fit[order], "k--", lw=1, label=f"slope {ft.slope:.2f}")
    ax.set(xlabel="directional flatness F_i", ylabel="noise variance sigma_i^2", title=f"top {K_DIRECTIONS}: {name}")
    ax.legend()
plt.show()
for name, ft in fts.items():
    print(f"{name}: log-log slope = {ft.slope:.2f} (book: about -4), Spearman rho = {ft.spearman:.2f}")

# %% [markdown]
# The claim is weaker than the book: at each of the three settings it asks for a clearly falling power law
# (log-log slope below −1, Spearman ρ below −0.6), not for the book's exponent. Along the eigen-directions of Σ the
# slope is steeper than −4: on seeds 500–519 it lay between −5 and −3 at all three settings on 0 of 20 (−7.6 to −4.5
# for B = 8, η = 0.25; −6.7 to −4.7 for B = 32, η = 0.25; −6.0 to −3.2 for B = 8, η = 0.1), while the claim held at all
# three settings on 20 of those 20 seeds (Spearman ρ at most −0.79).

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_feng_tu(fts))

# %% [markdown]
# **The exponent as Feng & Tu measure it.** The ψ ≈ 4 of 图11.5 (Feng & Tu's Fig. 2D) comes from another
# measurement than the eigen-directions of Σ above. Feng & Tu train the 2×50 network by SGD into its *exploration
# phase* (training error 0, the loss still falling slowly), record the weights between the two hidden layers at
# every step over a window, and take the principal directions p_i of that trajectory (PCA); σ_i² is the variance of
# the weights along p_i — the spread the SGD noise actually produces — and F_i is (11.3) along p_i at the last
# weights. p_1 is a slow drift (the cross-entropy's margins growing) and is left out of the fit. In their analysis the
# gradient noise's own variance along p_i falls only as F_i^{−2}; its correlation time falls as F_i^{−1.8} too, and the
# two make ψ ≈ 3.8 — so Σ's eigenvalues, the first measurement, need not show the book's exponent.
#
# Ours: the book's network, two hidden layers of 50 ReLU units, cross-entropy, on n = 256 digits (64 pixels rather
# than MNIST's 784 and 60 000 images) normalised as MNIST usually is (one mean and one standard deviation over all
# pixels); three settings (B, η) = (50, 0.1) — Feng & Tu's default — (25, 0.1) and (50, 0.2); 500 steps of SGD, then
# a window of 200 more (20–40 epochs here, 10 in the paper: the PCA needs more snapshots than the 30 directions
# used); the fit over i = 2 … 30. The exponent depends on how the inputs are scaled: on design seeds with each pixel
# standardised on its own ψ was 4.4–5.1 (n = 512), with pixels in [0, 1] 2.6–3.0 (n = 1024), with the one global
# mean and deviation 3.4–3.8 (n = 512) and 3.6–4.1 (n = 256, the setting here).
#
# The claim: at each of the three settings ψ lies between 3 and 5 (the book's "close to 4"), bounds fixed on design
# seeds 100–109 (ψ 3.57–4.07 there). It held on 20 of seeds 0–19 (ψ 3.49–4.32 over the 60 fits, Spearman ρ at most
# −0.91) and, since it replaces an exploration whose results on 0–19 had been seen, once more on 20 of seeds 500–519
# (ψ 3.42–4.13).
# (Negative control: GLD, full-batch GD plus isotropic noise of the B = 50 SGD noise's size (11.5) — the same
# measurement finds ψ near 0 and no rank correlation.) Not checked: MNIST itself, Feng & Tu's 10-epoch window, and
# the settings beyond these three.

# %%
FT_N = pick(quick=256, full=512)
FT_STEPS = pick_steps(quick=500, full=1000, every=100)    # into the exploration phase
FT_WINDOW = pick_steps(quick=200, full=300, every=100)    # the PCA window, one snapshot per step
FT_K = pick(quick=30, full=40, smoke=10)                  # principal directions: p_1 (drift) and the fitted 2 … k
pcas = {f"B={b}, eta={eta:g}": fl.feng_tu_pca(seed, b, eta, n_train=FT_N, steps=FT_STEPS, window=FT_WINDOW, k=FT_K)
        for b, eta in fl.FENG_TU_PCA_SETTINGS}
fig, axes = panels(len(pcas), width=3.6)
for ax, (name, pca) in zip(axes, pcas.items()):
    f, v = pca.flatness, pca.variances
    ax.loglog(f[1:], v[1:], "o", ms=4, label="p_2 ... p_k")
    ax.loglog(f[:1], v[:1], "s", color="0.6", ms=5, label="p_1 (drift)")
    grid = np.geomspace(f[1:].min(), f[1:].max(), 20)
    fit = np.polyfit(np.log(f[1:]), np.log(v[1:]), 1)
    ax.loglog(grid, np.exp(np.polyval(fit, np.log(grid))), "k--", lw=1, label=f"ψ = {pca.psi:.2f}")
    ax.set(xlabel="directional flatness F_i", ylabel="weight variance sigma_i^2", title=name)
    ax.legend()
plt.show()
for name, pca in pcas.items():
    print(f"{name}: psi = {pca.psi:.2f} (book: about 4), Spearman rho = {pca.spearman:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_feng_tu_exponent(pcas))

# %% [markdown]
# **SGD vs GD vs GLD (图11.4, 表11.2).** From the same initialisation and with the same η: full-batch GD
# (section 2), SGD with B = 8 (section 3), and GD plus isotropic noise whose total variance Tr(σ²I)
# equals Tr(Σ_sgd) of B = 8, re-estimated every 20 steps ("GLD dynamic" in 表11.2). Same noise size, no
# structure: spread evenly over D ≈ 13 000 directions, almost none of it falls on the few sharp ones.
# The claim: the final λ_max of SGD is below 0.7 times that of GLD — noise of the same size, without SGD's
# structure, does not find the flatter minimum. (SGD against GD is λ(B=8)/λ(full batch), section 3's claim.)
# (Negative control: "SGD" with the full batch, B = n, which has no noise.)

# %%
gld = fl.train_fresh(WIDTHS, data.x, y, seed=seed, batches=4, eta=BS_ETA, steps=EOS_STEPS, gld_batch=NOISE_B,
                     track_every=EOS_STEPS // 8, loss_every=10)
dyn_sharp = {"GD": bs_sharp[N_TRAIN], "GLD (isotropic)": gld.final_sharpness, f"SGD (B={NOISE_B})": bs_sharp[NOISE_B]}
dyn_test = {"GD": fl.accuracy(eos[BS_ETA].model, data.x_test, data.labels_test),
            "GLD (isotropic)": fl.accuracy(gld.model, data.x_test, data.labels_test),
            f"SGD (B={NOISE_B})": fl.accuracy(sgd_model, data.x_test, data.labels_test)}
for name in dyn_sharp:
    print(f"{name:16} lambda_max = {dyn_sharp[name]:6.3f}   test accuracy = {dyn_test[name]:.3f}")

# %% [markdown]
# 图11.4 itself shows **test accuracy**: SGD best, GD and the GLD variants clearly lower. The single
# networks above are one draw (an earlier single-network version of this comparison held on 15 of seeds 0–19); the
# claim uses the ensemble of section 3: the same 8 initialisations trained, at η = 0.25 for 300 steps, by SGD (B = 8),
# by full-batch GD, and by GD plus each of five noises (Zhu et al. 2018). The first three are 表11.2's and, with SGD
# and GD, are the five bars of 图11.4 — Zhu et al.'s Figure 1 on SVHN and CIFAR-10, whose published code trains
# exactly these five. The last two, **Hessian-aligned**, come from the same paper's FashionMNIST experiment only;
# 图11.4 does not show them (hatched bars below):
#
# * **GLD dynamic**, N(0, σ_t²I) with σ_t² = Tr(Σ_sgd)/D of the member's own B = 8 noise;
# * **GLD constant**, N(0, ϱ²I) with ϱ "a tunable constant". We tuned it on design seeds 100–104: over
#   ϱ = 0.001 … 0.032 (factor-2 steps up to SGD's noise size at initialisation, σ ≈ 0.032) the ensemble's mean test
#   accuracy was best at the smallest, ϱ = 0.001 (71.8%, against 58.0% at 0.032): here isotropic noise only hurts,
#   so tuned GLD constant is close to GD;
# * **GLD diagonal**, N(0, diag(Σ_sgd)), SGD's per-coordinate variances without their correlations;
# * **GLD Hessian**, N(0, c_t H̃_t) with H̃_t the Hessian's best rank-5 approximation (its top 5 eigenpairs) and c_t
#   chosen so that the noise has SGD's size, E‖ε‖² = Tr(Σ_sgd);
# * **GLD 1st eigvec**, the same size of noise along the Hessian's top eigenvector only.
#
# The first three are re-estimated every 20 steps from per-sample gradients (`fl.ensemble_noise_diagonal`: their
# squares summed layer by layer, never forming one); the Hessian's top eigenpairs every 60 steps by two
# warm-started steps of subspace iteration on Hessian-vector products (`fl.ensemble_hessian_eigenpairs`; Zhu et al.
# also recompute theirs only every few steps; rank 5 every 60 steps, not 10 every 20, to keep this notebook within
# its time budget). GD and the three 表11.2 GLDs train as one batched network of 32 members, the two
# Hessian-aligned GLDs as another of 16. Putting all of SGD's noise on the sharpest direction can throw a network
# out of its basin: a member whose training loss passes 100 (it starts near 0.5) is stopped where it was 20 steps
# before, and counted (below: `diverged`). On seeds 0–19 this stopped 18 of the 160 GLD 1st eigvec members (on 15
# seeds) and 5 GLD Hessian members; no other dynamics diverged.
#
# **The claim (表11.2's dynamics):** SGD's mean test accuracy is higher than that of each of GD, GLD dynamic, GLD
# constant and GLD diagonal — for each, the mean over members of the paired gain (same initialisation) is above
# zero, the margin that mean in units of its standard error. (SGD over GD is also 表11.1's claim of section 3.)
# On design seeds 100–119, with GLD constant held at SGD's initial noise size, it held on 20 of 20. That version
# and earlier ones (SGD against GD, then against GLD dynamic) were seen on seeds 0–19, so this one, with the tuned
# ϱ, is validated on seeds 500–519: it held on 19 of 20 (margin at least −0.73, median +2.19 standard errors; on
# seed 512 SGD's mean came out below all four). On seeds 0–19: 20 of 20 (margin at least +0.24, median +2.44).
# Negative control: the same ensemble trained with GLD diagonal in SGD's place — the
# structured noise closest to SGD's among 表11.2's — and the check asked whether *it* beats the other three: it
# does not.
#
# **Beyond the book: SGD against the two Hessian-aligned GLDs is an exploration.** 图11.4 does not show them, so
# this comparison follows Zhu et al.'s FashionMNIST experiment, not the book; the book's "the GLD variants are
# significantly lower" is about the three of 表11.2, which the claim above tests. "SGD above GLD Hessian and GLD
# 1st eigvec" held on
# 7 of design seeds 100–109 (with rank 10, recomputed every 20 steps), so it was declared an exploration before
# validation; with the settings above it held on 17 of seeds 0–19 (margin at least −1.08, median +0.94 standard
# errors) and on 18 of seeds 500–519. On 0–19 every failure is GLD Hessian's: noise of SGD's size along the
# Hessian's sharp directions comes close to SGD here (mean over seeds 0–19: 72.1% against SGD's 73.5%, GD's
# 71.8%) — Zhu et al.'s own point, that the Hessian alignment of SGD's noise is what helps. GLD 1st eigvec (67.7%)
# falls behind mostly through its diverged members. Zhu et al.'s code takes the top 20 eigenpairs of the exact
# Hessian every 10 steps; rank 20 every 20 steps took 19.9 s here instead of 7.0 s (SGD plus the two
# Hessian-aligned ensembles, one thread), beyond this notebook's budget. What stays unchecked: the figure's
# CIFAR-10/SVHN networks and sizes.

# %%
fig, axes = panels(1, width=6.4)
names = [f"SGD (B={ens.batch_size})" if d == "SGD" else {"GLD": "GLD dynamic", "GLD 1st eigvec": "GLD top eigvec"}.get(d, d)
         for d in ens.dynamics]
for name, acc, gone in zip(names, ens.test_accuracy, ens.diverged):
    print(f"{name:16} test accuracy {100 * acc.mean():6.2f}% ± {100 * acc.std():5.2f}   diverged {gone} of {ENSEMBLE}")
axes[0].bar(range(len(names)), 100 * ens.test_accuracy.mean(1), yerr=100 * ens.test_accuracy.std(1), capsize=4,
            color=[f"C{i}" for i in (2, 0, 1, 3, 4, 5, 6)][:len(names)],
            hatch=["//" if d in fl.HESSIAN_DYNAMICS else "" for d in ens.dynamics])   # hatched: not in 图11.4
axes[0].set_xticks(range(len(names)), names, rotation=30, ha="right")
axes[0].set(ylabel="test accuracy (%)", title=f"mean of {ENSEMBLE} networks (bars: sd)",
            ylim=(100 * ens.test_accuracy.mean(1).min() - 10, 100 * ens.test_accuracy.mean(1).max() + 5))
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_sgd_best_accuracy(ens))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_sgd_beats_hessian_gld(ens))

# %% [markdown]
# **The implicit regulariser (11.7).** Smith et al. (2020) show that SGD follows, to first order in η, the
# gradient flow of L plus (η/4m)Σ_i‖∇L̂_i − ∇L‖² over the m mini-batches of an epoch (the book's "m 为每个
# 批次内的 minibatch 的数量" should read *the number of mini-batches per epoch*). In expectation each term
# is Tr(Σ_sgd), so the regulariser is (η/4)·Tr(Σ_sgd): below, its value at the three solutions (an
# exploration, not a claim).

# %%
for name, model in (("GD", eos[BS_ETA].model), ("GLD (isotropic)", gld.model), (f"SGD (B={NOISE_B})", sgd_model)):
    c = fl.noise_factor(fl.per_sample_gradients(model, data.x, y), NOISE_B)
    print(f"{name:16} (eta/4) Tr(Sigma_sgd) = {BS_ETA / 4 * float((c * c).sum()):.2e}")

# %% [markdown]
# The value is *not* smallest at the SGD solution: its training loss is several times higher (see
# section 3), and per-sample gradients grow with the residuals. The regulariser shapes SGD's path; a
# ranking of end points reached at different losses does not test it, which is why this stays an
# exploration.

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_sgd_flatter(sgd_runs[NOISE_B], gld))

# %% [markdown]
# ## 5 · Dropout finds flatter minima (图11.6, 表11.3, 图11.7(a))
#
# The book's 1-D example: a two-layer ReLU network of width m fits
# f(x) = ½σ(−x − ⅓) + ½σ(x − ⅓) on points of [−1, 1], every parameter ~ N(0, 1/m^0.2) (a large
# initialisation), trained by Adam with and without **dropout** (keep probability p). Flatness is
# compared by λ_max (without dropout at evaluation) and by the loss L(α) = R_S(θ + αd) along random
# directions d normalised filter by filter (Li et al. 2017) — each neuron's incoming weights of d get the
# norm of the network's own, which makes profiles of different networks comparable.
#
# The book trains with learning rate 10⁻⁴; to fit the quick profile we use 3·10⁻³ for 2000 steps
# (full: 10⁻³ for 5000 steps, with p = 0.8 as well). The dropout network's sharpness keeps falling slowly
# during training (about 120 → 75 between steps 1000 and 2000, while the plain network's stays near 250):
# 1000 steps left the ratio at 0.4–0.49 depending on the seed, a hair under the claim's 0.5.
#
# **Matched loss.** The dropout network ends at a higher training loss than the plain one, and a sharper
# minimum can simply be a deeper one. So the claim compares the dropout network with the plain network
# *at the same training loss*: the plain network is trained again from the same initialisation and stopped
# at the first step where its loss reaches the dropout network's final loss (`fl.dropout_flatness`).

# %%
DROP_WIDTH = 1000
DROP_STEPS = pick_steps(quick=2000, full=5000, every=10)  # records only its end
DROP_LR = pick(quick=3e-3, full=1e-3)
KEEPS = pick(quick=(1.0, 0.5), full=(1.0, 0.8, 0.5))
dropout = fl.dropout_flatness(KEEPS, width=DROP_WIDTH, steps=DROP_STEPS, lr=DROP_LR, n_dirs=5, seed=seed)
drop, profiles, prof_alphas = dropout.runs, dropout.profiles, dropout.alphas
x1, y1 = dropout.x, dropout.y
drop_sharp = {p: r.final_sharpness for p, r in drop.items()}

fig, axes = panels(3, width=3.6)
xs = torch.linspace(-1, 1, 201)[:, None]
axes[0].plot(xs, fl.dropout_target(xs), "k--", lw=1, label="target")
for i, (p, run) in enumerate(drop.items()):
    with torch.no_grad():
        axes[0].plot(xs, run.model.eval()(xs), color=f"C{i}", label=f"keep p={p:g}")
    axes[1].plot(prof_alphas, profiles[p], color=f"C{i}", label=f"p={p:g}")
axes[0].set(xlabel="x", title="fitted functions")
axes[0].legend()
axes[1].set(xlabel="alpha", ylabel="L(theta + alpha d)", title="filter-normalised profile (mean of 5)")
axes[1].legend()
axes[2].bar([f"p={p:g}" for p in drop_sharp], list(drop_sharp.values()), color=[f"C{i}" for i in range(len(drop))])
axes[2].set(ylabel="lambda_max(H)", title="sharpness")
plt.show()
for p in KEEPS:
    print(f"keep {p:3g}: lambda_max = {drop_sharp[p]:7.1f}, loss = {drop[p].loss[-1]:.1e}, "
          f"L(+-0.1) - L(0) = {dropout.rise(profiles[p]):.3f}")
if dropout.matched is not None:
    print(f"plain, stopped at step {int(dropout.matched.steps[-1])} (loss {dropout.matched.loss[-1]:.1e}): "
          f"lambda_max = {dropout.matched.final_sharpness:7.1f}, "
          f"L(+-0.1) - L(0) = {dropout.rise(dropout.matched_profile):.3f}")

# %% [markdown]
# The dropout network ends at a somewhat higher training loss (dropout's noise keeps it from fitting the
# last details), yet its minimum is wider in every direction we probe — also against the plain network
# taken at that same loss, which is already about as sharp as at the end of its run. The book's 图11.7 and 表11.3 show
# the same on MNIST, CIFAR, Multi30k with better test accuracy: its FNN row follows below, on the digits; the explorer
# further down lets you add dropout to the digits MLP of the Edge of Stability.

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_dropout_flatter(dropout))

# %% [markdown]
# ### Dropout on a digits classifier (表11.3, FNN row; 图11.7(a))
#
# The book then repeats the comparison on real tasks (图11.7, with the test accuracies of 表11.3): for every
# architecture dropout finds a flatter minimum and generalises better, and in panels (a) and (b) both networks reach
# a training loss near zero, so the difference is not one of fitting. Panel (a) and the table's first row are a
# fully connected network (FNN) on MNIST: 98.7 % test accuracy with dropout against 98.1 % without.
#
# **Our setting** (the analogue: MNIST → the 8×8 digits, which ship with scikit-learn): the first 512 digits for
# training and the other 1285 for testing; a ReLU MLP 64-128-128-10 with He initialisation, trained by Adam
# (learning rate 10⁻³, mini-batches of 64, 600 steps ≈ 75 epochs) on the cross-entropy, once without dropout and
# once with dropout of keep probability 0.8 on both hidden layers. The book does not give its FNN's sizes or
# optimiser; the keep probability is a common one. Each of K = 16 initialisations is trained both ways (each net
# its own mini-batches and masks), all 32 networks as one batched computation (`fl.dropout_digits`); the loss
# landscape L(α) = R_S(θ + αd) is drawn along 3 random directions per network, normalised neuron by neuron
# (Li et al. 2017, as in 图11.6), and averaged over them. The other rows and panels (VGG-9 on CIFAR-10, ResNet-20
# on CIFAR-100, a Transformer on Multi30k) need a GPU and data this companion cannot download: they are not run.

# %%
DIGITS_MEMBERS = pick(quick=16, full=32, smoke=4)  # a smoke run: a few initialisations
DIGITS_STEPS = pick_steps(quick=600, full=1500, every=50)  # records only its end
fnn = fl.dropout_digits(fl.DIGITS_KEEP, members=DIGITS_MEMBERS, steps=DIGITS_STEPS, seed=seed)
fnn_acc = fnn.accuracy

fig, axes = panels(2, width=4.6)
for i, arm in enumerate(fnn_acc.dynamics):
    label = f"dropout (keep {fnn.keep:g})" if arm == "dropout" else "no dropout"
    axes[0].plot(fnn.alphas, fnn.profiles[i].T, color=f"C{i}", lw=0.4, alpha=0.4)
    axes[0].plot(fnn.alphas, fnn.profiles[i].mean(0), color=f"C{i}", lw=2, label=label)
axes[0].set(xlabel="alpha", ylabel="L(theta + alpha d)",
            title="Fig. 11.7(a): loss along random directions (thin lines: single networks)")
axes[0].legend()
axes[1].bar([0, 1], 100 * fnn_acc.test_accuracy.mean(1), yerr=100 * fnn_acc.test_accuracy.std(1), capsize=4,
            color=["C0", "C1"])
axes[1].set_xticks([0, 1], [f"dropout (keep {fnn.keep:g})", "no dropout"])
axes[1].set(ylabel="test accuracy (%)", title=f"Table 11.3 (FNN row): mean of {DIGITS_MEMBERS} networks (bars: sd)",
            ylim=(100 * fnn_acc.test_accuracy.min() - 1, 100 * fnn_acc.test_accuracy.max() + 0.5))
plt.show()

print(f"表11.3 analogue (FNN on digits) — {DIGITS_MEMBERS} networks per column (mean ± sd over networks)")
print(f"{'':>20} {'with dropout':>16} {'without dropout':>16}")
rises = fnn.rise(fl.RISE_AT)
for what, values, scale, fmt in (("training loss", fnn_acc.train_loss, 1, ".1e"),
                                 ("train accuracy (%)", fnn_acc.train_accuracy, 100, ".2f"),
                                 ("test accuracy (%)", fnn_acc.test_accuracy, 100, ".2f"),
                                 (f"rise at alpha=±{fl.RISE_AT:g}", rises, 1, ".1e")):
    print(f"{what:>20} " + " ".join(f"{format(scale * v.mean(), fmt):>8} ± {format(scale * v.std(), fmt):<7}"
                                    for v in values))
print(f"paired test-accuracy gain of dropout: {100 * fnn_acc.gain('dropout', 'plain').mean():+.2f} points "
      "(the book on MNIST: +0.6)")

# %% [markdown]
# Both arms fit the 512 training images (training loss of the order 10⁻³, accuracy 100 %), yet the loss around
# the dropout solutions rises far more slowly along the random directions, and they classify more test digits
# correctly — by a gain of the book's size, on a task whose absolute accuracy is lower (512 training images of 8×8
# pixels against MNIST's 60 000 of 28×28).
#
# Two claims, one per catalog entry, on the same runs. **表11.3** (FNN row): every network of both arms fits at
# least 99 % of the training images, and the mean over the 16 initialisations of the paired test-accuracy gain,
# dropout minus no dropout, is above 0.25 points (its margin in standard errors of that mean). **图11.7(a)**: every
# network's training loss is below 0.01, and the dropout networks' mean rise L(±0.2) − L(0) is less than half the
# plain networks'. The bounds were fixed on design seeds 100–119. Negative control (both claims): the same run with
# keep probability 1 in the dropout arm — plain training with its own masks' and mini-batches' randomness, the
# contrast the book draws — where the gain is noise around 0 and the ratio of rises near 1.
#
# On seeds 0–19 both claims held on 20 of 20. The gain lay between +0.54 and +1.09 points (margin at least +1.70
# standard errors, median +2.75), the ratio of rises between 0.25 and 0.31 (margin at least +0.38, median +0.42),
# the largest training loss below 0.0017 and every training error at 0. The control on design seeds 100–109 gave gains
# of −0.07 to +0.17 points and ratios of 0.83 to 1.10: both claims fail there. Not checked: the table's and the
# figure's three other architectures, and the book's absolute accuracies (98.7 % and 98.1 % on MNIST, about 89.7 % and
# 88.9 % here).

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_dropout_accuracy(fnn))

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_dropout_landscape(fnn))

# %% [markdown]
# ## 6 · Sharpness is not invariant (习题11)
#
# 习题11 asks for the limitations of λ_max as a measure of flatness. One is decisive: for ReLU,
# σ(cz) = cσ(z) for c > 0, so (W₁, b₁, W₂) → (cW₁, cb₁, W₂/c) gives **the same function**, hence the same
# training and test loss, yet the Hessian changes — λ_max can be made as large as we like (Dinh et al.
# 2017). Below, the plain (no-dropout) ReLU network of section 5, rescaled.

# %%
relu_net = drop[1.0].model
cs = (1 / 3, 1.0, 3.0)
effect = fl.rescaling_effect(relu_net, x1, y1, cs)
for c, lam, change in zip(effect.c, effect.sharpness, effect.output_change):
    print(f"c = {c:5.3f}: lambda_max = {lam:9.1f}, max |f_c - f| = {change:.1e}")

# %% [markdown]
# The claim: the largest output change over c = 1/3 and 3 is at most 10⁻⁴ (rounding), and λ_max moves by
# more than a factor 2, up or down, at each c. (Negative control: the same rescaling of a *tanh* network,
# which is not positively homogeneous, changes the outputs.)

# %%
# NBVAL_CHECK_OUTPUT
show(fl.check_rescaling_invariance(effect))

# %% [markdown]
# Move the slider: the curve is λ_max(c), the dot the current c; the title reports how much the function
# moved (rounding only).

# %%
fl.rescaling_explorer(relu_net, x1, y1)

# %% [markdown]
# ## Explorer
#
# Train the digits MLP (128 images, 400 steps) with your choice of learning rate η, batch size (128 = full
# batch), dropout keep probability and width, and watch λ_max against the stability limit 2/η and the
# training loss. Try: η = 0.1 vs 0.3 vs 0.5 at full batch (EoS at each 2/η); batch 8 (flatter); keep 0.5
# (dropout, flatter). Each change retrains one network (about a second: λ_max every 10 steps by a few
# warm-started power iterations).

# %%
explorer = fl.make_explorer()
explorer

# %% [markdown]
# ## Exercises (习题)
#
# **习题2.** For L = ½λθ² with λ = 10, what is the largest learning rate for which GD converges?
#
# Worked solution: run `from companion.solutions.ch11 import solution; solution(2)` (on the site: the "Solution" toggle below).

# %%
eta_max = None  # your answer: a number
fl.check_stability_limit(eta_max, lam=10.0)

# %% [markdown]
# The second half of 习题2: with Adam the step is roughly η·sign(gradient), whatever λ — try
# `fl.train_tracked(..., optimizer="adam")` on a model of your choice, or reason it out: is there still a
# threshold 2/λ?
#
# **习题11.** Write `rescale(model, c)` returning a *copy* of a two-layer ReLU net with the first layer
# multiplied by c and the second divided by c. The check verifies that the outputs did not change while
# λ_max did.
#
# Worked solution: run `from companion.solutions.ch11 import solution; solution(11)` (on the site: the "Solution" toggle below).

# %%
def rescale(model, c):
    return None  # your code: copy.deepcopy(model), then scale model.layers[0] and model.layers[1]


fl.check_rescaling(rescale if rescale(relu_net, 2.0) is not None else None, relu_net, x1, y1)

# %% [markdown]
# **Open questions.** 习题13: why does GD not settle at a minimum much flatter than 2/η? (Hint: watch the
# explorer at small η — nothing pushes the sharpness *down* until it reaches 2/η.) 习题6: explain with
# section 4 why small batches prefer flat minima. 习题15: how would batch normalisation change section 3?
#
# Worked solution: run `from companion.solutions.ch11 import solution; solution("Open questions")` (on the site: the "Solution" toggle below).
#
# ## Summary
#
# * On a quadratic GD is stable iff η < 2/λ and oscillates for η > 1/λ; in a network the sharpest
#   direction decides, η < 2/λ_max (11.11).
# * Full-batch GD does not avoid that limit: the sharpness rises to 2/η and hovers there while the loss
#   keeps falling non-monotonically — the **Edge of Stability** (图11.8); at the end of the run it lies within
#   10% of 2/η for each of six learning rates and follows 2/η across them (表11.4); smaller learning rates, whose
#   edge lies higher, are still sharpening when the run ends (η = 0.1, as the book's η = 0.01). Networks started
#   above their edge come down to it at each of the book's six η = 0.01–5 (edges 200 … 0.4, a factor 500).
# * Smaller batches end at flatter minima (图11.3) and, averaged over networks, at a higher test accuracy
#   (表11.1) — by about two points here, less than the spread between single networks. SGD noise is
#   concentrated on the sharp directions of the Hessian (Tr(HΣ) ≫ Tr(H)Tr(Σ)/D; σ_i² falls steeply with the
#   directional flatness, (11.6)), which is why SGD escapes sharp regions that GD and isotropic noise of the
#   same size do not, and generalises better than both on average (图11.4); Langevin noise of SGD's size aligned
#   with the Hessian's sharp directions (Zhu et al.'s, not in the figure) does about as well as SGD here (an
#   exploration).
# * Dropout finds flatter minima as well (图11.6), and on a digits classifier both flatter minima and a higher test
#   accuracy at the same near-zero training loss (表11.3's FNN row, 图11.7(a)).
# * Sharpness is a coordinate-dependent quantity: rescaling a ReLU layer changes it without changing the
#   function (习题11) — flatness "explains" generalisation only within a fixed parametrisation.
