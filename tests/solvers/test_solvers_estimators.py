"""Trace and diagonal estimators on matrices with known spectra, within 5 sigma."""

import numpy as np
import pytest
from solvers_zoo import FORMS, MATRICES, as_form, dense, with_spectrum

from solvers import aslinearoperator_like, diagonal, hutchinson, hutchpp

A_FLAT = with_spectrum(np.linspace(-1.0, 3.0, 100), seed=11)
A_DECAY = with_spectrum(100.0 * 0.7 ** np.arange(100), seed=12)


def operator(A, form):
    f = as_form(A, form)
    return aslinearoperator_like(f, A.shape[0]) if form == "callable" else f


def rademacher_sd(A, m):
    return np.sqrt(2 * (np.sum(A * A) - np.sum(np.diag(A) ** 2)) / m)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("A", [A_FLAT, A_DECAY], ids=["flat", "decay"])
def test_hutchinson_within_five_sigma(A, seed):
    m = 200
    est = hutchinson(A, m, rng=seed)
    sd = rademacher_sd(A, m)
    assert abs(est.trace - np.trace(A)) <= 5 * sd
    assert 0.5 * sd < est.std_error < 2 * sd          # std_error estimates sd
    assert est.num_matvecs == m


@pytest.mark.parametrize("seed", range(3))
def test_hutchinson_gaussian(seed):
    m = 200
    est = hutchinson(A_FLAT, m, distribution="gaussian", rng=seed)
    assert abs(est.trace - np.trace(A_FLAT)) <= 5 * np.sqrt(2 * np.sum(A_FLAT ** 2) / m)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_estimators_zoo_forms(name, form):
    A = MATRICES[name]
    Ad = dense(A).astype(np.float64)
    op = operator(A, form)
    m = 90
    est = hutchinson(op, m, rng=1)
    assert est.num_matvecs == m
    assert abs(est.trace - np.trace(Ad)) <= 5 * rademacher_sd(Ad, m) + 1e-4
    # Hutch++'s random part is Hutchinson on P A P (P a projector): its variance is
    # at most 2 ||P A P||_F^2 / g <= 2 ||A||_F^2 / g, with g = m - 2 (m // 3).
    est = hutchpp(op, m, rng=1)
    assert est.num_matvecs == m
    assert abs(est.trace - np.trace(Ad)) <= 5 * np.sqrt(2 * np.sum(Ad * Ad) / 30) + 1e-4
    d = diagonal(op, m, rng=1)
    sd = np.sqrt((np.sum(Ad * Ad, axis=1) - np.diag(Ad) ** 2) / m)
    assert np.all(np.abs(d.diagonal - np.diag(Ad)) <= 5 * sd + 1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_hutchpp_beats_hutchinson_on_decaying_spectrum(seed):
    m = 60
    exact = np.trace(A_DECAY)
    pp = hutchpp(A_DECAY, m, rng=seed)
    # Conservative 5 sigma bound (see test_estimators_zoo_forms), g = 20 probes.
    assert abs(pp.trace - exact) <= 5 * np.sqrt(2 * np.sum(A_DECAY ** 2) / 20)
    # With 20 sketch vectors and eigenvalues 100 * 0.7^i, the tail is tiny.
    assert abs(pp.trace - exact) < 1e-2 * rademacher_sd(A_DECAY, m)


def test_hutchpp_exact_for_low_rank_and_full_sketch():
    U = np.random.default_rng(0).standard_normal((40, 4))
    A = U @ U.T
    assert np.isclose(hutchpp(A, 15, rng=0).trace, np.trace(A), rtol=1e-10)
    est = hutchpp(np.diag(np.arange(5.0)), 30, rng=0)     # sketch spans R^5
    assert np.isclose(est.trace, 10.0) and est.std_error == 0.0 and est.num_matvecs == 10


def test_diagonal_exact_for_diagonal_matrix():
    d = diagonal(np.diag(np.arange(1.0, 7.0)), 3, rng=0)
    np.testing.assert_allclose(d.diagonal, np.arange(1.0, 7.0))


def test_estimator_errors():
    with pytest.raises(ValueError, match="hutchinson: num_matvecs"):
        hutchinson(np.eye(3), 0)
    with pytest.raises(ValueError, match="hutchpp: num_matvecs must be an int >= 3"):
        hutchpp(np.eye(3), 2)
    with pytest.raises(ValueError, match="distribution"):
        hutchinson(np.eye(3), 2, distribution="uniform")
    with pytest.raises(ValueError, match="diagonal: A must be square"):
        diagonal(np.ones((3, 2)), 2)
    # No estimator takes n or a vector: the advice is to wrap the callable.
    for fn in (hutchinson, hutchpp, diagonal):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: A is a callable matvec.*"
                                             rf"aslinearoperator_like\(f, n\)"):
            fn(lambda x: x, 3)


@pytest.mark.parametrize("estimator", ["hutchinson", "hutchpp", "diagonal"])
def test_confidence_interval_coverage(estimator):
    # Empirical coverage of the level-0.9 Student-t intervals over 300 seeds on a small
    # matrix with a known trace: about 0.9 (normal approximation with 40 samples); the
    # binomial tolerance (0.84: 3.5 standard deviations) keeps the test from flaking, and
    # the upper limit checks that the intervals are not vacuously wide.
    A = with_spectrum(np.linspace(-1.0, 3.0, 50), seed=13)
    hits = 0
    for seed in range(300):
        if estimator == "diagonal":
            d = diagonal(A, 40, rng=seed, level=0.9)
            hits += (d.low[7] <= A[7, 7] <= d.high[7])
            continue
        fn = hutchinson if estimator == "hutchinson" else hutchpp
        est = fn(A, 40 if estimator == "hutchinson" else 60, rng=seed, level=0.9)
        assert est.level == 0.9
        lo, hi = est.confidence_interval
        hits += lo <= np.trace(A) <= hi
    assert 0.84 * 300 <= hits <= 0.96 * 300, hits


def test_confidence_interval_fields():
    est = hutchinson(A_FLAT, 30, rng=0)
    lo, hi = est.confidence_interval
    assert est.num_samples == 30 and est.level == 0.95
    assert lo < est.trace < hi
    assert (hi - lo) / 2 == pytest.approx(2.0452 * est.std_error, rel=1e-4)  # t(29)
    pp = hutchpp(A_FLAT, 30, rng=0, level=0.5)
    assert pp.num_samples == 10 and pp.level == 0.5
    # An estimate built by others (hessgrad.distributed) gets its interval too.
    from solvers.estimators import TraceEstimate
    assert TraceEstimate(1.0, 0.0, 5).confidence_interval == (1.0, 1.0)
    assert TraceEstimate(1.0, 1.0, 1).confidence_interval == (-np.inf, np.inf)
    with pytest.raises(ValueError, match="hutchinson: level must be"):
        hutchinson(A_FLAT, 3, level=95)
