import numpy as np
import pytest

from companion.core import spectral as sp


@pytest.mark.parametrize("k", [1, 3, 5, 17])
def test_dft_bin_of_sin_kx_is_k(k):
    x = sp.uniform_grid(64)
    coeffs = sp.dft(np.sin(k * x))
    assert np.argmax(np.abs(coeffs)) == k
    assert np.isclose(abs(coeffs[k]), 0.5)


def test_peaks_of_a_sum_of_sines():
    x = sp.uniform_grid(128)
    assert sp.peaks(np.sin(x) + np.sin(3 * x) + 0.5 * np.sin(5 * x)).tolist() == [1, 3, 5]


def test_delta_f_exact_fit_is_zero_and_missing_component_is_one():
    x = sp.uniform_grid(64)
    f = np.sin(x) + np.sin(3 * x)
    assert np.allclose(sp.delta_f(f, f, [1, 3]), 0)
    assert np.allclose(sp.delta_f(np.sin(x), f, [1, 3]), [0, 1])
    stacked = sp.delta_f(np.stack([f, np.sin(x)]), f, [1, 3])
    assert stacked.shape == (2, 2)
    with pytest.raises(ValueError, match="no content"):
        sp.delta_f(f, f, [2])


def test_delta_f_sees_phase():
    x = sp.uniform_grid(64)
    assert np.isclose(sp.delta_f(np.cos(x), np.sin(x), [1])[0], np.sqrt(2))


def test_first_step_below():
    deltas = np.array([[1.0, 1.0], [0.05, 0.5], [0.01, 0.5]])
    first = sp.first_step_below(deltas, [0, 10, 20])
    assert first[0] == 10 and np.isnan(first[1])     # never below: NaN, not inf


def test_projection_spectrum_of_parity_matches_formula_4_4():
    d = 3
    x = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
    f = x.prod(1)
    k = 0.3
    p = np.ones(d) / np.sqrt(d)
    got = sp.projection_spectrum(x, f, p, [k])[0]
    expected = (-1j) ** d * np.sin(2 * np.pi * k / np.sqrt(d)) ** d
    assert np.isclose(got, expected)


def test_gaussian_filter_split_separates_frequencies():
    x = sp.uniform_grid(200)[:, None]
    low, high = sp.gaussian_filter_split(x, np.sin(x[:, 0]) + np.sin(30 * x[:, 0]), delta=0.2)
    assert sp.relative_error(low, np.sin(x[:, 0])) < 0.2
    assert np.allclose(low + high, np.sin(x[:, 0]) + np.sin(30 * x[:, 0]))
    with pytest.raises(ValueError, match="positive"):
        sp.gaussian_filter_split(x, x[:, 0], 0)


def test_psnr():
    ref = np.zeros((4, 4))
    assert sp.psnr(ref + 0.1, ref) == pytest.approx(20.0)
    assert sp.psnr(ref, ref) == float("inf")


def test_fourier_part_keeps_only_the_chosen_bins():
    x = sp.uniform_grid(96)
    f = 2 * np.sin(x) + 0.5 * np.sin(4 * x) + 0.3
    assert np.allclose(sp.fourier_part(f, [1]), 2 * np.sin(x))
    assert np.allclose(sp.fourier_part(f, [0, 4]), 0.5 * np.sin(4 * x) + 0.3)
    assert np.allclose(sp.fourier_part(np.stack([f, f]), [1]), 2 * np.sin(x))     # leading axes are kept
    with pytest.raises(ValueError, match="bins must lie"):
        sp.fourier_part(f, [60])
