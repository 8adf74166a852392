"""The chapter map: notebook ↔ book chapter ↔ the figures it reproduces.

Every chapter notebook of ``chapters/`` has one entry here; the README's chapter map, the
``list`` command and the book site read it.  A chapter whose source file does not exist yet is
listed as planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS_DIR = ROOT / "chapters"


@dataclass(frozen=True)
class Chapter:
    slug: str
    book: str
    title: str
    title_zh: str
    figures: tuple[str, ...]

    @property
    def source(self) -> Path:
        return CHAPTERS_DIR / f"{self.slug}.py"

    @property
    def notebook(self) -> Path:
        return CHAPTERS_DIR / f"{self.slug}.ipynb"

    @property
    def available(self) -> bool:
        return self.source.exists()


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("ch04_frequency_principle", "4–6", "The frequency principle", "频率原则",
            ("图4.2", "图4.4", "图4.7", "图4.9", "图4.11", "图4.12", "图4.13", "§5 MscaleDNN / Fourier features",
             "图6.2", "图6.3", "图6.4")),
    Chapter("ch07_phase_diagram", "7", "The phase diagram of two-layer ReLU networks", "相图分析",
            ("图7.1", "图7.3", "图7.4", "图7.5", "表7.1", "图7.7")),
    Chapter("ch08_condensation", "8", "Condensation", "凝聚现象",
            ("图8.1–8.4", "图8.9–8.11", "(8.5)", "图8.12", "图8.13", "图8.16")),
    Chapter("ch09_embedding_principle", "9", "The embedding principle of the loss landscape", "损失景观的嵌入原则",
            ("图9.1", "图9.2", "图9.3", "图9.4", "图9.5", "图9.7", "图9.8")),
    Chapter("ch10_optimistic_estimate", "10", "The optimistic estimate of sample size", "乐观估计",
            ("(10.9)", "例2", "(10.14)", "(10.15)", "(10.17)", "表10.1", "图10.1", "图10.2", "图10.3", "图10.5")),
    Chapter("ch11_flatness", "11", "Flatness of solutions and the Edge of Stability", "解的平坦性",
            ("(11.8)–(11.11)", "图11.3", "图11.4", "图11.5", "图11.6", "图11.8", "表11.1", "表11.4", "习题11")),
    Chapter("ch12_anchor_functions", "12", "Anchor functions for language models", "锚函数",
            ("§12.5.1", "图12.4", "图12.15", "§12.6.2", "图12.13")),
    Chapter("ch13_complexity_control", "13", "Complexity control and reasoning", "复杂度控制对语言模型推理能力的影响",
            ("图13.5", "图13.6", "图13.7–13.8", "图13.10", "图13.12")),
    Chapter("ch14_icl_implicit_dw", "14.3", "In-context learning as an implicit weight update", "大型语言模型的上下文内学习",
            ("§14.3", "ΔW theorem", "ICL vs GD / ridge / OLS", "ΔW convergence", "fine-tuning vs ΔW",
             "ICML 2024 attention")),
    Chapter("ch15_pinns", "15", "Neural networks for differential equations", "神经网络求解微分方程",
            ("§15.1", "(15.3)–(15.16)", "图15.1", "§15.5.1")),
)


def find(name: str) -> Chapter:
    """The chapter whose slug is ``name`` or starts with it (``ch04`` finds ``ch04_frequency_principle``)."""
    matches = [c for c in CHAPTERS if c.slug == name or c.slug.startswith(name)]
    if len(matches) != 1:
        raise ValueError(f"unknown chapter {name!r}; choose one of {', '.join(c.slug for c in CHAPTERS)}")
    return matches[0]


def available() -> list[Chapter]:
    """Chapters whose notebook source exists, in book order."""
    return [c for c in CHAPTERS if c.available]
