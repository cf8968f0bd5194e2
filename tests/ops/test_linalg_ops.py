"""Linear-algebra primitives: first and second derivatives (forward and reverse) against finite
differences, batching/broadcasting, graph mode, shape rules and error messages."""

import numpy as np
import pytest

import hessgrad as hg
from hessgrad.ops import decompositions as D
from hessgrad.ops import linalg as L
from hessgrad.testing import check_grads

COVERED = {"matmul", "einsum", "inv", "solve", "solve_triangular", "det", "slogdet", "pinv",
           "matrix_rank", "cholesky", "eigh", "eigvalsh", "qr", "svd", "svdvals",
           "svd_full", "qr_complete"}
# svd_full (numpy's default for non-square a), qr_complete (mode='complete' for tall a):
# numpy/test_numpy_linalg and tests/harness

rng = np.random.default_rng(42)


def randn(*shape):
    return rng.standard_normal(shape)


def well(*shape):
    """Well-conditioned square matrices (a stack when ``shape`` has leading dims)."""
    n = shape[-1]
    return randn(*shape) + 3.0 * np.eye(n)


def spd(*shape):
    a = randn(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def nonsym(a):
    """``a`` with its strict upper triangle replaced by noise (the ops reading the lower
    triangle must not see it)."""
    return np.tril(a) + np.triu(randn(*a.shape), 1) * 5.0


def sym(f):
    """Differentiate a symmetric-input op through the symmetric part of its argument."""
    return lambda a, *rest: f((a + hg.transpose(a, axes=_last_two(a))) * 0.5, *rest)


def _last_two(a):
    nd = len(a.shape)
    return tuple(range(nd - 2)) + (nd - 1, nd - 2)


def sq(x):
    """Sign-invariant view of eigen/singular vectors (columns defined up to sign)."""
    return x * x


def uvt(fn):
    """U Vh from an SVD: invariant to the joint sign flips of singular vector pairs."""
    def f(a):
        u, s, vh = fn(a)
        return hg.matmul(u, vh) * (1.0 + hg.reduce_sum(s, axis=-1)[..., None, None])
    return f


# name, function, args --------------------------------------------------------------------
ROWS = [
    ("matmul_mm", lambda a, b: L.matmul(a, b), (randn(3, 4), randn(4, 2))),
    ("matmul_batched_bcast", lambda a, b: L.matmul(a, b), (randn(2, 1, 3, 4), randn(3, 4, 2))),
    ("matmul_vec_mat", lambda a, b: L.matmul(a, b), (randn(4), randn(2, 4, 3))),
    ("matmul_mat_vec", lambda a, b: L.matmul(a, b), (randn(2, 3, 4), randn(4))),
    ("matmul_vec_vec", lambda a, b: L.matmul(a, b), (randn(4), randn(4))),
    ("matmul_matrix_vec", lambda a, b: L.matmul(a, b), (randn(3, 4), randn(4))),
    ("matmul_vec_matrix", lambda a, b: L.matmul(a, b), (randn(4), randn(4, 3))),
    ("einsum_contract", lambda a, b: L.einsum("ij,jk->ik", a, b), (randn(2, 3), randn(3, 4))),
    ("einsum_trace", lambda a: L.einsum("ii", a), (randn(3, 3),)),
    ("einsum_diag_bcast", lambda a, b: L.einsum("...ii,...i->...i", a, b),
     (randn(2, 3, 3), randn(3))),
    ("einsum_sum_away", lambda a, b: L.einsum("ijk,j->i", a, b), (randn(2, 3, 4), randn(3))),
    ("einsum_three", lambda a, b, c: L.einsum("ij,jk,kl->il", a, b, c),
     (randn(2, 3), randn(3, 4), randn(4, 2))),
    # numpy broadcasts a size-1 subscript against a longer one, in both directions
    ("einsum_size1_contracted", lambda a, b: L.einsum("ij,jk->ik", a, b),
     (randn(2, 1), randn(3, 2))),
    ("einsum_size1_kept", lambda a, b: L.einsum("ij,ij->ij", a, b), (randn(1, 3), randn(2, 1))),
    ("inv", D.inv, (well(3, 3),)),
    ("inv_batched", D.inv, (well(2, 3, 3),)),
    ("inv_1x1", D.inv, (np.array([[2.5]]),)),
    ("solve", D.solve, (well(3, 3), randn(3, 2))),
    ("solve_batched_bcast", D.solve, (well(2, 3, 3), randn(3, 1))),
    ("solve_bcast_b", D.solve, (well(3, 3), randn(2, 3, 2))),
    ("solve_triangular_lower", lambda a, b: D.solve_triangular(a, b, lower=True),
     (well(3, 3), randn(3, 2))),
    ("solve_triangular_upper_batched", lambda a, b: D.solve_triangular(a, b, lower=False),
     (well(2, 3, 3), randn(2, 3, 2))),
    ("det", D.det, (well(3, 3),)),
    ("det_batched", D.det, (well(2, 3, 3),)),
    ("slogdet", lambda a: D.slogdet(a)[1], (well(3, 3),)),
    ("slogdet_negative_batched", lambda a: D.slogdet(a)[1],
     (np.stack([well(3, 3), -well(3, 3)]),)),
    ("slogdet_both", lambda a: D.slogdet(a)[0] * D.slogdet(a)[1], (-well(3, 3),)),
    ("pinv_tall", D.pinv, (randn(5, 3),)),
    ("pinv_wide", D.pinv, (randn(2, 4),)),
    ("pinv_square_batched", D.pinv, (well(2, 3, 3),)),
    # rank 3 of 5 (the projector terms are kept) stacked with a full-rank matrix (dropped)
    ("pinv_rank_deficient_and_full_batched",
     lambda a, b, c: D.pinv(hg.stack([L.matmul(a, b), c])), (randn(5, 3), randn(3, 5),
                                                              well(5, 5))),
    ("cholesky", sym(D.cholesky), (spd(4, 4),)),
    ("cholesky_batched", sym(D.cholesky), (spd(2, 3, 3),)),
    ("eigh_values", sym(lambda a: D.eigh(a)[0]), (spd(4, 4),)),
    ("eigh_vectors", sym(lambda a: sq(D.eigh(a)[1])), (randn(4, 4),)),
    ("eigh_both_batched", sym(lambda a: D.eigh(a)[0][..., None] * sq(D.eigh(a)[1])),
     (randn(2, 3, 3),)),
    ("eigvalsh", sym(D.eigvalsh), (randn(4, 4),)),
    ("eigvalsh_batched", sym(D.eigvalsh), (randn(2, 3, 3),)),
    # the functions computed: only the lower triangle is read, at non-symmetric points and
    # along non-symmetric directions (check_grads' random ones)
    ("cholesky_lower_read", D.cholesky, (nonsym(spd(4, 4)),)),
    ("cholesky_lower_read_batched", D.cholesky, (nonsym(spd(2, 3, 3)),)),
    ("eigh_values_lower_read", lambda a: D.eigh(a)[0], (randn(4, 4),)),
    ("eigh_vectors_lower_read", lambda a: sq(D.eigh(a)[1]), (randn(4, 4),)),
    ("eigh_both_lower_read_batched", lambda a: D.eigh(a)[0][..., None] * sq(D.eigh(a)[1]),
     (randn(2, 3, 3),)),
    ("eigvalsh_lower_read", D.eigvalsh, (randn(4, 4),)),
    ("eigvalsh_lower_read_batched", D.eigvalsh, (randn(2, 3, 3),)),
    ("hermitian_from_lower", D.hermitian_from_lower, (randn(2, 3, 3),)),
    ("qr_tall", lambda a: D.qr(a)[0] * 2.0 + D.qr(a)[1][0], (randn(5, 3),)),
    ("qr_square", lambda a: D.qr(a)[0], (randn(3, 3),)),
    ("qr_r_only_batched", lambda a: D.qr(a)[1], (randn(2, 4, 3),)),
    ("svd_tall", uvt(D.svd), (randn(5, 3),)),
    ("svd_wide", uvt(D.svd), (randn(3, 5),)),
    ("svd_square_batched", uvt(D.svd), (randn(2, 3, 3),)),
    ("svd_u_only", lambda a: sq(D.svd(a)[0]), (randn(4, 3),)),
    ("svd_vh_only", lambda a: sq(D.svd(a)[2]), (randn(3, 4),)),
    ("svd_s_only", lambda a: D.svd(a)[1], (randn(4, 3),)),
    ("svdvals", D.svdvals, (randn(4, 3),)),
    ("svdvals_batched_wide", D.svdvals, (randn(2, 2, 4),)),
]


@pytest.mark.parametrize("name,f,args", ROWS, ids=[r[0] for r in ROWS])
def test_grads_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


# forward values against numpy -------------------------------------------------------------
VALUES = [
    (D.inv, np.linalg.inv, (well(2, 3, 3),)),
    (D.solve, np.linalg.solve, (well(2, 3, 3), randn(3, 2))),
    (lambda a, b: D.solve_triangular(a, b, lower=True),
     lambda a, b: np.linalg.solve(np.tril(a), b), (well(3, 3), randn(3, 2))),
    (D.det, np.linalg.det, (well(2, 3, 3),)),
    (lambda a: D.slogdet(a)[0], lambda a: np.linalg.slogdet(a)[0], (-well(2, 3, 3),)),
    (lambda a: D.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], (-well(2, 3, 3),)),
    (D.pinv, np.linalg.pinv, (randn(2, 5, 3),)),
    (D.matrix_rank, np.linalg.matrix_rank, (randn(4, 2) @ randn(2, 5),)),
    (D.cholesky, np.linalg.cholesky, (spd(2, 3, 3),)),
    (lambda a: D.eigh(a)[0], lambda a: np.linalg.eigh(a)[0], (spd(2, 4, 4),)),
    (lambda a: D.eigh(a)[1], lambda a: np.linalg.eigh(a)[1], (spd(2, 4, 4),)),
    (D.eigvalsh, np.linalg.eigvalsh, (spd(3, 3),)),
    (lambda a: D.qr(a)[0], lambda a: np.linalg.qr(a)[0], (randn(2, 5, 3),)),
    (lambda a: D.qr(a)[1], lambda a: np.linalg.qr(a)[1], (randn(3, 5),)),
    (lambda a: D.svd(a)[0], lambda a: np.linalg.svd(a, full_matrices=False)[0], (randn(5, 3),)),
    (lambda a: D.svd(a)[2], lambda a: np.linalg.svd(a, full_matrices=False)[2], (randn(3, 5),)),
    (D.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), (randn(2, 3, 5),)),
]


@pytest.mark.parametrize("k", range(len(VALUES)))
def test_forward_values_and_graph_mode(k):
    f, ref, args = VALUES[k]
    expected = ref(*args)
    np.testing.assert_allclose(f(*args).numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.function(f)(*args), expected, rtol=1e-10, atol=1e-12)


GRAPH_GRADS = [r for r in ROWS if r[0] in {
    "inv", "solve_batched_bcast", "solve_triangular_lower", "det", "slogdet", "pinv_tall",
    "cholesky", "eigh_vectors", "eigvalsh", "qr_tall", "svd_tall", "svdvals", "einsum_trace",
    "matmul_vec_mat", "matmul_matrix_vec", "matmul_vec_matrix"}]


@pytest.mark.parametrize("name,f,args", GRAPH_GRADS, ids=[r[0] for r in GRAPH_GRADS])
def test_graph_mode_gradient_matches_eager(name, f, args):
    def loss(*xs):
        return hg.reduce_sum(f(*xs) ** 2)
    g_eager = hg.grad(loss, argnums=tuple(range(len(args))))(*args)
    g_graph = hg.function(hg.grad(loss, argnums=tuple(range(len(args)))))(*args)
    for e, g in zip(g_eager, g_graph):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_graph_mode_hessian_vector_product_of_inverse():
    a, v = well(3, 3), randn(3, 3)

    def loss(x):
        return hg.reduce_sum(D.inv(x) ** 3)

    def hvp(x, v):
        return hg.jvp(hg.grad(loss), (x,), (v,))[1]
    np.testing.assert_allclose(hg.function(hvp)(a, v), hvp(a, v), rtol=1e-10)


# shape rules: the all-ones stand-in would be singular or indefinite -------------------------
@pytest.mark.parametrize("op,shapes,expected", [
    (D.inv, [(2, 3, 3)], [(2, 3, 3)]),
    (D.solve, [(2, 3, 3), (3, 4)], [(2, 3, 4)]),
    (lambda a, b: D.solve_triangular(a, b), [(3, 3), (5, 3, 1)], [(5, 3, 1)]),
    (D.det, [(4, 2, 2)], [(4,)]),
    (D.slogdet, [(2, 2)], [(), ()]),
    (D.pinv, [(2, 5, 3)], [(2, 3, 5)]),
    (D.matrix_rank, [(5, 3)], [()]),
    (D.cholesky, [(3, 3)], [(3, 3)]),
    (D.eigh, [(2, 3, 3)], [(2, 3), (2, 3, 3)]),
    (D.eigvalsh, [(3, 3)], [(3,)]),
    (D.qr, [(5, 3)], [(5, 3), (3, 3)]),
    (D.qr, [(3, 5)], [(3, 3), (3, 5)]),
    (D.svd, [(2, 5, 3)], [(2, 5, 3), (2, 3), (2, 3, 3)]),
    (D.svdvals, [(3, 5)], [(3,)]),
])
def test_shape_rules(op, shapes, expected):
    graph = hg.Graph()
    with graph.as_default():
        ins = [hg.placeholder("float64", s) for s in shapes]
        out = op(*ins)
    outs = out if isinstance(out, tuple) else (out,)
    assert [o.shape for o in outs] == expected


def test_float32_stays_float32():
    a = well(3, 3).astype(np.float32)
    for op in (D.inv, D.cholesky, D.eigvalsh, D.svdvals):
        x = a @ a.T if op in (D.cholesky,) else a
        assert op(x).dtype == np.float32
    g = hg.grad(lambda x: hg.reduce_sum(D.inv(x)))(a)
    assert g.dtype == np.float32


# errors name the op, the argument and the shapes --------------------------------------------
@pytest.mark.parametrize("call,exc,match", [
    (lambda: D.inv(np.ones((3, 4))), ValueError, r"inv: a has shape \(3, 4\) but must be square"),
    (lambda: D.inv(np.ones(3)), ValueError, r"inv: a has shape \(3,\) but must be at least 2-D"),
    (lambda: D.inv(np.ones((2, 2))), np.linalg.LinAlgError, r"inv: a of shape \(2, 2\) is "
                                                            "singular"),
    (lambda: D.solve(np.eye(3), np.ones((4, 2))), ValueError,
     r"solve: a has shape \(3, 3\) and b has shape \(4, 2\)"),
    (lambda: D.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))), ValueError,
     "solve: the stacked dimensions"),
    (lambda: D.cholesky(-np.eye(2)), np.linalg.LinAlgError, "cholesky: a of shape .* not "
                                                            "positive definite"),
    (lambda: D.eigh(np.ones((2, 3))), ValueError, "eigh: a has shape"),
    (lambda: D.det(np.ones((2, 3))), ValueError, "det: a has shape"),
    (lambda: D.svd(np.ones(3)), ValueError, "svd: a has shape"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_shape_errors_at_trace_time():
    graph = hg.Graph()
    with graph.as_default():
        x = hg.placeholder("float64", (3, 4))
        with pytest.raises(ValueError, match=r"inv: a has shape \(3, 4\)"):
            D.inv(x)


def test_qr_wide_derivative_not_implemented():
    with pytest.raises(NotImplementedError, match=r"qr: .*a has shape \(2, 4\)"):
        hg.grad(lambda a: hg.reduce_sum(D.qr(a)[0]))(randn(2, 4))


def test_eigh_gradient_lies_in_the_lower_triangle_it_reads():
    # The forward reads the lower triangle: d w / d a_ij is 2 v_i v_j below the diagonal,
    # v_i^2 on it and 0 above (the symmetric gradient v v^T would be the derivative of
    # eigh((a + a^T) / 2), another function for non-symmetric a).
    a = spd(3, 3) + np.triu(randn(3, 3), 1)
    g = hg.grad(lambda x: D.eigh(x)[0][-1])(a)
    w, v = np.linalg.eigh(a)
    vv = np.outer(v[:, -1], v[:, -1])
    np.testing.assert_allclose(g, np.tril(2 * vv, -1) + np.diag(np.diag(vv)), atol=1e-12)
    upper = np.triu(randn(3, 3), 1)  # a direction the forward does not read
    for op in (lambda x: D.eigh(x)[0], lambda x: D.eigh(x)[1], D.eigvalsh, D.cholesky):
        np.testing.assert_array_equal(hg.jvp(op, (a,), (upper,))[1], 0.0)


def test_issue_reproducer_eigh_nonsymmetric_direction():
    import hessgrad.numpy as hnp
    r = np.random.default_rng(0)
    x, v, w = r.standard_normal((4, 4)), r.standard_normal((4, 4)), np.arange(1.0, 5.0)
    for uplo in ("L", "U"):
        def f(a):
            return hnp.sum(hnp.linalg.eigh(a, uplo)[0] * w)
        fd = (np.sum(np.linalg.eigh(x + 1e-6 * v, uplo)[0] * w) -
              np.sum(np.linalg.eigh(x - 1e-6 * v, uplo)[0] * w)) / 2e-6
        np.testing.assert_allclose(np.sum(hg.grad(f)(x) * v), fd, rtol=1e-7)
        np.testing.assert_allclose(hg.jvp(f, (x,), (v,))[1], fd, rtol=1e-7)


def _conditioned(m, n, smallest, seed):
    r = np.random.default_rng(seed)
    u, _ = np.linalg.qr(r.standard_normal((m, m)))
    v, _ = np.linalg.qr(r.standard_normal((n, n)))
    s = np.zeros((m, n))
    k = min(m, n)
    s[range(k), range(k)] = np.logspace(0, np.log10(smallest), k)
    return u @ s @ v.T


@pytest.mark.parametrize("shape", [(5, 5), (8, 5), (5, 8)])
def test_pinv_second_derivatives_are_accurate_when_ill_conditioned(shape):
    # pinv(x.T x) with cond(x.T x) = 1e4 (issue 34): at full rank pinv's projector terms
    # vanish identically; computed, they were rounding noise that second derivatives
    # amplified to relative errors of 1e-5 (forward) and 6e-4 (reverse). The references are
    # the same functions written with inv and solve (pinv(A) = inv(A) for square A,
    # (A^T A)^-1 A^T for tall A).
    m, n = shape
    x = _conditioned(m, n, 1e-2, seed=m * 10 + n)
    r = np.random.default_rng(0)
    w, t, v = r.standard_normal((n, m)), r.standard_normal(shape), r.standard_normal(shape)

    def by_pinv(y):
        return hg.reduce_sum(D.pinv(L.matmul(hg.transpose(y), y) if m == n else y) * w)

    def by_inverse(y):
        yt = hg.transpose(y)
        if m == n:
            return hg.reduce_sum(D.inv(L.matmul(yt, y)) * w)
        if m > n:
            return hg.reduce_sum(D.solve(L.matmul(yt, y), yt) * w)
        return hg.reduce_sum(hg.transpose(D.solve(L.matmul(y, yt), y)) * w)

    def second(f):
        fwd_fwd = hg.jvp(lambda y: hg.jvp(f, (y,), (t,))[1], (x,), (v,))[1]
        rev_rev = np.sum(hg.grad(lambda y: hg.reduce_sum(hg.grad(f)(y) * t))(x) * v)
        fwd_rev = np.sum(hg.jvp(hg.grad(f), (x,), (v,))[1] * t)
        return np.array([fwd_fwd, rev_rev, fwd_rev])
    exact = second(by_inverse)
    np.testing.assert_allclose(second(by_pinv), exact, rtol=1e-9)


def test_eigvalsh_degenerate_first_derivative_finite():
    # Repeated eigenvalues: the trace (sum of eigenvalues) still has gradient I.
    g = hg.grad(lambda x: hg.reduce_sum(D.eigvalsh(x)))(np.eye(3))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)


def test_slogdet_sign_gets_no_gradient():
    g = hg.grad(lambda x: D.slogdet(x)[0])(well(3, 3))
    np.testing.assert_array_equal(g, np.zeros((3, 3)))


def test_second_derivative_of_logdet_is_known():
    # d^2 logdet(A)[V, V] = -tr(A^-1 V A^-1 V)
    a, v = well(3, 3), randn(3, 3)
    hv = hg.jvp(hg.grad(lambda x: D.slogdet(x)[1]), (a,), (v,))[1]
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(np.sum(hv * v), -np.trace(ai @ v @ ai @ v), rtol=1e-10)


def test_einsum_forward_matches_numpy():
    a, b = randn(2, 3, 3), randn(3, 4)
    for spec, ops in [("...ii->...i", (a,)), ("bij,jk->bik", (a, b)), ("ii", (a[0],)),
                      ("ij,ij->", (a[0], a[1])), ("bij->", (a,))]:
        np.testing.assert_allclose(L.einsum(spec, *ops).numpy(), np.einsum(spec, *ops))
    for spec, ops in [("i,i->i", (randn(1), randn(3))), ("ij,jk", (randn(2, 1), randn(3, 2)))]:
        np.testing.assert_allclose(L.einsum(spec, *ops).numpy(), np.einsum(spec, *ops))
    with pytest.raises(ValueError, match=r"einsum: subscript 'j' has size 3 .* 4 .*\(2, 3\)"):
        L.einsum("ij,jk->ik", randn(2, 3), randn(4, 2))


# complex input: JAX's convention (a VJP is the transpose of the JVP under Re(sum(g * t)),
# so grad of a real loss is dL/dx - i dL/dy), checked against finite differences -----------
def crandn(*shape):
    return randn(*shape) + 1j * randn(*shape)


def cwell(*shape):
    return crandn(*shape) + 3.0 * np.eye(shape[-1])


def herm(f):
    """Differentiate a Hermitian-input op through the Hermitian part of its argument."""
    return lambda a: f((a + hg.transpose(hg.numpy.conj(a), axes=_last_two(a))) * 0.5)


def _fd(f, z, t, eps=1e-6):
    return (np.asarray(f(z + eps * t)) - np.asarray(f(z - eps * t))) / (2 * eps)


def check_complex(f, z, rtol=1e-6):
    """First and second derivatives of ``f`` (complex matrix in, any outputs) against central
    differences along complex directions, in every mode, eager and traced."""
    hnp = hg.numpy
    out = f(z)
    outs = out if isinstance(out, tuple) else (out,)
    crng = np.random.default_rng(3)
    weights = [crng.standard_normal(o.shape) + 1j * crng.standard_normal(o.shape)
               for o in outs]

    def loss(x):
        y = f(x)
        return sum(hnp.sum(hnp.real(o * c)) + hnp.sum(hnp.abs(o) ** 2 * hnp.real(c))
                   for o, c in zip(y if isinstance(y, tuple) else (y,), weights))

    def flat(y):
        ys = y if isinstance(y, tuple) else (y,)
        return np.concatenate([np.ravel(np.asarray(o)) for o in ys])

    t, v = crandn(*z.shape), crandn(*z.shape)
    scale = lambda x: rtol * (1.0 + np.max(np.abs(x)))  # noqa: E731
    g = hg.grad(loss)(z)
    fd = _fd(lambda x: float(np.asarray(loss(x))), z, t)
    assert abs(np.real(np.sum(g * t)) - fd) <= scale(fd), "grad"
    jt = flat(hg.jvp(f, (z,), (t,))[1])
    fdj = _fd(lambda x: flat(f(x)), z, t)
    np.testing.assert_allclose(jt, fdj, atol=scale(fdj), err_msg="jvp")
    cts = tuple(crandn(*o.shape) if np.iscomplexobj(o.numpy()) else randn(*o.shape)
                for o in outs)
    vj = hg.vjp(f, z)[1](cts if isinstance(out, tuple) else cts[0])[0]
    pair = np.real(np.sum(np.concatenate([np.ravel(c) for c in cts]) * fdj))
    assert abs(np.real(np.sum(vj * t)) - pair) <= scale(pair), "vjp"
    fdh = _fd(hg.grad(loss), z, v)
    for mode in ("fwd-rev", "rev-fwd", "rev-rev", "auto"):
        np.testing.assert_allclose(hg.hvp(loss, mode=mode)(z, v), fdh, atol=scale(fdh) * 10,
                                   err_msg=f"hvp {mode}")
    np.testing.assert_allclose(hg.function(hg.grad(loss))(z), g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.function(lambda x, u: hg.hvp(loss)(x, u))(z, v),
                               hg.hvp(loss)(z, v), rtol=1e-9, atol=1e-12)


def _absq(x):
    return hg.numpy.abs(x) ** 2


def _proj(v):  # V[:, :2] V[:, :2]^H: invariant to each column's phase
    w = v[..., :, :2]
    return hg.matmul(w, hg.numpy.conj(hg.transpose(w, axes=_last_two(w))))


_B = crandn(5, 2)
COMPLEX_ROWS = [
    # eigenvectors are defined up to a phase per column: |V|^2, projectors and V diag(w) V^H
    ("eigh_values", herm(lambda a: D.eigh(a)[0]), crandn(3, 3)),
    ("eigh_vectors_abs2", herm(lambda a: _absq(D.eigh(a)[1])), crandn(3, 3)),
    ("eigh_projector_batched", herm(lambda a: _proj(D.eigh(a)[1])), crandn(2, 3, 3)),
    ("eigh_both", herm(lambda a: (D.eigh(a)[0], _absq(D.eigh(a)[1]))), crandn(4, 4)),
    ("eigvalsh", herm(D.eigvalsh), crandn(3, 3)),
    ("eigvalsh_batched", herm(D.eigvalsh), crandn(2, 3, 3)),
    # the functions computed from the lower triangle, along any complex direction
    ("eigh_lower_read", lambda a: (D.eigh(a)[0], _absq(D.eigh(a)[1])), crandn(3, 3)),
    ("eigh_projector_lower_read_batched", lambda a: _proj(D.eigh(a)[1]), crandn(2, 3, 3)),
    ("eigvalsh_lower_read_batched", D.eigvalsh, crandn(2, 3, 3)),
    ("cholesky_lower_read", lambda a: D.cholesky(a + 6.0 * np.eye(3)), crandn(3, 3)),
    ("cholesky_upper_read_batched",
     lambda a: hg.numpy.linalg.cholesky(a + 6.0 * np.eye(3), upper=True), crandn(2, 3, 3)),
    # a complex sign det/|det| turns with a (its tangent is sign * i Im tr(A^-1 dA))
    ("slogdet", D.slogdet, cwell(3, 3)),
    ("slogdet_sign_batched", lambda a: D.slogdet(a)[0], cwell(2, 3, 3)),
    ("slogdet_log", lambda a: D.slogdet(a)[1], cwell(3, 3)),
    # cholesky of a Hermitian positive definite matrix: a = L L^H (+ 4 I keeps it definite)
    ("cholesky", herm(lambda a: D.cholesky(a + 4.0 * np.eye(3))), crandn(3, 3)),
    ("cholesky_upper_batched",
     herm(lambda a: hg.numpy.linalg.cholesky(a + 4.0 * np.eye(3), upper=True)), crandn(2, 3, 3)),
    # numpy's hermitian=True reads the lower triangle (pinv and svd through eigh)
    ("pinv_hermitian_lower_read", lambda a: hg.numpy.linalg.pinv(a, hermitian=True),
     crandn(3, 3)),
    ("svd_hermitian_lower_read_batched", lambda a: (lambda u, s, vh: (s, hg.matmul(u, vh)))(
        *hg.numpy.linalg.svd(a, hermitian=True)), crandn(2, 3, 3)),
    ("svdvals_hermitian_lower_read",
     lambda a: hg.numpy.linalg.svd(a, compute_uv=False, hermitian=True), crandn(3, 3)),
    # triangular solves read one triangle (the diagonal included, complex)
    ("solve_triangular_lower", lambda a: D.solve_triangular(a, _B[:3], lower=True), cwell(3, 3)),
    ("solve_triangular_upper_batched",
     lambda a: D.solve_triangular(a, _B[:3], lower=False), cwell(2, 3, 3)),
    # QR (LAPACK's: R's diagonal is real, so dR's is too)
    ("qr_tall", D.qr, crandn(4, 3)),
    ("qr_square_batched", D.qr, crandn(2, 3, 3)),
    # SVD: each pair (u_i, v_i) has a free common phase: s, U Vh, |U|^2, |Vh|^2 are invariant
    ("svd_tall", lambda a: (lambda u, s, vh: (s, hg.matmul(u, vh), _absq(u), _absq(vh)))(
        *D.svd(a)), crandn(4, 3)),
    ("svd_wide", lambda a: (lambda u, s, vh: (hg.matmul(u, vh), _absq(u)))(*D.svd(a)),
     crandn(3, 4)),
    ("svd_square_batched", lambda a: (lambda u, s, vh: (s, hg.matmul(u, vh)))(*D.svd(a)),
     crandn(2, 3, 3)),
    ("svd_u_only", lambda a: _proj(D.svd(a)[0]), crandn(4, 3)),
    ("svdvals", D.svdvals, crandn(3, 4)),
    ("svdvals_batched", D.svdvals, crandn(2, 4, 3)),
    ("norm_nuc", lambda a: hg.numpy.linalg.norm(a, "nuc"), crandn(4, 3)),
    # pinv's dA^H terms: conjugate transposes, not transposes
    ("pinv_tall", D.pinv, crandn(4, 3)),
    ("pinv_wide_batched", D.pinv, crandn(2, 2, 4)),
    ("lstsq", lambda a: tuple(hg.numpy.linalg.lstsq(a, _B)[:2]), crandn(5, 3)),
]


@pytest.mark.parametrize("name,f,z", COMPLEX_ROWS, ids=[r[0] for r in COMPLEX_ROWS])
def test_complex_derivatives(name, f, z):
    check_complex(f, z)


def test_complex_cholesky_upper_is_numpys():
    a = crandn(3, 3)
    a = a @ a.conj().T + np.eye(3)
    np.testing.assert_allclose(hg.numpy.linalg.cholesky(a, upper=True).numpy(),
                               np.linalg.cholesky(a, upper=True), rtol=1e-12)


def test_complex_eigh_gradient_lies_in_the_lower_triangle_and_values_real():
    a = crandn(3, 3)
    w, v = np.linalg.eigh(a)
    g = hg.grad(lambda x: D.eigvalsh(x)[-1])(a)
    m = np.conj(np.outer(v[:, -1], v[:, -1].conj()))  # the Hermitian-input gradient
    np.testing.assert_allclose(g, np.tril(2 * m, -1) + np.diag(np.diag(m).real), atol=1e-12)
    # neither the strict upper triangle nor the diagonal's imaginary parts are read
    t = np.triu(crandn(3, 3), 1) + 1j * np.diag(randn(3))
    for op in (D.eigvalsh, lambda x: D.eigh(x)[0], lambda x: _proj(D.eigh(x)[1]),
               lambda x: D.cholesky(x + 4.0 * np.eye(3))):
        np.testing.assert_array_equal(hg.jvp(op, (a,), (t,))[1], 0.0)
    for op in (lambda x: D.eigh(x)[0], D.eigvalsh, lambda x: D.svd(x)[1], D.svdvals,
               lambda x: D.svd_full(x[:, :2])[1]):
        assert op(a).dtype == np.float64
        assert hg.function(op)(a).dtype == np.float64
