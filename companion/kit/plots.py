"""The house style and the figure helpers shared by all chapters.

Both editions of the companion show the figures of one run, so the words in a figure are drawn in English and
Chinese: every figure made through pyplot is given, just before it is drawn, the Chinese of its titles, axis
labels, legend entries, annotations and word tick labels (:func:`add_chinese`, phrase tables in
``companion/translations/zh/figures.toml``); symbols, numbers and 图 numbers stay as they are.

Text in figures is drawn with DejaVu Sans and, for Chinese characters (图4.7, 中文 labels), the first CJK font of
:data:`CJK_FONTS` that the system has: matplotlib takes each glyph from the first family of ``font.family`` that
has it.  Debian/Ubuntu: ``apt-get install fonts-wqy-microhei`` (what CI installs) or ``fonts-noto-cjk``.  Without
any (a GPU server, say), the figures keep their English words alone and :class:`NoCJKFont` says so once, rather than
drawing the Chinese as empty boxes; Chinese that a chapter writes itself (``COMPANION_LANG=zh``) still needs the font.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import Animation
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.category import StrCategoryFormatter
from matplotlib.ticker import (FixedFormatter, FormatStrFormatter, Formatter, FuncFormatter, LogLocator, MaxNLocator,
                               NullFormatter, NullLocator)

from companion.kit.i18n import bilingual


CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Serif CJK SC", "WenQuanYi Zen Hei", "Source Han Sans SC",
             "Microsoft YaHei", "PingFang SC", "SimHei")


class NoCJKFont(UserWarning):
    """The system has none of :data:`CJK_FONTS`: figures are drawn without their Chinese words."""


def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` installed on this system, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def _all_axes(fig: Figure) -> Iterator[Axes]:
    """The axes of ``fig`` and, inside each, its inset axes (``ax.inset_axes``), which ``fig.axes`` leaves out."""
    def within(ax: Axes) -> Iterator[Axes]:
        yield ax
        for child in ax.get_children():
            if isinstance(child, Axes):
                yield from within(child)

    for ax in fig.axes:
        yield from within(ax)


def _texts(fig: Figure) -> Iterator[tuple[Text, bool]]:
    """Every word-bearing text of ``fig`` but the tick labels, with whether it is a title (drawn on two lines)."""
    for title in (fig._suptitle, fig._supxlabel, fig._supylabel):  # noqa: SLF001 — matplotlib keeps them here
        if title is not None:
            yield title, title is fig._suptitle  # noqa: SLF001
    yield from ((text, False) for text in fig.texts)
    for legend in fig.legends:
        yield from ((text, False) for text in legend.get_texts())
    for ax in _all_axes(fig):
        yield from ((title, True) for title in (ax.title, ax._left_title, ax._right_title))  # noqa: SLF001
        yield from ((label, False) for label in (ax.xaxis.label, ax.yaxis.label))
        yield from ((text, False) for text in ax.texts)
        if ax.get_legend() is not None:
            yield from ((text, False) for text in ax.get_legend().get_texts())


def add_chinese(fig: Figure) -> Figure:
    """Give every English text of ``fig`` its Chinese (:func:`companion.kit.i18n.bilingual`); idempotent.

    Tick labels given as words (``set_xticks(positions, ["identity", …])``, categorical axes) get theirs through
    their formatter, which writes the tick texts at drawing time.
    """
    for text, title in _texts(fig):
        text.set_text(bilingual(text.get_text(), two_lines=title))
    for ax in _all_axes(fig):
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, (FixedFormatter, FuncFormatter, StrCategoryFormatter)):
                axis.set_major_formatter(_WithChinese(formatter))
    return fig


class _WithChinese(Formatter):
    """A tick formatter that writes what ``inner`` writes, with its Chinese below where it has words."""

    def __init__(self, inner: Formatter) -> None:
        self.inner = inner

    def __call__(self, x: float, pos: int | None = None) -> str:
        label = self.inner(x, pos)  # a label given as a number (set_xticklabels(GAMMAS)) is left to matplotlib
        return bilingual(label, two_lines=True) if isinstance(label, str) else label

    def set_locs(self, locs: Sequence[float]) -> None:
        self.inner.set_locs(locs)


def plain_narrow_log_ticks(fig: Figure) -> Figure:
    """Plain-number tick labels on every narrow log axis of ``fig`` that keeps matplotlib's default ticks; idempotent.

    matplotlib labels the minor ticks of a log axis narrower than two decades in scientific notation (1.6×10⁻¹,
    1.7×10⁻¹, … or 3×10², 4×10², 6×10², …), and the labels run into each other.  Narrower than a decade, the axis gets
    about four evenly spaced ticks (0.16, 0.18, …) and no minor ticks; from one decade to two, ticks at 1, 2 and 5
    times a power of ten (50, 100, 200, 500), the minor ticks kept unlabelled.  Wider axes keep matplotlib's ticks.
    """
    for ax in _all_axes(fig):
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            if axis.get_scale() != "log" or not isinstance(axis.get_major_locator(), LogLocator) or lo <= 0:
                continue
            if hi < 10 * lo:
                axis.set_major_locator(MaxNLocator(nbins=4))
                axis.set_minor_locator(NullLocator())
            elif hi < 100 * lo:
                axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_minor_formatter(NullFormatter())
            else:
                continue
            axis.set_major_formatter(FormatStrFormatter("%g"))
    return fig


def bilingual_on_draw(fig: Figure) -> None:
    """The pyplot figure hook (``rcParams["figure.hooks"]``): :func:`add_chinese` and :func:`plain_narrow_log_ticks`
    run each time ``fig`` is drawn — shown in a notebook, saved, or rendered by an explorer — so labels set and data
    plotted after creation are covered too.  :func:`add_chinese` only where the style has a CJK font to draw with
    (:func:`use_style`); without one the figure keeps its English and :class:`NoCJKFont` warns."""
    draw = fig.draw

    def draw_with_chinese(renderer):  # noqa: ANN001 — matplotlib's renderer
        plain_narrow_log_ticks(fig)
        if any(family in CJK_FONTS for family in mpl.rcParams["font.family"]):
            add_chinese(fig)
        else:
            warnings.warn("no CJK font is installed, so figures are drawn in English only (and Chinese text that "
                          "a chapter writes, as with COMPANION_LANG=zh, as empty boxes); install one of "
                          f"{', '.join(CJK_FONTS)} (Debian/Ubuntu: apt-get install fonts-wqy-microhei)", NoCJKFont,
                          stacklevel=2)
        return draw(renderer)

    fig.draw = draw_with_chinese


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
        "figure.hooks": ["companion.kit.plots:bilingual_on_draw"],
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
