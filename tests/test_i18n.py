"""The Chinese edition: complete, in step with the English, built from the same run; the language setting; CJK figures."""

from __future__ import annotations

import io
import re
import warnings

import matplotlib as mpl
import matplotlib.pyplot as plt
import nbformat
import pytest
from browser_support import missing

from companion.__main__ import main
from companion.kit import claims, i18n, plots
from companion.kit.claims import ClaimSpec, compare
from companion.kit.exercises import feedback
from companion.tools import catalog, reproduction, runner, site, translate


@pytest.mark.parametrize("name", translate.names())
def test_every_cell_and_text_has_a_chinese_translation_of_its_current_english(name: str) -> None:
    found = translate.problems(name)
    assert not found, "\n".join(found[:20]) + "\n(python -m companion translate names them all)"


TOY = '''# %% [markdown]
# # Chapter 97 — A toy
# The toy's first paragraph.

# %%
from companion.kit.claims import ClaimSpec
TOY = ClaimSpec("ch97.toy", "图9.7", "the toy holds")

# %% [markdown]
# ## Second section
'''


def _toy(tmp_path, monkeypatch, translation: str) -> list[str]:
    chapters, folder = tmp_path / "chapters", tmp_path / "translations"
    chapters.mkdir(exist_ok=True)
    (folder / "zh").mkdir(parents=True, exist_ok=True)
    (chapters / "ch97_toy.py").write_text(TOY, encoding="utf-8")
    (folder / "zh" / "ch97_toy.toml").write_text(translation, encoding="utf-8")
    monkeypatch.setattr(catalog, "CHAPTERS_DIR", chapters)
    monkeypatch.setattr(i18n, "TRANSLATIONS_DIR", folder)
    i18n.load.cache_clear()
    try:
        return translate.problems("ch97_toy")
    finally:
        i18n.load.cache_clear()


def _key(text: str) -> str:
    return i18n.english_key(text)


FIRST = "# Chapter 97 — A toy\nThe toy's first paragraph."


def _translation(first_english: str = FIRST, first: str = "# 第97章 玩具\n玩具的第一段。", second: str = "## 第二节",
                 text: str = "玩具成立") -> str:
    """A translation file of the toy chapter: its two cells (the first keyed by ``first_english``) and its claim."""
    return (f"[cells.{_key(first_english)}]\nzh = '''\n{first}\n'''\n\n"
            f"[cells.{_key('## Second section')}]\nzh = '''\n{second}\n'''\n\n"
            f"[texts.{_key('the toy holds')}]\nen = \"the toy holds\"\nzh = \"{text}\"\n")


def test_a_complete_toy_translation_passes_and_update_writes_todo_entries(tmp_path, monkeypatch) -> None:
    good = _translation()
    assert _toy(tmp_path, monkeypatch, good) == []
    # --update keeps what matches and adds the missing as todo entries holding the English
    problems = _toy(tmp_path, monkeypatch, good.split("[texts.")[0])
    assert len(problems) == 1 and "no translation of text" in problems[0] and "the toy holds" in problems[0]
    i18n.load.cache_clear()
    path = translate.update("ch97_toy")
    assert "todo = true" in path.read_text(encoding="utf-8") and "玩具的第一段" in path.read_text(encoding="utf-8")
    i18n.load.cache_clear()
    assert any("still marked todo" in p for p in translate.problems("ch97_toy"))


def test_an_english_cell_changed_after_its_translation_is_named(tmp_path, monkeypatch) -> None:
    old = "# Chapter 97 — A toy\nThe toy's first paragraph, before an edit."
    problems = _toy(tmp_path, monkeypatch, _translation(first_english=old))
    assert any("no translation of cell" in p and "A toy" in p for p in problems), problems
    assert any(f"cell {_key(old)} translates English that no longer exists" in p for p in problems), problems


def test_a_translation_that_is_the_english_or_holds_no_chinese_is_refused(tmp_path, monkeypatch) -> None:
    problems = _toy(tmp_path, monkeypatch, _translation(first=FIRST, second="## Section 2", text="the toy holds"))
    assert sum("holds no Chinese" in p for p in problems) == 3, problems


def test_tr_follows_the_language_setting_and_falls_back_to_english(monkeypatch) -> None:
    monkeypatch.setenv("COMPANION_LANG", "zh")
    assert i18n.has_chinese(i18n.tr(claims.PASS_MARK))
    assert i18n.tr("a sentence nobody translated") == "a sentence nobody translated"
    assert i18n.tr(claims.PASS_MARK, "en") == claims.PASS_MARK
    monkeypatch.setenv("COMPANION_LANG", "fr")
    with pytest.raises(i18n.LanguageError, match="unknown language 'fr'.*en, zh"):
        i18n.tr(claims.PASS_MARK)


def test_a_claim_and_an_exercise_print_in_chinese_and_log_in_english(monkeypatch, capsys, tmp_path) -> None:
    from companion.experiments import ch07_phase

    spec: ClaimSpec = ch07_phase.KINKS
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("COMPANION_LANG", "zh")
    monkeypatch.setenv("COMPANION_CLAIMS_LOG", str(log))
    claims.show(spec.judge(compare("one", 1, "<", "two", 2)))
    out = capsys.readouterr().out
    assert i18n.tr(spec.text) in out and i18n.has_chinese(out.splitlines()[0]) and spec.text not in out
    assert claims.read_log(log)[0].text == spec.text  # the record keeps the claim's English
    feedback("习题1", None, lambda a: True, "no hint needed")
    assert i18n.has_chinese(capsys.readouterr().out)


def test_the_chinese_edition_of_a_chapter_keeps_the_code_and_the_run(monkeypatch) -> None:
    """Code cells and outputs' numbers are the committed run's; markdown and verdict lines are Chinese."""
    for notebook in site.chapter_notebooks():
        english = nbformat.read(notebook, as_version=4)
        chinese = nbformat.read(notebook, as_version=4)
        site.localize_markdown(chinese, notebook.stem, "zh")
        site.localize_outputs(chinese, "zh")
        assert [c.source for c in chinese.cells if c.cell_type == "code"] == \
            [c.source for c in english.cells if c.cell_type == "code"], notebook.stem
        for en, zh in zip(english.cells, chinese.cells):
            if en.cell_type == "markdown" and en.source.strip():
                assert zh.source != en.source and i18n.has_chinese(zh.source), (notebook.stem, en.source[:60])
        text = "\n".join(site._output_text(o) for c in chinese.cells for o in c.get("outputs", []))
        marks = (claims.PASS_MARK, claims.FAIL_MARK, claims.EXPLORATION_MARK, claims.IDENTITY_PASS_MARK,
                 claims.IDENTITY_FAIL_MARK)
        assert not any(mark in text for mark in marks), notebook.stem
        assert len(site.read_claims(notebook)) == sum(text.count(i18n.tr(mark, "zh")) for mark in marks)


@pytest.mark.parametrize("source, shown", [
    ("输出\n   与该最优解", "输出与该最优解"),  # a list item's continuation line
    ("凝聚。\n**不做新的训练**：", "凝聚。**不做新的训练**："),
    ("临界区域，\n“随着 m", "临界区域，“随着 m"),
    ("标准误）\n——在这样", "标准误）——在这样"),
    ("一行。\n* MscaleDNN", "一行。\n* MscaleDNN"),  # a list item stays one
    ("如下表\n| 列 |", "如下表\n| 列 |"),
    ("小结\n# 第二节", "小结\n# 第二节"),
    ("第一段。\n\n第二段", "第一段。\n\n第二段"),
    ("特征值\nλ_max", "特征值\nλ_max"),
    ("中的\n**“引号”**", "中的\n**“引号”**"),  # emphasis opening on a mark would no longer open
])
def test_a_line_break_inside_a_chinese_sentence_is_not_shown_as_a_space(source, shown) -> None:
    assert site._CJK_LINE_BREAK.sub("", source) == shown


def test_no_chinese_page_shows_a_space_where_its_source_only_broke_the_line() -> None:
    gap = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]\n[ \t]*[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
    for notebook in site.chapter_notebooks():
        chinese = nbformat.read(notebook, as_version=4)
        site.localize_markdown(chinese, notebook.stem, "zh")
        site.add_solution_toggles(chinese, notebook.stem, "zh")  # the worked solutions' text too
        for cell in chinese.cells:
            if cell.cell_type == "markdown":
                text = site._FENCED_CODE.sub("", cell.source)
                assert not gap.search(text), (notebook.stem, gap.search(text).group())
    assert not gap.search(site.claims_markdown(site.chapter_notebooks(), "zh"))


def test_an_explorer_shows_chinese_labels_in_a_chinese_kernel(monkeypatch) -> None:
    from companion.tools.precompute import EXPLORERS

    monkeypatch.setenv("COMPANION_LANG", "zh")
    explorer = EXPLORERS["ch07_phase_diagram"].build()
    assert all(i18n.has_chinese(c.description) for c in explorer.controls.values())
    assert i18n.has_chinese(explorer.widget.children[0].value)


def test_the_claims_report_in_chinese() -> None:
    logged = claims.LoggedClaim(id="ch07.kinks", figure="图7.1", text=claims.ClaimSpec.registry["ch07.kinks"].text
                                if "ch07.kinks" in claims.ClaimSpec.registry else "x", chapter="ch07", exploration=False,
                                passed=True, margin=0.5, unit="rel", thin=False, tightest="a", conditions=[], measured={})
    run = runner.ChapterRun("ch07_phase_diagram", 1.0, [logged])
    report = runner.format_report([run], "zh")
    assert "结论" in report and "1/1" in report
    widths = {runner._width(line) for line in report.splitlines()[:3]}
    assert len(widths) == 1, "the columns of the Chinese report do not line up"


def test_the_reproduction_page_in_chinese(tmp_path) -> None:
    run = runner.ChapterRun("ch07_phase_diagram", 1.0, [])
    page = reproduction.write_index([run], tmp_path, "quick", 0, "zh").read_text(encoding="utf-8")
    assert "lang='zh'" in page and i18n.tr("Reproduction report", "zh") in page and i18n.has_chinese(page)


def test_the_command_line_names_a_bad_language(monkeypatch, capsys) -> None:
    assert main(["run", "ch04", "--lang", "fr"]) == 2
    assert "unknown language 'fr'" in capsys.readouterr().err
    monkeypatch.setenv("COMPANION_LANG", "Klingon")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert "unknown language 'Klingon'" in err and "en, zh" in err and "Traceback" not in err


def test_a_chinese_figure_title_renders_with_no_missing_glyph() -> None:
    """The package configures matplotlib with the system's CJK font; a missing glyph warns, and here fails."""
    if plots.cjk_font() is None:
        missing("A CJK font", "install Debian's fonts-wqy-microhei (or fonts-noto-cjk)")
    plots.use_style()
    fig, ax = plt.subplots()
    ax.set_title("图4.7 频率原则：低频先收敛 Δ_F(k)")
    ax.set_xlabel("训练步数 (steps)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph … missing from font(s) …" becomes a failure
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)


def test_without_a_cjk_font_figures_keep_their_english_alone_and_say_why(monkeypatch) -> None:
    """A machine with no CJK font (a GPU server, say) gets English figures and one warning naming the fix, not
    Chinese words drawn as empty boxes; with the font the same title gets its Chinese."""
    monkeypatch.setattr(i18n, "figure_words", lambda language="zh": FIGURE_TABLE)
    titles = {}
    for family in (["DejaVu Sans", plots.CJK_FONTS[0]], ["DejaVu Sans"]):
        monkeypatch.setitem(mpl.rcParams, "font.family", family)
        fig, ax = plt.subplots()
        ax.set_title("training loss")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message="(?i).*glyph")  # the named font need not be installed here
            warnings.filterwarnings("ignore", message="(?i).*findfont")
            fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
        titles[len(family)] = (ax.get_title(), [w.category for w in caught])
    assert titles[2] == ("training loss\n训练损失", [])
    assert titles[1] == ("training loss", [plots.NoCJKFont])


FIGURE_TABLE = {"step": "步数", "training loss": "训练损失", "loss": "损失", "identity": "恒等任务", "layer": "层",
                "key at": "关键项位于"}


def test_figure_words_are_given_in_both_languages(monkeypatch) -> None:
    monkeypatch.setattr(i18n, "figure_words", lambda language="zh": FIGURE_TABLE)
    assert i18n.bilingual("step") == "step · 步数"
    assert i18n.bilingual("training loss", two_lines=True) == "training loss\n训练损失"
    assert i18n.bilingual("layer 1 (key at 5)") == "layer 1 (key at 5)\n层 1 (关键项位于 5)"
    with pytest.warns(i18n.MissingFigureWords, match="loss of the training"):
        assert i18n.bilingual("loss of the training") == "loss of the training", "untranslated: left as it is"
    for neutral in ("k=1", "$\\gamma$ = 0.5", "mod_residue", "图4.7", "ReLU, tanh", "W_Q, m=100", "Δ_F(k)", "1e-3"):
        assert i18n.bilingual(neutral) == neutral
    assert i18n.bilingual("step · 步数") == "step · 步数", "text that holds Chinese is not translated again"


def test_a_figure_is_drawn_with_the_chinese_of_its_words(monkeypatch) -> None:
    """Title, axis labels, legend and word tick labels of a pyplot figure get their Chinese when it is drawn, once."""
    monkeypatch.setattr(i18n, "figure_words", lambda language="zh": FIGURE_TABLE)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0], label="training loss")
    ax.set(xlabel="step", title="layer 2")
    ax.set_xticks([0, 1], ["identity", "k=1"])
    ax.legend()
    fig.suptitle("loss")
    for _ in range(2):  # drawn twice: nothing added twice
        fig.savefig(io.BytesIO(), format="png")
    assert ax.get_title() == "layer 2\n层 2" and ax.get_xlabel() == "step · 步数"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["training loss · 训练损失"]
    assert fig.get_suptitle() == "loss\n损失"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["identity\n恒等任务", "k=1"]
    plt.close(fig)


def test_every_figure_of_the_committed_notebooks_has_the_chinese_of_its_words() -> None:
    """A figure text with English the phrase table does not cover warns while the notebook runs (MissingFigureWords
    in its output); the committed, executed notebooks hold no such warning.  (In the tests the warning is an error:
    pyproject's filterwarnings.)"""
    found = []
    for chapter in catalog.CHAPTERS:
        nb = nbformat.read(catalog.CHAPTERS_DIR / f"{chapter.slug}.ipynb", as_version=4)
        for i, cell in enumerate(nb.cells):
            for out in cell.get("outputs", []):
                text = out.get("text", "") if out.get("output_type") == "stream" else ""
                found += [f"{chapter.slug} cell {i}: {line}" for line in text.splitlines() if "no Chinese for" in line]
    assert not found, "\n".join(found[:20])


def test_a_figure_phrase_translated_to_english_is_refused_but_a_symbol_or_a_name_is_kept(monkeypatch) -> None:
    table = {"step": "step", "loss": "损失 loss", "lam": "λ", "the ricker activation": "Ricker 激活函数"}
    monkeypatch.setattr(i18n, "figure_words", lambda language="zh": table)
    monkeypatch.setattr(i18n.figure_words, "cache_clear", lambda: None, raising=False)
    assert translate.figure_word_problems() == ["figures: the translation of 'step' keeps English words: 'step'",
                                                "figures: the translation of 'loss' keeps English words: '损失 loss'"]


def test_an_inset_gets_the_chinese_of_its_words_too(monkeypatch) -> None:
    monkeypatch.setattr(i18n, "figure_words", lambda language="zh": FIGURE_TABLE)
    fig, ax = plt.subplots()
    inset = ax.inset_axes([0.6, 0.6, 0.3, 0.3])
    inset.plot([0, 1], [0, 1], label="loss")
    inset.set(title="layer 1", xlabel="step")
    inset.legend()
    fig.savefig(io.BytesIO(), format="png")
    assert inset.get_title() == "layer 1\n层 1" and inset.get_xlabel() == "step · 步数"
    assert [t.get_text() for t in inset.get_legend().get_texts()] == ["loss · 损失"]
    plt.close(fig)


def test_a_log_axis_narrower_than_two_decades_is_labelled_with_a_few_plain_numbers() -> None:
    """图11.5's flatness axis spans 0.19 decades: matplotlib would label its nine minor ticks 1.6×10⁻¹ … 2.4×10⁻¹,
    one run-together line; 图7.4's width axis (m = 250 … 4000, 1.2 decades) 3×10², 4×10², 6×10², 10³, 2×10³ …
    The house style draws a few plain numbers there (1, 2, 5 × 10ᵏ from one decade on) and leaves wider log axes
    alone."""
    import numpy as np
    from matplotlib.ticker import LogLocator

    plots.use_style()
    fig, (narrow, decade, wide) = plots.panels(3)
    x = np.geomspace(0.155, 0.24, 20)
    narrow.loglog(x, 1e-3 * (x / x[0]) ** -4)                       # x: 0.19 decades, y: 0.76 decades
    decade.loglog([250, 500, 1000, 2000, 4000], [0.03, 0.022, 0.016, 0.012, 0.009])  # x: 1.2 decades
    wide.loglog(np.geomspace(0.01, 1, 20), np.geomspace(0.01, 1, 20))  # two decades
    fig.canvas.draw()

    def labels(axis, which="major"):
        lo, hi = sorted(axis.get_view_interval())
        formatter = axis.get_major_formatter() if which == "major" else axis.get_minor_formatter()
        locs = axis.get_majorticklocs() if which == "major" else axis.get_minorticklocs()
        return [formatter(loc) for loc in locs if lo <= loc <= hi]

    for axis in (narrow.xaxis, narrow.yaxis):
        assert 2 <= len(labels(axis)) <= 5 and all(float(label) > 0 for label in labels(axis)), labels(axis)
        assert not axis.get_minorticklocs().size
    assert labels(decade.xaxis) == ["500", "1000", "2000"] and set(labels(decade.xaxis, "minor")) == {""}
    assert all(isinstance(axis.get_major_locator(), LogLocator) for axis in (wide.xaxis, wide.yaxis))
    assert "10^{" in labels(wide.xaxis)[0]  # matplotlib's own 10⁻², 10⁻¹, 10⁰
    plt.close(fig)
