"""Initial condensation (§8.3): line counting, the end of the first descent, the multiplicity runs."""

import numpy as np
import pytest

from companion.core import neurons as cond
from companion.experiments import ch08_condensation as ic


def test_lines_needed_counts_lines_whatever_the_signs():
    rng = np.random.default_rng(0)
    u, v = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0])
    one_line = np.outer(rng.choice([-1, 1], 30) * rng.uniform(0.5, 2, 30), u)
    two_lines = np.vstack([one_line, np.outer(rng.uniform(-2, 2, 30), v)])
    assert ic.lines_needed(one_line) == 1
    assert ic.lines_needed(two_lines) == 2
    assert ic.lines_needed(rng.normal(size=(200, 3))) == 3
    with pytest.raises(ValueError, match="share"):
        ic.lines_needed(one_line, share=0)


def test_end_of_first_descent_takes_a_drop_or_a_stall():
    assert ic.end_of_first_descent([1.0, 0.97, 0.93, 0.88, 0.8]) == 3  # 10% drop
    assert ic.end_of_first_descent([1.0, 0.96, 0.95, 0.949, 0.948, 0.5]) == 4  # stall above 0.9
    assert ic.end_of_first_descent([1.0, 1.0, 1.0, 1.0]) == 3  # never: the last record


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiplicity_run_respects_the_bound_and_rejects_bad_input(seed):
    r = ic.run_multiplicity("tanh", n_members=2, seed=seed)
    assert r.w.shape == (2, 50, 2) and r.clusters.shape == (2,)
    assert (r.clusters <= 2).all() and (r.loss_ratio < 1).all()
    spread = ic.run_multiplicity("tanh", n_members=2, init_std=1.0, seed=seed)  # linear regime: no condensation
    assert (spread.clusters > 2).all()
    with pytest.raises(ValueError, match="relu"):
        ic.run_multiplicity("relu")
    with pytest.raises(ValueError, match="max_steps"):
        ic.run_multiplicity("tanh", max_steps=5)


@pytest.mark.parametrize("seed", [1, 2])
def test_initial_condensation_lines_up_p1_nets_and_validates(seed):
    r = ic.run_initial_condensation("tanh", n_members=2, steps=100, seed=seed)
    assert r.w.shape == (2, 50, 6) and r.a.shape == (2, 50)
    assert all(cond.alignment_eigenvalue(w) >= 0.99 for w in r.w)
    wide = ic.run_initial_condensation("tanh", n_members=2, steps=100, init_std=1.0, seed=seed)
    assert all(cond.alignment_eigenvalue(w) < 0.6 for w in wide.w)
    with pytest.raises(ValueError, match="lr"):
        ic.run_initial_condensation("tanh", lr=0.0)
