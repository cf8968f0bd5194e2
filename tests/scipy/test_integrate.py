"""hessgrad.scipy.integrate: trapezoid/cumulative_trapezoid/simpson equal SciPy's (even and
odd point counts, uniform and irregular x); odeint against scipy.integrate.odeint and against
closed-form solutions and sensitivities, derivatives of order 2 in y0, t and args, graph mode
with fixed steps."""

import numpy as np
import pytest
import scipy.integrate as si

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy.integrate as hint
from hessgrad.testing import check_grads

rng = np.random.default_rng(1)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_quadrature_values(n):
    y = rng.normal(size=(2, n))
    x = np.cumsum(rng.uniform(0.5, 1.5, n))
    for kw in (dict(dx=0.3), dict(x=x)):
        np.testing.assert_allclose(hint.simpson(y, **kw), si.simpson(y, **kw), rtol=1e-13)
        np.testing.assert_allclose(hint.trapezoid(y, **kw), si.trapezoid(y, **kw), rtol=1e-13)
        np.testing.assert_allclose(hint.cumulative_trapezoid(y, **kw, initial=0),
                                   si.cumulative_trapezoid(y, **kw, initial=0), rtol=1e-13)
    np.testing.assert_allclose(hint.simpson(y.T, x=x, axis=0), si.simpson(y.T, x=x, axis=0),
                               rtol=1e-13)


@pytest.mark.parametrize("n", [4, 5])
def test_quadrature_grads(n):
    y = rng.normal(size=n)
    x = np.cumsum(rng.uniform(0.5, 1.5, n))
    check_grads(lambda y, x: hint.simpson(y, x=x), (y, x), order=2, modes=("fwd", "rev"))
    check_grads(lambda y, d: hint.simpson(y, dx=d), (y, np.array(0.4)), order=2)
    check_grads(lambda y, x: hint.cumulative_trapezoid(y, x=x), (y, x), order=2)


def _lotka_volterra(y, t, a, b):
    return hnp.stack([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * y[0] * y[1]])


def test_odeint_matches_scipy():
    def rhs(y, t, a, b):
        return np.array([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * y[0] * y[1]])
    t = np.linspace(0, 5, 11)
    y0 = np.array([1.0, 0.5])
    want = si.odeint(rhs, y0, t, args=(1.0, 0.7), rtol=1e-11, atol=1e-11)
    got = hint.odeint(_lotka_volterra, y0, t, args=(1.0, 0.7), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    t_first = hint.odeint(lambda t, y, a, b: _lotka_volterra(y, t, a, b), y0, t,
                          args=(1.0, 0.7), tfirst=True, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(t_first, got, rtol=1e-14)


def test_odeint_sensitivities_against_closed_form():
    # y' = -k y: y(t) = y0 exp(-k t); d/dk = -t y, d2/dk2 = t^2 y, d/dy0 = exp(-k t)
    t = np.array([0.0, 0.5, 2.0])

    def final(k, y0, t):
        return hint.odeint(lambda y, s, k: -k * y, y0, t, args=(k,), rtol=1e-12,
                           atol=1e-12)[-1]
    k, y0 = 0.7, 1.3
    exact = y0 * np.exp(-k * 2.0)
    g = hg.grad(final, argnums=(0, 1, 2))(k, y0, t)
    np.testing.assert_allclose(g[0], -2.0 * exact, rtol=1e-9)
    np.testing.assert_allclose(g[1], np.exp(-k * 2.0), rtol=1e-9)
    # the start time t[0] shifts the solution: d/dt0 = k y(T); the middle time is free
    np.testing.assert_allclose(g[2], [k * exact, 0.0, -k * exact], rtol=1e-9, atol=1e-12)
    hkk = hg.grad(hg.grad(final))(k, y0, t)
    np.testing.assert_allclose(hkk, 4.0 * exact, rtol=1e-8)


def test_odeint_grads_order_2():
    t = np.array([0.0, 0.4, 1.0])

    def f(y0, t, params):
        return hint.odeint(_lotka_volterra, y0, t, args=(params[0], params[1]), steps=6)
    check_grads(f, (np.array([1.0, 0.5]), t, np.array([1.0, 0.7])), order=2,
                modes=("fwd", "rev"))

    def adaptive(params):
        return hint.odeint(_lotka_volterra, np.array([1.0, 0.5]), t,
                           args=(params[0], params[1]))
    check_grads(adaptive, (np.array([1.0, 0.7]),), order=2, modes=("fwd", "rev"))


def test_odeint_adaptive_in_transforms_that_fall_back_to_eager():
    t = np.array([0.0, 0.5, 1.0])

    def loss(p):
        return hnp.sum(hint.odeint(_lotka_volterra, np.array([1.0, 0.5]), t,
                                   args=(p[0], p[1])) ** 2)
    p = np.array([1.0, 0.7])
    h = hg.hessian(loss)(p)
    np.testing.assert_allclose(h, hg.jacfwd(hg.grad(loss))(p), rtol=1e-10)
    obj = hg.scipy.objective(loss)
    np.testing.assert_allclose(obj.jac(p), hg.grad(loss)(p), rtol=1e-12)


@pytest.mark.slow
def test_odeint_graph_mode_needs_fixed_steps():
    t = np.array([0.0, 0.5, 1.0])

    def loss(p):
        return hnp.sum(hint.odeint(_lotka_volterra, np.array([1.0, 0.5]), t,
                                   args=(p[0], p[1]), steps=8) ** 2)
    p = np.array([1.0, 0.7])
    np.testing.assert_allclose(hg.function(loss)(p), loss(p), rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.hessian(loss))(p), hg.hessian(loss)(p),
                               rtol=1e-10)
    with pytest.raises(hg.ConcretizationError, match="steps="):
        hg.function(lambda p: hint.odeint(_lotka_volterra, np.array([1.0, 0.5]), t,
                                          args=(p[0], p[1])))(p)
