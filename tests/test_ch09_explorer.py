"""The chapter-9 explorer recomputes when its controls move and rejects out-of-range values."""

import numpy as np
import pytest

from companion.experiments import ch09_embedding as E


@pytest.fixture(scope="module")
def explorer():
    return E.make_explorer(seed=0, steps=600)


def test_split_controls_change_spectra(explorer):
    res = explorer.set(k=2, alpha=0.5)
    assert [s.m for s in res["spectra"]] == [2, 3]
    res = explorer.set(k=4)
    assert [s.m for s in res["spectra"]] == [2, 3, 4, 5]
    zeros = [s.counts.zero for s in res["spectra"]]
    assert zeros == sorted(zeros) and zeros[-1] > zeros[0]


def test_width_and_init_change_run(explorer):
    small = explorer.set(width=5, init_std=1e-3)
    big = explorer.set(init_std=0.1)
    assert small["a"].shape[0] == 5
    # small init: the width-5 net sits on the width-1 optimum's plateau at the end, never below it
    assert abs(small["losses"][-1] / small["loss_star"] - 1) < 0.01
    assert small["losses"].min() > 0.99 * small["loss_star"]
    assert not np.allclose(small["losses"], big["losses"])
    with pytest.raises(ValueError, match="out of range"):
        explorer.set(width=1000)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(width=10 ** 6), r"width=1000000 is out of range: allowed values lie in \[1, 100\]"),
    (dict(width=2.5), r"width=2.5 must be an integer"),
    (dict(init_std=float("nan")), r"init_std=nan is out of range"),
    (dict(alpha=float("inf")), r"alpha=inf is out of range"),
    (dict(k=True), r"k=True must be an integer"),
    (dict(zero_factor=0.0), r"zero_factor=0.0 is out of range"),
])
def test_compute_rejects_bad_numbers(explorer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        explorer.compute(**(explorer.values() | kwargs))


def test_make_explorer_rejects_bad_settings():
    with pytest.raises(ValueError, match="steps=0 is out of range"):
        E.make_explorer(seed=0, steps=0)
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        E.make_explorer(seed=-1)
