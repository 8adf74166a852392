"""Instructor panels built from ipywidgets.

An :class:`Explorer` ties a few named controls to a ``compute`` function (the experiment, in
``companion``) and a ``draw`` function (its figure).  Moving a control recomputes and redraws;
the last result stays in ``explorer.result`` so tests can drive a panel without a browser::

    ex = frequency_explorer()
    ex.set(init_std=1.0)          # validated: an out-of-range value raises a ValueError
    ex.result["deltas"]           # the recomputed data

Sliders use ``continuous_update=False`` so a drag triggers one run, not dozens.  Where the chapter's grid
of precomputed pictures was made by this very explorer (:class:`companion.kit.grids.GridPictures`: same
defaults, same first result), moving a control onto a grid value shows the committed picture at once instead
of training again; ``set`` always computes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as W
import matplotlib.pyplot as plt
from IPython.display import Image, display
from matplotlib.figure import Figure
from traitlets import TraitError

from companion.kit.bounds import check_number
from companion.kit import plots  # noqa: F401  (the house style: every explorer draws with it, whoever imports it)
from companion.kit.grids import GridPictures, applies_when, grid_titled, same_value
from companion.kit.i18n import tr


def float_slider(value: float, lo: float, hi: float, step: float, description: str) -> W.FloatSlider:
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=tr(description),
                         continuous_update=False, style={"description_width": "initial"})


def log_slider(value: float, lo: float, hi: float, description: str) -> W.FloatLogSlider:
    """A slider over [lo, hi] on a log₁₀ scale (init scales, learning rates)."""
    return W.FloatLogSlider(value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=0.05,
                            description=tr(description), continuous_update=False,
                            style={"description_width": "initial"}, readout_format=".3g")


def int_slider(value: int, lo: int, hi: int, description: str, step: int = 1) -> W.IntSlider:
    return W.IntSlider(value=value, min=lo, max=hi, step=step, description=tr(description),
                       continuous_update=False, style={"description_width": "initial"})


def dropdown(value: Any, options: Sequence[Any], description: str) -> W.Dropdown:
    """A menu; numeric options are listed ascending, as a slider would run through them."""
    numeric = all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in options)
    return W.Dropdown(value=value, options=sorted(options) if numeric else list(options), description=tr(description),
                      style={"description_width": "initial"})


def checkbox(value: bool, description: str) -> W.Checkbox:
    return W.Checkbox(value=value, description=tr(description), indent=False)


def text(value: str, description: str) -> W.Text:
    return W.Text(value=value, description=tr(description), continuous_update=False,
                  style={"description_width": "initial"})


def _bounds(control: W.Widget) -> tuple[float, float] | None:
    if isinstance(control, W.FloatLogSlider):
        return control.base ** control.min, control.base ** control.max
    if hasattr(control, "min") and hasattr(control, "max"):
        return control.min, control.max
    return None


def validate_control(name: str, control: W.Widget, value: Any) -> None:
    """Raise a ValueError naming ``value`` and what ``control`` allows, instead of silently clamping or a traitlets
    error: a slider takes a finite number in its range (an int for an integer slider; the check of
    :func:`companion.kit.bounds.check_number`), a dropdown one of its options, a checkbox a bool, a text field
    a str."""
    bounds = _bounds(control)
    if bounds is not None:
        integral = isinstance(control, (W.IntSlider, W.IntRangeSlider, W.BoundedIntText))
        check_number(name, value, *bounds, kind="integer" if integral else "real")
    elif isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
        allowed = [opt[1] if isinstance(opt, tuple) else opt for opt in control.options]
        if value not in allowed:
            raise ValueError(f"{name}={value!r} is not allowed: choose one of {allowed}")
    elif isinstance(control, W.Checkbox) and not isinstance(value, bool):
        raise ValueError(f"{name}={value!r} must be True or False")
    elif isinstance(control, W.Text) and not isinstance(value, str):
        raise ValueError(f"{name}={value!r} must be text (a str), as typed into the field, e.g. {control.value!r}")


class Explorer:
    """Controls → ``compute(**values)`` → ``draw(result, figure)``, shown live in a notebook.

    ``result`` is the last computed result; it is None while a precomputed picture is shown (``pictures``: the
    grid this explorer may serve, or None).  A control that changes nothing at some settings of another (ch05's
    Fourier σ unless the model has Fourier features), as the committed grid of this explorer records it
    (:func:`companion.kit.grids.applies_when`), is disabled there, with a note saying when it applies, as on the site.
    """

    def __init__(self, title: str, controls: Mapping[str, W.Widget], compute: Callable[..., Any],
                 draw: Callable[[Any, Figure], None], figsize: tuple[float, float] = (11.0, 3.3)) -> None:
        self.title, self.controls = title, dict(controls)
        self.compute, self.draw, self.figsize = compute, draw, figsize
        self.result: Any = None
        self.error: str | None = None
        self.seconds = 0.0
        self.status = W.HTML()
        self.output = W.Output()
        self._holding = False
        self.pictures: GridPictures | None = None
        self.notes = W.HTML()
        grid = grid_titled(title)
        self.conditions = {name: applies_when(grid, name) for name in self.controls
                           if grid and name in grid.get("applies", {})}
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()
        self.pictures = None if self.error else GridPictures.matching(title, self.values(), self.result)

    def _on_change(self, _change: Any) -> None:
        if not self._holding:
            self.update(precomputed=True)

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values: Any) -> Any:
        """Set several controls at once (validated), recompute once, and return the new result."""
        self._apply(values, precomputed=False)
        return self.result

    def move(self, **values: Any) -> float:
        """Set several controls at once as a reader does (validated, one update, a precomputed picture where there
        is one) and return the seconds the update took."""
        self._apply(values, precomputed=True)
        return self.seconds

    def _apply(self, values: dict[str, Any], precomputed: bool) -> None:
        """Validate every value, set them all, update once; if a value is rejected (by its control, or by the
        compute function), put every control back as it was and raise a ValueError naming it — the controls,
        ``result`` and ``error`` stay those of the last good update."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}; this explorer has {sorted(self.controls)}")
        for name, value in values.items():
            validate_control(name, self.controls[name], value)
        before, error = self.values(), self.error
        self._holding = True
        try:
            for name, value in values.items():
                try:
                    self.controls[name].value = value
                except TraitError as exc:
                    raise ValueError(f"{name}={value!r} is not allowed: {exc}") from None
        except ValueError:
            self._restore(before, error)
            raise
        finally:
            self._holding = False
        self.update(precomputed=precomputed)
        if self.error:
            message = self.error
            self._restore(before, error)
            raise ValueError(message)

    def _restore(self, values: dict[str, Any], error: str | None) -> None:
        """Put the controls back to ``values`` without recomputing (the last result is still theirs)."""
        self._holding = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._holding = False
        self.error = error

    def _mark_inert(self) -> None:
        """Disable each control that changes nothing at the other controls' current values, and say when it applies."""
        notes = []
        for name, (condition, note) in self.conditions.items():
            (other, allowed), = condition.items()
            if other not in self.controls:
                continue
            applies = any(same_value(self.controls[other].value, v) for v in allowed)
            self.controls[name].disabled = not applies
            if not applies:
                notes.append(f"{self.controls[name].description}: {note}")
        self.notes.value = f"<span style='color:#b00'>{'; '.join(notes)}</span>" if notes else ""

    def update(self, precomputed: bool = False) -> None:
        """Recompute with the current control values and redraw; errors are shown, not raised.  With
        ``precomputed``, values on the explorer's grid show the committed picture instead."""
        self._mark_inert()
        start = time.perf_counter()
        picture = self.pictures.picture(self.values()) if precomputed and self.pictures else None
        if picture is not None:
            self.result, self.error = None, None
            with self.output:
                self.output.clear_output(wait=True)
                display(Image(data=picture.read_bytes()))
            self.seconds = time.perf_counter() - start
            grid = self.pictures.grid
            self.status.value = ("<span style='color:#555'>" + tr("precomputed picture (seed {seed}, {profile} profile) "
                                 "in {seconds:.2f} s").format(seed=grid["seed"], profile=grid["profile"],
                                                              seconds=self.seconds) + "</span>")
            return
        try:
            self.result = self.compute(**self.values())
            self.error = None
        except ValueError as exc:
            self.error = str(exc)
        self.seconds = time.perf_counter() - start
        if self.error:
            self.status.value = f"<span style='color:#b00'>⚠ {self.error}</span>"
            return
        self.status.value = ("<span style='color:#555'>" + tr("updated in {seconds:.2f} s").format(seconds=self.seconds)
                             + "</span>")
        with self.output:
            self.output.clear_output(wait=True)
            fig = plt.figure(figsize=self.figsize, layout="constrained")
            self.draw(self.result, fig)
            plt.show()
            plt.close(fig)

    @property
    def widget(self) -> W.Widget:
        rows = list(self.controls.values())
        grid = W.GridBox(rows, layout=W.Layout(grid_template_columns="repeat(3, 1fr)"))
        return W.VBox([W.HTML(f"<b>{tr(self.title)}</b>"), grid, self.notes, self.status, self.output])

    def _ipython_display_(self) -> None:
        display(self.widget)
