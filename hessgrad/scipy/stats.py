"""``hessgrad.scipy.stats``: SciPy's distributions with differentiable ``logpdf``, ``pdf``,
``cdf``, ``logcdf``, ``sf``, ``logsf`` (``logpmf``/``pmf`` for discrete ones) and ``ppf``,
in the data and in ``loc``, ``scale`` and the shape parameters, to any order.

>>> import hessgrad as hg
>>> from hessgrad.scipy.stats import norm, t
>>> round(float(norm.logpdf(1.0, 0.5, 2.0)), 12)
-1.643335713765
>>> round(float(hg.grad(lambda nu: t.logpdf(1.5, nu))(4.0)), 12)  # d/d(nu)
0.017042601459

The calls mirror SciPy's: shape parameters positional after ``x``, then ``loc`` and ``scale``
(positional or keyword); ``norm(loc, scale)`` freezes them. Values are SciPy's formulas (the
same special functions); outside the support ``logpdf`` is ``-inf``, ``pdf`` 0, ``cdf`` 0 or 1,
and invalid parameters (``scale <= 0``, non-positive shapes) give NaN, as in SciPy. Data
outside the support get a zero derivative (never NaN). The CDFs of ``t``, ``gamma``,
``chi2``, ``beta``, ``binom`` and ``nbinom`` go through incomplete gamma/beta functions, whose
derivatives in a shape parameter have no closed form: differentiating such a CDF in that
parameter raises NotImplementedError naming the special function's argument (the data and
``loc``/``scale`` derivatives work).
"""

import math

import numpy as np

from .. import numpy as hnp
from ..ops import special as sp
from ..ops.core import stop_gradient
from . import linalg as _hlinalg
from .special import log_expit, xlog1py, xlogy

_LOG_2PI_HALF = math.log(math.sqrt(2 * math.pi))
_LOG_PI = math.log(math.pi)
_LOG_2 = math.log(2.0)
_INF = np.inf


def _in(x):
    return hnp.asarray(x) if isinstance(x, (list, tuple)) else x


def _where(cond, x, y):
    return hnp.where(cond, x, y)


def _and(*conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = hnp.logical_and(out, c)
    return out


class _Distribution:
    """Shared by continuous and discrete distributions: argument parsing and freezing."""

    def __init__(self, name, shapes, valid=None):
        self.name = name
        self.shapes = shapes
        self._valid = valid

    def _parse(self, method, args, kwds, discrete=False):
        names = list(self.shapes) + ["loc"] + ([] if discrete else ["scale"])
        if len(args) > len(names):
            raise TypeError(f"{self.name}.{method}() takes at most {len(names) + 1} positional "
                            f"arguments ({', '.join(['x'] + names)}), got {len(args) + 1}")
        values = dict(zip(names, args))
        for key, value in kwds.items():
            if key not in names:
                raise TypeError(f"{self.name}.{method}() got an unexpected keyword argument "
                                f"{key!r}")
            if key in values:
                raise TypeError(f"{self.name}.{method}() got multiple values for argument "
                                f"{key!r}")
            values[key] = value
        missing = [n for n in self.shapes if n not in values]
        if missing:
            raise TypeError(f"{self.name}.{method}() missing required argument(s): "
                            f"{', '.join(repr(m) for m in missing)}")
        shapes = [_in(values[n]) for n in self.shapes]
        loc = _in(values.get("loc", 0.0))
        scale = None if discrete else _in(values.get("scale", 1.0))
        return shapes, loc, scale

    def _valid_params(self, shapes, scale):
        conds = ([] if scale is None else [scale > 0]) + \
            ([] if self._valid is None else [self._valid(*shapes)])
        return _and(*conds) if conds else True

    def __call__(self, *args, **kwds):
        return _Frozen(self, args, kwds)

    def __repr__(self):
        return f"<hessgrad.scipy.stats.{self.name}>"


class _Frozen:
    """A distribution with its parameters fixed: ``norm(0.0, 2.0).logpdf(x)``."""

    def __init__(self, dist, args, kwds):
        self.dist, self.args, self.kwds = dist, args, kwds

    def __getattr__(self, method):
        fn = getattr(self.dist, method)
        return lambda x: fn(x, *self.args, **self.kwds)


class rv_continuous(_Distribution):  # noqa: N801 - SciPy's name
    """A continuous distribution from its standardized log density ``logpdf(z, *shapes)``
    (and CDF, SF, their logs, the quantile function where given), on the support
    ``support(*shapes) -> (a, b)`` (``open``: the density is 0 at the ends)."""

    def __init__(self, name, shapes, logpdf, cdf=None, sf=None, logcdf=None, logsf=None,
                 ppf=None, support=(-_INF, _INF), inner=0.0, open_support=False, valid=None):
        super().__init__(name, shapes, valid)
        self._logpdf, self._cdf, self._sf = logpdf, cdf, sf
        self._logcdf, self._logsf, self._ppf = logcdf, logsf, ppf
        self._support, self._inner, self._open = support, inner, open_support

    def _standard(self, method, x, args, kwds):
        shapes, loc, scale = self._parse(method, args, kwds)
        z = (_in(x) - loc) / scale
        a, b = self._support
        inside = None
        if a > -_INF or b < _INF:
            lower = z > a if self._open else z >= a
            upper = z < b if self._open else z <= b
            inside = _and(lower, upper)
        zs = z if inside is None else _where(inside, z, self._inner)
        valid = self._valid_params(shapes, scale)
        return z, zs, inside, shapes, scale, valid, (a, b)

    @staticmethod
    def _finish(out, valid):
        return _where(valid, out, np.nan)

    def logpdf(self, x, *args, **kwds):
        """The log density at ``x`` (``-inf`` outside the support)."""
        z, zs, inside, shapes, scale, valid, _ = self._standard("logpdf", x, args, kwds)
        out = self._logpdf(zs, *shapes)
        if inside is not None:
            out = _where(inside, out, -_INF)
        return self._finish(out - hnp.log(scale), valid)

    def pdf(self, x, *args, **kwds):
        """The density at ``x``: ``exp(logpdf)``."""
        return hnp.exp(self.logpdf(x, *args, **kwds))

    def _tail(self, method, x, args, kwds, inner_fn, below, above):
        z, zs, inside, shapes, scale, valid, (a, b) = self._standard(method, x, args, kwds)
        out = inner_fn(zs, *shapes)
        if inside is not None:
            out = _where(inside, out, _where(z < a if not self._open else z <= a, below,
                                             above))
        return self._finish(out, valid)

    def cdf(self, x, *args, **kwds):
        """The cumulative distribution function at ``x``."""
        fn = self._cdf or (lambda z, *s: 1.0 - self._sf(z, *s))
        return self._tail("cdf", x, args, kwds, fn, 0.0, 1.0)

    def sf(self, x, *args, **kwds):
        """The survival function ``1 - cdf`` (computed without cancellation where SciPy
        does)."""
        fn = self._sf or (lambda z, *s: 1.0 - self._cdf(z, *s))
        return self._tail("sf", x, args, kwds, fn, 1.0, 0.0)

    def _median(self, shapes):
        """The median (selects SciPy's branch of the generic logcdf/logsf; a constant)."""
        if self._ppf is None:
            return 0.0
        return self._ppf(0.5, *[stop_gradient(s) for s in shapes])

    def _generic_log(self, upper, z, *shapes):
        """SciPy's generic logcdf (``upper=False``) or logsf: the log of the tail below the
        median, ``log1p`` of minus the other tail above it (no cancellation)."""
        cdf = self._cdf or (lambda z, *s: 1.0 - self._sf(z, *s))
        sf = self._sf or (lambda z, *s: 1.0 - self._cdf(z, *s))
        median = self._median(shapes)
        direct, other = (sf, cdf) if upper else (cdf, sf)
        near = z > median if upper else z < median
        return _where(near, hnp.log(direct(_where(near, z, median), *shapes)),
                      hnp.log1p(-other(_where(near, median, z), *shapes)))

    def logcdf(self, x, *args, **kwds):
        """log of the CDF."""
        fn = self._logcdf or (lambda z, *s: self._generic_log(False, z, *s))
        return self._tail("logcdf", x, args, kwds, fn, -_INF, 0.0)

    def logsf(self, x, *args, **kwds):
        """log of the survival function."""
        fn = self._logsf or (lambda z, *s: self._generic_log(True, z, *s))
        return self._tail("logsf", x, args, kwds, fn, 0.0, -_INF)

    def ppf(self, q, *args, **kwds):
        """The quantile function (inverse CDF) at ``q`` in [0, 1] (NaN outside)."""
        if self._ppf is None:
            raise NotImplementedError(f"hessgrad.scipy.stats.{self.name}.ppf is not "
                                      f"implemented (no closed form or inverse primitive)")
        shapes, loc, scale = self._parse("ppf", args, kwds)
        q = _in(q)
        a, b = self._support
        inner = _and(q > 0, q < 1)
        qs = _where(inner, q, 0.5)
        ends = [e * scale + loc if np.isfinite(e) else e for e in (a, b)]  # ppf(0), ppf(1)
        out = _where(inner, self._ppf(qs, *shapes) * scale + loc,
                     _where(q == 0, ends[0], _where(q == 1, ends[1], np.nan)))
        return self._finish(out, self._valid_params(shapes, scale))


class rv_discrete(_Distribution):  # noqa: N801 - SciPy's name
    """A discrete distribution on the integers of ``support(*shapes) -> (a, b)``, from its
    ``logpmf(k, *shapes)``, ``cdf(k, *shapes)`` and ``sf(k, *shapes)`` (``k`` an integer in
    the support). The data ``k`` take no derivative; the shapes and ``loc`` (shifts) do."""

    def __init__(self, name, shapes, logpmf, cdf, sf, support, valid=None, inner=0.0):
        super().__init__(name, shapes, valid)
        self._logpmf, self._cdf, self._sf, self._support = logpmf, cdf, sf, support
        self._inner = inner

    def _standard(self, method, k, args, kwds):
        shapes, loc, _ = self._parse(method, args, kwds, discrete=True)
        k = _in(k) - loc
        a, b = self._support(*shapes)
        return k, shapes, a, b, self._valid_params(shapes, None)

    def logpmf(self, k, *args, **kwds):
        """log of the probability mass at ``k`` (``-inf`` off the support)."""
        k, shapes, a, b, valid = self._standard("logpmf", k, args, kwds)
        inside = _and(k >= a, k <= b, hnp.floor(k) == k)
        ks = _where(inside, k, self._inner)
        out = _where(inside, self._logpmf(ks, *shapes), -_INF)
        return _where(valid, out, np.nan)

    def pmf(self, k, *args, **kwds):
        """The probability mass at ``k``."""
        return hnp.exp(self.logpmf(k, *args, **kwds))

    def _tail(self, method, k, args, kwds, fn, below, above):
        k, shapes, a, b, valid = self._standard(method, k, args, kwds)
        k = hnp.floor(k)
        inside = _and(k >= a, k < b)
        ks = _where(inside, k, self._inner)
        out = _where(inside, fn(ks, *shapes), _where(k < a, below, above))
        return _where(valid, out, np.nan)

    def cdf(self, k, *args, **kwds):
        """P(X <= k)."""
        return self._tail("cdf", k, args, kwds, self._cdf, 0.0, 1.0)

    def sf(self, k, *args, **kwds):
        """P(X > k)."""
        return self._tail("sf", k, args, kwds, self._sf, 1.0, 0.0)

    def logcdf(self, k, *args, **kwds):
        """log P(X <= k)."""
        return self._tail("logcdf", k, args, kwds, lambda k, *s: hnp.log(self._cdf(k, *s)),
                          -_INF, 0.0)

    def logsf(self, k, *args, **kwds):
        """log P(X > k)."""
        return self._tail("logsf", k, args, kwds, lambda k, *s: hnp.log(self._sf(k, *s)),
                          0.0, -_INF)


# --- continuous distributions ---------------------------------------------------------------
def _norm_logpdf(z):
    return -z ** 2 / 2.0 - _LOG_2PI_HALF


norm = rv_continuous("norm", (), _norm_logpdf, cdf=sp.ndtr, sf=lambda z: sp.ndtr(-z),
                     logcdf=sp.log_ndtr, logsf=lambda z: sp.log_ndtr(-z), ppf=sp.ndtri)


def _t_logpdf(z, df):
    return sp.student_t_log_density(z, df)


t = rv_continuous("t", ("df",), _t_logpdf, cdf=lambda z, df: sp.stdtr(df, z),
                  sf=lambda z, df: sp.stdtr(df, -z), ppf=lambda q, df: sp.stdtrit(df, q),
                  valid=lambda df: df > 0)


def _cauchy_logpdf(z):
    absz = hnp.abs(z)
    small = absz < 1
    zs = _where(small, absz, 0.5)
    zl = _where(small, 2.0, absz)
    return _where(small, -_LOG_PI - hnp.log1p(zs ** 2),
                  -_LOG_PI - (2 * hnp.log(zl) + hnp.log1p((1 / zl) ** 2)))


def _cauchy_cdf(z):
    return hnp.arctan2(1.0, -z) / np.pi


def _cauchy_sf(z):
    return hnp.arctan2(1.0, z) / np.pi


def _log_cdf_by_median(cdf, sf, median=0.0):
    """SciPy's generic logcdf: ``log(cdf)`` below the median, ``log1p(-sf)`` above."""
    def logcdf(z, *s):
        below = z < median
        return _where(below, hnp.log(cdf(_where(below, z, median), *s)),
                      hnp.log1p(-sf(_where(below, median, z), *s)))
    return logcdf


def _log_sf_by_median(cdf, sf, median=0.0):
    def logsf(z, *s):
        above = z > median
        return _where(above, hnp.log(sf(_where(above, z, median), *s)),
                      hnp.log1p(-cdf(_where(above, median, z), *s)))
    return logsf


cauchy = rv_continuous("cauchy", (), _cauchy_logpdf, cdf=_cauchy_cdf, sf=_cauchy_sf,
                       logcdf=_log_cdf_by_median(_cauchy_cdf, _cauchy_sf),
                       logsf=_log_sf_by_median(_cauchy_cdf, _cauchy_sf),
                       ppf=lambda q: hnp.tan(np.pi * (q - 0.5)))


def _laplace_cdf(z):
    pos = z > 0
    return _where(pos, 1.0 - 0.5 * hnp.exp(-_where(pos, z, 0.0)),
                  0.5 * hnp.exp(_where(pos, 0.0, z)))


def _laplace_sf(z):
    return _laplace_cdf(-z)


def _laplace_ppf(q):
    hi = q > 0.5
    return _where(hi, -hnp.log(2 * (1 - _where(hi, q, 0.75))), hnp.log(2 * _where(hi, 0.25, q)))


laplace = rv_continuous("laplace", (), lambda z: -hnp.abs(z) - _LOG_2,
                        cdf=_laplace_cdf, sf=_laplace_sf,
                        logcdf=_log_cdf_by_median(_laplace_cdf, _laplace_sf),
                        logsf=_log_sf_by_median(_laplace_cdf, _laplace_sf), ppf=_laplace_ppf)


def _logistic_logpdf(z):
    y = -hnp.abs(z)
    return y - 2.0 * hnp.log1p(hnp.exp(y))


logistic = rv_continuous("logistic", (), _logistic_logpdf, cdf=lambda z: sp.sigmoid(z),
                         sf=lambda z: sp.sigmoid(-z), logcdf=log_expit,
                         logsf=lambda z: log_expit(-z), ppf=sp.logit)


def _expon_cdf(z):
    return -hnp.expm1(-z)


def _expon_sf(z):
    return hnp.exp(-z)


expon = rv_continuous("expon", (), lambda z: -z, cdf=_expon_cdf, sf=_expon_sf,
                      logcdf=_log_cdf_by_median(_expon_cdf, _expon_sf, math.log(2.0)),
                      logsf=lambda z: -z, ppf=lambda q: -hnp.log1p(-q), support=(0.0, _INF),
                      inner=1.0)

gamma = rv_continuous("gamma", ("a",), lambda z, a: xlogy(a - 1.0, z) - z - sp.gammaln(a),
                      cdf=lambda z, a: sp.gammainc(a, z), sf=lambda z, a: sp.gammaincc(a, z),
                      ppf=lambda q, a: sp.gammaincinv(a, q), support=(0.0, _INF), inner=1.0,
                      valid=lambda a: a > 0)
beta = rv_continuous(
    "beta", ("a", "b"),
    lambda z, a, b: xlog1py(b - 1.0, -z) + xlogy(a - 1.0, z) - sp.betaln(a, b),
    cdf=lambda z, a, b: sp.betainc(a, b, z), sf=lambda z, a, b: 1.0 - sp.betainc(a, b, z),
    ppf=lambda q, a, b: sp.betaincinv(a, b, q), support=(0.0, 1.0), inner=0.5,
    valid=lambda a, b: _and(a > 0, b > 0))
chi2 = rv_continuous(
    "chi2", ("df",),
    lambda z, df: xlogy(df / 2.0 - 1, z) - z / 2.0 - sp.gammaln(df / 2.0) - (_LOG_2 * df) / 2.0,
    cdf=lambda z, df: sp.gammainc(df / 2.0, z / 2.0),
    sf=lambda z, df: sp.gammaincc(df / 2.0, z / 2.0),
    ppf=lambda q, df: 2.0 * sp.gammaincinv(df / 2.0, q), support=(0.0, _INF), inner=1.0,
    valid=lambda df: df > 0)


def _lognorm_logpdf(z, s):
    return -(hnp.log(z) / s) ** 2 / 2 - _LOG_2PI_HALF - hnp.log(s * z)


lognorm = rv_continuous(
    "lognorm", ("s",), _lognorm_logpdf, cdf=lambda z, s: sp.ndtr(hnp.log(z) / s),
    sf=lambda z, s: sp.ndtr(-hnp.log(z) / s), logcdf=lambda z, s: sp.log_ndtr(hnp.log(z) / s),
    logsf=lambda z, s: sp.log_ndtr(-hnp.log(z) / s),
    ppf=lambda q, s: hnp.exp(s * sp.ndtri(q)), support=(0.0, _INF), inner=1.0,
    open_support=True, valid=lambda s: s > 0)
uniform = rv_continuous("uniform", (), lambda z: hnp.zeros_like(z), cdf=lambda z: z,
                        sf=lambda z: 1.0 - z, ppf=lambda q: q, support=(0.0, 1.0), inner=0.5)


# --- discrete distributions ------------------------------------------------------------------
def _integer_valued(x):
    return x == hnp.floor(x)


poisson = rv_discrete(
    "poisson", ("mu",), lambda k, mu: xlogy(k, mu) - sp.gammaln(k + 1) - mu,
    cdf=lambda k, mu: sp.gammaincc(k + 1, mu), sf=lambda k, mu: sp.gammainc(k + 1, mu),
    support=lambda mu: (0, _INF), valid=lambda mu: mu >= 0)


def _binom_logpmf(k, n, p):
    combiln = sp.gammaln(n + 1) - (sp.gammaln(k + 1) + sp.gammaln(n - k + 1))
    return combiln + xlogy(k, p) + xlog1py(n - k, -p)


binom = rv_discrete(
    "binom", ("n", "p"), _binom_logpmf,
    cdf=lambda k, n, p: sp.betainc(n - k, k + 1, 1.0 - p),
    sf=lambda k, n, p: sp.betainc(k + 1, n - k, p),
    support=lambda n, p: (0, n), valid=lambda n, p: _and(n >= 0, _integer_valued(n), p >= 0,
                                                           p <= 1))


def _nbinom_logpmf(k, n, p):
    coeff = sp.gammaln(n + k) - sp.gammaln(k + 1) - sp.gammaln(n)
    return coeff + n * hnp.log(p) + xlog1py(k, -p)


nbinom = rv_discrete(
    "nbinom", ("n", "p"), _nbinom_logpmf,
    cdf=lambda k, n, p: sp.betainc(n, k + 1, p),
    sf=lambda k, n, p: sp.betainc(k + 1, n, 1.0 - p),
    support=lambda n, p: (0, _INF), valid=lambda n, p: _and(n > 0, p > 0, p <= 1))
geom = rv_discrete(
    "geom", ("p",), lambda k, p: xlog1py(k - 1, -p) + hnp.log(p),
    cdf=lambda k, p: -hnp.expm1(hnp.log1p(-p) * k), sf=lambda k, p: hnp.exp(k * hnp.log1p(-p)),
    support=lambda p: (1, _INF), valid=lambda p: _and(p > 0, p <= 1), inner=1.0)
bernoulli = rv_discrete(
    "bernoulli", ("p",), lambda k, p: _binom_logpmf(k, 1.0, p),
    cdf=lambda k, p: sp.betainc(1.0 - k, k + 1, 1.0 - p),
    sf=lambda k, p: sp.betainc(k + 1, 1.0 - k, p),
    support=lambda p: (0, 1), valid=lambda p: _and(p >= 0, p <= 1))


# --- multivariate distributions ---------------------------------------------------------------
def _points(values, shape):
    """One value per point: ``values`` reshaped to the points' ``shape`` without its
    length-1 axes (SciPy squeezes them: 0-d for one point)."""
    return hnp.reshape(values, tuple(n for n in shape if n != 1))


class _multivariate_normal:  # noqa: N801
    """The multivariate normal: ``logpdf(x, mean=None, cov=1)`` with ``x`` of shape ``(...,
    d)`` (or ``(d,)``), through the Cholesky factor of ``cov`` (differentiable in ``x``,
    ``mean`` and ``cov``; ``cov`` symmetric positive definite)."""

    def _prepare(self, x, mean, cov):
        x = hnp.asarray(x)
        mean = None if mean is None else hnp.asarray(mean)
        cov = hnp.asarray(cov)
        # SciPy's dimension: the mean's, else the covariance's; a scalar mean and covariance
        # give 1 (a vector x: that many points in 1-d), except that points in rows (x of two
        # or more dimensions) give theirs
        if mean is not None and mean.ndim:
            dim = mean.shape[-1]
        elif cov.ndim:
            dim = cov.shape[-1]
        else:
            dim = x.shape[-1] if x.ndim >= 2 else 1
        if mean is None:
            mean = hnp.zeros(dim)
        if mean.ndim == 0:
            mean = mean * hnp.ones(dim)
        if cov.ndim == 0:
            cov = cov * hnp.eye(dim)
        elif cov.ndim == 1:
            cov = hnp.diag(cov)
        if x.ndim == 0 or (x.ndim == 1 and dim > 1 and x.shape[-1] != dim):
            x = hnp.reshape(x, (-1, dim))
        elif x.ndim == 1 and dim == 1:
            x = hnp.reshape(x, (-1, 1))
        return x, mean, cov, dim

    def _quadratic(self, x, mean, cov):
        """``(maha, logdet, dim, shape)``: the squared Mahalanobis distances of the points of
        ``x`` from ``mean`` under ``cov`` (by its Cholesky factor), ``log det cov``, the
        dimension and the points' shape."""
        x, mean, cov, dim = self._prepare(x, mean, cov)
        chol = hnp.linalg.cholesky(cov)
        dev = x - mean
        z = _hlinalg.solve_triangular(chol, hnp.transpose(hnp.reshape(dev, (-1, dim))),
                                      lower=True)
        logdet = 2.0 * hnp.sum(hnp.log(hnp.diagonal(chol)))
        return hnp.sum(z ** 2, axis=0), logdet, dim, dev.shape[:-1]

    def logpdf(self, x, mean=None, cov=1):
        maha, logdet, dim, shape = self._quadratic(x, mean, cov)
        return _points(-0.5 * (dim * math.log(2 * math.pi) + logdet + maha), shape)

    def pdf(self, x, mean=None, cov=1):
        return hnp.exp(self.logpdf(x, mean, cov))


multivariate_normal = _multivariate_normal()


class _multivariate_t:  # noqa: N801
    """The multivariate t: ``logpdf(x, loc=None, shape=1, df=1)``, differentiable in ``x``,
    ``loc``, ``shape`` and ``df``."""

    def logpdf(self, x, loc=None, shape=1, df=1):
        maha, logdet, dim, points = multivariate_normal._quadratic(x, loc, shape)
        df = _in(df)
        t = 0.5 * (df + dim)
        a = sp.gammaln(t)
        b = sp.gammaln(0.5 * df)
        c = dim / 2.0 * hnp.log(df * np.pi)
        return _points(a - b - c - 0.5 * logdet - t * hnp.log1p(maha / df), points)

    def pdf(self, x, loc=None, shape=1, df=1):
        return hnp.exp(self.logpdf(x, loc, shape, df))


multivariate_t = _multivariate_t()


class _dirichlet:  # noqa: N801
    """The Dirichlet distribution: ``logpdf(x, alpha)``, components along ``x``'s first axis
    (SciPy's layout), differentiable in ``x`` and ``alpha``."""

    def logpdf(self, x, alpha):
        x = hnp.asarray(x)
        alpha = hnp.asarray(alpha)
        lnb = hnp.sum(sp.gammaln(alpha)) - sp.gammaln(hnp.sum(alpha))
        expand = (slice(None),) + (None,) * (x.ndim - 1)
        return -lnb + hnp.sum(xlogy(alpha[expand] - 1, x), axis=0)

    def pdf(self, x, alpha):
        return hnp.exp(self.logpdf(x, alpha))


dirichlet = _dirichlet()

__all__ = ["norm", "t", "cauchy", "laplace", "logistic", "expon", "gamma", "beta", "chi2",
           "lognorm", "uniform", "poisson", "binom", "nbinom", "geom", "bernoulli", "dirichlet",
           "multivariate_normal", "multivariate_t", "rv_continuous", "rv_discrete"]
