"""Stochastic Lanczos quadrature on matrices with known spectra."""

import numpy as np
import pytest
from solvers_zoo import with_spectrum

from solvers import (EigshNoConvergence, condition_number_estimate,
                     negative_eigenvalue_count, spectral_density)

LAM = np.r_[np.linspace(-2.0, -1.0, 30), np.linspace(1.0, 4.0, 170)]
A = with_spectrum(LAM, seed=21)


@pytest.fixture(scope="module")
def slq():
    return spectral_density(A, num_probes=30, lanczos_steps=30, rng=0)


def hutchinson_sd(f_of_lam, probes):
    F = with_spectrum(f_of_lam, seed=21)
    return np.sqrt(2 * (np.sum(F * F) - np.sum(np.diag(F) ** 2)) / probes)


def test_slq_traces(slq):
    for f in (lambda x: x, lambda x: x ** 2):
        est, err = slq.trace(f, return_std_error=True)
        exact = np.sum(f(LAM))
        # Quadrature is exact for polynomials of degree < 60: only Hutchinson noise.
        assert abs(est - exact) <= 5 * hutchinson_sd(f(LAM), 30)
        assert abs(est - exact) <= 5 * err + 1e-8


def test_slq_shapes_and_weights(slq):
    assert slq.nodes.shape == slq.weights.shape == (30, 30)
    np.testing.assert_allclose(slq.weights.sum(axis=1), 1.0, atol=1e-12)
    assert slq.num_matvecs == 900
    assert LAM.min() - 1e-8 <= slq.nodes.min() and slq.nodes.max() <= LAM.max() + 1e-8


def test_rules_cut_short_by_breakdown_pad_with_a_ritz_value():
    # Few distinct eigenvalues: Lanczos breaks down early and the rest of each rule was
    # node 0 (weight 0), so trace(log) and trace(1 / x) were NaN.
    sd = spectral_density(2.0 * np.eye(20), num_probes=3, lanczos_steps=10, rng=0)
    np.testing.assert_allclose(sd.nodes, 2.0)
    assert sd.trace(np.log) == pytest.approx(20 * np.log(2.0))
    assert sd.trace(lambda x: 1.0 / x) == pytest.approx(10.0)
    C = with_spectrum(np.repeat([1.0, 2.0, 3.0], 10), seed=3)
    sd = spectral_density(C, num_probes=5, lanczos_steps=8, rng=0)
    assert sd.nodes.min() >= 1.0 - 1e-12 and np.isfinite(sd.trace(np.log))


def test_density_integrates_to_one(slq):
    grid = np.linspace(-4.0, 6.0, 4001)
    rho = slq.density(grid, sigma=0.1)
    assert abs(np.trapezoid(rho, grid) - 1.0) < 1e-6
    assert np.all(rho >= 0)
    # Mass below zero ~ 30 / 200.
    neg = np.trapezoid(rho[grid < 0], grid[grid < 0])
    assert abs(neg - 0.15) < 0.05


def test_negative_eigenvalue_count():
    est = negative_eigenvalue_count(A, num_probes=30, lanczos_steps=40, rng=1)
    P = (LAM < 0).astype(float)
    sd = hutchinson_sd(P, 30)
    assert abs(est.estimate - 30) <= 5 * sd + 1
    assert abs(est.count - 30) <= 6
    assert est.num_matvecs == 1200


def test_condition_number_definite_and_indefinite():
    B = with_spectrum(np.geomspace(0.5, 50.0, 80), seed=3)
    assert np.isclose(condition_number_estimate(B, rng=0), 100.0, rtol=1e-6)
    C = with_spectrum(np.r_[-8.0, np.linspace(-3, -0.25, 30), np.linspace(0.5, 4, 40)],
                      seed=4)
    assert np.isclose(condition_number_estimate(C, rng=0), 32.0, rtol=1e-5)
    S = with_spectrum(np.r_[0.0, np.linspace(-1, 1, 20)[:10], np.linspace(0.5, 1, 10)],
                      seed=5)
    assert condition_number_estimate(S, rng=0) > 1e6


def test_condition_number_full_output_and_lower_bound():
    C = with_spectrum(np.r_[-8.0, np.linspace(-3, -0.25, 30), np.linspace(0.5, 4, 40)],
                      seed=4)
    res = condition_number_estimate(C, rng=0, full_output=True)
    assert res.success and res.condition_number == pytest.approx(32.0, rel=1e-5)
    assert res.lower_bound == res.condition_number and res.nmatvec > 0
    # Eigenvalues clustered at 0 inside the spectrum: two restarts cannot resolve
    # min|lambda| = 1e-6, so it raises, or with full_output reports a lower bound that
    # holds (the smallest Ritz value of A^2 is >= min|lambda|^2).
    lam = np.r_[-2.0, np.geomspace(1e-6, 1e-3, 40) * np.tile([1, -1], 20), 3.0]
    D = with_spectrum(lam, seed=6)
    with pytest.raises(EigshNoConvergence):
        condition_number_estimate(D, maxiter=2, rng=0)
    res = condition_number_estimate(D, maxiter=2, rng=0, full_output=True)
    assert not res.success and res.condition_number is None
    assert 3.0 < res.lower_bound <= 3.0 / 1e-6 and "lower bound" in res.message


def test_spectral_errors():
    with pytest.raises(ValueError, match="spectral_density: num_probes"):
        spectral_density(np.eye(3), num_probes=0)
    with pytest.raises(ValueError, match="spectral_density: A must be square"):
        spectral_density(np.ones((3, 2)))
    sd = spectral_density(np.eye(3), num_probes=2, lanczos_steps=2, rng=0)
    with pytest.raises(ValueError, match="sigma"):
        sd.density([0.0], sigma=0.0)
    with pytest.raises(ValueError, match="negative_eigenvalue_count: num_probes"):
        negative_eigenvalue_count(np.eye(3), num_probes=0)
    with pytest.raises(ValueError, match="condition_number_estimate: tol must be"):
        condition_number_estimate(np.eye(3), tol=-1.0)
    with pytest.raises(ValueError, match="condition_number_estimate: maxiter must be"):
        condition_number_estimate(np.eye(3), maxiter=-1)
    # None of these takes n or a vector: the advice is to wrap the callable.
    for fn in (spectral_density, negative_eigenvalue_count, condition_number_estimate):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: A is a callable matvec.*"
                                             rf"aslinearoperator_like\(f, n\)"):
            fn(lambda x: x)
