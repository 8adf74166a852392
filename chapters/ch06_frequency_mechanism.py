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
# # Chapter 6 — The mechanism of the frequency principle (频率原则的机制分析)
#
# *Companion to 深度学习现象导论, chapter 6 (频率原则的机制分析). Chapter 4's notebook shows the frequency
# principle (频率原则); chapter 5's designs networks around it; this one asks why it holds, and when it fails.*
#
# **The argument.** For a two-layer tanh network $h(x) = \sum_j a_j \tanh(w_j x + b_j)$ (6.4) the Fourier
# transform of one neuron decays exponentially in the frequency (6.5), so the gradient of the loss at frequency
# $k$, $L(k) = \tfrac12|\hat h(k) - \hat f(k)|^2$ (6.8), is roughly
#
# $$\Bigl|\frac{\partial L(k)}{\partial \theta}\Bigr| \approx |\hat h(k) - \hat f(k)|\,
# e^{-|\pi k / 2 w_j|}\, G(\theta, k) \qquad (6.11):$$
#
# while the low frequencies are not yet fitted they dominate the gradient, so gradient descent fits them first.
# Each factor of (6.11) is a way to break the principle: a **large initialisation** (large $w_j$, the
# exponential decays slowly), an **activation whose spectrum does not decay** from low frequencies on (the
# Ricker wavelet of small width $a$), and a **loss that weights high frequencies** (a derivative term).
#
# **What you will see and check automatically**
#
# | section | book figure | claim checked in this run |
# |---|---|---|
# | 1 | 图6.1, (6.5) | a steep neuron tanh(100x) carries far more high frequency than tanh(x) (drawn, no claim) |
# | 2 | 图6.2 | a small initialisation keeps the order k = 1, 3, 5; a large one fits the three at one pace and leaves frequencies the data never had; a batch at init std 1.0 fits k = 5 before k = 1 (one member at std 2.0 doing so: an exploration) |
# | 3 | 图6.3 | a Ricker activation of width a = 0.3 keeps the order, a = 0.1 loses it |
# | 4 | 图6.4 | a derivative term in the loss (6.3) speeds up the high frequency |
#
# Then an **explorer** for instructors (the three factors, on a target of your choice) and **exercises (习题)**.
#
# **Run time.** Quick profile (default): under a minute on two CPU cores. Full profile
# (`COMPANION_PROFILE=full`): the book's sizes, several minutes, a GPU if present.
# Measured: 337 s on an NVIDIA H200 GPU shared with the other eleven chapters (one CPU thread each, seed 0),
# every claim held; on the 2-core CPU, one torch thread, 922 s per seed. On seeds 0–4 (`robustness/report-full.json`,
# `docs/full-profile.md`) five of its seven claims held on all five; `ch06.large-init-no-order` held on 3 and
# `ch06.grad-loss-speedup` on 2 — both explained at their claims below. On the fresh seeds 500–504 (2026-12-06,
# 860–1004 s a run, two side by side on an Intel Xeon), where the claims changed after seeds 0–19 are judged,
# `ch06.ricker-no-order` held on all five and `ch06.large-init-no-order` on four, for the reason given at its claim.

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
import numpy as np
import matplotlib.pyplot as plt

from companion.kit.config import pick, pick_steps, settings
from companion.kit.claims import show
from companion.core.fprinciple import FPConfig, run_fprinciple, plot_spectrum, plot_fitting_times, fitting_time
from companion.experiments.ch06_mechanism import (
    activation_spectrum, check_small_init_order, check_large_init_no_order, check_large_init_high_first,
    check_large_init_high_freq, check_ricker_order, check_grad_loss, check_ricker_no_order,
    check_large_init_high_before_low)
from companion.kit.plots import panels, plot_fit, plot_delta_f_curves
from companion.kit.seeds import active_seed

S = settings()
seed = active_seed()
print(S.describe())

# %% [markdown]
# ## 1 · A neuron's spectrum (图6.1, (6.5))
#
# Take one neuron $\tanh(wx)$. Its Fourier transform (with the convention $\int g(x) e^{-i\xi x}dx$ of
# (6.5)) has the modulus
#
# $$|\widehat{\tanh(w\,\cdot)}(\xi)| = \frac{\pi}{|w|\,\sinh(\pi|\xi| / 2|w|)} \approx \frac{2\pi}{|w|}
# e^{-\pi|\xi|/2|w|},$$
#
# exponentially small at high frequency, with a decay rate set by $w$. The book's 图6.1 compares $w = 1$ (a small
# initialisation) with $w = 100$ (a large one): the steep neuron is almost a step, and its spectrum is almost
# flat over the frequencies that matter here. *Note.* (6.5) is written for $e^{-ikx}$, while chapter 4's
# transform (4.1) uses $e^{-2\pi i\xi x}$: the two differ by the scaling $k = 2\pi\xi$.

# %%
x = np.linspace(-np.pi, np.pi, 801)
xi = np.linspace(0.05, 30, 300)
fig, axes = panels(2, width=4.2)
for w in (1.0, 100.0):
    axes[0].plot(x, np.tanh(w * x), label=f"tanh({w:g}x)")
    spectrum = activation_spectrum("tanh", xi, w=w)
    axes[1].semilogy(xi, spectrum / spectrum[0], label=f"w = {w:g}")
axes[0].set(xlabel="x", title="Fig. 6.1: a small and a large neuron")
axes[1].set(xlabel="angular frequency ξ", ylabel="|transform| / its value at ξ = 0.05", title="(6.5): the decay")
axes[0].legend()
axes[1].legend()
plt.show()

# %% [markdown]
# ## 2 · Initialisation scale breaks the order (图6.2)
#
# A large initialisation makes each neuron $\tanh(w x + b)$ steep: the initial function already
# holds frequencies **above the Nyquist frequency of the training data** (here 40 points on $[-\pi, \pi)$, so
# above k = 20). Training only sees the data, so it can neither remove those frequencies nor is it slowed by
# them: the low-frequency preference is gone, the training points are still fitted, and the function between
# them is garbage. Two members of one batched run fit $\sin x + \sin 3x + \sin 5x$, identical except for their
# initialisation std (0.07 and 2.0): 1-200-200-1 tanh networks, Adam at $10^{-3}$, 2000 steps (the full profile:
# width 500, 10 000 steps). As in chapter 4 we record, for each $k$, the first step at which the relative error
# (相对误差) $\Delta_F(k) = |\hat h_k - \hat f_k| / |\hat f_k|$ falls below 0.1.

# %%
init_config = FPConfig(
    n_train=40, hidden=pick(quick=(200, 200), full=(500, 500)), init_std=(0.07, 2.0), members=2,
    steps=pick_steps(quick=2000, full=10000, every=10), record_every=10,
    fine_until=300,                               # every step of the first 300: the large-init peaks converge early
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
fig, axes = panels(1, width=4.2)
plot_fitting_times(axes[0], init, range(2), [f"std {s}" for s in init_config.init_std],
                   title="Fig. 6.2: fitting times τ_k")
plt.show()

# %% [markdown]
# **Claims of 图6.2.** `ch06.small-init-order`: the small-init member converges in the order $t_1 < t_3 < t_5$.
# `ch06.large-init-high-freq`: the large-init output carries over 10× the small one's energy above the data's Nyquist
# frequency, and over 10× its test error. `ch06.large-init-no-order`: with the large initialisation the frequency
# order is gone — the three peaks' **fitting times** $\tau_k = \int_0^T \min(\Delta_F(k,t), 1)\,dt$ (the area under
# each Δ_F curve, in steps; chapter 4, 图4.9) lie within a factor 2 of each other, $\max_k\tau_k/\min_k\tau_k \le 2$.
# Threshold set on design seeds 100–104: the ratio was 1.0–1.2 at std 2.0 and 15–17 ($\tau_5/\tau_1$) at std 0.07,
# the contrast the negative control runs. An earlier version compared the first steps below 0.1 within a factor 2:
# measured step by step that held on 15 of seeds 500–519 (the large-init curves fluctuate, and one crossing is a
# poor summary of them). Measured by the fitting times it held on 20/20 of seeds 0–19 and 20/20 of 500–519
# (max/min τ 1.01–1.96 at std 2.0; margin median 0.41 and 0.39, but thin on one seed: seed 515 passed at 1.96).
#
# **Exploration `ch06.large-init-high-first`: the book's stronger sentence.** The book says more: with a large
# initialisation "the high frequencies are fitted faster than the low ones early in training, with large
# fluctuations" (大初始化权重在训练初始阶段的高频拟合速度大于低频). Asked as $t_5 < t_1$ (first steps below 0.1, recorded
# at every step of the first 300) it held on 6 of seeds 500–519; the fitting times do not order k = 5 before k = 1
# either (on the design seeds $\tau_5/\tau_1$ was 0.97 and 1.20). At std 2.0 the large initialisation removes the
# order, but one member does not show it reversed, so this reading stays an exploration; the next subsection finds the
# reversal in a batch of members at std 1.0. The authors' repository has no code for this figure; our sizes are
# those of the section's introduction above.
#
# **At the full profile** (width 500, 10 000 steps; seeds 0–4 on the CPU) `ch06.large-init-no-order` failed on seeds
# 2 and 3, and not because the order came back: it *reverses*. At std 2.0 the wider net fits k = 5 fastest and k = 1
# slowest on all five seeds, τ₁/τ₅ = 2.00, 1.82, 2.16, 2.35, 1.86 — above the factor 2 of "no order" on two. The same
# std is a larger initialisation in a wider net (the second layer sums 500 inputs instead of 200), so more of the
# initial function lies above the data's Nyquist frequency: the book's stronger sentence, high before low, shows at
# the book's size. The small-init member keeps the order on all five (τ₅/τ₁ 6.8–8.2). The threshold is not changed
# after seeing this. **On the fresh seeds 500–504**, where the claim is judged, it held on four: τ₁/τ₅ = **2.05**,
# 1.89, 1.39, 1.39, 1.63, and τ₁ > τ₃ > τ₅ again on every seed — over all ten seeds the large-init member fits k = 5
# fastest and k = 1 slowest (small init: τ₅/τ₁ 5.8–7.9 on 500–504). So 图6.2's large-init panel holds at the full
# profile as the reversal the next subsection measures, and the claim's "no order" fails where the reversal passes
# the factor 2 (seeds 2, 3 and 500).

# %%
# NBVAL_CHECK_OUTPUT
show(check_small_init_order(init))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_no_order(init))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_high_first(init))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_high_freq(init))

# %% [markdown]
# ### High before low, read from the fitting times (图6.2)
#
# The book's sentence once more: with a large initialisation "the high frequencies are fitted faster than the low
# ones early in training" (大初始化权重在训练初始阶段的高频拟合速度大于低频). One member's first crossing of 0.1 is a
# noisy witness of that (the exploration above), so here a **batch** answers it: 12 networks, 1-200-200-1 tanh, Adam at
# $10^{-3}$, the same 40 points and target, all initialised at std 1.0 — about 14 times the usual scale
# $1/\sqrt{m} = 0.07$ of width $m = 200$ — trained for 200 steps and recorded at every step. For each member we take
# the fitting times $\tau_1$ and $\tau_5$ (the area under $\min(\Delta_F(k,t), 1)$, as above) and ask whether k = 5 is
# fitted first: $\tau_5/\tau_1 < 1$. The reversal is one of the early stage, as the book says: once all three are below
# 0.1 (after about 70 steps here and on the design seeds), k = 1 goes on further down than k = 5.
#
# A likely reading (ours, not the book's): with weights this large the second layer's tanh neurons are steep, near
# steps in $x$, so the network starts far from the target at every frequency, farthest at the lowest (two design
# members at step 0: $\Delta_F(1) \approx 10$ and 18, $\Delta_F(5) \approx 1.6$ and 3.1). The same steepness weakens
# the low-frequency preference of the gradient (the slow decay in (6.11)), so the errors shrink at a more similar
# pace, and k = 5, starting nearer, is fitted first.
#
# **Claim `ch06.large-init-high-before-low`:** over the 12 members, the median of $\tau_5/\tau_1$ is below 1.
# Designed on seeds 100–113, where the median was 0.70–0.94. How much it depends on the scale (design seeds, same
# network): the median ratio was 1.14–1.22 at std 0.7 (16 members), 0.70–0.94 at 1.0, 0.87–0.94 at 1.5 and
# 0.96–1.05 at 2.0 (the std of the section above, where the three are fitted at one pace; 3 of 4 seeds below 1, by
# less than 0.04). So in our setting high-before-low is a window of scales around std 1–1.5, not a property of every
# large initialisation. The negative control runs the same batch at the small std 0.07, where k = 5 waits for k = 1
# (median ratio 8.3–8.9 on seeds 100–103 within the 200 steps). Validated
# once on seeds 0–19: 20/20 (margin min 0.046, median 0.21; seeds 3 and 5 passed thinly, at 0.046 and 0.047, under
# the 0.05 thin line) and on seeds 500–519: 20/20 (min 0.068, median 0.20).
# The full profile uses 32 members. Left unchecked: the "large fluctuations" (大幅波动) of the book's relative-error
# curves, and the reversal at std 2.0.

# %%
high_config = FPConfig(
    n_train=40, n_test=64, hidden=(200, 200), init_std=1.0, members=pick(quick=12, full=32),
    steps=pick_steps(quick=200, full=200, every=10), record_every=10,
    fine_until=200,                               # every step: the peaks are fitted within the first 100 steps
)
high = run_fprinciple(high_config, seed)
high_tau = fitting_time(high)
high_ratio = high_tau[:, -1] / high_tau[:, 0]

fig, axes = panels(2, width=4.2)
plot_delta_f_curves(axes[0], high.steps, np.median(high.deltas, axis=1), high_config.ks,
                    title="Δ_F(k), median over members")
axes[1].semilogy(np.arange(high_config.members), high_ratio, "o", color="C3")
axes[1].axhline(np.median(high_ratio), color="C3", lw=1, label="median")
axes[1].axhline(1.0, color="0.5", lw=0.8, ls="--")
axes[1].set(xlabel="member", ylabel="τ5/τ1", title="τ5/τ1 per member")
axes[1].legend()
fig.suptitle("Fig. 6.2: large initialisation, the first steps")
plt.show()
print("median fitting times τ_k (k = 1, 3, 5):", np.median(high_tau, axis=0))

# %%
# NBVAL_CHECK_OUTPUT
show(check_large_init_high_before_low(high))

# %% [markdown]
# ## 3 · The activation's spectrum decides (图6.3)
#
# tanh and ReLU have spectra that fall from the lowest frequencies on. The **Ricker wavelet** (6.1)
#
# $$\sigma(x) = \frac{1}{15a}\pi^{1/4}\Bigl(1 - \bigl(\tfrac{x}{a}\bigr)^2\Bigr)e^{-\frac12 (x/a)^2}$$
#
# does not: its transform is proportional to $a^3\xi^2 e^{-a^2\xi^2/2}$, which *rises* up to $\xi = \sqrt2/a$ and
# only then falls. With $a = 0.3$ the peak sits at $\xi \approx 4.7$, with $a = 0.1$ at $\xi \approx 14$: over the
# target's frequencies 1, 3, 5 the narrow wavelet favours the high ones as much as the low ones. The two
# networks below (one batched run, both with ASI — antisymmetric initialisation, 反对称初始化, so that both start
# from the zero function) fit $\sin x + \sin 3x + \sin 5x$ from 24 points. Chapter 4 (图4.9) shows what this does
# to generalisation; here we watch the order.

# %%
a_values = (0.3, 0.1)
fig, axes = panels(2, width=4.2)
xs = np.linspace(-1.5, 1.5, 601)
xis = np.linspace(0.1, 40, 400)
for a in a_values:
    z = xs / a
    axes[0].plot(xs, np.pi ** 0.25 / (15 * a) * (1 - z * z) * np.exp(-0.5 * z * z), label=f"a = {a}")
    axes[1].plot(xis, activation_spectrum("ricker", xis, a=a), label=f"a = {a}")
for k in (1, 3, 5):
    axes[1].axvline(k, color="0.7", lw=0.8, ls=":")
axes[0].set(xlabel="x", title="Fig. 6.3: the Ricker activation (6.1)")
axes[1].set(xlabel="angular frequency ξ (dotted: the target's 1, 3, 5)", title="its spectrum")
axes[0].legend()
axes[1].legend()
plt.show()

# %%
ricker_config = FPConfig(
    n_train=24, n_test=300, act="ricker", a=a_values, asi=True, members=2,
    hidden=pick(quick=(100, 100), full=(200, 200, 100)), steps=pick_steps(quick=500, full=5000, every=10), record_every=10,
    fine_until=100,                               # every step of the first 100: the a = 0.1 peaks converge early
)
ricker = run_fprinciple(ricker_config, seed)
fig, axes = panels(2, width=4.2)
for ax, m in zip(axes, range(2)):
    plot_delta_f_curves(ax, ricker.steps, ricker.deltas[:, m], ricker_config.ks, title=f"Ricker a = {a_values[m]}, ASI")
fig.suptitle("Fig. 6.3: Δ_F(k) with a wide and a narrow Ricker activation")
plt.show()
print("first step with Δ_F < 0.1 (rows: a = 0.3, a = 0.1; columns k = 1, 3, 5):\n", ricker.first)
fig, axes = panels(1, width=4.2)
plot_fitting_times(axes[0], ricker, range(2), [f"a = {a}" for a in a_values], title="Fig. 6.3: fitting times τ_k")
plt.show()

# %% [markdown]
# **Claims `ch06.ricker-order` and `ch06.ricker-no-order` (图6.3).** For a = 0.3: $t_1 < t_3 < t_5$, every peak
# converging. For a = 0.1, the book's "no clear convergence order": the three fitting times $\tau_k$ (the area under
# each Δ_F curve, recorded at every step of the first 100) lie within a factor 2 of each other — the measure and the
# threshold of chapter 4's `ch04.ricker-no-order` (图4.9), set on its design seeds 100–105. The negative control puts
# a = 0.3 in the a = 0.1 slot, where the ratio is over ten. Held on 20/20 of seeds 0–19 and 20/20 of 500–519
# (max/min τ 1.07–1.46; margin min 0.27, median 0.39 and 0.36). At the full profile it held on all of seeds 0–4 and
# of its judged seeds 500–504 (max/min τ 1.67, 1.34, 1.84, 1.25, 1.13 there).

# %%
# NBVAL_CHECK_OUTPUT
show(check_ricker_order(ricker))

# %%
# NBVAL_CHECK_OUTPUT
show(check_ricker_no_order(ricker))

# %% [markdown]
# ## 4 · A derivative in the loss speeds up high frequencies (图6.4)
#
# With
#
# $$L_{\rm grad} = L_{\rm nongrad} + \frac1n\sum_i \bigl(\nabla_x f_\theta(x_i) - \nabla_x f^*(x_i)\bigr)^2 \quad (6.3),
# \qquad L_{\rm nongrad} = \frac1n\sum_i \bigl(f_\theta(x_i) - f^*(x_i)\bigr)^2 \quad (6.2),$$
#
# an error $\varepsilon \sin kx$ costs $\varepsilon^2(1 + k^2)$ instead of $\varepsilon^2$: the derivative's transform
# is the function's times $ik$, so the high frequencies get a larger weight (the factor $|\hat h(k) - \hat f(k)|$ of
# (6.11) is re-weighted). Both runs fit $\sin x + \sin 3x + \sin 5x$ at 128 points with 1-100-100-1 tanh networks
# and Adam at $10^{-3}$: three members with $L_{\rm nongrad}$ for 2000 steps, two with $L_{\rm grad}$ for 1000.

# %%
plain_config = FPConfig(ks=(1, 3, 5), amps=(1.0, 1.0, 1.0), n_train=pick(quick=128, full=600), n_test=256,
                        hidden=pick(quick=(100, 100), full=(200, 200, 200, 100)), lr=pick(quick=1e-3, full=1e-4),
                        steps=pick_steps(quick=2000, full=20000, every=50, smoke=10),
                        record_every=pick(quick=10, full=50), members=pick(quick=3, full=5, smoke=2))
plain = run_fprinciple(plain_config, seed)
grad_config = FPConfig(ks=plain_config.ks, amps=plain_config.amps, n_train=plain_config.n_train, n_test=256,
                       hidden=plain_config.hidden, lr=plain_config.lr, loss="mse+grad",
                       steps=pick_steps(quick=1000, full=10000, every=10, smoke=4), record_every=10, members=2)
grad = run_fprinciple(grad_config, seed)

fig, axes = panels(2, width=4.2)
for ax, res, name in zip(axes, (plain, grad), ("L_nongrad (6.2)", "L_grad (6.3)")):
    plot_delta_f_curves(ax, res.steps, res.deltas[:, 0], res.config.ks, title=name)
    ax.set_xlim(0, plain.steps[-1])
fig.suptitle("Fig. 6.4: Δ_F(k) without and with the derivative term")
plt.show()
print("first steps with L_nongrad:\n", plain.first, "\nfirst steps with L_grad:\n", grad.first)

# %% [markdown]
# **Claim `ch06.grad-loss-speedup` (图6.4):** the median first step of k = 5 with $L_{\rm grad}$ is below half of
# that with $L_{\rm nongrad}$ (a run that never converges k = 5 with $L_{\rm grad}$ fails it).
#
# **At the full profile** (600 points, 1-200-200-200-100-1, Adam at 10⁻⁴; seeds 0–4 on the CPU) the speed-up holds
# but sits at the claim's factor: the median first step of k = 5 is 885–1045 with $L_{\rm grad}$ against 1750–1850
# with $L_{\rm nongrad}$, ratios 0.48–0.60, so the claim held on seeds 0 and 1 only. The book says "clearly faster"
# (明显加快) and gives no setting; the factor 2 is ours, set at the quick profile. The full profile also shows that
# the derivative term re-weights rather than only accelerates: with $L_{\rm grad}$, k = 3 converges *later* (750–1250
# steps against 550–750), at about the step of k = 5. Seeds 500–504 (not this claim's judged seeds, run with the
# chapter) repeat it: ratios 0.59, 0.52, 0.51, 0.42, 0.55 (held on one), k = 3 again later with $L_{\rm grad}$
# (890–1195 steps against 650–700).

# %%
# NBVAL_CHECK_OUTPUT
show(check_grad_loss(grad, plain))

# %% [markdown]
# ## Explorer (for instructors)
#
# The three factors on a target of your choice: change the initialisation std, the activation (try `ricker`
# with a = 0.1 and ASI on, or `tanh` with init std 2), the loss, the target's frequencies and amplitudes, the
# width or the learning rate, and watch the fit, its spectrum and the Δ_F(k) heat map. Each change retrains one
# network (about a second).

# %%
from companion.experiments.ch06_mechanism import make_explorer

explorer = make_explorer()
explorer

# %% [markdown]
# ## Exercises (习题)
#
# Each cell holds `None` where your answer goes; the check underneath says whether it is right and
# gives a hint otherwise.
#
# **习题7, 8 (and 习题13 of chapter 4).** By which factor does $L_{\rm grad}$ (6.3) weight the squared error of a
# frequency-$k$ component $\varepsilon\sin kx$, compared with $L_{\rm nongrad}$ (6.2)? Write it as a function of $k$.
#
# Worked solution: run `from companion.solutions.ch06 import solution; solution(7)` (on the site: the "Solution" toggle below).

# %%
from companion.experiments.ch06_mechanism import check_gradient_weight, check_tanh_spectrum

gradient_weight = None  # e.g. lambda k: ...
check_gradient_weight(gradient_weight)

# %% [markdown]
# **习题5, 10.** How fast does the spectrum of a tanh neuron decay? Write $|\int \tanh(wx)\,e^{-i\xi x}dx|$ as a
# function of $\xi > 0$ and $w$ (the check compares it with a numerical transform). Then compare with ReLU: its
# transform decays only like a power of $\xi$ — what does that predict for the frequency principle?
#
# Worked solution: run `from companion.solutions.ch06 import solution; solution(5)` (on the site: the "Solution" toggle below).

# %%
tanh_spectrum = None  # e.g. lambda xi, w: ...
check_tanh_spectrum(tanh_spectrum)

# %% [markdown]
# **Open questions** (习题2, 3, 9, 11): why does a large initialisation break the principle, in terms of (6.11)?
# How would you choose an initialisation range that keeps it (try the explorer's init-std slider)? Design a
# loss that makes the principle *stronger* (hint: weight frequency $k$ by a decreasing function, the opposite of
# (6.3)).
#
# Worked solution: run `from companion.solutions.ch06 import solution; solution("Open questions")` (on the site: the "Solution" toggle below).
#
# ## Summary
#
# * The frequency principle comes from (6.11): the transform of a smooth activation decays with frequency, so
#   at small weights the low frequencies dominate the gradient.
# * Each factor of (6.11) can break it: a large initialisation (图6.2) keeps no order (at std 1.0 it even fits k = 5
#   before k = 1) and leaves frequencies above what the data can pin down — the points are fitted, the function
#   between them is not; an activation
#   whose spectrum peaks at high frequency (Ricker with small a, 图6.3); a loss that weights high frequencies
#   (图6.4), as in solving differential equations, where the loss often holds derivatives.
# * Chapter 4's notebook shows what the loss of the principle costs (图4.9–4.11); chapter 5's designs networks
#   that put high frequencies within easy reach on purpose.
