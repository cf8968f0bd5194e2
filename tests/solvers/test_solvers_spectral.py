"""Stochastic Lanczos quadrature on matrices with known spectra."""

import numpy as np
import pytest
import scipy.sparse
from solvers_zoo import with_spectrum

from solvers import (EigshNoConvergence, condition_number_estimate,
                     negative_eigenvalue_count, spectral_density)
from solvers.spectral import SpectralDensity

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
    # n = 200: the matrix from 200 products costs less than the quadrature could, so the
    # count is exact.
    est = negative_eigenvalue_count(A, num_probes=30, lanczos_steps=40, rng=1)
    assert est.method == "dense" and est.estimate == 30 and est.count == 30
    assert est.confidence_interval == (30, 30) and est.num_matvecs == 200
    # The quadrature: without growing the rules (max_lanczos_steps = lanczos_steps), and
    # with. The bias bound (Chebyshev-Markov-Stieltjes) does not see the spectral gap at 0:
    # it is the weight of the nodes next to 0, which the longer rules shrink.
    P = (LAM < 0).astype(float)
    sd = hutchinson_sd(P, 30)
    fixed = negative_eigenvalue_count(A, num_probes=30, lanczos_steps=40, rng=1,
                                      dense_max=0, max_lanczos_steps=40)
    grown = negative_eigenvalue_count(A, num_probes=30, lanczos_steps=40, rng=1,
                                      dense_max=0)
    assert fixed.num_matvecs == 1200 < grown.num_matvecs <= 4 * 1200
    assert grown.bias_bound < fixed.bias_bound
    for est in (fixed, grown):
        assert est.method.startswith("stochastic")
        assert abs(est.estimate - 30) <= 5 * sd + 1
        assert abs(est.count - 30) <= 6
        lo, hi = est.confidence_interval
        assert lo <= 30 <= hi
        assert hi - lo <= 2 * (2.1 * est.std_error + est.bias_bound) + 1.0


def dense_near_threshold(seed=0):
    """A spectrum whose mass crowds the threshold 0 (as a network's Hessian does): 300 of
    1000 eigenvalues within 1e-3 of it, half of them negative."""
    rng = np.random.default_rng(seed)
    lam = np.r_[rng.uniform(-1e-3, 1e-3, 300), rng.uniform(-3.0, -0.1, 200),
                rng.uniform(0.1, 6.0, 500)]
    return scipy.sparse.diags(rng.permutation(lam), format="csr"), int(np.sum(lam < 0))


def test_negative_eigenvalue_count_interval_covers_the_bias():
    # The smoothed count used to be off by hundreds with a standard error of a few
    # (946 +- 75 against 658 on an MLP): a node's whole weight falls on one side of 0. The
    # rules now grow where nodes crowd the threshold and the interval includes the bias
    # left (Chebyshev-Markov-Stieltjes bounds per probe).
    H, exact = dense_near_threshold()
    est = negative_eigenvalue_count(H, num_probes=20, rng=0, dense_max=0)
    lo, hi = est.confidence_interval
    assert lo <= exact <= hi
    assert est.bias_bound > 3 * est.std_error        # the honest part is the bias
    assert est.num_matvecs > 20 * 40                 # rules grew past 40 steps


@pytest.mark.parametrize("name", ["gap", "crowded"])
@pytest.mark.slow
def test_negative_eigenvalue_count_coverage(name):
    # Empirical coverage over many seeds of the level-0.9 interval on small matrices with
    # known spectra. The interval includes the quadrature's bias bound, so it covers more
    # often than 0.9 where bias is left; a binomial tolerance keeps the test from flaking
    # (200 seeds at true coverage 0.9: 0.8 is 4.7 standard deviations below).
    rng = np.random.default_rng(1)
    lam = (np.r_[np.linspace(-2.0, -0.5, 20), np.linspace(0.5, 3.0, 60)] if name == "gap"
           else np.r_[rng.uniform(-0.01, 0.01, 40), rng.uniform(-2, 3, 40)])
    B = with_spectrum(lam, seed=3)
    exact = int(np.sum(lam < 0))
    hits = 0
    for seed in range(200):
        est = negative_eigenvalue_count(B, num_probes=8, lanczos_steps=8, level=0.9,
                                        dense_max=0, rng=seed)
        lo, hi = est.confidence_interval
        hits += lo <= exact <= hi
    assert hits >= 160, hits


@pytest.mark.slow
def test_trace_estimate_coverage():
    # SLQ's tr log(A) (a smooth f: quadrature bias negligible at 12 steps): the probes'
    # t-interval at level 0.9 covers the truth in about 90% of 300 seeds.
    lam = np.linspace(1.0, 10.0, 60)
    B = with_spectrum(lam, seed=8)
    hits = 0
    for seed in range(300):
        sd = spectral_density(B, num_probes=25, lanczos_steps=12, rng=seed)
        lo, hi = sd.trace_estimate(np.log, level=0.9).confidence_interval
        hits += lo <= np.sum(np.log(lam)) <= hi
    assert 0.8 * 300 <= hits <= 0.97 * 300, hits     # covers, and is not vacuous


def test_condition_number_definite_and_indefinite():
    B = with_spectrum(np.geomspace(0.5, 50.0, 80), seed=3)
    assert np.isclose(condition_number_estimate(B, rng=0), 100.0, rtol=1e-6)
    C = with_spectrum(np.r_[-8.0, np.linspace(-3, -0.25, 30), np.linspace(0.5, 4, 40)],
                      seed=4)
    assert np.isclose(condition_number_estimate(C, rng=0), 32.0, rtol=1e-5)
    S = with_spectrum(np.r_[0.0, np.linspace(-1, 1, 20)[:10], np.linspace(0.5, 1, 10)],
                      seed=5)
    assert condition_number_estimate(S, rng=0) > 1e6


def test_condition_number_full_output_and_bounds():
    C = with_spectrum(np.r_[-8.0, np.linspace(-3, -0.25, 30), np.linspace(0.5, 4, 40)],
                      seed=4)
    res = condition_number_estimate(C, rng=0, full_output=True)
    assert res.success and res.condition_number == pytest.approx(32.0, rel=1e-5)
    assert res.lower_bound <= 32.0 * (1 + 1e-9) and res.upper_bound >= 32.0 * (1 - 1e-9)
    assert res.upper_bound - res.lower_bound < 1e-5 and res.nmatvec > 0
    assert res.definite is False
    # Eigenvalues clustered at 0 inside the spectrum: two restarts cannot resolve
    # min|lambda| = 1e-6, so it raises, or with full_output reports the estimate so far
    # with bounds that hold: the lower bound always (||A y|| of Ritz vectors lie between
    # min|lambda| and max|lambda|), the upper one here too.
    lam = np.r_[-2.0, np.geomspace(1e-6, 1e-3, 40) * np.tile([1, -1], 20), 3.0]
    D = with_spectrum(lam, seed=6)
    with pytest.raises(EigshNoConvergence) as info:
        condition_number_estimate(D, maxiter=2, rng=0)
    assert info.value.result.lower_bound > 3.0
    res = condition_number_estimate(D, maxiter=2, rng=0, full_output=True)
    assert not res.success and "unresolved" in res.message
    assert 3.0 < res.lower_bound <= res.condition_number <= 3.0 / 1e-6 <= res.upper_bound


def test_condition_number_singular_to_the_resolution_of_the_square():
    # min|lambda| = 1e-9 inside [-3, 5]: its square is below the rounding of A^2's
    # products (n eps ||A||^2, about 1.3e-6 in |lambda| here), where a Ritz value of A^2 may
    # stand for a smaller eigenvalue (an MLP's Hessian: claimed kappa 2.7e7, exact 1.0e8).
    # The run stops there and reports singular to that resolution, with a true lower bound.
    lam = np.r_[-3.0, np.geomspace(1e-9, 1e-2, 300) * np.tile([1, -1], 150), 5.0]
    D = scipy.sparse.diags(lam, format="csr")
    res = condition_number_estimate(D, rng=0, full_output=True)
    assert res.success and res.condition_number == np.inf and res.upper_bound == np.inf
    assert 5.0 / 1.3e-6 < res.lower_bound <= 5e9
    assert "singular to the resolution" in res.message and res.nmatvec < 2000


def test_condition_number_budget_progress_and_callback(capsys):
    # The default budget bounds the run (it used to take 10 n restarts of the A^2 solve:
    # 249,888 products, 142 s, on a 1,249-parameter MLP, and return None).
    lam = np.r_[-3.0, np.geomspace(1e-5, 1e-2, 3000) * np.tile([1, -1], 1500), 5.0]
    D = scipy.sparse.diags(lam, format="csr")
    res = condition_number_estimate(D, rng=0, full_output=True)
    assert not res.success and res.nmatvec <= 2000
    assert res.lower_bound <= 5e5 <= res.upper_bound
    res = condition_number_estimate(D, rng=0, full_output=True, max_matvecs=300)
    assert res.nmatvec <= 300 and res.lower_bound <= 5e5
    seen = []

    def stop(info):
        seen.append(info)
        if info.nmatvec >= 100:
            raise StopIteration

    res = condition_number_estimate(D, rng=0, full_output=True, callback=stop,
                                    max_matvecs=None)
    assert seen and seen[-1].nmatvec >= 100 and res.nmatvec == seen[-1].nmatvec
    assert {"stage", "nmatvec", "seconds", "lower_bound"} <= set(seen[-1])
    res = condition_number_estimate(D, rng=0, full_output=True, max_seconds=0.0,
                                    progress=True)
    assert not res.success and "time limit" in res.message
    # progress lines are throttled to one per half second: none may have been due yet
    assert capsys.readouterr().out == ""


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
    with pytest.raises(ValueError, match="condition_number_estimate: max_matvecs must"):
        condition_number_estimate(np.eye(3), max_matvecs=0)
    with pytest.raises(ValueError, match="condition_number_estimate: max_seconds must"):
        condition_number_estimate(np.eye(3), max_seconds=-1.0)
    with pytest.raises(ValueError, match="negative_eigenvalue_count: level must"):
        negative_eigenvalue_count(np.eye(3), level=1.0)
    with pytest.raises(ValueError, match="negative_eigenvalue_count: max_lanczos_steps"):
        negative_eigenvalue_count(np.eye(3), lanczos_steps=10, max_lanczos_steps=5)
    # None of these takes n or a vector: the advice is to wrap the callable.
    for fn in (spectral_density, negative_eigenvalue_count, condition_number_estimate):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: A is a callable matvec.*"
                                             rf"aslinearoperator_like\(f, n\)"):
            fn(lambda x: x)


def test_count_below_ignores_padding_wherever_it_lies():
    # Rules cut short by a breakdown are padded with weight-0 nodes; hessgrad.distributed
    # pads with node 0. Such a node next to the threshold must not tighten the bounds.
    nodes = np.array([[-2.0, -1.0, 1.0, 2.0, 0.0, 0.0]])
    weights = np.array([[0.25, 0.25, 0.25, 0.25, 0.0, 0.0]])
    padded = SpectralDensity(nodes, weights, 4, 4).count_below(0.5, level=0.9)
    plain = SpectralDensity(nodes[:, :4], weights[:, :4], 4, 4).count_below(0.5, level=0.9)
    assert padded.estimate == plain.estimate == 2.0
    assert padded.bias_bound == plain.bias_bound == 1.0   # nodes -1 and 1 are adjacent
