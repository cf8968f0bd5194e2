"""The functional API: grad, value_and_grad, vjp, jvp, linearize, jacrev, jacfwd."""

import numpy as np
import pytest
from scipy.optimize import rosen, rosen_der

import hessgrad as hg
import hessgrad.numpy as hnp


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("n", [2, 10, 1000])
def test_grad_matches_scipy_rosen_der(n):
    x = np.random.default_rng(n).standard_normal(n)
    value, g = hg.value_and_grad(rosenbrock)(x)
    assert isinstance(g, np.ndarray)
    np.testing.assert_allclose(value, rosen(x), rtol=1e-13)
    np.testing.assert_allclose(g, rosen_der(x), rtol=1e-12, atol=1e-12)


def test_grad_argnums_has_aux_and_structures():
    def f(w, b, data):
        x, y = data
        pred = hnp.matmul(x, w["W"]) + b
        loss = hnp.mean((pred - y) ** 2)
        return loss, pred

    rng = np.random.default_rng(0)
    w = {"W": rng.standard_normal((3, 2))}
    b = rng.standard_normal(2)
    data = (rng.standard_normal((5, 3)), rng.standard_normal((5, 2)))
    (gw, gb), pred = hg.grad(f, argnums=(0, 1), has_aux=True)(w, b, data)
    assert set(gw) == {"W"} and gw["W"].shape == (3, 2) and gb.shape == (2,)
    resid = data[0] @ w["W"] + b - data[1]
    np.testing.assert_allclose(gw["W"], data[0].T @ resid * 2 / resid.size)
    np.testing.assert_allclose(gb, resid.sum(0) * 2 / resid.size)
    np.testing.assert_allclose(pred, data[0] @ w["W"] + b)


def test_numpy_results_are_writable_arrays_the_caller_owns():
    # The gradient of a sum broadcasts its upstream gradient: a read-only zero-stride view
    # inside the engine, which must not reach a numpy caller (``g *= lr`` would fail).
    x = np.ones(5000)
    for f in (hnp.sum, hnp.mean, lambda x: hnp.sum(hnp.mean(x.reshape(50, 100), axis=0))):
        value, g = hg.value_and_grad(f)(x)
        assert g.flags.writeable and g.flags.c_contiguous
        g *= 2.0
        _, again = hg.value_and_grad(f)(x)
        np.testing.assert_allclose(g, 2.0 * again)
    (gx, gy) = hg.grad(lambda a, b: hnp.sum(a) + hnp.sum(b), argnums=(0, 1))(x, x)
    assert gx.flags.writeable and gy.flags.writeable
    for compiled in (hg.function(hg.grad(hnp.sum)), hg.function(hg.grad(hnp.sum),
                                                                 jit_kernels=False)):
        assert compiled(x).flags.writeable


def test_short_path_of_grad_agrees_with_the_general_one():
    # grad(f)(x) with a float array x and no tape or trace around takes a shorter path;
    # argnums=(i,) takes the general one: the two must give the same values and types.
    rng = np.random.default_rng(3)
    cases = [
        (rosenbrock, (rng.standard_normal(7),), {}),
        (lambda x: hnp.sum(x), (rng.standard_normal(3).astype(np.float32),), {}),
        (lambda x, s: s * hnp.sum(hnp.sin(x)), (np.array(0.4), 2.0), {}),
        (lambda x, s=1.0: s * hnp.mean(x ** 2), (rng.standard_normal((2, 3)),), {"s": 3.0}),
        (lambda x: 3.0, (np.ones(2),), {}),                        # not a tensor
        (lambda x: hg.constant(2.5), (np.ones(2),), {}),           # not from x
        (lambda x: hnp.sum(x[:0]), (np.ones(2),), {}),             # x read, no gradient path
    ]
    for f, args, kwargs in cases:
        value, g = hg.value_and_grad(f)(*args, **kwargs)
        value2, (g2,) = hg.value_and_grad(f, argnums=(0,))(*args, **kwargs)
        assert type(value) is type(value2) and np.array_equal(value, value2)
        assert type(g) is np.ndarray and g.dtype == args[0].dtype
        assert np.array_equal(g, g2) and g.shape == args[0].shape
    x = rng.standard_normal(4)
    before = x.copy()
    g = hg.grad(lambda x: hnp.sum(x))(x)
    g += 1.0  # the caller's own array: neither x nor a view of it
    assert np.array_equal(x, before)
    # the second argument differentiated, and a tensor argument, stay correct
    np.testing.assert_allclose(hg.grad(lambda a, b: hnp.sum(a * b), argnums=1)(x, 2 * x), x)
    assert isinstance(hg.grad(lambda a, b: hnp.sum(a * b))(x, hg.constant(x)), hg.Tensor)


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        hg.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match="real- or complex"):
        hg.grad(lambda x: hnp.sum(x * 2.0))(np.array([1, 2]))
    with pytest.raises(ValueError, match="argnums"):
        hg.grad(lambda x: x, argnums=3)(1.0)


def test_grad_of_constant_function_is_zero():
    np.testing.assert_array_equal(hg.grad(lambda x: 3.0)(np.ones(2)), [0.0, 0.0])


def test_nested_grad_returns_tensors_and_third_derivative():
    f = lambda x: hg.sin(x) * x  # noqa: E731
    d3 = hg.grad(hg.grad(hg.grad(f)))
    x = 0.7
    expected = -3 * np.sin(x) - x * np.cos(x)
    np.testing.assert_allclose(d3(x), expected, rtol=1e-12)


def test_same_tensor_for_two_arguments_gives_separate_gradients():
    x = hg.constant(2.0)
    gx, gy = hg.grad(lambda a, b: a * b * b, argnums=(0, 1))(x, x)
    assert float(gx) == 4.0 and float(gy) == 8.0


def test_vjp_jvp_linearize_and_jacobians_agree():
    def f(x):
        return hnp.tanh(hnp.matmul(A, x)) * x[0]

    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 3))
    x = rng.standard_normal(3)
    J = hg.jacrev(f)(x)
    assert J.shape == (4, 3)
    np.testing.assert_allclose(hg.jacfwd(f)(x), J, rtol=1e-12, atol=1e-14)
    v, u = rng.standard_normal(3), rng.standard_normal(4)
    y, tangent = hg.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, J @ v, rtol=1e-12)
    y2, pullback = hg.vjp(f, x)
    np.testing.assert_allclose(pullback(u)[0], u @ J, rtol=1e-12)
    np.testing.assert_allclose(y, y2)
    _, f_jvp = hg.linearize(f, x)
    np.testing.assert_allclose(f_jvp(v), J @ v, rtol=1e-12)

    # nested primals (each leaf gets its own tangent)
    p = {"a": np.array([1.0, 2.0]), "b": np.array(3.0)}
    y, p_jvp = hg.linearize(lambda p: p["a"] * p["b"], p)
    np.testing.assert_allclose(y, [3.0, 6.0])
    np.testing.assert_allclose(p_jvp({"a": np.array([1.0, 0.0]), "b": np.array(1.0)}),
                               [4.0, 2.0])


def test_jacobians_of_structured_outputs_with_aux_follow_jax():
    # A dict and a tuple of outputs: the Jacobian has the output's structure, each leaf
    # grouped like the differentiated arguments (JAX's layout), for both modes.
    def f(p, X):
        h = hnp.tanh(hnp.matmul(X, p["W"]) + p["b"])
        return {"h": h, "s": hnp.sum(h ** 2)}, (hnp.mean(h), [h[0]])

    rng = np.random.default_rng(2)
    p = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    X = rng.standard_normal((4, 3))

    def h_of_W(W):
        return hnp.tanh(hnp.matmul(X, W) + p["b"])

    J_h_W = hg.jacrev(h_of_W)(p["W"])
    for jac in (hg.jacrev, hg.jacfwd):
        J, aux = jac(f, has_aux=True)(p, X)
        assert set(J) == {"h", "s"} and set(J["h"]) == {"W", "b"}
        assert J["h"]["W"].shape == (4, 2, 3, 2) and J["s"]["b"].shape == (2,)
        np.testing.assert_allclose(J["h"]["W"], J_h_W, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(J["s"]["W"], hg.grad(lambda W: hnp.sum(h_of_W(W) ** 2))(p["W"]),
                                   rtol=1e-12, atol=1e-14)
        assert isinstance(aux, tuple) and isinstance(aux[0], (np.ndarray, np.generic))
        np.testing.assert_allclose(aux[1][0], np.tanh(X @ p["W"] + p["b"])[0])
        both = jac(lambda p, X: f(p, X)[1], argnums=(0, 1))(p, X)
        assert isinstance(both, tuple) and isinstance(both[1], list)
        mean_wrt_p, mean_wrt_X = both[0]
        assert mean_wrt_p["W"].shape == (3, 2) and mean_wrt_X.shape == (4, 3)
        np.testing.assert_allclose(mean_wrt_X, hg.grad(lambda X: hnp.mean(
            hnp.tanh(hnp.matmul(X, p["W"]) + p["b"])))(X), rtol=1e-12, atol=1e-14)
        scalar_in = jac(lambda x: (x ** 2, [x, 3 * x]))(2.0)
        np.testing.assert_allclose(scalar_in[0], 4.0)
        np.testing.assert_allclose(scalar_in[1][1], 3.0)
        with pytest.raises(TypeError, match="has_aux=True requires .* pair"):
            jac(lambda x: x, has_aux=True)(np.ones(2))


def test_functional_api_inside_function():
    g = hg.function(hg.grad(rosenbrock))
    x = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(g(x), rosen_der(x), rtol=1e-12)
    np.testing.assert_allclose(g(x + 1), rosen_der(x + 1), rtol=1e-12)


def test_variables_through_the_functional_api():
    w = hg.Variable([1.0, 2.0])
    g = hg.grad(lambda x: hnp.sum(x * w * w))(np.array([3.0, 4.0]))
    np.testing.assert_allclose(g, [1.0, 4.0])
