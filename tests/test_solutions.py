"""The worked solutions (companion.solutions) against the chapter notebooks and the exercise checkers.

(a) every exercise label of a notebook's exercise section has a solution and every solution's label is in its
notebook, in the same order, and each statement is followed by its "Worked solution" line; (b) each answer passes
the notebook's own checker (the functions of companion.experiments, which compute their truth independently), on
notebook objects built as the notebook builds them, at the smallest faithful size; (c) a wrong answer fails the same
checker; (d) ``solution`` shows and returns as documented, and bad labels raise ValueError; (e) every snippet compiles.
"""

from __future__ import annotations

import ast
import copy
import importlib
import os
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import torch

from companion.kit.exercises import feedback
from companion.solutions import CHAPTERS, Solution, for_chapter

CHAPTER_DIR = Path(__file__).resolve().parent.parent / "chapters"
LABEL = re.compile(r"(?:习题|Exercise)\s*\d+(?:\s*(?:,|/)\s*\d+)*")
WORKED = re.compile(r"Worked solution: run `from companion\.solutions\.(ch\d\d[a-z]?) import solution; solution\((.+?)\)`")


@pytest.fixture(scope="module", autouse=True)
def _one_thread_no_cache():
    """One torch thread and no on-disk cache, so that the checks recompute and time the same everywhere."""
    threads, cache = torch.get_num_threads(), os.environ.get("COMPANION_CACHE")
    torch.set_num_threads(1)
    os.environ["COMPANION_CACHE"] = "off"
    yield
    torch.set_num_threads(threads)
    if cache is None:
        os.environ.pop("COMPANION_CACHE", None)
    else:
        os.environ["COMPANION_CACHE"] = cache


# ------------------------------------------------------------------------------------ (a) labels in the notebooks
def _exercise_lines(source: Path) -> list[str]:
    """The markdown lines of the notebook's exercise section: from its "## … Exercise…" heading to "## Summary"."""
    lines, inside = [], False
    for cell in jupytext.read(source).cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if re.match(r"#+ .*Exercise", line):
                inside = True
            elif re.match(r"#+ Summary", line):
                inside = False
            if inside:
                lines.append(line)
    return lines


def notebook_labels(source: Path) -> list[str]:
    """The exercise labels of one notebook, by the rule of companion.solutions: the first bold text of a statement
    reduced to its number(s) ("习题18", "习题7, 8", "Exercise 4"), "Open questions", a bare bold or listed "N." →
    "Exercise N", and a heading "Exercise (习题 20)" → "习题20" when the section has no other label."""
    lines, labels = _exercise_lines(source), []
    for line in lines:
        bold = re.match(r"\*\*(.+?)\*\*", line)
        listed = re.match(r"(\d+)\. \S", line)
        if bold:
            text = bold.group(1).strip()
            match = LABEL.search(text)
            if match:
                labels.append(re.sub(r"习题\s+", "习题", match.group(0)))
            elif text.rstrip(".") == "Open questions":
                labels.append("Open questions")
            elif re.fullmatch(r"\d+\.", text):
                labels.append(f"Exercise {text[:-1]}")
        elif listed:
            labels.append(f"Exercise {listed.group(1)}")
    if not labels and lines:
        match = LABEL.search(lines[0])
        if match:
            labels.append(re.sub(r"习题\s+", "习题", match.group(0)))
    return labels


SOURCES = sorted(CHAPTER_DIR.glob("ch*.py"))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_exercise_has_a_solution_and_back(source):
    labels = notebook_labels(source)
    if not labels:
        assert source.stem not in CHAPTERS, f"{source.stem} has no exercise section but a solutions module"
        return
    assert source.stem in CHAPTERS, f"{source.stem} has exercises {labels} but no solutions module"
    assert list(for_chapter(source.stem)) == labels


@pytest.mark.parametrize("source", [s for s in SOURCES if s.stem in CHAPTERS], ids=lambda p: p.stem)
def test_each_statement_points_to_its_worked_solution(source):
    module = importlib.import_module(CHAPTERS[source.stem])
    text = "\n".join(_exercise_lines(source))
    worked = WORKED.findall(text)
    assert [m for m, _ in worked] == [source.stem[:4]] * len(worked)
    from companion.solutions import find
    assert [find(module.SOLUTIONS, ast.literal_eval(arg)).label for _, arg in worked] == list(module.SOLUTIONS)


def test_chapter_ten_has_no_exercises_and_is_refused():
    assert notebook_labels(CHAPTER_DIR / "ch10_optimistic_estimate.py") == []
    with pytest.raises(ValueError, match="ch04_frequency_principle"):
        for_chapter("ch10")


# ------------------------------------------------------------------------------ (b, c) answers through the checkers
def answer(chapter: str, label: str):
    return for_chapter(chapter)[label].answer


@pytest.fixture(scope="module")
def early_stopping_run():
    """图4.12's run as the notebook makes it (quick profile), one member and 1000 of the 3000 steps: the test-loss
    minimum (step 200–500) and the admissible stopping range lie well inside."""
    from companion.experiments.ch04_frequency import run_early_stopping
    return run_early_stopping(n=100, noise=0.2, hidden=(100, 100, 50), steps=1000, lr=4e-3, members=1,
                              record_every=20, n_test=500, periods=3, seed=0)


def test_ch04_answers_pass_their_checks_and_wrong_ones_fail(early_stopping_run):
    from companion.experiments import ch04_frequency as ch4
    assert ch4.check_alias(answer("ch04", "习题18")()) and not ch4.check_alias(11)
    parity = answer("ch04", "习题6")()
    assert ch4.check_parity_spectrum(parity)
    assert not ch4.check_parity_spectrum(lambda k: (1j) ** len(k) * np.prod(np.sin(2 * np.pi * np.asarray(k))))
    assert ch4.check_asi(answer("ch04", "习题8")()) and not ch4.check_asi(np.full(9, 1e-3))
    es = early_stopping_run
    step = answer("ch04", "习题5")(es)
    assert ch4.check_stopping_step(step, es.steps, es.test_loss[:, 0])
    assert not ch4.check_stopping_step(20, es.steps, es.test_loss[:, 0])  # too early: the sine is not fitted yet


def test_ch05_answers():
    from companion.experiments import ch05_multiscale as ch5
    assert ch5.check_stretch(answer("ch05", "习题2")()) and not ch5.check_stretch(1 / 25)
    assert ch5.check_nyquist_fraction(answer("ch05", "习题4, 5")()) and not ch5.check_nyquist_fraction(0.5)


def test_ch06_answers():
    from companion.experiments import ch06_mechanism as ch6
    assert ch6.check_gradient_weight(answer("ch06", "习题7, 8")()) and not ch6.check_gradient_weight(lambda k: k * k)
    assert ch6.check_tanh_spectrum(answer("ch06", "习题5, 10")())
    assert not ch6.check_tanh_spectrum(lambda xi, w: np.pi / (w * np.sinh(np.pi * xi / w)))


def test_ch07_answers():
    from companion.experiments import ch07_phase as phase
    assert phase.check_exercise17(answer("ch07", "习题17")())
    assert not phase.check_exercise17({"He": (0.5, 0.0), "Xavier": (1.0, 0.0)})
    assert phase.check_exercise19(answer("ch07", "习题19")())
    assert not phase.check_exercise19({"i": "linear", "ii": "linear", "iii": "linear"})


def test_ch08_dead_neuron_answer():
    """The notebook's inline check (a distance of exactly 0), restated; and the truth measured on a small §1 run."""
    from companion.experiments import ch08_condensation as ch8
    is_correct = lambda v: float(v) == 0.0  # noqa: E731 - the notebook's lambda
    value = answer("ch08", "习题19")()
    assert feedback("习题19", value, is_correct, "") and not feedback("习题19", 1e-3, is_correct, "")
    proc = ch8.run_condensation(width=40, init_std=1e-3, steps=300, n_snapshots=3, seed=0, progress=False)
    assert proc.dead.any()
    moved = np.linalg.norm(proc.w[-1] - proc.w[0], axis=1) + np.abs(proc.a[-1] - proc.a[0])
    assert float(moved[proc.dead].max()) == value


def test_ch11_answers():
    from companion.experiments import ch11_flatness as fl
    assert fl.check_stability_limit(answer("ch11", "习题2")(), lam=10.0)
    assert not fl.check_stability_limit(0.1, lam=10.0)
    net = fl.train_dropout_1d(1.0, width=100, n=40, steps=200, lr=3e-3, seed=0).model  # section 5's ReLU net, small
    x = torch.linspace(-1, 1, 40)[:, None]
    y = fl.dropout_target(x)
    rescale = answer("ch11", "习题11")()
    assert fl.check_rescaling(rescale, net, x, y)

    def bias_forgotten(model, c):
        out = copy.deepcopy(model)
        with torch.no_grad():
            out.layers[0].weight.mul_(c)
            out.layers[1].weight.div_(c)
        return out

    assert not fl.check_rescaling(bias_forgotten, net, x, y)
    assert not fl.check_rescaling(lambda model, c: copy.deepcopy(model), net, x, y)  # λ_max unchanged


def test_ch12_random_split_overlaps_and_mod_residue_does_not():
    from companion.core import anchor_tasks
    from companion.experiments import ch12_anchors as anchors
    train_pairs, test_pairs = answer("ch12", "Exercise 4")()
    assert anchors.check_overlap(train_pairs, test_pairs) > 0.5  # the checker's ✔ criterion
    task = anchor_tasks.identity_task(2000, 500, seed=0)

    def pairs(data):
        return set(zip(data.key_pos.tolist(), data.y.tolist()))

    assert anchors.check_overlap(pairs(task.train), pairs(task.tests["test"])) <= 0.5


def test_ch14_min_norm_update():
    from companion.experiments import ch14_phenomena as phenomena
    update = answer("ch14", "Exercise 1")()
    assert phenomena.check_min_norm_update(update)
    assert phenomena.check_min_norm_update(update, seed=3)
    assert not phenomena.check_min_norm_update(lambda W, dA, a: torch.outer(W @ dA, a))

    def exact_not_least(W, dA, a):
        other = torch.ones_like(W) - torch.outer(torch.ones(W.shape[0], dtype=W.dtype), a) * a.sum() / (a @ a)
        return update(W, dA, a) + other  # other @ a = 0: still exact, no longer minimal

    assert not phenomena.check_min_norm_update(exact_not_least)


def test_ch15_answers():
    from companion.experiments import ch15_pinns as ch15
    assert ch15.check_fd_matrix(answer("ch15", "习题2")()) and not ch15.check_fd_matrix(-answer("ch15", "习题2")())
    assert ch15.check_jacobi_eigenvalues(answer("ch15", "习题3")())
    assert not ch15.check_jacobi_eigenvalues(lambda j, n: np.cos(j * np.pi / (n + 1)))


def test_open_questions_have_no_answer_and_checked_ones_do():
    checked = {("ch04", l) for l in ("习题18", "习题6", "习题8", "习题5")} | {("ch05", "习题2"), ("ch05", "习题4, 5"),
               ("ch06", "习题7, 8"), ("ch06", "习题5, 10"), ("ch07", "习题17"), ("ch07", "习题19"), ("ch08", "习题19"),
               ("ch11", "习题2"), ("ch11", "习题11"), ("ch12", "Exercise 4"), ("ch14", "Exercise 1"),
               ("ch15", "习题2"), ("ch15", "习题3")}
    have = {(slug[:4], s.label) for slug in CHAPTERS for s in for_chapter(slug).values() if s.answer is not None}
    assert have == checked


# ------------------------------------------------------------------------------------- (d) solution() and lookups
def test_solution_prints_and_returns(capsys):
    from companion.solutions import ch04, ch05, ch13
    assert ch04.solution(18) == 5
    out = capsys.readouterr().out
    assert "习题18" in out and "bin 5" in out and "```python" in out
    assert ch04.solution("习题18") == 5
    assert ch04.solution(5) is ch04.stopping_step  # needs the notebook's run: the function comes back
    assert ch05.solution(5) == pytest.approx(0.3173, abs=1e-4)  # 5 belongs to "习题4, 5"
    assert ch04.solution(10) is None and "Open questions" in capsys.readouterr().out
    assert ch13.solution(1) is None


def test_solution_displays_markdown_in_ipython(monkeypatch):
    import IPython.display

    import companion.solutions as sol
    shown = []
    monkeypatch.setattr(sol, "_in_ipython", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    from companion.solutions import ch15
    matrix = ch15.solution(2)
    assert isinstance(shown[0], IPython.display.Markdown) and "tridiagonal" in shown[0].data
    assert matrix.shape == (5, 5)


@pytest.mark.parametrize("bad", [99, "习题99", "Exercise 18", True, 1.5])
def test_bad_labels_raise(bad):
    from companion.solutions import ch04
    with pytest.raises(ValueError, match="习题18"):
        ch04.solution(bad)


def test_for_chapter_accepts_slugs_and_prefixes():
    assert list(for_chapter("ch04")) == list(for_chapter("ch04_frequency_principle")) == list(for_chapter("4"))
    assert list(for_chapter("ch04_frequency")) == list(for_chapter("ch04"))
    with pytest.raises(ValueError, match="ch15_pinns"):
        for_chapter("ch99")
    assert for_chapter("ch07")["习题17"].markdown().endswith("```")


# ------------------------------------------------------------------------------------------ (e) snippets compile
ALL = [(slug, s) for slug in CHAPTERS for s in for_chapter(slug).values()]


@pytest.mark.parametrize("slug, sol", ALL, ids=[f"{slug[:4]}-{s.label}" for slug, s in ALL])
def test_solution_is_complete_and_its_code_compiles(slug, sol: Solution):
    from companion.solutions import display_math_blocks

    assert len(sol.text.strip()) > 300 and sol.markdown().startswith(display_math_blocks(sol.text.strip()))
    if sol.code:
        compile(sol.code, f"<{slug} {sol.label}>", "exec")


def test_display_math_gets_blocks_of_its_own_in_its_list_item():
    """MyST leaves ``$$…$$`` inside a sentence raw (the site showed TeX in six solutions): each becomes its own block,
    indented like the list item it belongs to; a wrapped line of TeX starting with ``+`` stays inside the math."""
    from companion.solutions import display_math_blocks

    text = ("3. Divide by $\\xi$: $$a =\n   + b.$$\n   Then more.\n4. Next.\n\nAs $$x = 1$$ shows, so.")
    assert display_math_blocks(text) == ("3. Divide by $\\xi$:\n\n   $$\n   a =\n   + b.\n   $$\n\n   Then more.\n4. Next."
                                         "\n\nAs\n\n$$\nx = 1\n$$\n\nshows, so.")
    assert display_math_blocks("no display math, $x$ inline") == "no display math, $x$ inline"
