"""linalg.eig and linalg.eigvals: values and dtypes equal numpy's (eager; complex when traced),
derivatives to second order in both modes against finite differences (complex input through
its real and imaginary parts) and against JAX x64 (``enable_eigvec_derivs``)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

COVERED = {"eig", "eigvals"}

rng = np.random.default_rng(7)


def randn(*shape):
    return rng.standard_normal(shape)


def crandn(*shape):
    return randn(*shape) + 1j * randn(*shape)


def upper(n):  # real, distinct real eigenvalues
    return np.triu(randn(n, n)) + np.diag(np.arange(n) * 2.0)


VALUE_CASES = [
    ("real 2x2 complex pair", np.array([[0.0, 1.0], [-1.0, 0.0]])),
    ("real 4x4", randn(4, 4)),
    ("real batch", randn(3, 3, 3)),
    ("real all-real eigenvalues", upper(4)),
    ("real symmetric", (lambda a: a + a.T)(randn(5, 5))),
    ("real batch all-real", np.stack([upper(3), upper(3)])),
    ("real batch mixed", np.stack([upper(2), np.array([[0.0, 1.0], [-1.0, 0.0]])])),
    ("float32", randn(4, 4).astype(np.float32)),
    ("float32 all-real", upper(3).astype(np.float32)),
    ("complex128", crandn(4, 4)),
    ("complex64", crandn(3, 3).astype(np.complex64)),
    ("complex batch", crandn(2, 2, 3, 3)),
    ("int", np.array([[1, 2], [3, 4]])),
    ("int complex eigenvalues", np.array([[1, -2], [3, 1]])),
    ("1x1", np.array([[2.5]])),
    ("0x0", np.zeros((0, 0))),
    ("empty batch", np.zeros((2, 0, 0))),
    ("zero batch", np.zeros((0, 3, 3))),
    ("defective", np.array([[1.0, 1.0], [0.0, 1.0]])),
]


@pytest.mark.parametrize("name,a", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_and_dtypes_match_numpy(name, a):
    w_np, v_np = np.linalg.eig(a)
    w, v = hnp.linalg.eig(a)
    for got, want in ((w, w_np), (v, v_np), (hnp.linalg.eigvals(a), np.linalg.eigvals(a))):
        got = got.numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert type(hnp.linalg.eig(a)).__name__ == "EigResult"
    assert hnp.linalg.eig(a)._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.parametrize("name,a", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_traced_results_are_complex_with_numpys_values(name, a):
    w, v = hg.function(lambda x: tuple(hnp.linalg.eig(x)))(a)
    wv = hg.function(hnp.linalg.eigvals)(a)
    want_dtype = np.result_type(np.linalg.eig(a)[0].dtype, np.complex64)
    for got, want in ((w, np.linalg.eig(a)[0]), (v, np.linalg.eig(a)[1]),
                      (wv, np.linalg.eigvals(a))):
        assert got.dtype == want_dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)


def _eigen_pairs_check(a, w, v):
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-12)


def test_results_are_eigenpairs_with_lapacks_normalisation():
    a = crandn(4, 4)
    w, v = (x.numpy() for x in hnp.linalg.eig(a))
    _eigen_pairs_check(a, w, v)
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=0)[None], axis=0)
    np.testing.assert_allclose(top.imag, 0.0, atol=1e-14)  # the largest entry is real


# Real-valued functions of the results that do not depend on the eigenvectors' phases.
def _parts(w):
    return hnp.stack([hnp.real(w), hnp.imag(w)])


def _abs2(v):
    return hnp.real(v * hnp.conj(v))


def _spectral(a):  # eigenvalues and phase-invariant eigenvector functions together
    w, v = hnp.linalg.eig(a)
    return _parts(w), _abs2(v) * hnp.real(w)[..., None, :]


GRAD_ROWS = [
    ("eig values real", lambda a: _parts(hnp.linalg.eig(a)[0]), (randn(4, 4),)),
    ("eig values all-real", lambda a: hnp.linalg.eig(a)[0], (upper(3) + 0.1 * randn(3, 3),)),
    ("eig |V|^2 real", lambda a: _abs2(hnp.linalg.eig(a)[1]), (randn(4, 4),)),
    ("eig |V|^2 all-real", lambda a: hnp.linalg.eig(a)[1] ** 2, (upper(3) + 0.1 * randn(3, 3),)),
    ("eig both batched", _spectral, (randn(2, 3, 3),)),
    ("eig 1x1", lambda a: _parts(hnp.linalg.eig(a)[0]), (randn(1, 1),)),
    ("eig V diag(w) V^-1", lambda a: (lambda w, v: _parts(
        v @ (w[:, None] * hnp.linalg.inv(v))))(*hnp.linalg.eig(a)), (randn(3, 3),)),
    ("eigvals real", lambda a: _parts(hnp.linalg.eigvals(a)), (randn(4, 4),)),
    ("eigvals batched", lambda a: _parts(hnp.linalg.eigvals(a)), (randn(2, 3, 3),)),
    ("eigvals nonlinear", lambda a: hnp.sum(hnp.abs(hnp.linalg.eigvals(a)) ** 3), (randn(3, 3),)),
    # complex input, through its real and imaginary parts
    ("eig values complex", lambda x, y: _parts(hnp.linalg.eig(x + 1j * y)[0]), (randn(3, 3), randn(3, 3))),
    ("eig |V|^2 complex", lambda x, y: _abs2(hnp.linalg.eig(x + 1j * y)[1]), (randn(3, 3), randn(3, 3))),
    ("eig both complex batched", lambda x, y: _spectral(x + 1j * y), (randn(2, 3, 3), randn(2, 3, 3))),
    ("eigvals complex", lambda x, y: _parts(hnp.linalg.eigvals(x + 1j * y)), (randn(3, 3), randn(3, 3))),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_traced_derivatives_equal_eager():
    a, t, c = randn(3, 3), randn(3, 3), randn(3, 3)
    a[0, 1], a[1, 0] = 3.0, -3.0  # a complex pair: eager and traced dtypes agree

    def loss(x):
        w, v = hnp.linalg.eig(x)
        return hnp.sum(hnp.real(w) ** 2 * hnp.imag(w)) + hnp.sum(_abs2(v) * hnp.real(w) * c)
    np.testing.assert_allclose(hg.function(hg.grad(loss))(a), hg.grad(loss)(a), rtol=1e-12)
    np.testing.assert_allclose(hg.function(lambda x, u: hg.hvp(loss)(x, u))(a, t),
                               hg.hvp(loss)(a, t), rtol=1e-10)


def test_gradient_dtypes():
    for a in (randn(3, 3), randn(3, 3).astype(np.float32)):
        g = hg.grad(lambda x: hnp.sum(hnp.imag(hnp.linalg.eigvals(x)) ** 2))(a)
        assert g.dtype == a.dtype
    z = crandn(3, 3).astype(np.complex64)
    assert hg.grad(lambda x: hnp.sum(_abs2(hnp.linalg.eig(x)[1])))(z).dtype == np.complex64


def test_eigenvalue_gradient_is_v_inverse_transpose_outer():
    # d w_k / dA_ij = (V^-1)_ki V_jk: the left eigenvector (row k of V^-1) times the right
    a = randn(4, 4)
    w, v = np.linalg.eig(a)
    k = int(np.argmax(w.real))
    g = hg.grad(lambda x: hnp.real(hnp.linalg.eigvals(x)[k]))(a)
    want = np.real(np.outer(np.linalg.inv(v)[k], v[:, k]))
    np.testing.assert_allclose(g, want, atol=1e-12)


def test_repeated_eigenvalues_keep_finite_eigenvalue_derivatives():
    # a diagonalisable matrix with a repeated eigenvalue: sum(w) = trace, d/dA = I
    a = np.diag([2.0, 2.0, 5.0])
    g = hg.grad(lambda x: hnp.real(hnp.sum(hnp.linalg.eigvals(x))))(a)
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
    # the eigenvectors of a repeated eigenvalue are not unique: their derivative is not finite
    with np.errstate(divide="ignore", invalid="ignore"):
        gv = hg.grad(lambda x: hnp.sum(_abs2(hnp.linalg.eig(x)[1]) * np.arange(9.0).reshape(3, 3)))(a)
    assert not np.all(np.isfinite(gv))


@pytest.mark.parametrize("complex_input", [False, True])
def test_derivatives_match_jax(complex_input):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    a = crandn(2, 4, 4) if complex_input else randn(2, 4, 4)
    t = crandn(2, 4, 4) if complex_input else randn(2, 4, 4)
    c1, c2, c3 = randn(2, 4), randn(2, 4), randn(2, 4, 4)

    def loss(m, eig):
        def f(x):
            w, v = eig(x)
            return m.sum(m.real(w) * c1 + m.imag(w) * c2 + m.real(w) ** 2 * m.imag(w)) + \
                m.sum(m.abs(v) ** 2 * c3)
        return f

    def jax_eig(x):
        return jax.lax.linalg.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)

    ours, theirs = loss(hnp, hnp.linalg.eig), loss(jnp, jax_eig)
    np.testing.assert_allclose(hg.grad(ours)(a), jax.grad(theirs)(a), rtol=1e-10, atol=1e-12)
    want = jax.jvp(jax.grad(theirs), (a,), (t,))[1]
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.hvp(ours, mode=mode)(a, t), want, rtol=1e-9, atol=1e-11,
                                   err_msg=mode)
    # eigenvalues alone (jnp.linalg.eigvals), first and second order
    vals = lambda m, f: lambda x: m.sum(m.abs(f(x)) ** 3 * c1)  # noqa: E731
    ours, theirs = vals(hnp, hnp.linalg.eigvals), vals(jnp, jnp.linalg.eigvals)
    np.testing.assert_allclose(hg.grad(ours)(a), jax.grad(theirs)(a), rtol=1e-10, atol=1e-12)
    # JAX's second derivative of eigenvalues goes through the eigenvectors' (opted into)
    theirs = vals(jnp, lambda x: jax_eig(x)[0])
    np.testing.assert_allclose(hg.hvp(ours)(a, t), jax.jvp(jax.grad(theirs), (a,), (t,))[1],
                               rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.linalg.eig(randn(3)), ValueError, r"eig: a has shape \(3,\)"),
    (lambda: hnp.linalg.eig(randn(2, 3)), ValueError, r"eig: a has shape \(2, 3\) but must be square"),
    (lambda: hnp.linalg.eigvals(randn(4, 2, 3)), ValueError, r"eigvals: a has shape \(4, 2, 3\)"),
    (lambda: hnp.linalg.eig(np.array([[1.0, np.nan], [0.0, 1.0]])), np.linalg.LinAlgError,
     "eig: the eigenvalue computation failed"),
    (lambda: hnp.linalg.eigvals(np.array([[np.inf]])), np.linalg.LinAlgError, "eigvals: "),
    (lambda: hg.function(hnp.linalg.eig)(randn(2, 3)), ValueError, "eig: a has shape"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
