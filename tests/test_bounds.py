"""The one check of the numbers an explorer or its compute function takes (companion.kit.bounds), and the
explorer's handling of a rejected value (companion.kit.widgets)."""

import numpy as np
import pytest

from companion.kit import widgets as w
from companion.kit.bounds import Bounds, check_number, check_numbers, integer, real, whole


@pytest.mark.parametrize("value, kind, message", [
    (float("nan"), "real", r"x=nan is out of range: allowed values lie in \[0, 1\]"),
    (float("inf"), "real", r"x=inf is out of range"),
    (True, "real", r"x=True must be a number"),
    ("0.5", "real", r"x='0.5' must be a number"),
    (None, "real", r"x=None must be a number"),
    (0.5, "integer", r"x=0.5 must be an integer \(an int\)"),
    (1.0, "integer", r"x=1.0 must be an integer"),
    (0.5, "whole", r"x=0.5 must be a whole number"),
    (2, "integer", r"x=2 is out of range"),
])
def test_check_number_rejects(value, kind, message):
    with pytest.raises(ValueError, match=message):
        check_number("x", value, 0, 1, kind=kind)


@pytest.mark.parametrize("value, kind", [(0, "real"), (0.5, "real"), (np.float32(1.0), "real"), (1, "integer"),
                                         (np.int64(1), "integer"), (1.0, "whole"), (1, "whole")])
def test_check_number_accepts(value, kind):
    check_number("x", value, 0, 1, kind=kind)


def test_bounds_check_names_and_optional_values():
    bounds = Bounds(width=integer(1, 8), lr=real(1e-4, 0.1), k=whole(1, 4), seed=integer(0, 9, optional=True))
    bounds.check(width=8, lr=1e-4, k=4.0, seed=None)
    with pytest.raises(ValueError, match="lr=1.0 is out of range"):
        bounds.check(width=8, lr=1.0)
    with pytest.raises(KeyError):
        bounds.check(depth=2)


def test_check_numbers_parses_a_text_field():
    assert check_numbers("1, 3; 5", "ks", whole(1, 63)) == (1, 3, 5)
    assert check_numbers("0.5, -1", "amps", real(-100, 100)) == (0.5, -1.0)
    for text, message in [("nan, 1", "nan is out of range"), ("", "empty"), ("1, x", "comma-separated"),
                          (5, "must be text")]:
        with pytest.raises(ValueError, match=message):
            check_numbers(text, "amps", real(-100, 100))


def test_a_slider_takes_its_ends_also_below_zero():
    """A float slider over [-1, 1.5] takes -1.0: the slack at the ends widens the range on either side (the
    old check shrank it at a negative lower end and rejected the slider's own minimum)."""
    slider = w.float_slider(0.0, -1.0, 1.5, 0.05, "γ′")
    w.validate_control("gamma_prime", slider, -1.0)
    w.validate_control("gamma_prime", slider, 1.5)
    with pytest.raises(ValueError, match="out of range"):
        w.validate_control("gamma_prime", slider, -1.01)


def _explorer(compute):
    controls = {"n": w.int_slider(2, 1, 10, "n"), "name": w.text("a", "name")}
    return w.Explorer("test explorer", controls, compute, lambda result, fig: None)


def test_a_set_rejected_by_compute_rolls_the_controls_back():
    def compute(n, name):
        if name == "bad":
            raise ValueError(f"name {name!r} is bad")
        return n * 10
    ex = _explorer(compute)
    assert ex.set(n=3) == 30
    with pytest.raises(ValueError, match="name 'bad' is bad"):
        ex.set(n=5, name="bad")
    assert ex.values() == {"n": 3, "name": "a"} and ex.result == 30 and ex.error is None
    assert ex.set(n=4) == 40


def test_a_wrong_type_for_a_control_is_a_value_error():
    ex = _explorer(lambda n, name: n)
    with pytest.raises(ValueError, match="name=5 must be text"):
        ex.set(name=5)
    with pytest.raises(ValueError, match="n=True must be an integer"):
        ex.set(n=True)
    assert ex.values() == {"n": 2, "name": "a"}


def test_a_numeric_menu_lists_its_options_ascending_and_words_as_given() -> None:
    from companion.kit.widgets import dropdown

    assert list(dropdown(1.0, [1.0, 0.7, 0.85], "keep").options) == [0.7, 0.85, 1.0]
    assert list(dropdown("tanh", ("tanh", "relu"), "act").options) == ["tanh", "relu"]
