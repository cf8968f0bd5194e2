"""hessgrad.numpy products and hessgrad.numpy.linalg: values equal numpy's on many shapes,
derivatives agree with finite differences at second order (forward and reverse), every
function runs inside ``hessgrad.function`` (values and gradients), bad input is named."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(7)


def randn(*shape):
    return rng.standard_normal(shape)


def well(*shape):
    return randn(*shape) + 3.0 * np.eye(shape[-1])


def spd(*shape):
    a = randn(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def symmetrize(a):
    nd = len(a.shape)
    return (a + hnp.transpose(a, tuple(range(nd - 2)) + (nd - 1, nd - 2))) * 0.5


def nonsym(a):
    """``a`` with noise in its strict upper triangle (a function reading the lower one must
    not see it)."""
    return np.tril(a) + np.triu(randn(*a.shape), 1) * 5.0


def value(x):
    return np.asarray(x.numpy() if isinstance(x, hg.Tensor) else x)


# (hessgrad function, numpy function, args) for forward values -------------------------------
PRODUCT_VALUES = [
    (hnp.dot, np.dot, (2.0, randn(3))),
    (hnp.dot, np.dot, (randn(2, 3), np.array(1.5))),
    (hnp.dot, np.dot, (randn(4), randn(4))),
    (hnp.dot, np.dot, (randn(2, 3), randn(3))),
    (hnp.dot, np.dot, (randn(3), randn(3, 2))),
    (hnp.dot, np.dot, (randn(2, 3), randn(3, 4))),
    (hnp.dot, np.dot, (randn(2, 2, 3), randn(3))),
    (hnp.dot, np.dot, (randn(3), randn(2, 3, 4))),
    (hnp.dot, np.dot, (randn(2, 2, 3), randn(3, 4))),
    (hnp.dot, np.dot, (randn(2, 3), randn(5, 3, 4))),
    (hnp.dot, np.dot, (randn(2, 2, 3), randn(2, 3, 4))),
    (hnp.vdot, np.vdot, (randn(2, 3), randn(3, 2))),
    (hnp.vdot, np.vdot, (randn(4), randn(4))),
    (hnp.matmul, np.matmul, (randn(2, 1, 3, 4), randn(5, 4, 2))),
    (hnp.matmul, np.matmul, (randn(4), randn(4, 2))),
    (hnp.inner, np.inner, (randn(4), randn(4))),
    (hnp.inner, np.inner, (randn(2, 4), randn(3, 5, 4))),
    (hnp.inner, np.inner, (np.array(2.0), randn(3, 2))),
    (hnp.outer, np.outer, (randn(3), randn(4))),
    (hnp.outer, np.outer, (randn(2, 2), randn(3))),
    (hnp.tensordot, np.tensordot, (randn(2, 3, 4), randn(3, 4, 5))),
    (lambda a, b: hnp.tensordot(a, b, axes=1), lambda a, b: np.tensordot(a, b, axes=1),
     (randn(2, 3), randn(3, 4))),
    (lambda a, b: hnp.tensordot(a, b, axes=0), lambda a, b: np.tensordot(a, b, axes=0),
     (randn(2), randn(3, 2))),
    (lambda a, b: hnp.tensordot(a, b, axes=([0, -1], [2, 0])),
     lambda a, b: np.tensordot(a, b, axes=([0, -1], [2, 0])), (randn(2, 3, 4), randn(4, 5, 2))),
    (lambda a, b: hnp.tensordot(a, b, axes=(1, 0)),
     lambda a, b: np.tensordot(a, b, axes=(1, 0)), (randn(2, 3), randn(3, 4))),
    (lambda a, b: hnp.einsum("ij,jk->ik", a, b, optimize=True),
     lambda a, b: np.einsum("ij,jk->ik", a, b), (randn(2, 3), randn(3, 4))),
    (lambda a: hnp.einsum("...ii->...", a), lambda a: np.einsum("...ii->...", a),
     (randn(2, 3, 3),)),
    (lambda a, b: hnp.einsum("ij,jk", a, b), lambda a, b: np.einsum("ij,jk", a, b),
     (randn(2, 3), randn(3, 4))),
    (lambda a, b: hnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
     lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), (randn(2, 3), randn(3, 4))),
    (lambda a, b: hnp.einsum(a, [Ellipsis, 1], b, [1]),
     lambda a, b: np.einsum(a, [Ellipsis, 1], b, [1]), (randn(2, 3), randn(3))),
    (hnp.kron, np.kron, (randn(2), randn(3))),
    (hnp.kron, np.kron, (randn(2, 3), randn(3, 2))),
    (hnp.kron, np.kron, (randn(2, 2), randn(2, 3, 2))),
    (hnp.cross, np.cross, (randn(3), randn(3))),
    (hnp.cross, np.cross, (randn(4, 3), randn(3))),
    (lambda a, b: hnp.cross(a, b, axisa=0, axisb=-1, axisc=0),
     lambda a, b: np.cross(a, b, axisa=0, axisb=-1, axisc=0), (randn(3, 4), randn(4, 3))),
    (lambda a, b: hnp.cross(a, b, axis=1), lambda a, b: np.cross(a, b, axis=1),
     (randn(2, 3, 2), randn(2, 3, 2))),
    (lambda *xs: hnp.linalg.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
     (randn(4), randn(4, 2), randn(2, 6), randn(6, 3))),
    (lambda *xs: hnp.linalg.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
     (randn(5, 4), randn(4, 2), randn(2, 6), randn(6))),
    (lambda *xs: hnp.linalg.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
     (randn(4), randn(4, 2), randn(2))),
    (lambda *xs: hnp.linalg.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
     (randn(3, 4), randn(4, 2))),
]

NORM_CASES = [  # x, ord, axis, keepdims
    (randn(5), None, None, False), (randn(5), 2, None, True), (randn(5), 1, None, False),
    (randn(5), np.inf, None, False), (randn(5), -np.inf, None, False),
    (np.array([0.0, 1.5, 0.0, -2.0]), 0, None, False), (randn(5), 3, None, False),
    (randn(5), 0.5, None, False), (randn(5), -1.5, None, False),
    (randn(3, 4), None, None, False), (randn(3, 4), None, None, True),
    (randn(2, 3, 4), None, None, False), (randn(2, 3, 4), None, 1, True),
    (randn(2, 3, 4), 1, -1, False), (randn(2, 3, 4), np.inf, 0, True),
    (randn(3, 4), "fro", None, False), (randn(3, 4), "nuc", None, False),
    (randn(3, 4), 1, None, False), (randn(3, 4), -1, None, False),
    (randn(3, 4), 2, None, False), (randn(3, 4), -2, None, False),
    (randn(3, 4), np.inf, None, False), (randn(3, 4), -np.inf, None, False),
    (randn(2, 3, 4), "fro", (2, 0), True), (randn(2, 3, 4), "nuc", (0, 2), False),
    (randn(2, 3, 4), 2, (-1, -2), True), (randn(2, 3, 4), 1, (2, 1), False),
    (randn(2, 3, 4), -np.inf, (0, 1), True), (randn(2, 3, 4), -2, (1, 2), False),
]

LINALG_VALUES = [
    (hnp.linalg.inv, np.linalg.inv, (well(3, 3),)),
    (hnp.linalg.inv, np.linalg.inv, (well(2, 2, 4, 4),)),
    (hnp.linalg.pinv, np.linalg.pinv, (randn(5, 3),)),
    (lambda a: hnp.linalg.pinv(a, rcond=1e-3), lambda a: np.linalg.pinv(a, rcond=1e-3),
     (randn(2, 3, 4),)),
    (lambda a: hnp.linalg.pinv(a, rtol=None), lambda a: np.linalg.pinv(a, rtol=None),
     (randn(4, 2) @ randn(2, 4),)),
    (hnp.linalg.solve, np.linalg.solve, (well(3, 3), randn(3))),
    (hnp.linalg.solve, np.linalg.solve, (well(3, 3), randn(3, 2))),
    (hnp.linalg.solve, np.linalg.solve, (well(2, 3, 3), randn(3))),
    (hnp.linalg.solve, np.linalg.solve, (well(2, 3, 3), randn(2, 3, 4))),
    (hnp.linalg.det, np.linalg.det, (well(3, 3),)),
    (hnp.linalg.det, np.linalg.det, (randn(2, 3, 3),)),
    (lambda a: hnp.linalg.slogdet(a).sign, lambda a: np.linalg.slogdet(a).sign,
     (randn(4, 3, 3),)),
    (lambda a: hnp.linalg.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a).logabsdet,
     (randn(4, 3, 3),)),
    (hnp.linalg.cholesky, np.linalg.cholesky, (spd(3, 3),)),
    (lambda a: hnp.linalg.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a, upper=True),
     (spd(2, 3, 3),)),
    (lambda a: hnp.linalg.eigh(a).eigenvalues, lambda a: np.linalg.eigh(a).eigenvalues,
     (spd(2, 4, 4),)),
    (lambda a: hnp.linalg.eigh(a)[1], lambda a: np.linalg.eigh(a)[1], (spd(4, 4),)),
    (lambda a: hnp.linalg.eigh(a, UPLO="U")[0], lambda a: np.linalg.eigh(a, UPLO="U")[0],
     (np.triu(randn(4, 4)),)),
    (hnp.linalg.eigvalsh, np.linalg.eigvalsh, (spd(3, 3),)),
    # non-symmetric input: only the named triangle is read
    (hnp.linalg.cholesky, np.linalg.cholesky, (nonsym(spd(2, 3, 3)),)),
    (lambda a: hnp.linalg.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a, upper=True),
     (np.swapaxes(nonsym(spd(2, 3, 3)), -1, -2),)),
    (lambda a: hnp.linalg.pinv(a, hermitian=True), lambda a: np.linalg.pinv(a, hermitian=True),
     (randn(2, 4, 4),)),
    (lambda a: hnp.linalg.svd(a, hermitian=True).U, lambda a: np.linalg.svd(a, hermitian=True).U,
     (randn(2, 4, 4),)),
    (lambda a: hnp.linalg.svd(a, hermitian=True)[1], lambda a: np.linalg.svd(a, hermitian=True)[1],
     (randn(4, 4),)),
    (lambda a: hnp.linalg.svd(a, hermitian=True)[2], lambda a: np.linalg.svd(a, hermitian=True)[2],
     (randn(4, 4),)),
    (lambda a: hnp.linalg.svd(a, compute_uv=False, hermitian=True),
     lambda a: np.linalg.svd(a, compute_uv=False, hermitian=True), (randn(2, 3, 3),)),
    (lambda a: hnp.linalg.matrix_rank(a, hermitian=True),
     lambda a: np.linalg.matrix_rank(a, hermitian=True), (np.tril(np.ones((4, 4))),)),
    (lambda a: hnp.linalg.eigvalsh(a, UPLO="U"), lambda a: np.linalg.eigvalsh(a, UPLO="U"),
     (randn(3, 3),)),
    (lambda a: hnp.linalg.qr(a).Q, lambda a: np.linalg.qr(a).Q, (randn(5, 3),)),
    (lambda a: hnp.linalg.qr(a)[1], lambda a: np.linalg.qr(a)[1], (randn(2, 4, 4),)),
    (lambda a: hnp.linalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"), (randn(5, 3),)),
    (lambda a: hnp.linalg.qr(a, mode="complete")[0],
     lambda a: np.linalg.qr(a, mode="complete")[0], (randn(3, 5),)),
    (lambda a: hnp.linalg.svd(a, full_matrices=False).U,
     lambda a: np.linalg.svd(a, full_matrices=False).U, (randn(5, 3),)),
    (lambda a: hnp.linalg.svd(a, full_matrices=False)[2],
     lambda a: np.linalg.svd(a, full_matrices=False)[2], (randn(2, 3, 5),)),
    (lambda a: hnp.linalg.svd(a)[1], lambda a: np.linalg.svd(a)[1], (randn(4, 4),)),
    (lambda a: hnp.linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False),
     (randn(3, 5),)),
    (hnp.linalg.svdvals, np.linalg.svdvals, (randn(2, 5, 3),)),
    (hnp.linalg.matrix_rank, np.linalg.matrix_rank, (randn(5, 2) @ randn(2, 4),)),
    (lambda a: hnp.linalg.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0),
     (well(3, 3),)),
    (lambda a: hnp.linalg.matrix_power(a, 1), lambda a: np.linalg.matrix_power(a, 1),
     (well(3, 3),)),
    (lambda a: hnp.linalg.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5),
     (randn(2, 3, 3),)),
    (lambda a: hnp.linalg.matrix_power(a, -3), lambda a: np.linalg.matrix_power(a, -3),
     (well(3, 3),)),
    (lambda a: hnp.linalg.matrix_power(a, 6), lambda a: np.linalg.matrix_power(a, 6),
     (randn(3, 3),)),
    (hnp.linalg.matrix_transpose, np.linalg.matrix_transpose, (randn(2, 3, 4),)),
    (hnp.linalg.trace, np.linalg.trace, (randn(2, 3, 4),)),
    (lambda a: hnp.linalg.trace(a, offset=1), lambda a: np.linalg.trace(a, offset=1),
     (randn(3, 4),)),
    (lambda a: hnp.linalg.diagonal(a, offset=-1), lambda a: np.linalg.diagonal(a, offset=-1),
     (randn(2, 4, 3),)),
    (hnp.linalg.outer, np.linalg.outer, (randn(3), randn(2))),
    (hnp.linalg.cross, np.linalg.cross, (randn(2, 3), randn(2, 3))),
    (hnp.linalg.tensordot, np.linalg.tensordot, (randn(2, 3, 4), randn(3, 4, 2))),
    (hnp.linalg.matmul, np.linalg.matmul, (randn(2, 3), randn(3, 2))),
    (lambda x: hnp.linalg.vector_norm(x, axis=(0, 2), ord=3),
     lambda x: np.linalg.vector_norm(x, axis=(0, 2), ord=3), (randn(2, 3, 4),)),
    (lambda x: hnp.linalg.vector_norm(x, keepdims=True),
     lambda x: np.linalg.vector_norm(x, keepdims=True), (randn(2, 3),)),
    (lambda x: hnp.linalg.matrix_norm(x, ord="nuc", keepdims=True),
     lambda x: np.linalg.matrix_norm(x, ord="nuc", keepdims=True), (randn(2, 3, 4),)),
] + [
    (lambda x, o=o, a=ax, k=kd: hnp.linalg.norm(x, o, a, k),
     lambda x, o=o, a=ax, k=kd: np.linalg.norm(x, o, a, k), (x,))
    for x, o, ax, kd in NORM_CASES
]

VALUE_ROWS = PRODUCT_VALUES + LINALG_VALUES


@pytest.mark.parametrize("k", range(len(VALUE_ROWS)))
def test_values_match_numpy_eager_and_graph(k):
    f, ref, args = VALUE_ROWS[k]
    expected = ref(*args)
    out = f(*args)
    assert value(out).shape == np.shape(expected)
    np.testing.assert_allclose(value(out), expected, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(hg.function(f)(*args), expected, rtol=1e-9, atol=1e-11)


def test_lstsq_matches_numpy():
    cases = [(randn(6, 3), randn(6)), (randn(6, 3), randn(6, 2)), (well(3, 3), randn(3, 2)),
             (randn(6, 2) @ randn(2, 3), randn(6)), (randn(2, 4), randn(2, 3))]
    for a, b in cases:
        ours, ref = hnp.linalg.lstsq(a, b), np.linalg.lstsq(a, b)
        for mine, theirs in zip(ours, ref):
            assert value(mine).shape == np.shape(theirs)
            np.testing.assert_allclose(value(mine), theirs, rtol=1e-8, atol=1e-10)
    a, b = randn(6, 3), randn(6, 2)
    graph_out = hg.function(lambda a, b: hnp.linalg.lstsq(a, b))(a, b)
    for mine, theirs in zip(graph_out, np.linalg.lstsq(a, b)):
        np.testing.assert_allclose(value(mine), theirs, rtol=1e-8, atol=1e-10)


# second-order derivatives against finite differences --------------------------------------
GRAD_ROWS = [
    ("dot_nd", hnp.dot, (randn(2, 2, 3), randn(2, 3, 2))),
    ("dot_vec_nd", hnp.dot, (randn(3), randn(2, 3, 2))),
    ("dot_scalar", hnp.dot, (np.array(1.3), randn(3))),
    ("vdot", hnp.vdot, (randn(2, 3), randn(6))),
    ("matmul", hnp.matmul, (randn(2, 3, 4), randn(4, 2))),
    ("inner", hnp.inner, (randn(2, 4), randn(3, 4))),
    ("outer", hnp.outer, (randn(2, 2), randn(3))),
    ("tensordot_pairs", lambda a, b: hnp.tensordot(a, b, axes=([0, 2], [1, 0])),
     (randn(2, 3, 4), randn(4, 2, 5))),
    ("tensordot_int0", lambda a, b: hnp.tensordot(a, b, axes=0), (randn(2), randn(3))),
    ("einsum_interleaved", lambda a, b: hnp.einsum(a, [0, 1], b, [1, 0], []),
     (randn(2, 3), randn(3, 2))),
    ("einsum_repeated", lambda a: hnp.einsum("iij->j", a), (randn(3, 3, 2),)),
    ("kron", hnp.kron, (randn(2, 3), randn(2, 2))),
    ("kron_mixed_ndim", hnp.kron, (randn(3), randn(2, 2))),
    ("cross", hnp.cross, (randn(4, 3), randn(3))),
    ("cross_axes", lambda a, b: hnp.cross(a, b, axisa=0, axisc=0), (randn(3, 2), randn(2, 3))),
    ("multi_dot", lambda a, b, c: hnp.linalg.multi_dot([a, b, c]),
     (randn(3), randn(3, 4), randn(4, 2))),
    ("inv", hnp.linalg.inv, (well(2, 3, 3),)),
    ("pinv", hnp.linalg.pinv, (randn(4, 3),)),
    ("solve_vec", hnp.linalg.solve, (well(3, 3), randn(3))),
    ("solve_batched_vec", hnp.linalg.solve, (well(2, 3, 3), randn(3))),
    ("solve_mat", hnp.linalg.solve, (well(2, 3, 3), randn(2, 3, 2))),
    ("lstsq_x", lambda a, b: hnp.linalg.lstsq(a, b)[0], (randn(5, 3), randn(5, 2))),
    ("lstsq_residuals", lambda a, b: hnp.linalg.lstsq(a, b)[1], (randn(5, 3), randn(5))),
    ("lstsq_s", lambda a, b: hnp.linalg.lstsq(a, b)[3], (randn(5, 3), randn(5))),
    ("det", hnp.linalg.det, (well(2, 3, 3),)),
    ("slogdet", lambda a: hnp.linalg.slogdet(a)[1], (randn(2, 3, 3),)),
    ("cholesky", lambda a: hnp.linalg.cholesky(symmetrize(a)), (spd(3, 3),)),
    ("cholesky_upper", lambda a: hnp.linalg.cholesky(symmetrize(a), upper=True),
     (spd(2, 3, 3),)),
    ("eigh", lambda a: hnp.linalg.eigh(symmetrize(a))[1] ** 2 *
     hnp.linalg.eigh(symmetrize(a))[0], (randn(3, 3),)),
    ("eigh_upper", lambda a: hnp.linalg.eigh(symmetrize(a), UPLO="U")[0], (randn(2, 3, 3),)),
    ("eigvalsh", lambda a: hnp.linalg.eigvalsh(symmetrize(a)), (randn(4, 4),)),
    # the functions computed, at non-symmetric points along non-symmetric directions: only
    # the triangle named (UPLO, upper, hermitian=True: the lower one) is read
    ("cholesky_lower_read", hnp.linalg.cholesky, (nonsym(spd(3, 3)),)),
    ("cholesky_upper_read", lambda a: hnp.linalg.cholesky(a, upper=True),
     (np.swapaxes(nonsym(spd(2, 3, 3)), -1, -2),)),
    ("eigh_lower_read", lambda a: hnp.linalg.eigh(a)[1] ** 2 * hnp.linalg.eigh(a)[0],
     (randn(3, 3),)),
    ("eigh_upper_read", lambda a: hnp.linalg.eigh(a, UPLO="U")[1] ** 2 *
     hnp.linalg.eigh(a, UPLO="U")[0][..., None, :], (randn(2, 3, 3),)),
    ("eigvalsh_lower_read", hnp.linalg.eigvalsh, (randn(2, 4, 4),)),
    ("eigvalsh_upper_read", lambda a: hnp.linalg.eigvalsh(a, UPLO="U"), (randn(4, 4),)),
    ("pinv_hermitian", lambda a: hnp.linalg.pinv(a, hermitian=True), (randn(3, 3),)),
    ("svd_hermitian", lambda a: (lambda u, s, vh: hnp.matmul(u, vh) * s[..., None, :1])(
        *hnp.linalg.svd(a, hermitian=True)), (randn(2, 3, 3),)),
    ("svd_hermitian_values", lambda a: hnp.linalg.svd(a, compute_uv=False, hermitian=True),
     (randn(3, 3),)),
    ("qr", lambda a: hnp.linalg.qr(a)[0] + hnp.linalg.qr(a)[1][:1], (randn(4, 3),)),
    ("qr_r", lambda a: hnp.linalg.qr(a, mode="r"), (randn(3, 3),)),
    ("svd", lambda a: hnp.linalg.svd(a, full_matrices=False)[0] ** 2, (randn(4, 3),)),
    ("svd_vals", lambda a: hnp.linalg.svd(a, compute_uv=False), (randn(3, 4),)),
    ("svdvals", hnp.linalg.svdvals, (randn(2, 3, 3),)),
    ("matrix_power_neg", lambda a: hnp.linalg.matrix_power(a, -2), (well(3, 3),)),
    ("matrix_power_0", lambda a: hnp.linalg.matrix_power(a, 0), (well(3, 3),)),
    ("matrix_power_5", lambda a: hnp.linalg.matrix_power(a, 5), (randn(2, 2, 2) * 0.5,)),
    ("trace", hnp.linalg.trace, (randn(2, 3, 3),)),
    ("diagonal", lambda a: hnp.linalg.diagonal(a, offset=1), (randn(3, 4),)),
    ("vector_norm_axes", lambda x: hnp.linalg.vector_norm(x, axis=(0, 2)), (randn(2, 3, 2),)),
    ("matrix_norm", lambda x: hnp.linalg.matrix_norm(x, ord=2), (randn(2, 3, 4),)),
] + [
    (f"norm_{o}_{ax}_{kd}", lambda x, o=o, ax=ax, kd=kd: hnp.linalg.norm(x, o, ax, kd), (x,))
    for x, o, ax, kd in NORM_CASES if o not in (0.5, -1.5)
] + [  # fractional and negative p need nonzero entries away from 0
    ("norm_p_half", lambda x: hnp.linalg.norm(x, 0.5), (np.array([0.5, -1.2, 2.0]),)),
    ("norm_p_neg", lambda x: hnp.linalg.norm(x, -1.5), (np.array([0.5, -1.2, 2.0]),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_grads_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


GRAPH_GRAD_ROWS = [(name, f, args) for name, f, args in GRAD_ROWS
                   if not name.startswith("norm_") or name in (
                       "norm_None_None_False", "norm_nuc_None_False", "norm_inf_None_False")]


@pytest.mark.parametrize("name,f,args", GRAPH_GRAD_ROWS, ids=[r[0] for r in GRAPH_GRAD_ROWS])
def test_graph_mode_values_and_gradients(name, f, args):
    argnums = tuple(range(len(args)))

    def loss(*xs):
        return hnp.sum(f(*xs))
    np.testing.assert_allclose(hg.function(f)(*args), value(f(*args)), rtol=1e-10, atol=1e-12)
    eager = hg.grad(loss, argnums=argnums)(*args)
    graph = hg.function(hg.grad(loss, argnums=argnums))(*args)
    for e, g in zip(eager, graph):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


# norms at the zero vector -------------------------------------------------------------------
@pytest.mark.parametrize("shape,ord,axis", [((3,), None, None), ((3,), 2, None),
                                            ((2, 3), None, None), ((2, 3), "fro", None),
                                            ((2, 3), None, 1), ((3,), 3, None)])
def test_norm_at_zero_has_zero_subgradient(shape, ord, axis):
    f = lambda x: hnp.sum(hnp.linalg.norm(x, ord, axis))  # noqa: E731
    g = hg.grad(f)(np.zeros(shape))
    np.testing.assert_array_equal(g, np.zeros(shape))
    g_graph = hg.function(hg.grad(f))(np.zeros(shape))
    np.testing.assert_array_equal(g_graph, np.zeros(shape))


def test_norm_hessian_away_from_zero():
    x = randn(4)
    h = hg.jacfwd(hg.grad(hnp.linalg.norm))(x)
    r = np.linalg.norm(x)
    np.testing.assert_allclose(h, (np.eye(4) - np.outer(x, x) / r**2) / r, rtol=1e-10)


def test_norm_zero_row_among_nonzero_rows():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    g = hg.grad(lambda x: hnp.sum(hnp.linalg.norm(x, axis=1)))(x)
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.6, 0.8]])


# results and conventions ----------------------------------------------------------------------
def test_named_results():
    a = spd(3, 3)
    w, v = hnp.linalg.eigh(a)
    assert hnp.linalg.eigh(a).eigenvectors is not None and w.shape == (3,)
    assert hnp.linalg.svd(a).Vh.shape == (3, 3)
    assert hnp.linalg.qr(a).R.shape == (3, 3)
    assert hnp.linalg.slogdet(a).logabsdet.shape == ()


def test_integer_input_is_promoted():
    out = hnp.linalg.inv(np.array([[2, 0], [0, 4]]))
    np.testing.assert_allclose(value(out), [[0.5, 0], [0, 0.25]])
    assert value(hnp.linalg.norm(np.array([3, 4]))) == 5.0


def test_matrix_power_gradient_known():
    a = randn(3, 3)
    g = hg.grad(lambda x: hnp.sum(hnp.linalg.matrix_power(x, 2)))(a)
    ones = np.ones((3, 3))
    np.testing.assert_allclose(g, ones @ a.T + a.T @ ones)


def test_multi_dot_order_is_cheapest():
    from hessgrad.numpy.linalg import _chain_order
    # (10x100)(100x5)(5x50): ((AB)C) costs 7500, (A(BC)) costs 75000.
    assert _chain_order([10, 100, 5, 50])[0][2] == 1


def test_svd_with_full_matrices_of_a_non_square_matrix():
    # numpy's default: the values are numpy's; the singular values differentiate (reverse)
    for shape in ((5, 3), (2, 3, 4)):
        a = randn(*shape)
        u, s, vh = hnp.linalg.svd(a)
        nu, ns, nvh = np.linalg.svd(a)
        assert u.shape == nu.shape and vh.shape == nvh.shape
        np.testing.assert_allclose(s.numpy(), ns, rtol=1e-12)
        k = s.shape[-1]
        np.testing.assert_allclose((u.numpy()[..., :k] * ns[..., None, :]) @ nvh[..., :k, :], a,
                                   atol=1e-12)
        g = hg.grad(lambda a: hnp.sum(hnp.linalg.svd(a).S ** 2))(a)
        np.testing.assert_allclose(g, 2 * a, rtol=1e-10)  # sum of s^2 = ||a||_F^2
    # second order in reverse mode (forward mode through the full factors is undefined)
    check_grads(lambda a: hnp.linalg.svd(a).S, (randn(4, 2),), order=2, modes=("rev",))


def test_qr_complete_of_a_tall_matrix():
    # numpy's values (SciPy's default mode='full' too); R differentiates (reverse), as the
    # reduced factorisation's R padded with zero rows; Q's completed columns raise
    for shape in ((5, 3), (2, 4, 2)):
        a = randn(*shape)
        q, r = hnp.linalg.qr(a, mode="complete")
        nq, nr = np.linalg.qr(a, mode="complete")
        np.testing.assert_allclose(q.numpy(), nq, atol=1e-12)
        np.testing.assert_allclose(r.numpy(), nr, atol=1e-12)
        w = randn(*nr.shape)
        g = hg.grad(lambda a: hnp.sum(w * hnp.linalg.qr(a, mode="complete").R))(a)
        n = shape[-1]
        g_reduced = hg.grad(lambda a: hnp.sum(w[..., :n, :] * hnp.linalg.qr(a).R))(a)
        np.testing.assert_allclose(g, g_reduced, rtol=1e-12)
    check_grads(lambda a: hnp.linalg.qr(a, mode="complete").R, (randn(4, 2),), order=2,
                modes=("rev",))


# errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.dot(np.ones((2, 3)), np.ones((2, 3))), ValueError,
     r"dot: shapes \(2, 3\) and \(2, 3\) not aligned"),
    (lambda: hnp.vdot(np.ones(3), np.ones(4)), ValueError, "vdot: a .* different sizes"),
    (lambda: hnp.inner(np.ones(3), np.ones(4)), ValueError, "inner: last dimensions"),
    (lambda: hnp.tensordot(np.ones((2, 3)), np.ones((2, 3)), axes=1), ValueError,
     r"tensordot: shape mismatch .*axis 1 of a has length 3"),
    (lambda: hnp.tensordot(np.ones(2), np.ones(2), axes=([0], [0, 1])), ValueError,
     "tensordot: axes"),
    (lambda: hnp.cross(np.ones(4), np.ones(3)), ValueError, "cross: only 3-vectors"),
    (lambda: hnp.einsum("ij,jk", np.ones((2, 3))), ValueError, "einsum: subscripts"),
    (lambda: hnp.dot(np.ones(2), np.ones(2), out=np.empty(2)), ValueError, r"dot: output parameter out= has shape \(2,\)"),
    (lambda: hnp.matmul(np.ones((2, 2)), np.ones((2, 2)), axes=[(0, 1)] * 3), TypeError,
     "matmul: unsupported keyword"),
    (lambda: hnp.linalg.solve(np.eye(3), np.ones(4)), ValueError,
     r"solve: a has shape \(3, 3\) and b has shape \(4,\)"),
    (lambda: hnp.linalg.solve(np.ones((3, 4)), np.ones((3, 1))), ValueError,
     "solve: a has shape .* must be square"),
    (lambda: hnp.linalg.lstsq(np.ones((3, 2)), np.ones(4)), ValueError, "lstsq: a has shape"),
    (lambda: hnp.linalg.lstsq(np.ones((2, 3, 2)), np.ones(3)), ValueError,
     r"lstsq: a has shape \(2, 3, 2\) but must be 2-D"),
    (lambda: hnp.linalg.matrix_power(np.eye(2), 1.5), TypeError, "matrix_power: exponent n"),
    (lambda: hnp.linalg.matrix_power(np.ones((2, 3)), 2), ValueError,
     r"matrix_power: a has shape \(2, 3\)"),
    (lambda: hnp.linalg.multi_dot([np.ones((2, 3))]), ValueError, "multi_dot: expecting"),
    (lambda: hnp.linalg.multi_dot([np.ones((2, 3)), np.ones((2, 3)), np.ones(3)]), ValueError,
     "multi_dot: shapes"),
    (lambda: hnp.linalg.norm(np.ones(3), "fro"), ValueError, "norm: invalid norm order 'fro' "
                                                             "for vectors"),
    (lambda: hnp.linalg.norm(np.ones((2, 2)), 3), ValueError, "norm: invalid norm order 3 for "
                                                              "matrices"),
    (lambda: hnp.linalg.norm(np.ones((2, 2, 2)), 2), ValueError, "norm: ord=2 without axis"),
    (lambda: hnp.linalg.norm(np.ones((2, 2)), axis=(0, 0)), ValueError, "norm: duplicate"),
    (lambda: hnp.linalg.norm(np.ones((2, 2)), axis=2), np.exceptions.AxisError, "norm: axis 2"),
    (lambda: hg.grad(lambda a: hnp.sum(hnp.linalg.svd(a).U))(np.ones((3, 2))),
     NotImplementedError, r"svd: with full_matrices=True and a non-square a \(shape \(3, 2\)"),
    (lambda: hg.jvp(lambda a: hnp.linalg.svd(a).S, (np.ones((2, 3)),), (np.ones((2, 3)),)),
     NotImplementedError, "svd: with full_matrices=True"),
    (lambda: hnp.linalg.qr(np.ones((3, 2)), mode="raw"), ValueError, "qr: unsupported mode"),
    (lambda: hg.grad(lambda a: hnp.sum(hnp.linalg.qr(a, mode="complete").Q))(np.ones((3, 2))),
     NotImplementedError, r"qr: with mode='complete' and a tall a \(shape \(3, 2\)"),
    (lambda: hnp.linalg.eigh(np.eye(2), UPLO="X"), ValueError, "eigh: UPLO"),
    (lambda: hnp.linalg.pinv(np.eye(2), rcond=0.1, rtol=0.1), ValueError, "pinv: rtol"),
    (lambda: hnp.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])), np.linalg.LinAlgError,
     "cholesky: a of shape"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# property-based: shapes and broadcasting of the products --------------------------------------
def test_complex_vdot_norm_slogdet_and_lstsq_follow_numpy():
    # vdot conjugates its first argument; 2-norms and 'fro' sum |x|**2 (they summed x*x:
    # complex, wrong values); slogdet's log|det| tangent is real
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    np.testing.assert_allclose(hnp.vdot(z, z[::-1]).numpy(), np.vdot(z, z[::-1]))
    for kwargs in [{}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"ord": "fro"},
                   {"ord": 3, "axis": 1}, {"ord": 1, "axis": 0}]:
        got = hnp.linalg.norm(z, **kwargs)
        expected = np.linalg.norm(z, **kwargs)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_allclose(got.numpy(), expected)
    g = hg.grad(lambda a: hnp.linalg.norm(a))(z)
    np.testing.assert_allclose(g, np.conj(z) / np.linalg.norm(z))
    a = z[:, :3] + 3 * np.eye(3)
    t = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    _, dlog = hg.jvp(lambda m: hnp.linalg.slogdet(m)[1], (a,), (t,))
    assert np.isrealobj(dlog)
    np.testing.assert_allclose(dlog, np.real(np.trace(np.linalg.solve(a, t))))
    # lstsq's residuals are the real squared norms |b - a x|^2
    b = z[:, :2] + 1j
    for got, expected in zip(hnp.linalg.lstsq(z[:, :2], b)[:2], np.linalg.lstsq(z[:, :2], b)[:2]):
        assert value(got).dtype == expected.dtype
        np.testing.assert_allclose(value(got), expected)


from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def _dot_operands(draw):
    k = draw(st.integers(1, 3))
    lead_a = draw(st.lists(st.integers(1, 3), max_size=2))
    lead_b = draw(st.lists(st.integers(1, 3), max_size=2))
    m = draw(st.integers(1, 3))
    a_vec, b_vec = draw(st.booleans()), draw(st.booleans())
    a_shape = (k,) if a_vec else tuple(lead_a) + (k,)
    b_shape = (k,) if b_vec else tuple(lead_b) + (k, m)
    return randn(*a_shape), randn(*b_shape)


@settings(max_examples=40, deadline=None)
@given(_dot_operands())
def test_dot_inner_tensordot_kron_match_numpy(ops):
    a, b = ops
    np.testing.assert_allclose(value(hnp.dot(a, b)), np.dot(a, b), atol=1e-12)
    np.testing.assert_allclose(value(hnp.kron(a, b)), np.kron(a, b), atol=1e-12)
    np.testing.assert_allclose(value(hnp.tensordot(a, b, axes=([-1], [-2 if b.ndim > 1 else 0]))),
                               np.tensordot(a, b, axes=([-1], [-2 if b.ndim > 1 else 0])),
                               atol=1e-12)
    if b.ndim == 1:
        np.testing.assert_allclose(value(hnp.inner(a, b)), np.inner(a, b), atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=2), st.lists(st.integers(1, 3), max_size=2),
       st.integers(1, 3))
def test_batched_solve_broadcasts_like_numpy(lead_a, lead_b, k):
    lead_b = lead_b[-len(lead_a):] if lead_a else lead_b  # keep the stacks broadcastable
    lead_b = [1 if lead_a and d != lead_a[len(lead_a) - len(lead_b) + i] else d
              for i, d in enumerate(lead_b)]
    a, b = well(*lead_a, 3, 3), randn(*lead_b, 3, k)
    np.testing.assert_allclose(value(hnp.linalg.solve(a, b)), np.linalg.solve(a, b),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord", [2, 1, np.inf, "nuc", "fro"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 0)])
def test_matrix_norms_of_empty_matrices_are_zero(ord, shape):
    # numpy takes the max-type matrix norms with initial=0 (they raised 'zero-size array')
    x = np.zeros(shape)
    np.testing.assert_array_equal(value(hnp.linalg.norm(x, ord, axis=(-2, -1))),
                                  np.linalg.norm(x, ord, axis=(-2, -1)))


@pytest.mark.parametrize("hermitian", [True, False])
def test_complex_eigh_upper_triangle_is_numpys(hermitian):
    # UPLO='U' read a^T's lower triangle: the conjugate matrix, so conjugated eigenvectors
    z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a = z + z.conj().T if hermitian else z
    w, v = hnp.linalg.eigh(a, UPLO="U")
    w_np, v_np = np.linalg.eigh(a, UPLO="U")
    np.testing.assert_allclose(value(w), w_np)
    np.testing.assert_allclose(np.abs(np.sum(value(v).conj() * v_np, axis=0)), 1.0)  # phases
    np.testing.assert_allclose(value(hnp.linalg.eigvalsh(a, UPLO="U")), w_np)


@pytest.mark.parametrize("n", [0, 1, 2, 3, -1])
@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.bool_, np.float32])
def test_matrix_power_keeps_integer_dtype_like_numpy(n, dtype):
    # numpy multiplies integer (and boolean) matrices in their own dtype for n >= 0 and only
    # the inverse (n < 0) promotes to float; hnp promoted every integer matrix to float64
    a = np.array([[1, 1], [0, 1]]).astype(dtype)
    expected = np.linalg.matrix_power(a, n)
    for got in (hnp.linalg.matrix_power(a, n),
                hg.function(lambda a: hnp.linalg.matrix_power(a, n))(a)):
        assert np.asarray(got).dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6)
