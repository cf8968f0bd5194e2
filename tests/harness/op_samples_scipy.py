"""Samples of ``hessgrad.scipy``: special functions, distributions (each method of each
distribution: ``scipy.stats.norm.logpdf``), linear algebra, signal and integration, each
compared with SciPy's own function of the same path, on its domain and away from its kinks.

Arguments without a derivative formula (the shape parameters of incomplete gamma and beta
functions, so of the CDFs of ``t``, ``gamma``, ``chi2``, ``beta``, ``binom``, ``nbinom``; the
orders of Bessel functions) are static Python numbers or integer arrays here; a float array
is always a differentiated input (see ``op_sample``)."""

import numpy as np
import scipy.linalg

from op_arrays import A2, A3, COL, E, E0, ONE, POS, POS0, ROW, S0, SPD2, SPD3, STACK, SYM3, TALL, \
    UNIT, V4, X, X3, Y
from op_sample import sample

SP, ST, LA, SG, IN = "scipy.special.", "scipy.stats.", "scipy.linalg.", "scipy.signal.", \
    "scipy.integrate."
U01 = np.array([[0.23, 0.71, 0.46], [0.88, 0.12, 0.57]])  # in (0, 1): probabilities
Q0 = np.array(0.64)                                        # a 0-d probability
SC = np.array([0.8, 1.3, 2.1])                             # scales, broadcast against 2x3
FRAC = np.array([[0.37, -1.23, 2.19], [3.61, -0.52, 1.77]])  # away from the poles of gamma
POS2 = POS[::-1] * 0.9 + 0.1                               # a second positive array

SAMPLES = []

# --- special ----------------------------------------------------------------------------------
SAMPLES += [
    sample(SP + "gammaln", POS), sample(SP + "gammaln", FRAC), sample(SP + "gammaln", POS0),
    sample(SP + "gammaln", E),
    sample(SP + "gamma", POS), sample(SP + "gamma", FRAC), sample(SP + "gamma", ONE),
    sample(SP + "digamma", POS), sample(SP + "digamma", FRAC), sample(SP + "psi", POS),
    sample(SP + "polygamma", 1, POS), sample(SP + "polygamma", 2, POS0),
    sample(SP + "polygamma", 3, POS),
    # regression: an array of orders (SciPy broadcasts it) was refused
    sample(SP + "polygamma", np.array([0, 1, 3]), POS),
    sample(SP + "polygamma", np.array([[1], [2]]), POS0),
    sample(SP + "multigammaln", POS + 1.0, 2), sample(SP + "multigammaln", POS0 + 2.0, 3),
    sample(SP + "beta", POS, POS2), sample(SP + "beta", POS, SC), sample(SP + "beta", S0, POS0),
    sample(SP + "betaln", POS, POS2), sample(SP + "betaln", SC, POS0),
    sample(SP + "betainc", 2.5, 1.5, U01), sample(SP + "betainc", 0.7, 3.0, Q0),
    sample(SP + "gammainc", 1.7, POS), sample(SP + "gammainc", 0.6, POS0),
    sample(SP + "gammaincc", 2.3, POS), sample(SP + "gammaincc", 0.9, E),
    sample(SP + "zeta", 3.0, POS), sample(SP + "zeta", 2.5, POS0),
    sample(SP + "zeta", POS + 1.5, derivatives=False),  # no derivative in the first argument
    sample(SP + "erf", X), sample(SP + "erf", S0), sample(SP + "erf", E),
    sample(SP + "erfc", X), sample(SP + "erfcx", X), sample(SP + "erfcx", POS * 4),
    sample(SP + "erfinv", UNIT), sample(SP + "erfinv", S0), sample(SP + "erfcinv", UNIT + 1.0),
    sample(SP + "ndtr", X), sample(SP + "ndtri", U01), sample(SP + "ndtri", Q0),
    sample(SP + "log_ndtr", X), sample(SP + "log_ndtr", np.array([-30.0, -5.5, 3.2])),
    sample(SP + "expit", X), sample(SP + "expit", S0), sample(SP + "logit", U01),
    sample(SP + "log_expit", X), sample(SP + "log_expit", np.array([-40.0, 0.3, 35.0])),
    sample(SP + "logsumexp", X), sample(SP + "logsumexp", X, axis=1),
    sample(SP + "logsumexp", X, axis=-1, keepdims=True), sample(SP + "logsumexp", X3, axis=(0, 2)),
    sample(SP + "logsumexp", X, b=POS), sample(SP + "logsumexp", X, axis=0, b=SC),
    sample(SP + "logsumexp", X, b=np.array([0.5, -0.3, 1.2]), axis=1, return_sign=True),
    sample(SP + "logsumexp", Y, b=np.array([1.0, 0.0, 2.0])),  # a zero weight drops a term
    sample(SP + "logsumexp", S0), sample(SP + "logsumexp", E, axis=1),
    sample(SP + "logsumexp", ONE),
    sample(SP + "softmax", X), sample(SP + "softmax", X, axis=0), sample(SP + "softmax", X3,
                                                                          axis=(0, 2)),
    sample(SP + "softmax", COL, axis=1), sample(SP + "softmax", E, axis=1),
    sample(SP + "log_softmax", X, axis=-1), sample(SP + "log_softmax", X),
    sample(SP + "log_softmax", S0),
    sample(SP + "xlogy", X, POS), sample(SP + "xlogy", Y, POS), sample(SP + "xlogy", S0, POS0),
    sample(SP + "xlog1py", X, UNIT), sample(SP + "xlog1py", Y, S0),
    sample(SP + "entr", POS), sample(SP + "entr", U01), sample(SP + "entr", E),
    sample(SP + "rel_entr", POS, POS2), sample(SP + "rel_entr", U01, SC),
    sample(SP + "kl_div", POS, POS2), sample(SP + "kl_div", SC, POS0),
    sample(SP + "iv", 1.5, POS), sample(SP + "iv", 2, X), sample(SP + "iv", 0.0, S0),
    sample(SP + "ive", 0.5, POS), sample(SP + "ive", 1, X),
    sample(SP + "i0", X), sample(SP + "i0e", X), sample(SP + "i1", X), sample(SP + "i1e", X),
    sample(SP + "jv", 1.5, POS), sample(SP + "jv", 2, X), sample(SP + "jn", 2, X),
    sample(SP + "jn", 0, S0), sample(SP + "j0", X), sample(SP + "j1", X),
    sample(SP + "yv", 1.5, POS), sample(SP + "yv", 0.0, POS0), sample(SP + "yn", 1, POS),
    sample(SP + "y0", POS), sample(SP + "y1", POS),
    sample(SP + "sinc", X), sample(SP + "sinc", np.array([0.0, 0.5, -1.5])),
    sample(SP + "spence", POS), sample(SP + "spence", U01),
    sample(SP + "expi", X), sample(SP + "exp1", POS), sample(SP + "exp1", POS0),
    sample(SP + "owens_t", X, Y), sample(SP + "owens_t", S0, POS),
]

# --- stats: every method of every distribution --------------------------------------------------
LOC = np.array([-0.3, 0.2, 0.1])  # small shifts: data POS stay inside (0, inf) after them
CONT_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
# distribution: (data, shapes for the density (arrays: differentiated), shapes for the CDFs
# (static where the CDF has no derivative in them), loc, scale)
CONTINUOUS = {
    "norm": (X, (), (), Y, SC),
    "t": (X, (np.array([2.5, 4.0, 7.5]),), (3.5,), Y, SC),
    "cauchy": (X, (), (), Y, SC),
    "laplace": (X, (), (), Y, SC),
    "logistic": (X, (), (), Y, SC),
    "expon": (POS, (), (), LOC, SC),
    "gamma": (POS, (np.array([1.5, 2.5, 0.8]),), (2.5,), LOC, SC),
    "beta": (U01, (POS[0], POS2[1]), (2.5, 1.7), None, None),
    "chi2": (POS, (np.array([3.0, 4.5, 2.5]),), (3.0,), LOC, SC),
    "lognorm": (POS, (np.array([0.6, 1.1, 0.9]),), (np.array([0.6, 1.1, 0.9]),), LOC, SC),
    "uniform": (U01, (), (), np.array(-0.2), np.array(1.5)),
}
for dist, (x, shapes, cdf_shapes, loc, scale) in CONTINUOUS.items():
    extra = () if loc is None else (loc, scale)
    for method in CONT_METHODS:
        args = (shapes if method in ("logpdf", "pdf") else cdf_shapes) + extra
        SAMPLES.append(sample(ST + dist + "." + method, x, *args))
    SAMPLES.append(sample(ST + dist + ".ppf", U01, *(cdf_shapes + extra)))
    # 0-d data and parameters, defaults for loc and scale (standardized)
    scalar_shapes = [float(s[0]) if isinstance(s, np.ndarray) else s for s in cdf_shapes]
    q0 = np.array(0.41) if dist in ("beta", "uniform") else POS0
    SAMPLES += [sample(ST + dist + ".logcdf", q0, *scalar_shapes),
                sample(ST + dist + ".ppf", Q0, *scalar_shapes)]
# size 0
SAMPLES += [sample(ST + "norm.logpdf", E), sample(ST + "gamma.cdf", E, 2.5),
            sample(ST + "beta.ppf", E0, 2.5, 1.7)]
# keyword parameters, frozen-style broadcasting, data outside the support (constant CDFs)
SAMPLES += [
    sample(ST + "norm.logpdf", X, loc=S0, scale=POS0),
    sample(ST + "norm.cdf", COL, ROW, SC),
    sample(ST + "expon.cdf", np.array([-0.5, 0.7, 1.9])),
    sample(ST + "expon.sf", np.array([-0.5, 0.7, 1.9]), scale=POS0),
    sample(ST + "uniform.cdf", np.array([-0.4, 0.3, 1.6])),
    sample(ST + "lognorm.logcdf", np.array([0.2, 1.7, 5.0]), POS0),
]

K = np.array([[0, 3, 1], [5, 2, 7]])  # counts
K01 = np.array([[0, 1, 1], [1, 0, 0]])
DISC_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
P = np.array([0.35, 0.62, 0.18])
DISCRETE = {  # distribution: (data, shapes for the pmf, shapes for the CDFs)
    "poisson": (K, (SC * 2,), (SC * 2,)),
    "binom": (K, (np.array([9, 7, 8]), P), (np.array([9, 7, 8]), P)),
    "nbinom": (K, (np.array([2.5, 4.0, 1.5]), P), (3, P)),
    "geom": (K + 1, (P,), (P,)),
    "bernoulli": (K01, (P,), (P,)),
}
for dist, (k, shapes, cdf_shapes) in DISCRETE.items():
    for method in DISC_METHODS:
        args = shapes if method in ("logpmf", "pmf") else cdf_shapes
        # P(X > 1) = 0 for a Bernoulli variable: log sf at k = 0 only (-inf has no derivative)
        data = np.zeros_like(k) if dist == "bernoulli" and method == "logsf" else k
        SAMPLES.append(sample(ST + dist + "." + method, data, *args))
    SAMPLES.append(sample(ST + dist + ".logpmf", np.array(1), *[
        s[0] if isinstance(s, np.ndarray) and s.dtype.kind == "f" else
        (int(s[0]) if isinstance(s, np.ndarray) else s) for s in cdf_shapes],
        label="0d"))
SAMPLES += [sample(ST + "poisson.cdf", K, POS0, loc=1),
            sample(ST + "binom.pmf", np.array([-1, 3, 12]), 9, np.array(0.65))]

XM = X3.reshape(4, 2) @ np.array([[1.0, 0.3, -0.2], [0.1, 0.8, 0.5]])  # 4 points in 3-d
MEAN = np.array([0.2, -0.1, 0.4])
SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])  # 2 points, components along axis 0
ALPHA = np.array([1.5, 2.2, 0.8])
SAMPLES += [
    sample(ST + "multivariate_normal.logpdf", XM, MEAN, SPD3),
    sample(ST + "multivariate_normal.logpdf", XM[0], MEAN, SPD3),
    sample(ST + "multivariate_normal.logpdf", XM, MEAN, SC),
    # regressions: a vector with a scalar mean and covariance is points in 1-d, a 0-d x one
    # point (hessgrad took the vector for one point in 4-d, and gave shape (1,) for 0-d)
    sample(ST + "multivariate_normal.logpdf", V4, S0, POS0),
    sample(ST + "multivariate_normal.logpdf", V4),
    sample(ST + "multivariate_normal.logpdf", S0, S0, POS0),
    sample(ST + "multivariate_t.logpdf", V4, S0, POS0, 3.0),
    sample(ST + "multivariate_normal.logpdf", XM[:1], MEAN, SPD3),
    sample(ST + "multivariate_normal.logpdf", XM.reshape(2, 2, 3), MEAN, 1.5),
    sample(ST + "multivariate_normal.pdf", XM, MEAN, SPD3),
    sample(ST + "multivariate_t.logpdf", XM, MEAN, SPD3, np.array(3.9)),
    sample(ST + "multivariate_t.logpdf", XM[1], MEAN, SPD3, 4.0),
    sample(ST + "multivariate_t.pdf", XM, MEAN, SPD3, np.array(3.9)),
    sample(ST + "dirichlet.logpdf", SIMPLEX, ALPHA),
    sample(ST + "dirichlet.logpdf", SIMPLEX[:, 0], ALPHA),
    sample(ST + "dirichlet.pdf", SIMPLEX, ALPHA),
]

# --- linalg -----------------------------------------------------------------------------------
TRIL = np.tril(A3)
TRIU = np.triu(A3)
Z00 = np.zeros((0, 0))
HURWITZ = A3 - 3 * np.eye(3)  # eigenvalues in the left half-plane
AB = np.array([[0.0, 0.4, -0.3, 0.2], [2.1, 1.7, 1.9, 2.4], [0.5, -0.6, 0.3, 0.0]])
LU3, PIV3 = scipy.linalg.lu_factor(A3)
CHO3 = scipy.linalg.cholesky(SPD3)


def eigh_signs_as_numpy(a, b=None, **options):
    """SciPy's ``eigh`` with each eigenvector's sign as numpy's (hessgrad's; SciPy's LAPACK
    driver picks other signs, both are right): eigenvalues and vectors from SciPy, signs from
    numpy."""
    out = scipy.linalg.eigh(a, b, **options)
    if options.get("eigvals_only") or b is not None:
        return out
    w, v = out
    ref = np.linalg.eigh(a, UPLO="L" if options.get("lower", True) else "U")[1]
    return w, v * np.sign(np.sum(v * ref, axis=0))


SAMPLES += [
    sample(LA + "solve_triangular", TRIL, Y, lower=True),
    sample(LA + "solve_triangular", TRIU, X.T),
    sample(LA + "solve_triangular", TRIL, X.T, trans=1, lower=True),
    sample(LA + "solve_triangular", TRIU, Y, trans="T", unit_diagonal=True),
    sample(LA + "cholesky", SPD3), sample(LA + "cholesky", SPD3, lower=True),
    sample(LA + "cholesky", np.array([[1.7]])),
    sample(LA + "cho_factor", SPD3, lower=True), sample(LA + "cho_factor", SPD2),
    sample(LA + "cho_solve", (CHO3, False), Y, label="(U,False),3"),
    sample(LA + "cho_solve", (CHO3.T.copy(), True), X.T, label="(L,True),3x2"),
    sample(LA + "lu_factor", A3),
    sample(LA + "lu_solve", (LU3, PIV3), Y, label="(lu,piv),3"),
    sample(LA + "lu_solve", (LU3, PIV3), X.T, trans=1, label="(lu,piv),3x2,trans=1"),
    sample(LA + "solve", A3, Y), sample(LA + "solve", A3, X.T),
    sample(LA + "solve", SPD3, Y, assume_a="pos"),
    sample(LA + "solve", SYM3, X.T, assume_a="sym", lower=True),
    sample(LA + "solve", A3, Y, transposed=True), sample(LA + "solve", Z00, E0),
    sample(LA + "inv", A3), sample(LA + "inv", np.array([[1.7]])),
    sample(LA + "det", A3), sample(LA + "det", A2), sample(LA + "det", Z00),
    sample(LA + "slogdet", A3, reference=np.linalg.slogdet),
    sample(LA + "slogdet", STACK, reference=np.linalg.slogdet),
    sample(LA + "eigh", SYM3, reference=eigh_signs_as_numpy),
    sample(LA + "eigh", SYM3, eigvals_only=True), sample(LA + "eigh", SYM3, SPD3),
    sample(LA + "eigh", SYM3, lower=False, reference=eigh_signs_as_numpy),
    sample(LA + "eigvalsh", SYM3), sample(LA + "eigvalsh", SYM3, subset_by_index=[1, 2]),
    sample(LA + "expm", A3 * 0.5), sample(LA + "expm", A2), sample(LA + "expm", np.array([[0.3]])),
    sample(LA + "expm_frechet", A2, SPD2), sample(LA + "expm_frechet", A2, A2.T,
                                                  compute_expm=False),
    sample(LA + "expm_frechet", A3 * 0.5, SYM3, hessians=False),
    sample(LA + "sqrtm", SPD3), sample(LA + "sqrtm", A2),
    # logm's derivatives are expensive (block matrices): a 1x1 runs every mode, larger ones
    # the core
    sample(LA + "logm", np.array([[1.7]])), sample(LA + "logm", A2, hessians=False),
    sample(LA + "logm", SPD3, hessians=False),
    sample(LA + "solve_sylvester", A3, A2, X.T),
    sample(LA + "solve_continuous_lyapunov", HURWITZ, SPD3),
    sample(LA + "solve_banded", (1, 1), AB, V4, label="(1, 1),3x4,4"),
    sample(LA + "solve_banded", (1, 1), AB, np.stack([V4, V4[::-1]], 1),
           label="(1, 1),3x4,4x2"),
    sample(LA + "qr", A3), sample(LA + "qr", TALL, mode="economic"),
    sample(LA + "qr", TALL, mode="r"),  # regression: R was K x N, SciPy's is M x N
    sample(LA + "qr", A3, mode="r"),
    # regression: SciPy's default mode='full' on a tall matrix raised even for values (Q's
    # completed columns are not unique: no derivative through Q, R's is checked by mode='r')
    sample(LA + "qr", TALL, derivatives=False),
    sample(LA + "svd", TALL, full_matrices=False), sample(LA + "svd", A3),
    sample(LA + "svd", TALL, compute_uv=False),
    sample(LA + "svdvals", A3), sample(LA + "svdvals", TALL),
    sample(LA + "block_diag", A2, TALL, S0), sample(LA + "block_diag", Y, A2),
    sample(LA + "toeplitz", Y, V4), sample(LA + "toeplitz", Y), sample(LA + "toeplitz", ONE),
    sample(LA + "circulant", V4), sample(LA + "circulant", ONE),
]

# the triangle a function does not read (LAPACK's convention) has a zero derivative: full
# matrices where one triangle is read, and cho_factor's output (its other triangle is junk)
SAMPLES += [
    sample(LA + "solve_triangular", A3, Y, lower=True, label="full 3x3,3,lower=True"),
    sample(LA + "cholesky", SPD3 + np.tril(np.ones((3, 3)), -1), label="lower junk 3x3"),
    sample(LA + "solve", SPD3 + np.tril(np.ones((3, 3)), -1) * 0.3, Y, assume_a="pos",
           label="lower junk 3x3,3,pos"),
    sample(LA + "eigvalsh", SYM3 + np.triu(np.ones((3, 3)), 1), label="upper junk 3x3"),
    sample(LA + "cho_solve", scipy.linalg.cho_factor(SPD3, lower=True), Y,
           label="cho_factor(3x3,lower),3"),
]

# --- signal -----------------------------------------------------------------------------------
for name in ("convolve", "correlate"):
    SAMPLES += [sample(SG + name, V4, Y), sample(SG + name, X, A2),
                sample(SG + name, Y, V4, mode="same"), sample(SG + name, X, A2, mode="valid"),
                sample(SG + name, V4, Y, method="fft"), sample(SG + name, ONE, V4),
                sample(SG + name, X3, X3[:1], mode="same")]
SAMPLES += [sample(SG + "fftconvolve", V4, Y), sample(SG + "fftconvolve", X, A2, mode="same"),
            sample(SG + "fftconvolve", X, COL, axes=0),
            sample(SG + "fftconvolve", X3, X3, mode="valid", axes=(0, 2))]

# --- integrate --------------------------------------------------------------------------------
T = np.array([0.0, 0.3, 0.7, 1.2])
SAMPLES += [
    sample(IN + "trapezoid", X), sample(IN + "trapezoid", X, Y), sample(IN + "trapezoid", X,
                                                                         dx=0.5, axis=0),
    sample(IN + "trapezoid", X3, axis=1), sample(IN + "trapezoid", ONE),
    sample(IN + "trapezoid", E),
    sample(IN + "cumulative_trapezoid", X), sample(IN + "cumulative_trapezoid", X, Y,
                                                    initial=0),
    sample(IN + "cumulative_trapezoid", X, dx=0.3, axis=0),
    sample(IN + "simpson", V4), sample(IN + "simpson", X, x=Y), sample(IN + "simpson", Y),
    sample(IN + "simpson", X3, dx=0.5, axis=0), sample(IN + "simpson", V4 + 2, x=T),
    sample(IN + "odeint", lambda y, t, k: -k * y * y, V4[:2] + 2.0, T[:3], (0.8,), steps=1,
           numpy=False, label="-k*y^2,2,t3,steps=1"),
    # adaptive steps are chosen from values (eager only: traced, it asks for steps=); the
    # fixed-step sample above runs every mode
    sample(IN + "odeint", lambda y, t: -0.7 * y + 0.2 * t, Y, T, traceable=False,
           reference_rtol=1e-6, label="linear,3,t4"),
]
