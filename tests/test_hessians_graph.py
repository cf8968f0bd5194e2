"""``hessians`` (TensorFlow's algorithm: while_loop over the gradient's entries writing rows into
a TensorArray) against SciPy's rosen_hess, closed forms and eager Hessians."""

import tracemalloc

import numpy as np
import pytest
from scipy.optimize import rosen_hess, rosen_hess_prod

import hessgrad as hg
from hessgrad.engine.registry import primitive


def rosen(x):
    return hg.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def graph_hessians(f, *values, **kwargs):
    g = hg.Graph()
    with g.as_default():
        xs = [hg.placeholder("float64", np.shape(v)) for v in values]
        hs = hg.hessians(f(*xs), xs, **kwargs)
    fetch = [h for h in hs if h is not None]
    out = iter(g.run(fetch, dict(zip(xs, values))) if fetch else [])
    return [None if h is None else next(out) for h in hs]


@pytest.mark.parametrize("n", [10, 100])
def test_rosenbrock_matches_scipy(n):
    x0 = np.random.default_rng(n).uniform(-2, 2, n)
    (h,) = graph_hessians(rosen, x0)
    expect = rosen_hess(x0)
    assert h.shape == (n, n)
    np.testing.assert_allclose(h, expect, rtol=1e-10, atol=1e-10 * np.abs(expect).max())


def test_quadratic_form_nonsymmetric():
    a = np.random.default_rng(1).standard_normal((5, 5))
    (h,) = graph_hessians(lambda x: 0.5 * hg.reduce_sum(x * hg.matmul(a, x)), np.ones(5))
    np.testing.assert_allclose(h, (a + a.T) / 2, rtol=1e-13, atol=1e-14)


def test_several_xs_and_matrix_shaped_x():
    rng = np.random.default_rng(2)
    x0, y0 = rng.standard_normal((2, 3)), rng.standard_normal(4)

    def f(x, y):
        return hg.reduce_sum(hg.sin(x) * hg.reduce_sum(y ** 2)) + hg.reduce_sum(x ** 3)

    hx, hy = graph_hessians(f, x0, y0)
    assert hx.shape == (2, 3, 2, 3) and hy.shape == (4, 4)
    np.testing.assert_allclose(hx, hg.jacfwd(hg.grad(lambda x: f(x, y0)))(x0), rtol=1e-12)
    np.testing.assert_allclose(hy, hg.jacfwd(hg.grad(lambda y: f(x0, y)))(y0), rtol=1e-12)
    np.testing.assert_allclose(hx.reshape(6, 6), hx.reshape(6, 6).T, atol=1e-14)


def test_list_of_ys_is_summed_and_options_are_accepted():
    x0 = np.array([0.3, -1.2])
    (h,) = graph_hessians(lambda x: [hg.reduce_sum(x ** 4), hg.exp(x[0] * x[1])], x0,
                          aggregation_method=hg.AggregationMethod.EXPERIMENTAL_TREE,
                          gate_gradients=True, colocate_gradients_with_ops=True)
    e = np.exp(x0[0] * x0[1])
    expect = np.diag(12 * x0 ** 2) + e * np.array([[x0[1] ** 2, 1 + x0[0] * x0[1]],
                                                   [1 + x0[0] * x0[1], x0[0] ** 2]])
    np.testing.assert_allclose(h, expect, rtol=1e-13)


def test_unconnected_and_linear_xs():
    x0, z0 = np.array([1.0, 2.0]), np.array([3.0])
    hx, hz = graph_hessians(lambda x, z: hg.reduce_sum(x * 3.0), x0, z0)
    np.testing.assert_array_equal(hx, np.zeros((2, 2)))  # a linear function: zero Hessian
    assert hz is None                                      # like gradients(): None


def test_inside_hg_function_reruns_with_fresh_buffers():
    @hg.function
    def hess(x):
        return hg.hessians(hg.reduce_sum(x ** 3), x)[0]

    first = hess(np.array([1.0, 2.0]))
    second = hess(np.array([3.0, 4.0]))
    np.testing.assert_allclose(first, np.diag([6.0, 12.0]))  # not overwritten by the 2nd run
    np.testing.assert_allclose(second, np.diag([18.0, 24.0]))


def test_errors_like_gradients():
    with pytest.raises(RuntimeError, match="eager execution"):
        hg.hessians(hg.constant(1.0), [hg.constant(1.0)])
    nograd = primitive("test_hessians_nograd", lambda x: x * 2)
    with hg.Graph().as_default():
        x = hg.placeholder("float64", (2,))
        with pytest.raises(LookupError, match="No gradient defined for operation"):
            hg.hessians(hg.reduce_sum(nograd(x)), x)
        free = hg.placeholder("float64", (None,))
        with pytest.raises(ValueError, match="hessians: x .* must have a fully known shape"):
            hg.hessians(hg.reduce_sum(free), free)
        with pytest.raises(TypeError, match="xs must be tensors"):
            hg.hessians(hg.reduce_sum(x), [3.0])


def test_no_per_row_copies_of_the_buffer():
    n = 1200  # the (n, n) buffer is 11.5 MB; an O(n) number of copies would be gigabytes
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (n,))
        (h,) = hg.hessians(hg.reduce_sum(hg.sin(x) * x), x)
    x0 = np.linspace(0, 1, n)
    tracemalloc.start()
    try:
        out = g.run(h, {x: x0})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * n * n * 8, peak
    np.testing.assert_allclose(np.diag(out), 2 * np.cos(x0) - x0 * np.sin(x0), rtol=1e-13)


def test_compiled_rows_hold_the_budget():
    # Generated code frees values at their last use, so its batches take more rows than the
    # interpreter's for the same memory budget: the peak must still stay within it.
    n = 1200
    hessian = hg.function(lambda x: hg.hessians(hg.reduce_sum(hg.sin(x) * x) + rosen(x), x)[0])
    x0 = np.linspace(-1, 1, n)
    expected = rosen_hess(x0) + np.diag(2 * np.cos(x0) - x0 * np.sin(x0))
    np.testing.assert_allclose(hessian(x0), expected, rtol=1e-12, atol=1e-12)
    tracemalloc.start()
    try:
        out = hessian(x0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * n * n * 8, peak
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_5000_parameter_hessian_fits():
    n = 5000  # one 200 MB buffer, written in place row by row
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (n,))
        (h,) = hg.hessians(rosen(x), x)
    x0 = np.random.default_rng(5).uniform(-1, 1, n)
    out = g.run(h, {x: x0})
    assert out.shape == (n, n)
    v = np.random.default_rng(6).standard_normal(n)
    np.testing.assert_allclose(out @ v, rosen_hess_prod(x0, v), rtol=1e-10, atol=1e-8)


def test_hessian_of_a_function_with_a_graph_loop():
    def f(a):
        _, x = hg.while_loop(lambda k, x: k < 15, lambda k, x: (k + 1, hg.cos(a * x)),
                             (0, hg.ones_like(a) * 0.5))
        return hg.reduce_sum(x * a)

    a0 = np.array([0.7, 1.1, 0.9])
    (h,) = graph_hessians(f, a0)  # differentiates the loop's reverse loop again
    np.testing.assert_allclose(h, hg.jacfwd(hg.grad(f))(a0), rtol=1e-11, atol=1e-13)
