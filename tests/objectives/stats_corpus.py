"""A corpus of statistical objectives (negative log-likelihoods, log-posteriors, least squares
through ODE solutions), written ONCE against SciPy-style names: ``np``, ``sp``
(scipy.special), ``stats`` (scipy.stats), ``la`` (scipy.linalg), ``signal``
(scipy.signal), ``integrate`` (scipy.integrate).

``build(np, sp, stats, la, signal, integrate)`` returns the objectives with those names bound
to the given modules: ``build(numpy, scipy.special, ...)`` gives the reference, and
``build(hessgrad.numpy, hessgrad.scipy.special, ...)`` the differentiable version of the same
source. Data sets are plain numpy arrays made at import with a fixed seed.
"""

import dataclasses

import numpy as _onp
import scipy.integrate as _sint
import scipy.linalg as _sla
import scipy.signal as _ssig


@dataclasses.dataclass(frozen=True)
class StatObjective:
    name: str
    fn: object
    x0: _onp.ndarray
    ode: bool = False   # values are ODE solutions: equal to SciPy's within tolerances only
    notes: str = ""


_rng = _onp.random.default_rng(20261127)
N = 40
X = _onp.column_stack([_onp.ones(N), _rng.normal(size=N), _rng.uniform(-1, 1, N)])
BETA = _onp.array([0.3, 0.5, -0.4])
MU = _onp.exp(X @ BETA)
Y_POISSON = _rng.poisson(MU).astype(float)
Y_NB = _rng.negative_binomial(3.0, 3.0 / (3.0 + MU)).astype(float)
Y_GAMMA = _rng.gamma(2.5, MU / 2.5)
_MB = 1 / (1 + _onp.exp(-(X @ BETA)))
Y_BETA = _onp.clip(_rng.beta(_MB * 8, (1 - _MB) * 8), 1e-3, 1 - 1e-3)
Y_T = X @ BETA + 0.7 * _rng.standard_t(3.0, N)
Y_BIN = (_rng.uniform(size=N) < _MB).astype(float)
TRIALS = _onp.full(N, 6.0)
K_BIN = _rng.binomial(6, _MB).astype(float)
Y_ZIP = _onp.where(_rng.uniform(size=N) < 0.3, 0.0, _rng.poisson(MU)).astype(float)
CLASSES = _rng.integers(0, 3, N)
ONE_HOT = _onp.eye(3)[CLASSES]
P_DIR = _rng.dirichlet([2.0, 3.0, 1.5], 25)
KB, NB = _rng.binomial(10, _rng.beta(2, 3, 30)).astype(float), _onp.full(30, 10.0)
Y_POS = _rng.gamma(3.0, 0.8, 60)
Y_LOGN = _rng.lognormal(0.4, 0.6, 60)
Y_T1 = 1.0 + 0.5 * _rng.standard_t(4.0, 60)
Y_WEIB = 1.5 * _rng.weibull(2.0, 60)
Y_VM = _rng.vonmises(0.7, 2.0, 60)
Y_MVN = _rng.multivariate_normal([0.5, -0.3], [[1.0, 0.4], [0.4, 0.8]], 50)
Y_MVT = _rng.multivariate_normal([0.2, 0.1], [[1.0, 0.3], [0.3, 1.0]], 50) / \
    _onp.sqrt(_rng.chisquare(5.0, 50) / 5.0)[:, None]
_LAT = X[:, :2] @ _onp.array([0.4, 1.0]) + 0.5 * _rng.normal(size=N)
Y_TOBIT = _onp.maximum(_LAT, 0.0)
CENSORED = (Y_TOBIT == 0).astype(float)
T_SURV = _rng.exponential(1.0 / _onp.exp(X[:, :2] @ _onp.array([0.2, 0.5])))
EVENT = (_rng.uniform(size=N) < 0.7).astype(float)
Y_CAUCHY = 0.3 + 0.8 * _rng.standard_cauchy(50)
# 1-D Gaussian process
GP_X = _onp.linspace(0, 5, 25)
GP_D2 = (GP_X[:, None] - GP_X[None, :]) ** 2
GP_Y = _onp.sin(GP_X) + 0.1 * _rng.normal(size=25)
# mixture
Y_MIX = _onp.concatenate([_rng.normal(-1.0, 0.5, 40), _rng.normal(1.5, 0.8, 60)])
# eight schools
SCHOOLS_Y = _onp.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SCHOOLS_S = _onp.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
# local level model (Kalman filter)
_LEVEL = _onp.cumsum(0.3 * _rng.normal(size=30))
Y_LEVEL = _LEVEL + 0.5 * _rng.normal(size=30)
# AR(1)
_ar = [0.0]
for _e in _rng.normal(size=20):
    _ar.append(0.6 * _ar[-1] + 0.5 * _e)
Y_AR = _onp.array(_ar[1:])
LAGS = _onp.abs(_onp.arange(20)[:, None] - _onp.arange(20)[None, :]).astype(float)
# ODEs
T_LV = _onp.linspace(0.0, 3.0, 7)
Y_LV = _sint.odeint(lambda y, t: _onp.array([1.0 * y[0] - 0.6 * y[0] * y[1],
                                              -0.8 * y[1] + 0.4 * y[0] * y[1]]),
                    [1.2, 0.8], T_LV, rtol=1e-10, atol=1e-10) + 0.02 * _rng.normal(size=(7, 2))
T_SIR = _onp.linspace(0.0, 6.0, 7)
Y_SIR = _sint.odeint(lambda y, t: _onp.array([-1.5 * y[0] * y[1],
                                               1.5 * y[0] * y[1] - 0.4 * y[1]]),
                     [0.95, 0.05], T_SIR, rtol=1e-10, atol=1e-10)[:, 1] + \
    0.005 * _rng.normal(size=7)
# two-compartment model
T_PK = _onp.array([0.5, 1.0, 2.0, 4.0, 6.0])
# deconvolution
KERNEL = _onp.array([0.25, 0.5, 0.25])
TRUE_SIGNAL = _onp.array([0.0, 1.0, 2.0, 1.5, 0.5, 0.0, -0.5, 0.0])
CONV_DATA = _ssig.convolve(TRUE_SIGNAL, KERNEL) + 0.01 * _rng.normal(size=10)


def build(np, sp, stats, la, signal, integrate):  # noqa: C901 - one objective per block
    """The corpus with the SciPy-style names bound to the given modules."""
    obj = []

    def add(name, x0, ode=False, notes=""):
        def register(fn):
            obj.append(StatObjective(name, fn, _onp.asarray(x0, dtype=float), ode, notes))
            return fn
        return register

    @add("poisson_glm", [0.0, 0.0, 0.0])
    def _(b):
        return -np.sum(stats.poisson.logpmf(Y_POISSON, np.exp(X @ b)))

    @add("negative_binomial_glm", [0.0, 0.0, 0.0, 0.5])
    def _(p):
        mu, r = np.exp(X @ p[:3]), np.exp(p[3])
        return -np.sum(stats.nbinom.logpmf(Y_NB, r, r / (r + mu)))

    @add("gamma_glm", [0.0, 0.0, 0.0, 0.5])
    def _(p):
        mu, k = np.exp(X @ p[:3]), np.exp(p[3])
        return -np.sum(stats.gamma.logpdf(Y_GAMMA, k, scale=mu / k))

    @add("beta_regression", [0.0, 0.0, 0.0, 1.0])
    def _(p):
        m, phi = sp.expit(X @ p[:3]), np.exp(p[3])
        return -np.sum(stats.beta.logpdf(Y_BETA, m * phi, (1 - m) * phi))

    @add("student_t_robust_regression", [0.0, 0.0, 0.0, 0.0, 1.0])
    def _(p):
        return -np.sum(stats.t.logpdf(Y_T, np.exp(p[4]), loc=X @ p[:3], scale=np.exp(p[3])))

    @add("gp_marginal_likelihood", [0.0, 0.0, -1.0])
    def _(p):
        ell, sf, sn = np.exp(p[0]), np.exp(p[1]), np.exp(p[2])
        k = sf ** 2 * np.exp(-GP_D2 / (2 * ell ** 2)) + (sn ** 2 + 1e-8) * np.eye(25)
        c, lower = la.cho_factor(k, lower=True)
        alpha = la.cho_solve((c, lower), GP_Y)
        return 0.5 * GP_Y @ alpha + np.sum(np.log(np.diag(c))) + 12.5 * np.log(2 * np.pi)

    @add("gaussian_mixture", [-0.5, 1.0, 0.0, 0.0, 0.0])
    def _(p):
        w = sp.expit(p[4])
        comps = np.stack([np.log(w) + stats.norm.logpdf(Y_MIX, p[0], np.exp(p[2])),
                          np.log1p(-w) + stats.norm.logpdf(Y_MIX, p[1], np.exp(p[3]))])
        return -np.sum(sp.logsumexp(comps, axis=0))

    @add("mixture_weighted_logsumexp", [-0.5, 1.0, 0.0])
    def _(p):
        comps = np.stack([stats.norm.logpdf(Y_MIX, p[0], 0.5), stats.norm.logpdf(Y_MIX, p[1],
                                                                                 0.8)])
        w = sp.softmax(np.stack([p[2], 0.0]))
        return -np.sum(sp.logsumexp(comps, axis=0, b=w[:, None]))

    @add("eight_schools_noncentered", [1.0, 1.0] + [0.1] * 8)
    def _(p):
        mu, tau, eta = p[0], np.exp(p[1]), p[2:]
        lp = (np.sum(stats.norm.logpdf(eta)) + np.sum(stats.norm.logpdf(SCHOOLS_Y, mu + tau * eta,
                                                                       SCHOOLS_S))
              + stats.norm.logpdf(mu, 0.0, 5.0) + stats.cauchy.logpdf(tau, 0.0, 5.0) + p[1])
        return -lp

    @add("lotka_volterra_least_squares", [0.1, -0.4, -0.3, -1.0], ode=True)
    def _(p):
        a, b, c, d = np.exp(p[0]), np.exp(p[1]), np.exp(p[2]), np.exp(p[3])

        def rhs(y, t):
            return np.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])
        sol = integrate.odeint(rhs, np.array([1.2, 0.8]), T_LV, rtol=1e-10, atol=1e-10)
        return np.sum((sol - Y_LV) ** 2)

    @add("sir_least_squares", [0.3, -1.0], ode=True)
    def _(p):
        beta, gamma = np.exp(p[0]), np.exp(p[1])

        def rhs(y, t):
            return np.stack([-beta * y[0] * y[1], beta * y[0] * y[1] - gamma * y[1]])
        sol = integrate.odeint(rhs, np.array([0.95, 0.05]), T_SIR, rtol=1e-10, atol=1e-10)
        return 1e3 * np.sum((sol[:, 1] - Y_SIR) ** 2)

    @add("kalman_local_level", [-0.5, -1.0])
    def _(p):
        var_eps, var_eta = np.exp(2 * p[0]), np.exp(2 * p[1])
        a, pvar, ll = Y_LEVEL[0], 1.0, 0.0
        for y in Y_LEVEL[1:]:
            pvar = pvar + var_eta
            f = pvar + var_eps
            ll = ll + stats.norm.logpdf(y, a, np.sqrt(f))
            gain = pvar / f
            a = a + gain * (y - a)
            pvar = pvar * (1 - gain)
        return -ll

    @add("logistic_regression_map", [0.0, 0.0, 0.0])
    def _(b):
        z = X @ b
        return -(np.sum(Y_BIN * sp.log_expit(z) + (1 - Y_BIN) * sp.log_expit(-z))
                 + np.sum(stats.norm.logpdf(b, 0.0, 3.0)))

    @add("probit_regression", [0.0, 0.0, 0.0])
    def _(b):
        z = X @ b
        return -np.sum(Y_BIN * sp.log_ndtr(z) + (1 - Y_BIN) * sp.log_ndtr(-z))

    @add("binomial_regression", [0.0, 0.0, 0.0])
    def _(b):
        return -np.sum(stats.binom.logpmf(K_BIN, TRIALS, sp.expit(X @ b)))

    @add("zero_inflated_poisson", [0.0, 0.0, 0.0, 0.0])
    def _(p):
        mu, pi = np.exp(X @ p[:3]), sp.expit(p[3])
        zero = sp.logsumexp(np.stack([np.log(pi) + 0 * mu, np.log1p(-pi) - mu]), axis=0)
        positive = np.log1p(-pi) + stats.poisson.logpmf(Y_ZIP, mu)
        return -np.sum(np.where(Y_ZIP == 0, zero, positive))

    @add("multinomial_logit", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    def _(p):
        w = np.concatenate([np.zeros((3, 1)), np.reshape(p, (3, 2))], axis=1)
        return -np.sum(ONE_HOT * sp.log_softmax(X @ w, axis=1))

    @add("dirichlet_mle", [0.5, 0.5, 0.5])
    def _(p):
        return -np.sum(stats.dirichlet.logpdf(P_DIR.T, np.exp(p)))

    @add("beta_binomial", [0.5, 0.5])
    def _(p):
        a, b = np.exp(p[0]), np.exp(p[1])
        comb = sp.gammaln(NB + 1) - sp.gammaln(KB + 1) - sp.gammaln(NB - KB + 1)
        return -np.sum(comb + sp.betaln(KB + a, NB - KB + b) - sp.betaln(a, b))

    @add("gamma_mle", [0.5, 0.0])
    def _(p):
        return -np.sum(stats.gamma.logpdf(Y_POS, np.exp(p[0]), scale=np.exp(p[1])))

    @add("lognormal_mle", [0.0, 0.0])
    def _(p):
        return -np.sum(stats.lognorm.logpdf(Y_LOGN, np.exp(p[1]), scale=np.exp(p[0])))

    @add("student_t_mle", [0.5, 0.0, 1.0])
    def _(p):
        return -np.sum(stats.t.logpdf(Y_T1, np.exp(p[2]), p[0], np.exp(p[1])))

    @add("weibull_mle", [0.5, 0.3])
    def _(p):
        k, lam = np.exp(p[0]), np.exp(p[1])
        z = Y_WEIB / lam
        return -np.sum(np.log(k / lam) + sp.xlogy(k - 1, z) - z ** k)

    @add("von_mises_mle", [0.3, 0.3])
    def _(p):
        kappa = np.exp(p[1])
        return -np.sum(kappa * np.cos(Y_VM - p[0]) - np.log(2 * np.pi * sp.i0e(kappa)) - kappa)

    @add("mvn_cholesky_mle", [0.0, 0.0, 0.0, 0.0, 0.0])
    def _(p):
        chol = np.stack([np.stack([np.exp(p[2]), 0.0]), np.stack([p[3], np.exp(p[4])])])
        return -np.sum(stats.multivariate_normal.logpdf(Y_MVN, p[:2], chol @ chol.T))

    @add("multivariate_t_location_df", [0.0, 0.0, 1.0])
    def _(p):
        return -np.sum(stats.multivariate_t.logpdf(Y_MVT, p[:2], np.eye(2), np.exp(p[2])))

    @add("tobit_regression", [0.0, 0.5, 0.0])
    def _(p):
        m, s = X[:, :2] @ p[:2], np.exp(p[2])
        return -np.sum(CENSORED * stats.norm.logcdf(-m / s)
                       + (1 - CENSORED) * stats.norm.logpdf(Y_TOBIT, m, s))

    @add("censored_exponential_survival", [0.0, 0.0])
    def _(b):
        scale = np.exp(-(X[:, :2] @ b))
        return -np.sum(EVENT * stats.expon.logpdf(T_SURV, scale=scale)
                       + (1 - EVENT) * stats.expon.logsf(T_SURV, scale=scale))

    @add("ar1_exact_likelihood", [0.3, -0.5])
    def _(p):
        phi, s2 = np.tanh(p[0]), np.exp(2 * p[1])
        cov = s2 / (1 - phi ** 2) * la.toeplitz(phi ** np.arange(20.0))
        return -stats.multivariate_normal.logpdf(Y_AR, np.zeros(20), cov)

    @add("two_compartment_expm", [-0.5, -0.7, -1.2])
    def _(p):
        k12, k21, k10 = np.exp(p[0]), np.exp(p[1]), np.exp(p[2])
        a = np.stack([np.stack([-(k12 + k10), k21]), np.stack([k12, -k21])])
        states = la.expm(T_PK[:, None, None] * a) @ np.array([1.0, 0.0])
        target = _PK_DATA
        return np.sum((states[:, 0] - target) ** 2) * 100

    @add("deconvolution_smooth", [0.5] * 8)
    def _(s):
        fit = signal.convolve(s, KERNEL)
        return np.sum((fit - CONV_DATA) ** 2) + 0.01 * np.sum((s[1:] - s[:-1]) ** 2)

    @add("cauchy_location_scale", [0.0, 0.0])
    def _(p):
        return -np.sum(stats.cauchy.logpdf(Y_CAUCHY, p[0], np.exp(p[1])))

    @add("logistic_errors_probit_mean", [0.0, 0.0])
    def _(p):
        m = sp.ndtr(X @ np.stack([p[0], p[1], 0.0]))
        return -np.sum(stats.logistic.logpdf(Y_BETA, m, 0.2))

    @add("poisson_gamma_hierarchical_map", [0.0, 0.0, 0.0, 0.5, 0.0])
    def _(p):
        rates = np.exp(p[:3])
        alpha, beta = np.exp(p[3]), np.exp(p[4])
        counts = _onp.array([3.0, 7.0, 12.0])
        exposure = _onp.array([2.0, 3.0, 4.0])
        lp = (np.sum(stats.poisson.logpmf(counts, rates * exposure))
              + np.sum(stats.gamma.logpdf(rates, alpha, scale=1 / beta)) + np.sum(p[:3])
              + stats.expon.logpdf(alpha) + stats.expon.logpdf(beta) + p[3] + p[4])
        return -lp

    return obj


_K = _onp.exp([-0.5, -0.7, -1.2])
_A_PK = _onp.array([[-(_K[0] + _K[2]), _K[1]], [_K[0], -_K[1]]])
_PK_DATA = _onp.array([_sla.expm(t * _A_PK)[0, 0] for t in T_PK]) + \
    0.001 * _rng.normal(size=len(T_PK))
