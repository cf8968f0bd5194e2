"""The names users of autograd, JAX and PyTorch look for: elementwise_grad, jit, checkpoint,
vhp."""

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp

X = np.array([-1.3, 0.2, 0.7, 2.1])


def test_elementwise_grad_is_the_jacobians_column_sums():
    f = lambda x: hnp.tanh(x) * x  # noqa: E731
    np.testing.assert_allclose(hg.elementwise_grad(f)(X), np.diag(hg.jacobian(f)(X)), rtol=1e-14)
    g = lambda x: hnp.outer(x, hnp.sin(x))  # noqa: E731 - not elementwise: column sums
    J = hg.jacobian(g)(X).reshape(X.size * X.size, X.size)
    np.testing.assert_allclose(hg.elementwise_grad(g)(X), J.sum(axis=0), rtol=1e-14)


def test_elementwise_grad_twice_and_traced():
    f = lambda x: hnp.exp(x) * hnp.sin(x)  # noqa: E731
    second = hg.elementwise_grad(hg.elementwise_grad(f))(X)
    np.testing.assert_allclose(second, 2 * np.exp(X) * np.cos(X), rtol=1e-13)
    traced = hg.function(hg.elementwise_grad(f), compile="eager")(X)
    np.testing.assert_allclose(traced, np.exp(X) * (np.sin(X) + np.cos(X)), rtol=1e-13)
    y = np.array([0.5, 1.5, 2.5, 3.5])
    np.testing.assert_allclose(hg.elementwise_grad(lambda a, b: a * b ** 2, argnums=1)(X, y),
                               2 * X * y, rtol=1e-14)


def test_aliases():
    assert hg.jit is hg.function and hg.checkpoint is hg.recompute_grad
    f = lambda x: hnp.sum(x ** 3) + hnp.prod(x)  # noqa: E731
    v = np.arange(1.0, 5.0)
    H = hg.hessian(f)(X)
    np.testing.assert_allclose(hg.vhp(f)(X, v), v @ H, rtol=1e-13)
    np.testing.assert_allclose(hg.jit(hg.grad(f))(X), hg.grad(f)(X), rtol=1e-14)
