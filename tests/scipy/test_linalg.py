"""hessgrad.scipy.linalg: SciPy's values, first and second derivatives forward and reverse,
the Fréchet derivative of expm against scipy.linalg.expm_frechet, graph mode."""

import numpy as np
import pytest
import scipy.linalg as sla

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy.linalg as hla
from hessgrad.testing import check_grads

COVERED = {"expm", "sqrtm", "logm", "solve_sylvester", "lu_nopivot", "lu_pivots",
           "pivots_to_permutation"}

rng = np.random.default_rng(0)
A = rng.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.normal(size=(4, 2))
V = rng.normal(size=4)
SMALL = A * 0.4
AB = rng.normal(size=(4, 4))
AB[1] += 5.0  # a diagonally dominant band (l = 2, u = 1)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


VALUES = [
    ("solve_triangular-lower", lambda: (hla.solve_triangular(A, B, lower=True),
                                        sla.solve_triangular(A, B, lower=True))),
    ("solve_triangular-upper-vector", lambda: (hla.solve_triangular(A, V),
                                               sla.solve_triangular(A, V))),
    ("solve_triangular-trans-unit", lambda: (
        hla.solve_triangular(A, B, trans="T", unit_diagonal=True),
        sla.solve_triangular(A, B, trans="T", unit_diagonal=True))),
    ("cholesky", lambda: (hla.cholesky(SPD), sla.cholesky(SPD))),
    ("cholesky-lower", lambda: (hla.cholesky(SPD, lower=True), sla.cholesky(SPD, lower=True))),
    ("cho_factor", lambda: (hla.cho_factor(SPD)[0], sla.cho_factor(SPD)[0])),
    ("cho_solve", lambda: (hla.cho_solve(hla.cho_factor(SPD, lower=True), B),
                           sla.cho_solve(sla.cho_factor(SPD, lower=True), B))),
    ("lu_factor", lambda: (hla.lu_factor(A), sla.lu_factor(A))),
    ("lu_solve", lambda: (hla.lu_solve(hla.lu_factor(A), V), sla.lu_solve(sla.lu_factor(A), V))),
    ("lu_solve-trans", lambda: (hla.lu_solve(hla.lu_factor(A), B, trans=1),
                                sla.lu_solve(sla.lu_factor(A), B, trans=1))),
    ("solve", lambda: (hla.solve(A, B), sla.solve(A, B))),
    ("solve-sym", lambda: (hla.solve(SPD + np.triu(A, 1), B, assume_a="sym"),
                           sla.solve(SPD + np.triu(A, 1), B, assume_a="sym"))),
    ("solve-pos-lower", lambda: (hla.solve(SPD, V, assume_a="pos", lower=True),
                                 sla.solve(SPD, V, assume_a="pos", lower=True))),
    ("solve-transposed", lambda: (hla.solve(A, B, transposed=True),
                                  sla.solve(A, B, transposed=True))),
    ("inv", lambda: (hla.inv(A), sla.inv(A))), ("det", lambda: (hla.det(A), sla.det(A))),
    ("slogdet", lambda: (hla.slogdet(A), np.linalg.slogdet(A))),
    ("eigh-values", lambda: (hla.eigh(SPD)[0], sla.eigh(SPD)[0])),
    ("eigh-generalized", lambda: (hla.eigh(SPD, SPD + np.eye(4), eigvals_only=True),
                                  sla.eigh(SPD, SPD + np.eye(4), eigvals_only=True))),
    ("eigh-subset", lambda: (hla.eigh(SPD, subset_by_index=[1, 2], eigvals_only=True),
                             sla.eigh(SPD, subset_by_index=[1, 2], eigvals_only=True))),
    ("expm", lambda: (hla.expm(A), sla.expm(A))),
    ("expm-stack", lambda: (hla.expm(np.stack([A, SMALL])), sla.expm(np.stack([A, SMALL])))),
    ("expm_frechet", lambda: (hla.expm_frechet(A, SMALL), sla.expm_frechet(A, SMALL))),
    ("sqrtm", lambda: (hla.sqrtm(SPD), sla.sqrtm(SPD))),
    ("logm", lambda: (hla.logm(SPD), sla.logm(SPD))),
    ("solve_sylvester", lambda: (hla.solve_sylvester(SPD, A @ A.T, A),
                                 sla.solve_sylvester(SPD, A @ A.T, A))),
    ("solve_continuous_lyapunov", lambda: (hla.solve_continuous_lyapunov(A - 5 * np.eye(4), SPD),
                                           sla.solve_continuous_lyapunov(A - 5 * np.eye(4),
                                                                         SPD))),
    ("solve_banded", lambda: (hla.solve_banded((2, 1), AB, B), sla.solve_banded((2, 1), AB, B))),
    ("qr-full", lambda: (hla.qr(A)[1], sla.qr(A)[1])),
    ("qr-economic", lambda: (hla.qr(A[:, :3], mode="economic")[1],
                             sla.qr(A[:, :3], mode="economic")[1])),
    ("qr-r", lambda: (hla.qr(A, mode="r"), sla.qr(A, mode="r"))),
    ("svd-values", lambda: (hla.svd(A)[1], sla.svd(A)[1])),
    ("svdvals", lambda: (hla.svdvals(A), sla.svdvals(A))),
    ("block_diag", lambda: (hla.block_diag(A[:2, :3], 5.0, [1, 2]),
                            sla.block_diag(A[:2, :3], 5.0, [1, 2]))),
    ("toeplitz", lambda: (hla.toeplitz(V, 2 * V[::-1]), sla.toeplitz(V, 2 * V[::-1]))),
    ("toeplitz-hermitian", lambda: (hla.toeplitz(V), sla.toeplitz(V))),
    ("circulant", lambda: (hla.circulant(V), sla.circulant(V))),
]


@pytest.mark.parametrize("name,pair", VALUES, ids=[v[0] for v in VALUES])
def test_values_equal_scipy(name, pair):
    got, want = pair()
    for g, w in zip(_as_tuple(got), _as_tuple(want)):
        g = np.asarray(g)
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13 * np.max(np.abs(w)))


def test_generalized_eigenvectors_are_b_orthonormal():
    w, v = hla.eigh(SPD, SPD + np.eye(4))
    v = np.asarray(v)
    np.testing.assert_allclose(v.T @ (SPD + np.eye(4)) @ v, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(SPD @ v, (SPD + np.eye(4)) @ v * np.asarray(w), atol=1e-11)


def _spd(m):
    return m @ hnp.swapaxes(m, -1, -2) + 3.0 * np.eye(m.shape[-1])


GRADS = [
    ("solve_triangular", lambda a, b: hla.solve_triangular(a + 4 * np.eye(4), b, lower=True),
     (A, B)),
    ("solve_triangular-trans-unit", lambda a, b: hla.solve_triangular(
        a, b, trans=1, unit_diagonal=True), (A, V)),
    ("cholesky", lambda m: hla.cholesky(_spd(m)), (A,)),
    ("cho_solve", lambda m, b: hla.cho_solve(hla.cho_factor(_spd(m)), b), (A, B)),
    ("cho_solve-lower", lambda m, b: hla.cho_solve(hla.cho_factor(_spd(m), lower=True), b),
     (A, V)),
    ("lu_factor", lambda a: hla.lu_factor(a)[0], (A,)),
    ("lu_solve", lambda a, b: hla.lu_solve(hla.lu_factor(a), b), (A, B)),
    ("lu_solve-trans", lambda a, b: hla.lu_solve(hla.lu_factor(a), b, trans=1), (A, V)),
    ("solve-sym", lambda a, b: hla.solve(a + 4 * np.eye(4), b, assume_a="sym"), (A, B)),
    ("solve-pos", lambda m, b: hla.solve(_spd(m), b, assume_a="pos"), (A, B)),
    ("det", hla.det, (A,)), ("inv", hla.inv, (A,)),
    ("eigh-values", lambda m: hla.eigh(_spd(m), eigvals_only=True), (A,)),
    ("eigh-generalized", lambda m, n: hla.eigh(_spd(m), _spd(n), eigvals_only=True), (A, SMALL)),
    ("eigh-subset", lambda m: hla.eigh(_spd(m), subset_by_index=(2, 3))[1] ** 2, (A,)),
    ("expm", hla.expm, (SMALL,)), ("expm-stack", hla.expm, (np.stack([SMALL, -SMALL.T]),)),
    ("expm_frechet", lambda a, e: hla.expm_frechet(a, e)[1], (SMALL, A)),
    ("sqrtm", lambda m: hla.sqrtm(_spd(m)), (SMALL,)),
    ("logm", lambda m: hla.logm(_spd(m)), (SMALL,)),
    ("solve_sylvester", hla.solve_sylvester, (SPD, SPD.T + A, B @ B.T)),
    ("solve_continuous_lyapunov", lambda a, q: hla.solve_continuous_lyapunov(
        a - 5 * np.eye(4), q), (A, SPD)),
    ("solve_banded", lambda ab, b: hla.solve_banded((2, 1), ab, b), (AB, B)),
    ("qr", lambda a: hla.qr(a, mode="economic")[1], (A[:, :3],)),
    ("svd", lambda a: hla.svd(a, compute_uv=False), (A,)),
    ("block_diag", lambda a, b: hla.block_diag(a, b), (A[:2], V)),
    ("toeplitz", hla.toeplitz, (V, V[::-1])), ("circulant", hla.circulant, (V,)),
]


@pytest.mark.parametrize("name,f,args", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_expm_jvp_is_scipys_frechet_derivative():
    e = rng.normal(size=(4, 4))
    _, tangent = hg.jvp(hla.expm, (A,), (e,))
    np.testing.assert_allclose(tangent, sla.expm_frechet(A, e)[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,f,args", GRADS[::4], ids=[g[0] for g in GRADS[::4]])
def test_graph_mode(name, f, args):
    np.testing.assert_allclose(hg.function(f)(*args), np.asarray(f(*args)), rtol=1e-12)
    loss = lambda *a: hnp.sum(f(*a) ** 2)  # noqa: E731
    np.testing.assert_allclose(hg.function(hg.grad(loss))(*args), hg.grad(loss)(*args),
                               rtol=1e-11)


def test_unsupported_options_raise():
    with pytest.raises(NotImplementedError, match="subset_by_value"):
        hla.eigh(SPD, subset_by_value=(0, 1))
    with pytest.raises(NotImplementedError, match="pivoting"):
        hla.qr(A, pivoting=True)
    with pytest.raises(ValueError, match="assume_a"):
        hla.solve(A, B, assume_a="whatever")


def test_vmap_over_matrix_functions_and_lu():
    stack = rng.normal(size=(4, 3, 3)) * 0.5
    np.testing.assert_allclose(hg.vmap(hla.expm)(stack), sla.expm(stack), rtol=1e-13)
    spd = stack @ np.swapaxes(stack, 1, 2) + np.eye(3)
    np.testing.assert_allclose(hg.vmap(hla.sqrtm)(spd), np.stack([sla.sqrtm(m) for m in spd]),
                               rtol=1e-12)
    np.testing.assert_allclose(hg.vmap(lambda a: hla.lu_factor(a)[0])(stack),
                               np.stack([sla.lu_factor(m)[0] for m in stack]), rtol=1e-13)
    h = hg.hessian(lambda a: hnp.sum(hla.expm(a) ** 2))(stack[0])
    assert h.shape == (3, 3, 3, 3) and np.isfinite(h).all()


def test_scipy_linalg_on_a_traced_value_names_the_replacement():
    with pytest.raises(TypeError, match=r"use hessgrad\.scipy\.linalg\.expm"):
        hg.grad(lambda a: hnp.sum(sla.expm(a)))(SMALL)
    with pytest.raises(TypeError, match=r"use hessgrad\.scipy\.linalg\.cho_factor"):
        hg.function(lambda a: hnp.sum(sla.cho_factor(a)[0]))(SPD)
