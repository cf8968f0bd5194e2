"""hessgrad.scipy.stats: SciPy's values (rtol 1e-12) inside and outside the supports, with
invalid parameters; first and second derivatives in the data, loc, scale and the shape
parameters; NotImplementedError for CDF derivatives in shapes without a formula; frozen
distributions; graph mode."""

import warnings

import numpy as np
import pytest
import scipy.stats as ss

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy.stats as hst
from hessgrad.testing import check_grads

X = np.array([-2.5, -0.3, 0.0, 0.4, 1.0, 1.7, 3.9, 30.0])
CONTINUOUS = [("norm", ()), ("t", (3.5,)), ("cauchy", ()), ("laplace", ()), ("logistic", ()),
              ("expon", ()), ("gamma", (2.3,)), ("gamma", (0.7,)), ("beta", (2.3, 1.4)),
              ("chi2", (3.3,)), ("lognorm", (0.8,)), ("uniform", ())]
METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _close(got, want, rtol=1e-12):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("name,shapes", CONTINUOUS, ids=[f"{n}{s}" for n, s in CONTINUOUS])
@pytest.mark.parametrize("loc,scale", [(0.0, 1.0), (0.3, 2.0), (0.0, -1.0)])
def test_continuous_values(name, shapes, loc, scale):
    x = X / 10 if name in ("beta", "uniform") else X
    ref, ours = getattr(ss, name), getattr(hst, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method in METHODS:
            _close(getattr(ours, method)(x, *shapes, loc, scale),
                   getattr(ref, method)(x, *shapes, loc=loc, scale=scale))
            _close(getattr(ours(*shapes, loc=loc, scale=scale), method)(x),
                   getattr(ref(*shapes, loc=loc, scale=scale), method)(x))
        q = np.array([0.0, 0.1, 0.5, 0.93, 1.0, 1.2])
        _close(ours.ppf(q, *shapes, loc=loc, scale=scale),
               ref.ppf(q, *shapes, loc=loc, scale=scale))


K = np.array([-1, 0, 1, 2, 3, 7, 2.5, 8])
DISCRETE = [("poisson", (2.3,)), ("binom", (7, 0.3)), ("nbinom", (3.5, 0.4)), ("geom", (0.3,)),
            ("bernoulli", (0.3,)), ("poisson", (-1.0,))]


@pytest.mark.parametrize("name,shapes", DISCRETE, ids=[f"{n}{s}" for n, s in DISCRETE])
def test_discrete_values(name, shapes):
    ref, ours = getattr(ss, name), getattr(hst, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method in ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]:
            _close(getattr(ours, method)(K, *shapes), getattr(ref, method)(K, *shapes))
            _close(getattr(ours, method)(K, *shapes, loc=1), getattr(ref, method)(K, *shapes,
                                                                                  loc=1))


def test_multivariate_values():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    cov = np.array([[2, 0.3, 0.1], [0.3, 1, 0.2], [0.1, 0.2, 1.5]])
    mean = np.array([0.1, -0.2, 0.3])
    _close(hst.multivariate_normal.logpdf(x, mean, cov),
           ss.multivariate_normal.logpdf(x, mean, cov))
    _close(hst.multivariate_normal.logpdf(x[0], mean, cov),
           ss.multivariate_normal.logpdf(x[0], mean, cov))
    _close(hst.multivariate_normal.pdf(x, mean, 2.0), ss.multivariate_normal.pdf(x, mean, 2.0))
    _close(hst.multivariate_normal.logpdf(x, np.zeros(3), np.array([1.0, 2.0, 3.0])),
           ss.multivariate_normal.logpdf(x, np.zeros(3), np.array([1.0, 2.0, 3.0])))
    _close(hst.multivariate_t.logpdf(x, mean, cov, 4.5), ss.multivariate_t.logpdf(x, mean, cov,
                                                                                  4.5))
    alpha = np.array([1.5, 2.0, 0.7])
    xd = np.array([[0.2, 0.3], [0.5, 0.1], [0.3, 0.6]])
    _close(hst.dirichlet.logpdf(xd, alpha), ss.dirichlet.logpdf(xd, alpha))
    _close(hst.dirichlet.pdf(xd[:, 0], alpha), ss.dirichlet.pdf(xd[:, 0], alpha))


XS = np.array([0.35, 1.2, 2.7])
UNIT = np.array([0.15, 0.45, 0.8])
Q = np.array([0.1, 0.45, 0.85])


def _rows():
    rows = []
    for name, shapes, x in [("norm", (), XS - 1), ("t", (3.5,), XS - 1), ("cauchy", (), XS - 1),
                            ("laplace", (), XS - 1), ("logistic", (), XS - 1),
                            ("expon", (), XS), ("gamma", (2.3,), XS), ("beta", (2.3, 1.4), UNIT),
                            ("chi2", (3.3,), XS), ("lognorm", (0.8,), XS), ("uniform", (), UNIT)]:
        dist = getattr(hst, name)
        shape_args = tuple(np.array(s) for s in shapes)
        for method in METHODS:
            # in the data, loc and scale, and (for the densities) the shapes too
            rows.append((f"{name}.{method}-x-loc-scale",
                         lambda x, loc, scale, d=dist, m=method, s=shapes:
                         getattr(d, m)(x, *s, loc=loc, scale=scale),
                         (x, np.array(0.05), np.array(1.1))))
            if shapes and method in ("logpdf", "pdf"):
                rows.append((f"{name}.{method}-shapes",
                             lambda x, *s, d=dist, m=method: getattr(d, m)(x, *s),
                             (x,) + shape_args))
        if name not in ("uniform",):
            rows.append((f"{name}.ppf", lambda q, loc, scale, d=dist, s=shapes:
                         d.ppf(q, *s, loc=loc, scale=scale), (Q, np.array(0.2), np.array(1.3))))
    shape_cdfs = [("norm", ()), ("cauchy", ()), ("logistic", ()), ("lognorm", (0.8,))]
    for name, shapes in shape_cdfs[3:]:
        dist = getattr(hst, name)
        for method in ("cdf", "logcdf", "sf", "logsf", "ppf"):
            arg = Q if method == "ppf" else XS
            rows.append((f"{name}.{method}-shapes", lambda x, s, d=dist, m=method:
                         getattr(d, m)(x, s), (arg, np.array(0.8))))
    k = np.array([0.0, 1.0, 3.0, 5.0])
    for name, shapes in [("poisson", (2.3,)), ("binom", (7.0, 0.3)), ("nbinom", (3.5, 0.4)),
                         ("geom", (0.3,)), ("bernoulli", (0.3,))]:
        dist = getattr(hst, name)
        kk = np.array([0.0, 1.0]) if name == "bernoulli" else (k + 1 if name == "geom" else k)
        shape_args = tuple(np.array(s) for s in shapes)
        for method in ("logpmf", "pmf"):
            if name == "binom":  # n is an integer: the derivative in p only
                rows.append((f"{name}.{method}", lambda p, d=dist, m=method, kk=kk:
                             getattr(d, m)(kk, 7.0, p), shape_args[1:]))
                continue
            rows.append((f"{name}.{method}", lambda *s, d=dist, m=method, kk=kk:
                         getattr(d, m)(kk, *s), shape_args))
        kk = kk[:1] if name == "bernoulli" else kk  # sf(1) = 0: log sf = -inf
        # CDFs: in the success probability / rate (the last shape)
        for method in ("cdf", "logcdf", "sf", "logsf"):
            rows.append((f"{name}.{method}", lambda p, d=dist, m=method, kk=kk, s=shapes:
                         getattr(d, m)(kk, *s[:-1], p), (shape_args[-1],)))
    rows.append(("multivariate_normal", lambda x, m, c: hst.multivariate_normal.logpdf(
        x, m, c @ c.T + np.eye(3)), (np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.4]]),
                                     np.array([0.1, 0.0, -0.2]), np.eye(3) * 0.5 + 0.1)))
    rows.append(("multivariate_t", lambda x, m, c, df: hst.multivariate_t.logpdf(
        x, m, c @ c.T + np.eye(3), df), (np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.4]]),
                                         np.array([0.1, 0.0, -0.2]), np.eye(3) * 0.5 + 0.1,
                                         np.array(4.5))))
    rows.append(("dirichlet", hst.dirichlet.logpdf, (np.array([0.2, 0.5, 0.3]),
                                                     np.array([1.5, 2.0, 0.7]))))
    return rows


ROWS = _rows()


@pytest.mark.parametrize("name,f,args", ROWS, ids=[r[0] for r in ROWS])
def test_grads(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("call,arg", [
    (lambda df: hst.t.cdf(0.7, df), "df"), (lambda a: hst.gamma.cdf(0.7, a), "'a'"),
    (lambda a: hst.beta.sf(0.3, a, 2.0), "'a'"), (lambda df: hst.chi2.logcdf(0.7, df), "'a'"),
    (lambda n: hst.nbinom.cdf(3, n, 0.4), "'a'"), (lambda a: hst.gamma.ppf(0.3, a), "'a'"),
])
def test_cdf_shape_derivative_without_formula_raises(call, arg):
    with pytest.raises(NotImplementedError, match=arg):
        hg.grad(call)(2.5)


def test_outside_support_derivatives_are_zero_not_nan():
    g = hg.grad(lambda s: hnp.sum(hst.gamma.logpdf(np.array([-1.0, 0.5]), s)))(2.0)
    assert np.isfinite(g)
    gx = hg.grad(lambda x: hnp.sum(hst.beta.cdf(x, 2.0, 3.0)))(np.array([-0.5, 0.3, 1.5]))
    assert np.isfinite(gx).all() and gx[0] == 0 and gx[2] == 0
    gl = hg.grad(lambda k: hnp.sum(hst.poisson.logpmf(np.array([-1.0, 2.0, 2.5]), k)))(1.7)
    np.testing.assert_allclose(gl, 2 / 1.7 - 1)


def test_t_logpdf_in_df_against_mpmath():
    """d/d(nu) of t.logpdf against 40-digit references. For large nu the terms (about
    1/nu) cancel to about 1/nu^2: the absolute error stays near 1e-16, the relative one grows
    (1e-7 at nu = 1e4)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = mpmath.mpf(1.5)

    def ref(nu):
        return (mpmath.loggamma((nu + 1) / 2) - mpmath.loggamma(nu / 2)
                - mpmath.log(nu * mpmath.pi) / 2 - (nu + 1) / 2 * mpmath.log1p(x * x / nu))
    for nu in (0.5, 4.0, 60.0, 1e4):
        want = float(mpmath.diff(ref, mpmath.mpf(nu)))
        got = hg.grad(lambda n: hst.t.logpdf(1.5, n))(nu)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_graph_mode():
    def f(theta, x):
        return hnp.sum(hst.t.logpdf(x, theta[0], theta[1], hnp.exp(theta[2]))) + \
            hnp.sum(hst.gamma.logcdf(x + 3.0, 2.0, theta[1], hnp.exp(theta[2])))
    theta, x = np.array([3.5, 0.2, 0.1]), np.array([-1.0, 0.3, 2.2])
    np.testing.assert_allclose(hg.function(f)(theta, x), f(theta, x), rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(theta, x), hg.hessian(f)(theta, x),
                               rtol=1e-11)


def test_argument_errors():
    with pytest.raises(TypeError, match="missing required argument"):
        hst.gamma.logpdf(1.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        hst.norm.logpdf(1.0, mu=2.0)
    with pytest.raises(TypeError, match="multiple values"):
        hst.norm.logpdf(1.0, 0.0, loc=2.0)


def test_scipy_stats_on_a_traced_value_names_the_replacement():
    with pytest.raises(TypeError, match=r"hessgrad\.scipy\.stats\.norm\.logpdf"):
        hg.grad(lambda x: hnp.sum(ss.norm.logpdf(x)))(np.array([0.5, 1.0]))
    with pytest.raises(TypeError, match=r"hessgrad\.scipy\.stats"):
        hg.function(lambda x: hnp.sum(ss.t.logpdf(x, 3.0)))(np.array([0.5, 1.0]))
