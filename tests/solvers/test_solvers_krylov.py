"""CG, Steihaug and MINRES crossed with the operator zoo, checked against SciPy."""

import functools

import numpy as np
import pytest
import scipy.sparse.linalg as sla
from solvers_zoo import (FORMS, MATRICES, SPD, CountingOperator, as_form, dense,
                         same_arithmetic, with_spectrum)

from solvers import cg, gltr, minres, steihaug


def rhs(n, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def rtol_for(A):
    return 1e-4 if A.dtype == np.float32 else 1e-8


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_cg_zoo(name, form):
    A = MATRICES[name]
    b = rhs(A.shape[0], A.dtype)
    res = cg(as_form(A, form), b, rtol=rtol_for(A), full_output=True)
    Ad = dense(A).astype(np.float64)
    if name in SPD:
        assert res.success and res.status == 0
        assert np.linalg.norm(Ad @ res.x - b) <= 2 * rtol_for(A) * np.linalg.norm(b)
        C = CountingOperator(same_arithmetic(A, form))
        xs, info = sla.cg(C, b, rtol=rtol_for(A), maxiter=10 * A.shape[0])
        assert res.nmatvec <= C.count
        np.testing.assert_allclose(res.x, xs, rtol=0, atol=1e-6 * np.abs(xs).max())
    else:
        # Indefinite: either converged, or stopped on a direction of negative curvature.
        assert res.success or res.negative_curvature
        if res.negative_curvature:
            assert res.status == 2 and res.d @ Ad @ res.d <= 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_minres_zoo(name, form):
    A = MATRICES[name]
    b = rhs(A.shape[0], A.dtype)
    rtol = rtol_for(A)
    res = minres(as_form(A, form), b, rtol=rtol, full_output=True)
    C = CountingOperator(same_arithmetic(A, form))
    xs, info = sla.minres(C, b, rtol=rtol)
    assert res.success and info == 0
    assert res.nmatvec <= C.count
    np.testing.assert_allclose(res.x, xs, rtol=0, atol=1e-6 * np.abs(xs).max())
    Ad = dense(A).astype(np.float64)
    x_exact = np.linalg.solve(Ad, b)
    assert np.linalg.norm(res.x - x_exact) <= 1e-2 * np.linalg.norm(x_exact) or name == "spd_ill"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("radius", [0.1, 1e3])
def test_steihaug_zoo(name, form, radius):
    A = MATRICES[name]
    g = rhs(A.shape[0], A.dtype, seed=5)
    res = steihaug(as_form(A, form), g, radius, rtol=1e-6)
    Ad = dense(A).astype(np.float64)
    p = res.p.astype(np.float64)
    assert np.linalg.norm(p) <= radius * (1 + 1e-5)
    model = g @ p + 0.5 * p @ Ad @ p
    assert model < 0
    assert np.isclose(res.model_value, model, rtol=1e-3 if A.dtype == np.float32 else 1e-8)
    if res.hits_boundary:
        assert np.isclose(np.linalg.norm(p), radius, rtol=1e-5)
    if name == "indefinite" and radius > 1:
        assert res.negative_curvature
    if name in SPD and radius > 1 and name != "spd_ill":
        assert res.status == 0 and not res.hits_boundary
        assert np.linalg.norm(Ad @ p + g) <= 1e-5 * np.linalg.norm(g)


@functools.lru_cache(maxsize=None)
def spd_with_condition(n, cond):
    return with_spectrum(np.geomspace(1.0, cond, n), seed=n)


@pytest.mark.parametrize("n, cond", [
    pytest.param(n, c, marks=[pytest.mark.slow] if n >= 1000 else [])  # dense n >= 1000: slow
    for n in (50, 200, 500, 1000, 2000) for c in (10.0, 1e3, 1e6) if n * c < 2e9])
@pytest.mark.parametrize("rtol", [1e-3, 1e-6])
def test_cg_minres_matvecs_never_exceed_scipy(n, cond, rtol):
    A = spd_with_condition(n, cond)
    b = rhs(n, seed=1)
    res = cg(A, b, rtol=rtol, full_output=True)
    C = CountingOperator(A)
    xs, _ = sla.cg(C, b, rtol=rtol, maxiter=10 * n)
    assert res.nmatvec <= C.count
    np.testing.assert_allclose(res.x, xs, atol=1e-8 * np.abs(xs).max())
    res = minres(A, b, rtol=rtol, full_output=True)
    C = CountingOperator(A)
    xs, _ = sla.minres(C, b, rtol=rtol)
    assert res.nmatvec <= C.count
    np.testing.assert_allclose(res.x, xs, atol=1e-8 * np.abs(xs).max())


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-4)])
def test_cg_iterates_follow_scipys(dtype, rtol):
    # cg's fused step does SciPy's arithmetic (same dots, same rounding, scalars in the
    # arrays' dtype), so the iterates agree to rounding and the counts are equal.
    A = with_spectrum(np.geomspace(1.0, 1e3, 300), seed=7, dtype=dtype)
    b = rhs(300, dtype, seed=3)
    ours, theirs = [], []
    cg(A, b, rtol=1e-6, callback=lambda x: ours.append(x.copy()))
    sla.cg(A, b, rtol=1e-6, callback=lambda x: theirs.append(x.copy()))
    assert len(ours) == len(theirs) > 50
    assert all(x.dtype == dtype for x in ours)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=rtol * np.abs(theirs).max())


def test_cg_tuple_return_x0_callback_and_preconditioner():
    A = MATRICES["spd_ill"]
    b = rhs(A.shape[0])
    seen = []
    M = np.diag(1 / np.diag(A))
    x, info = cg(A, b, x0=np.ones(A.shape[0]), rtol=1e-10, M=M, callback=seen.append)
    xs, info_s = sla.cg(A, b, x0=np.ones(A.shape[0]), rtol=1e-10, M=M, maxiter=600)
    assert info == 0 and len(seen) > 0
    np.testing.assert_allclose(x, xs, atol=1e-8 * np.abs(xs).max())
    x, info = cg(A, b, maxiter=3)
    assert info == 3
    res = cg(A, b, maxiter=3, full_output=True)
    assert res.status == 1 and not res.success and res.nit == 3 and res.nmatvec == 3


def test_cg_zero_rhs_and_negative_curvature_info():
    A = MATRICES["indefinite"]
    x, info = cg(A, np.zeros(A.shape[0]))
    assert info == 0 and not x.any()
    x, info = cg(np.diag([1.0, -1.0]), np.ones(2))
    assert info == -1
    res = cg(np.diag([1.0, -1.0]), np.ones(2), full_output=True)
    assert res.negative_curvature and res.d @ np.diag([1.0, -1.0]) @ res.d <= 0


def test_zero_rhs_gives_zero_whatever_x0_as_scipy():
    # minres returned x0 itself with success; cg spent its whole budget chasing a zero
    # tolerance. SciPy returns x = 0 at once.
    A = MATRICES["spd_well"]
    x0 = np.linspace(1.0, 2.0, A.shape[0])
    for solver in (cg, minres):
        res = solver(A, np.zeros(A.shape[0]), x0=x0, full_output=True)
        assert res.status == 0 and res.nit == 0 and res.nmatvec == 0
        assert not res.x.any() and res.x is not x0


def test_minres_shift_and_x0():
    A = MATRICES["spd_well"]
    b = rhs(A.shape[0])
    x, info = minres(A, b, x0=np.ones(A.shape[0]), shift=0.5, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose((A - 0.5 * np.eye(A.shape[0])) @ x, b, atol=1e-7)


@pytest.mark.parametrize("dtype, shift, preconditioned", [
    (np.float64, 0.0, False), (np.float64, 0.7, False), (np.float64, 0.0, True),
    (np.float32, 0.0, False)])   # (with a shift or M, SciPy computes float32 in float64)
def test_minres_iterates_follow_scipys(dtype, shift, preconditioned):
    # minres's fused vector steps do SciPy's arithmetic (shift, preconditioner and all),
    # so the iterates agree to rounding and it takes no more steps.
    A = MATRICES["indefinite"].astype(dtype)
    b = rhs(A.shape[0], dtype, seed=4)
    M = np.diag(1.0 / (np.abs(np.diag(A)) + 1.0)).astype(dtype) if preconditioned else None
    ours, theirs = [], []
    rtol = rtol_for(A)
    minres(A, b, rtol=rtol, shift=shift, M=M, callback=lambda x: ours.append(x.copy()))
    sla.minres(A, b, rtol=rtol, shift=shift, M=M, callback=lambda x: theirs.append(x.copy()))
    assert 10 < len(ours) <= len(theirs)
    assert all(x.dtype == dtype for x in ours)
    k = len(ours)
    atol = (1e-10 if dtype == np.float64 else 1e-3) * np.abs(theirs[k - 1]).max()
    np.testing.assert_allclose(ours, theirs[:k], rtol=0, atol=atol)


def test_steihaug_negative_curvature_picks_lower_model():
    res = steihaug(np.diag([-1.0, 1.0]), np.array([1.0, 0.0]), 2.0)
    assert res.negative_curvature and res.hits_boundary
    np.testing.assert_allclose(res.p, [-2.0, 0.0])


@pytest.mark.parametrize("solver", [cg, minres])
def test_bad_input_messages(solver):
    name = solver.__name__
    with pytest.raises(ValueError, match=rf"{name}: b has shape \(5,\) but A has shape \(4, 4\)"):
        solver(np.eye(4), np.ones(5))
    with pytest.raises(ValueError, match=rf"{name}: x0 has shape"):
        solver(np.eye(4), np.ones(4), x0=np.ones(3))
    with pytest.raises(ValueError, match=rf"{name}: A must be square"):
        solver(np.ones((4, 3)), np.ones(4))
    with pytest.raises(ValueError, match="rtol"):
        solver(np.eye(4), np.ones(4), rtol=-1.0)
    with pytest.raises(TypeError, match=rf"{name}: rtol must be a real number, got '1e-5'"):
        solver(np.eye(4), np.ones(4), rtol="1e-5")
    with pytest.raises(ValueError, match=rf"{name}: maxiter must be an int >= 0, got 'a'"):
        solver(np.eye(4), np.ones(4), maxiter="a")
    with pytest.raises(ValueError, match="NaN"):
        solver(np.eye(2), np.array([1.0, np.nan]))
    with pytest.raises(TypeError, match=name):
        solver("not an operator", np.ones(2))
    with pytest.raises(ValueError, match=rf"{name}: M has shape"):
        solver(np.eye(4), np.ones(4), M=np.eye(3))


@pytest.mark.parametrize("solver", [steihaug, gltr])
def test_trust_region_subproblem_bad_input(solver):
    # gltr used to drop the imaginary part of g, accept rtol < 0, and report maxiter <= 0
    # as success with "zero gradient: zero step" although g != 0.
    name = solver.__name__
    A, g = np.diag([1.0, 2.0, 3.0]), np.ones(3)
    with pytest.raises(ValueError, match=rf"{name}: radius"):
        solver(np.eye(2), np.ones(2), -1.0)
    with pytest.raises(TypeError, match=rf"{name}: radius must be a real number, got None"):
        solver(A, g, None)
    with pytest.raises(TypeError, match=rf"{name}: g is complex"):
        solver(A, g + 1j, 1.0)
    with pytest.raises(ValueError, match=rf"{name}: rtol must be a finite number >= 0"):
        solver(A, g, 1.0, rtol=-1.0)
    with pytest.raises(ValueError, match=rf"{name}: maxiter must be an int >= 0, got -1"):
        solver(A, g, 1.0, maxiter=-1)
    res = solver(A, g, 1.0, maxiter=0)
    assert not res.success and res.message.startswith("maximum number of")
    assert not res.p.any() and res.nit == 0 and res.nmatvec == 0
