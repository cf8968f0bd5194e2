"""The statistical corpus (tests/objectives/stats_corpus.py: GLMs, robust regression, a
Gaussian-process marginal likelihood, mixtures, hierarchical models, ODE parameter estimation,
a Kalman filter, ...), written once with SciPy-style names and run through hessgrad.scipy:
values equal SciPy's, gradients and Hessians agree with finite differences, hessgrad.function
gives the eager results, and scipy.optimize.minimize(method="trust-exact") solves each with
hessgrad.scipy.objective's exact Hessians."""

import functools
import importlib.util
import pathlib
import types
import warnings

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize as so
import scipy.signal
import scipy.special
import scipy.stats

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy as hs

_PATH = pathlib.Path(__file__).resolve().parent / "stats_corpus.py"
_spec = importlib.util.spec_from_file_location("_hessgrad_tests_stats_corpus", _PATH)
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

REFERENCE = {o.name: o for o in corpus.build(np, scipy.special, scipy.stats, scipy.linalg,
                                             scipy.signal, scipy.integrate)}
OURS = {o.name: o for o in corpus.build(hnp, hs.special, hs.stats, hs.linalg, hs.signal,
                                        hs.integrate)}
# under hessgrad.function odeint takes a fixed number of steps per output interval
_FIXED_STEPS = types.SimpleNamespace(odeint=functools.partial(hs.integrate.odeint, steps=4))
TRACEABLE = {o.name: o for o in corpus.build(hnp, hs.special, hs.stats, hs.linalg, hs.signal,
                                             _FIXED_STEPS)}
NAMES = sorted(OURS)


def test_the_corpus_has_at_least_30_objectives():
    assert len(OURS) >= 30


def _scale(a):
    return max(1.0, float(np.max(np.abs(a))))


@pytest.mark.parametrize("name", NAMES)
def test_values_equal_scipy(name):
    ref, ours = REFERENCE[name], OURS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ref.fn(ref.x0)
    # ODE solutions are approximations (both within rtol 1e-10 of the true solution)
    np.testing.assert_allclose(float(ours.fn(ours.x0)), want, rtol=1e-6 if ours.ode else 1e-12)


def _fd_gradient(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


@pytest.mark.parametrize("name", NAMES)
def test_gradient_and_hessian_against_finite_differences(name):
    ref, ours = REFERENCE[name], OURS[name]
    x = ours.x0 + 0.05 * np.sin(np.arange(len(ours.x0)) + 1.0)
    grad = hg.grad(ours.fn)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fd = _fd_gradient(lambda z: float(ref.fn(z)), x)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6 * _scale(grad))
    hess = hg.hessian(ours.fn)(x)
    fd_h = np.array([(hg.grad(ours.fn)(x + 1e-5 * e) - hg.grad(ours.fn)(x - 1e-5 * e)) / 2e-5
                     for e in np.eye(len(x))])
    np.testing.assert_allclose(hess, fd_h, rtol=1e-5, atol=1e-6 * _scale(hess))
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12 * _scale(hess))


@pytest.mark.parametrize("name", NAMES)
def test_hessgrad_function_equals_eager(name):
    f = TRACEABLE[name].fn
    x = TRACEABLE[name].x0 + 0.05
    np.testing.assert_allclose(hg.function(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-10,
                               atol=1e-12 * _scale(hg.grad(f)(x)))
    if TRACEABLE[name].ode:
        # an unrolled ODE solution: a long program, slow to compile batched (minutes for the
        # dense Hessian); one Hessian-vector product checks the second order
        v = np.cos(np.arange(len(x)))
        hv = hg.hvp(f)(x, v)
        np.testing.assert_allclose(hg.function(hg.hvp(f))(x, v), hv, rtol=1e-9,
                                   atol=1e-11 * _scale(hv))
        return
    h = hg.hessian(f)(x)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), h, rtol=1e-9,
                               atol=1e-11 * _scale(h))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.slow
def test_trust_exact_solves_it(name):
    o = OURS[name]
    obj = hs.objective(o.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = so.minimize(obj.fun, o.x0, jac=obj.jac, hess=obj.hess, method="trust-exact")
    assert res.success, res.message
    assert np.max(np.abs(res.jac)) < 1e-4 * max(1.0, abs(res.fun))
    assert res.fun <= obj.fun(o.x0)
