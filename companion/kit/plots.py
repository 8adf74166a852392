"""The house style and the figure helpers shared by all chapters.

Text in figures is drawn with DejaVu Sans and, for Chinese characters (图4.7, 中文 labels), the first CJK font of
:data:`CJK_FONTS` that the system has: matplotlib takes each glyph from the first family of ``font.family`` that
has it.  Debian/Ubuntu: ``apt-get install fonts-wqy-microhei`` (what CI installs) or ``fonts-noto-cjk``; without
any, Chinese characters in a figure are drawn as empty boxes and matplotlib warns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import Animation
from matplotlib.axes import Axes
from matplotlib.figure import Figure


CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Serif CJK SC", "WenQuanYi Zen Hei", "Source Han Sans SC",
             "Microsoft YaHei", "PingFang SC", "SimHei")


def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` installed on this system, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")


def use_style() -> None:
    """Apply the companion's matplotlib style (sizes readable on a projector, light grid, a CJK font for 中文)."""
    cjk = cjk_font()
    mpl.rcParams.update({
        "font.family": ["DejaVu Sans"] + ([cjk] if cjk else []),
        "figure.dpi": 90, "savefig.dpi": 110, "figure.figsize": (8.0, 3.2),
        "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
        "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 8, "legend.frameon": False,
        "axes.prop_cycle": mpl.cycler(color=PALETTE), "image.cmap": "viridis",
    })


def panels(n: int, width: float = 3.4, height: float = 2.9, nrows: int = 1,
           subplot_kw: dict | None = None) -> tuple[Figure, np.ndarray]:
    """A row (or grid) of ``n`` axes, returned flat; ``subplot_kw`` as in ``plt.subplots`` (e.g. polar)."""
    ncols = int(np.ceil(n / nrows))
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                             layout="constrained", subplot_kw=subplot_kw)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def plot_fit(ax: Axes, x: np.ndarray, target: np.ndarray, output: np.ndarray | None = None, *,
             x_train: np.ndarray | None = None, y_train: np.ndarray | None = None, title: str = "") -> None:
    """Target (dashed), network output (solid) and training points (dots) on one axis."""
    ax.plot(x, target, "--", color="0.35", lw=1.2, label="target")
    if output is not None:
        ax.plot(x, output, color=PALETTE[1], lw=1.6, label="network")
    if x_train is not None and y_train is not None:
        ax.plot(x_train, y_train, ".", color=PALETTE[0], ms=4, label="training data")
    ax.set_xlabel("x")
    ax.set_title(title)


def plot_delta_f(ax: Axes, steps: np.ndarray, deltas: np.ndarray, ks: Sequence[int], *,
                 title: str = "relative error Δ_F(k)", vmax: float = 1.0) -> None:
    """Heat map of Δ_F(k) over training steps (rows: frequencies, columns: recorded steps), 图4.7 right."""
    image = ax.imshow(np.asarray(deltas).T, aspect="auto", origin="lower", cmap="RdBu_r", vmin=0, vmax=vmax,
                      extent=(steps[0], steps[-1], -0.5, len(ks) - 0.5), interpolation="nearest")
    ax.set_yticks(range(len(ks)), [f"k={k}" for k in ks])
    ax.set_xlabel("step")
    ax.set_title(title)
    ax.grid(False)
    plt.colorbar(image, ax=ax, fraction=0.05)


def plot_delta_f_curves(ax: Axes, steps: np.ndarray, deltas: np.ndarray, ks: Sequence[int],
                        members: Sequence[str] = ("",), *, title: str = "Δ_F(k)", threshold: float = 0.1) -> None:
    """Δ_F(k) against steps on a log scale: one colour per frequency, one line style per member.

    ``deltas`` has shape (T, len(ks)) for one run or (T, M, len(ks)) for M members named in ``members``.
    """
    deltas = np.asarray(deltas)
    if deltas.ndim == 2:
        deltas = deltas[:, None, :]
    styles = ("-", ":", "--", "-.")
    for m, name in enumerate(members):
        for j, k in enumerate(ks):
            label = f"{name}, k={k}" if name else f"k={k}"
            ax.plot(steps, deltas[:, m, j], styles[m % len(styles)], color=PALETTE[j % len(PALETTE)], label=label)
    ax.axhline(threshold, color="0.5", lw=0.8, ls="--")
    ax.set(yscale="log", xlabel="step", title=title)
    ax.legend(ncol=len(members))


def plot_curves(ax: Axes, steps: np.ndarray, curves: dict[str, np.ndarray], *, logy: bool = True,
                title: str = "", ylabel: str = "loss") -> None:
    """Several named curves against training steps (log scale by default)."""
    for name, values in curves.items():
        ax.plot(steps, values, label=name)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()


_ICONS = {"play fa-flip-horizontal": "&#9664;", "play": "&#9654;", "pause": "&#10074;&#10074;",
          "step-forward": "&#9654;|", "step-backward": "|&#9664;", "fast-forward": "&#9654;&#9654;|",
          "fast-backward": "|&#9664;&#9664;", "plus": "+", "minus": "&minus;"}


def offline_jshtml(animation: Animation, **kwargs) -> str:
    """``animation.to_jshtml()`` without its font-awesome stylesheet, which matplotlib loads from a CDN.

    The player's icons become plain Unicode symbols, so the notebook and the book site work offline.
    """
    html = animation.to_jshtml(**kwargs)
    html = re.sub(r"<link[^>]*font-awesome[^>]*>", "", html)
    html = re.sub(r'<i class="fa fa-([a-z -]+)"></i>',
                  lambda m: _ICONS.get(m.group(1).replace("fa-", ""), m.group(1)), html)
    return html


use_style()
