"""Reduction, cumulative and sorting primitives: first and second derivatives in both modes
against finite differences, exact values at zeros and ties, graph mode."""

import numpy as np
import pytest

import hessgrad as hg
from hessgrad.ops import elementwise as E, reduction as R, sorting as S
from hessgrad.testing import check_grads

COVERED = {"sum", "mean", "max", "min", "logsumexp", "prod", "cumsum", "cumprod",
           "linear_recurrence", "all", "any", "count_nonzero", "argmax", "argmin", "sort",
           "argsort", "permute_along_axis", "inverse_permutation", "tie_groups", "tie_mean",
           "nanmean"}

rng = np.random.default_rng(42)
X3 = rng.standard_normal((2, 3, 4))
X2 = rng.standard_normal((3, 4))
X0 = np.array(0.7)
XE = np.zeros((0, 3))


def _with_zeros(x, where):
    x = x.copy()
    x[where] = 0.0
    return x


ONE_ZERO = _with_zeros(X2, (1, 2))
TWO_ZEROS = _with_zeros(X2, (np.array([0, 0]), np.array([1, 3])))  # two zeros in row 0
ALL_ZEROS = np.zeros((2, 3))
WITH_NANS = np.where(np.arange(24).reshape(2, 3, 4) % 5 == 1, np.nan, X3)
PERM = np.array([[2, 0, 3, 1], [1, 3, 0, 2], [0, 1, 2, 3]])
GROUPS = np.array([[0, 0, 1, 2], [3, 4, 4, 4], [5, 6, 7, 8]])

# (id, function, argument): every primitive at order 2, forward and reverse.
GRAD_ROWS = [
    ("sum-all", lambda x: R.sum(x), X3),
    ("sum-axis0", lambda x: R.sum(x, axis=0), X3),
    ("sum-neg-keep", lambda x: R.sum(x, axis=-1, keepdims=True), X3),
    ("sum-tuple", lambda x: R.sum(x, axis=(0, 2)), X3),
    ("sum-0d", lambda x: R.sum(x), X0),
    ("sum-empty", lambda x: R.sum(x, axis=0), XE),
    ("mean-tuple-keep", lambda x: R.mean(x, axis=(0, 2), keepdims=True), X3),
    ("mean-0d", lambda x: R.mean(x), X0),
    ("nanmean-tuple-keep", lambda x: R.nanmean(x, axis=(0, 2), keepdims=True), WITH_NANS),
    ("nanmean-neg", lambda x: R.nanmean(x, axis=-1), WITH_NANS),
    ("nanmean-0d", lambda x: R.nanmean(x), X0),
    ("max-axis1", lambda x: R.max(x, axis=1), X3),
    ("max-tuple-keep", lambda x: R.max(x, axis=(-1, 0), keepdims=True), X3),
    ("min-all", lambda x: R.min(x), X3),
    ("min-0d", lambda x: R.min(x), X0),
    ("logsumexp-axis", lambda x: R.logsumexp(x, axis=-1), X3),
    ("logsumexp-all-keep", lambda x: R.logsumexp(x, keepdims=True), X2),
    ("prod-all", lambda x: R.prod(x), X2 / 2 + 1),
    ("prod-axis1", lambda x: R.prod(x, axis=1), X2),
    ("prod-tuple", lambda x: R.prod(x, axis=(0, 2), keepdims=True), X3),
    ("prod-one-zero", lambda x: R.prod(x, axis=1), ONE_ZERO),
    ("prod-one-zero-all", lambda x: R.prod(x), ONE_ZERO),
    ("prod-two-zeros", lambda x: R.prod(x, axis=-1), TWO_ZEROS),
    ("prod-all-zeros", lambda x: R.prod(x, axis=0), ALL_ZEROS),
    ("prod-0d", lambda x: R.prod(x), X0),
    ("prod-empty", lambda x: R.prod(x, axis=0), XE),
    ("cumsum-0", lambda x: R.cumsum(x, axis=0), X3),
    ("cumsum-neg", lambda x: R.cumsum(x, axis=-1), X2),
    ("cumprod-1", lambda x: R.cumprod(x, axis=1), X3),
    ("cumprod-one-zero", lambda x: R.cumprod(x, axis=1), ONE_ZERO),
    ("cumprod-two-zeros", lambda x: R.cumprod(x, axis=-1), TWO_ZEROS),
    ("cumprod-empty", lambda x: R.cumprod(x, axis=0), XE),
    ("recurrence-a", lambda a: R.linear_recurrence(a, X2, axis=1), X2),
    ("recurrence-b-reverse", lambda b: R.linear_recurrence(X2, b, axis=0, reverse=True), X2),
    ("recurrence-both", lambda a: R.linear_recurrence(a, a * a, axis=-1 % 2), X2),
    ("sort-last", lambda x: S.sort(x, axis=-1), X3),
    ("sort-0", lambda x: S.sort(x, axis=0), X3),
    ("sort-squared", lambda x: S.sort(x * x, axis=1), X2),
    ("sort-empty", lambda x: S.sort(x, axis=0), XE),
    ("permute", lambda x: S.permute_along_axis(x, PERM, axis=1), X2),
    ("tie_mean", lambda x: S.tie_mean(x, GROUPS), X2),
    ("tie_mean-empty", lambda x: S.tie_mean(x, np.zeros((0, 3), dtype=np.intp)), XE),
    ("permute-inverse", lambda x: S.permute_along_axis(
        x, S.inverse_permutation(PERM, axis=1), axis=1), X2),
]


@pytest.mark.parametrize("name,f,x", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_grads(name, f, x):
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_recurrence_two_inputs():
    check_grads(lambda a, b: R.linear_recurrence(a, b, axis=0), (X2, X2 + 1.0), order=2)
    check_grads(lambda a, b: R.linear_recurrence(a, b, axis=1, reverse=True),
                (X2, X2 - 1.0), order=2)


def test_prod_third_order_through_zeros():
    x = np.array([1.5, 0.0, -0.7, 0.0, 2.0])
    check_grads(lambda x: R.prod(x), (x,), order=3)


# --- exact derivatives of products at zeros -----------------------------------------------
def _exclusive(x, skip):
    return np.prod([x[k] for k in range(len(x)) if k not in skip])


@pytest.mark.parametrize("x", [
    np.array([1.5, -2.0, 0.5, 3.0]), np.array([1.5, 0.0, 0.5, 3.0]),
    np.array([0.0, 2.0, 0.0, 3.0]), np.array([0.0, 0.0, 0.0, 3.0])],
    ids=["no-zero", "one-zero", "two-zeros", "three-zeros"])
def test_prod_gradient_and_hessian_exact(x):
    n = len(x)
    grad = hg.grad(lambda x: R.prod(x))(x)
    np.testing.assert_array_equal(grad, [_exclusive(x, {i}) for i in range(n)])
    hess = hg.jacobian(hg.grad(lambda x: R.prod(x)))(x)
    want = np.array([[0.0 if i == j else _exclusive(x, {i, j}) for j in range(n)]
                     for i in range(n)])
    np.testing.assert_allclose(hess, want, rtol=1e-15, atol=0)
    assert np.all(np.isfinite(hess))


def test_cumprod_gradient_exact_with_zero():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    # d/dx sum(cumprod(x)) = [1 + x1 + x1 x2 + ..., x0 + x0 x2 + x0 x2 x3, ...]
    want = [1 + 0 + 0 + 0, 2 + 2 * 3 + 2 * 3 * 4, 0 + 0, 0]
    np.testing.assert_array_equal(hg.grad(lambda x: R.sum(R.cumprod(x, axis=0)))(x), want)


def test_prod_long_slice_is_linear_time():
    x = np.linspace(0.9, 1.1, 5000)
    x[100] = 0.0
    g = hg.grad(lambda x: R.prod(x))(x)
    assert np.count_nonzero(g) == 1
    np.testing.assert_allclose(g[100], np.prod(np.delete(x, 100)), rtol=1e-12)


# --- ties ---------------------------------------------------------------------------------
def test_max_ties_split_evenly():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(hg.grad(lambda x: R.sum(R.max(x, axis=1)))(x),
                               [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    _, t = hg.jvp(lambda x: R.max(x, axis=1), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, [1.0, 1.0])


def test_sort_ties_consistent_between_modes():
    x = np.array([2.0, 1.0, 2.0, 1.0, 0.5])
    u, v = rng.standard_normal(5), rng.standard_normal(5)
    _, pullback = hg.vjp(lambda x: S.sort(x, axis=0), x)
    (gu,) = pullback(u)
    _, jv = hg.jvp(lambda x: S.sort(x, axis=0), (x,), (v,))
    np.testing.assert_allclose(np.dot(gu, v), np.dot(u, jv), rtol=1e-14)
    # tied values share their slots' gradients evenly, like max
    np.testing.assert_allclose(gu, [(u[3] + u[4]) / 2, (u[1] + u[2]) / 2, (u[3] + u[4]) / 2,
                                    (u[1] + u[2]) / 2, u[0]], rtol=1e-15)
    np.testing.assert_allclose(jv, [v[4], (v[1] + v[3]) / 2, (v[1] + v[3]) / 2,
                                    (v[0] + v[2]) / 2, (v[0] + v[2]) / 2], rtol=1e-15)
    top = hg.grad(lambda x: getitem_last(S.sort(x, axis=0)))(x)
    np.testing.assert_array_equal(top, hg.grad(lambda x: R.max(x))(x))


def getitem_last(x):
    return x[-1]


def test_sort_of_complex_values_has_derivatives():
    # tie_mean's bincount takes real weights only: every derivative of sorting a complex
    # array raised TypeError (numpy sorts complex lexicographically: real, then imaginary)
    x = np.array([1 + 2j, 0.5 - 1j, 1 - 1j, 0.5 + 3j])
    w = np.arange(4.0)
    for dtype in (np.complex128, np.complex64):
        z = x.astype(dtype)
        g = hg.grad(lambda z: R.sum(E.real(S.sort(z, axis=0) * E.conjugate(S.sort(z, axis=0)))
                                    * w))(z)
        # |sorted z|^2 weighted by slot: x[k] lands in slot [3, 0, 2, 1][k]; the gradient of
        # a real loss is dL/dRe - i dL/dIm (JAX's convention): 2 w[slot] conj(z)
        assert g.dtype == dtype
        np.testing.assert_allclose(g, 2 * w[[3, 0, 2, 1]] * np.conj(z), rtol=1e-6)
        _, t = hg.jvp(lambda z: S.sort(z, axis=0), (z,), (z * 1j,))
        np.testing.assert_allclose(t, np.sort(z) * 1j, rtol=1e-6)


# --- values and nondiff ops ---------------------------------------------------------------
VALUE_ROWS = [
    ("all", lambda x: R.all(x > 0, axis=1), lambda x: np.all(x > 0, axis=1)),
    ("any", lambda x: R.any(x > 0, axis=(0, 2), keepdims=True),
     lambda x: np.any(x > 0, axis=(0, 2), keepdims=True)),
    ("count_nonzero", lambda x: R.count_nonzero(x > 0, axis=-1),
     lambda x: np.count_nonzero(x > 0, axis=-1)),
    ("count_nonzero-all", lambda x: R.count_nonzero(x > 0), lambda x: np.count_nonzero(x > 0)),
    ("argmax", lambda x: R.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
    ("argmin-keep", lambda x: R.argmin(x, axis=-1, keepdims=True),
     lambda x: np.argmin(x, axis=-1, keepdims=True)),
    ("argsort", lambda x: S.argsort(x, axis=0, kind="stable"),
     lambda x: np.argsort(x, axis=0, kind="stable")),
    ("inverse_permutation", lambda x: S.inverse_permutation(np.argsort(x, axis=2), axis=2),
     lambda x: np.argsort(np.argsort(x, axis=2), axis=2)),
    ("prod", lambda x: R.prod(x, axis=(0, 1)), lambda x: np.prod(x, axis=(0, 1))),
    ("cumprod", lambda x: R.cumprod(x, axis=2), lambda x: np.cumprod(x, axis=2)),
    ("cumsum", lambda x: R.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1)),
    ("sort", lambda x: S.sort(x, axis=1), lambda x: np.sort(x, axis=1)),
    ("tie_groups", lambda x: S.tie_groups(np.round(np.sort(x, axis=1)), axis=1),
     lambda x: _tie_groups_reference(np.round(np.sort(x, axis=1)))),
    ("tie_mean", lambda x: S.tie_mean(x, np.arange(24).reshape(2, 3, 4) // 3),
     lambda x: np.repeat(x.reshape(8, 3).mean(axis=1), 3).reshape(2, 3, 4)),
    ("recurrence", lambda x: R.linear_recurrence(np.ones_like(x), x, axis=2),
     lambda x: np.cumsum(x, axis=2)),
]


def _tie_groups_reference(s):
    """Run labels along axis 1, numbered in C order over (axis 0, axis 2, axis 1)."""
    moved = np.moveaxis(s, 1, -1)
    labels, count = np.zeros(moved.shape, dtype=np.intp), -1
    for idx in np.ndindex(moved.shape[:-1]):
        for j in range(moved.shape[-1]):
            if j == 0 or moved[idx][j] != moved[idx][j - 1]:
                count += 1
            labels[idx + (j,)] = count
    return np.moveaxis(labels, -1, 1)


@pytest.mark.parametrize("name,op,ref", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_eager_and_graph(name, op, ref):
    want = ref(X3)
    got = op(hg.constant(X3)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(hg.function(op)(X3), want, rtol=1e-14)


def test_nondiff_ops_are_constants():
    x = hg.constant(X2)
    with hg.GradientTape() as tape:
        tape.watch(x)
        i = R.argmax(x, axis=1)
        y = R.sum(S.permute_along_axis(x, S.argsort(x, axis=1), axis=1)) + R.sum(
            hg.cast(R.count_nonzero(x, axis=0), dtype=np.float64))
    assert i.dtype.kind == "i"
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.ones_like(X2))


# --- graph mode: values and gradients ------------------------------------------------------
GRAPH_ROWS = [r for r in GRAD_ROWS if r[0] in {
    "sum-tuple", "mean-tuple-keep", "max-axis1", "min-all", "logsumexp-axis", "prod-one-zero",
    "prod-tuple", "cumsum-0", "cumprod-two-zeros", "recurrence-both", "recurrence-b-reverse",
    "sort-0", "permute"}]


@pytest.mark.parametrize("name,f,x", GRAPH_ROWS, ids=[r[0] for r in GRAPH_ROWS])
def test_graph_mode(name, f, x):
    np.testing.assert_allclose(hg.function(f)(x), f(x).numpy(), rtol=1e-14)

    shape = f(x).shape
    weights = np.cos(np.arange(int(np.prod(shape)))).reshape(shape)

    def loss(x):
        return R.sum(f(x) * weights)
    eager = hg.grad(loss)(x)
    np.testing.assert_allclose(hg.function(hg.grad(loss))(x), eager, rtol=1e-13, atol=1e-15)
    hvp = hg.function(lambda x, v: hg.jvp(hg.grad(loss), (x,), (v,))[1])
    v = np.ones_like(x)
    np.testing.assert_allclose(hvp(x, v), hg.jvp(hg.grad(loss), (x,), (v,))[1],
                               rtol=1e-13, atol=1e-15)


def test_prod_graph_mode_gradient_with_zero():
    x = ONE_ZERO
    g = hg.function(hg.grad(lambda x: R.sum(R.prod(x, axis=1))))(x)
    np.testing.assert_array_equal(g, hg.grad(lambda x: R.sum(R.prod(x, axis=1)))(x))


def test_axis_errors():
    with pytest.raises(np.exceptions.AxisError):
        R.sum(X2, axis=2)
    with pytest.raises(ValueError, match="zero-size"):
        R.max(XE, axis=0)
