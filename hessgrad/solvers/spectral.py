"""Spectral density by stochastic Lanczos quadrature, and what follows from it.

For a unit probe ``v``, ``v^T f(A) v = sum_k tau_k f(theta_k)`` exactly when ``f``
is a polynomial of degree ``< 2 m`` (Gauss quadrature from ``m`` Lanczos steps:
nodes are the Ritz values, weights the squared first components of the
eigenvectors of ``T``).  Averaging over random probes (Hutchinson) estimates
``tr f(A) / n`` (Ubaru, Chen and Saad, 2017).

Counting eigenvalues integrates a step function, which no polynomial follows: besides
the probes' noise the quadrature has a bias, bounded for each probe by the
Chebyshev-Markov-Stieltjes inequalities (the distribution function of the probe's
spectral measure lies between partial sums of the Gauss weights), which
:func:`negative_eigenvalue_count` uses for an interval that covers both.
"""

import math
import numbers
import sys
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import OptimizeResult

from .estimators import TraceEstimate, check_level, t_interval
from .krylov import _check_maxiter, _check_number
from .lanczos import EigshNoConvergence, _extend, eigsh
from .operators import aslinearoperator_like

__all__ = ["spectral_density", "SpectralDensity", "condition_number_estimate",
           "negative_eigenvalue_count", "CountEstimate"]

# negative_eigenvalue_count forms the matrix (n products) and counts exactly up to this n,
# when that costs no more products than the quadrature may.
DENSE_COUNT_MAX = 2000
# condition_number_estimate's default budget of products.
CONDITION_MATVECS = 2000
_EPS = float(np.finfo(np.float64).eps)


class SpectralDensity:
    """Quadrature rules of stochastic Lanczos quadrature, one per probe.

    Attributes:
        nodes: Ritz values, shape ``(num_probes, lanczos_steps)``; a rule cut short by
            a Lanczos breakdown (an operator with few distinct eigenvalues) is padded
            with its largest node at weight 0.
        weights: quadrature weights (each row sums to 1), same shape.
        n: size of the operator.
        num_matvecs: matvecs spent.
        exact: per probe, True when Lanczos found an invariant subspace, so the rule is
            the probe's spectral measure itself (no quadrature error).
    """

    def __init__(self, nodes, weights, n, num_matvecs, exact=None):
        self.nodes, self.weights = nodes, weights
        self.n, self.num_matvecs = n, num_matvecs
        self.exact = (np.zeros(nodes.shape[0], dtype=bool) if exact is None
                      else np.asarray(exact, dtype=bool))

    def _per_probe(self, f):
        return self.n * np.sum(self.weights * f(self.nodes), axis=1)

    def trace(self, f, return_std_error=False):
        """Estimate ``tr f(A)`` for a vectorised function ``f``.

        >>> import numpy as np
        >>> sd = spectral_density(np.diag([1.0, 2.0, 3.0]), num_probes=4, rng=0)
        >>> round(float(sd.trace(lambda x: x ** 2)), 8)
        14.0
        """
        samples = self._per_probe(f)
        est = float(samples.mean())
        if not return_std_error:
            return est
        m = samples.size
        return est, (float(np.std(samples, ddof=1) / math.sqrt(m)) if m > 1
                     else math.inf)

    def trace_estimate(self, f, level=0.95):
        """``tr f(A)`` as a :class:`~hessgrad.solvers.estimators.TraceEstimate` with a Student-t
        interval over the probes.

        The interval covers the probes' noise only.  The quadrature is exact for
        polynomials of degree ``< 2 * lanczos_steps`` and close for smooth ``f`` over
        the spectrum; for a discontinuous ``f`` its bias can dominate (for counts use
        :meth:`count_below`, whose interval includes it), so there the interval is a
        heuristic.

        >>> import numpy as np
        >>> Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((40, 40)))
        >>> lam = np.linspace(1.0, 10.0, 40)
        >>> sd = spectral_density((Q * lam) @ Q.T, num_probes=30, rng=1)
        >>> lo, hi = sd.trace_estimate(np.log, level=0.99).confidence_interval
        >>> bool(lo <= np.sum(np.log(lam)) <= hi)
        True
        """
        samples = self._per_probe(f)
        m = samples.size
        std = float(np.std(samples, ddof=1) / math.sqrt(m)) if m > 1 else math.inf
        return TraceEstimate(float(samples.mean()), std, self.num_matvecs, m, level)

    def count_below(self, threshold, level=0.95):
        """How many eigenvalues are ``< threshold``, with an interval that covers the
        quadrature's bias as well as the probes' noise (see :class:`CountEstimate`).

        >>> import numpy as np
        >>> sd = spectral_density(np.diag([-2.0, -1.0, 1.0, 3.0]), num_probes=6, rng=0)
        >>> sd.count_below(0.0).count
        2
        """
        check_level("count_below", level)
        point, low, high = _count_brackets(self.nodes, self.weights, self.exact,
                                           float(threshold))
        return _count_estimate(self.n * point, self.n * low, self.n * high,
                               self.n, self.num_matvecs, level, "stochastic Lanczos "
                               "quadrature")

    def density(self, grid, sigma):
        """Gaussian-smoothed spectral density on ``grid``; integrates to ~1.

        A picture, not an estimate with an error bar: each node's weight is spread by
        the kernel, so features narrower than ``sigma`` or than the node spacing are
        lost.

        Args:
            grid: points at which to evaluate.
            sigma: standard deviation of the Gaussian kernel (> 0).
        """
        if not sigma > 0:
            raise ValueError(f"density: sigma must be > 0, got {sigma!r}")
        grid = np.asarray(grid, dtype=np.float64)
        z = (grid[..., None, None] - self.nodes) / sigma
        kern = np.exp(-0.5 * z * z) / (sigma * math.sqrt(2 * math.pi))
        return np.sum(kern * self.weights, axis=(-2, -1)) / self.nodes.shape[0]

    def __repr__(self):
        return (f"SpectralDensity(n={self.n}, num_probes={self.nodes.shape[0]}, "
                f"lanczos_steps={self.nodes.shape[1]}, num_matvecs={self.num_matvecs})")


def spectral_density(A, *, num_probes=10, lanczos_steps=30, rng=None):
    """Stochastic Lanczos quadrature of the spectrum of a symmetric operator.

    Args:
        A: symmetric operator, in any form accepted by ``aslinearoperator_like``.
        num_probes: number of Rademacher probes.
        lanczos_steps: Lanczos steps per probe (capped at ``n``); the quadrature is
            exact for polynomials of degree ``< 2 * lanczos_steps``.
        rng: seed or ``numpy.random.Generator``.

    Returns:
        :class:`SpectralDensity` with ``nodes``, ``weights``, ``trace(f)``,
        ``trace_estimate(f)``, ``count_below(t)`` and ``density(grid, sigma)``.

    Raises:
        ValueError: if ``A`` is not square or the counts are not positive ints.

    >>> import numpy as np
    >>> sd = spectral_density(np.diag(np.arange(1.0, 11.0)), num_probes=3, rng=0)
    >>> round(sd.trace(lambda x: x), 8)      # tr(A) = 55, exact for Rademacher
    55.0
    """
    op, n, rng = _slq_setup("spectral_density", A, num_probes, lanczos_steps, rng)
    steps = min(int(lanczos_steps), n)
    start = op.nmatvec
    rules = [_GaussRule(op, _rademacher(n, rng), steps, rng) for _ in range(num_probes)]
    return _density(rules, n, op.nmatvec - start)


def _slq_setup(caller, A, num_probes, lanczos_steps, rng):
    """The operator, its size and the generator, with errors naming ``caller``."""
    op = aslinearoperator_like(A, caller=caller, name="A", caller_takes_size=False)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    for name, val in (("num_probes", num_probes), ("lanczos_steps", lanczos_steps)):
        if not isinstance(val, numbers.Integral) or val < 1:
            raise ValueError(f"{caller}: {name} must be an int >= 1, got {val!r}")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return op, op.shape[0], rng


def _rademacher(n, rng):
    return rng.integers(0, 2, size=n) * 2.0 - 1.0


class _GaussRule:
    """The Gauss quadrature rule of one probe's spectral measure, from Lanczos with full
    reorthogonalisation; :meth:`extend` adds steps (the basis is kept for that)."""

    def __init__(self, op, v, steps, rng):
        n = op.shape[0]
        self.op, self.rng, self.m, self.exact = op, rng, 0, False
        self.V = np.zeros((n, steps + 1), order="F")
        self.T = np.zeros((steps, steps))
        self.V[:, 0] = v / np.linalg.norm(v)
        self.beta, self.anorm = 0.0, 0.0
        self.extend(steps)

    def extend(self, steps):
        """Run Lanczos up to ``steps`` steps in all (at most ``n``)."""
        steps = min(steps, self.V.shape[0])
        if self.exact or steps <= self.m:
            return
        if steps > self.T.shape[0]:
            V = np.zeros((self.V.shape[0], steps + 1), order="F")
            V[:, :self.m + 1] = self.V[:, :self.m + 1]
            T = np.zeros((steps, steps))
            T[:self.m, :self.m] = self.T[:self.m, :self.m]
            self.V, self.T = V, T
        if self.m:
            self.T[self.m - 1, self.m] = self.T[self.m, self.m - 1] = self.beta
        self.beta, size, breakdown, self.anorm = _extend(
            self.op, self.V, self.T, self.m, steps, self.rng, restart_on_breakdown=False,
            anorm=self.anorm)
        self.m = size
        self.exact = breakdown or size == self.V.shape[0]
        # T is tridiagonal: LAPACK's tridiagonal solver is also far cheaper than a dense
        # eigh for these sizes when BLAS threads compete for the cores.
        T = self.T[:size, :size]
        if size == 1:
            theta, first = np.diag(T).copy(), np.ones(1)
        else:
            theta, S = scipy.linalg.eigh_tridiagonal(np.diag(T), np.diag(T, 1))
            first = S[0]
        self.nodes, self.weights = theta, first ** 2


def _density(rules, n, num_matvecs):
    """A :class:`SpectralDensity` from rules of possibly different lengths (padded with
    their largest node at weight 0, so that ``f(node)`` is finite where ``f`` is)."""
    width = max(r.nodes.size for r in rules)
    nodes = np.empty((len(rules), width))
    weights = np.zeros((len(rules), width))
    for i, r in enumerate(rules):
        m = r.nodes.size
        nodes[i, :m], nodes[i, m:] = r.nodes, r.nodes[-1]
        weights[i, :m] = r.weights
    return SpectralDensity(nodes, weights, n, num_matvecs, [r.exact for r in rules])


def _count_brackets(nodes, weights, exact, threshold):
    """Per probe: the quadrature's share of eigenvalues below ``threshold`` and bounds on
    the probe's true share ``mu(-inf, threshold)``.

    Chebyshev-Markov-Stieltjes: with nodes ``x_1 < ... < x_m`` and ``x_j < t <= x_{j+1}``,
    ``sum_{i < j} w_i <= mu(-inf, t) <= sum_{i <= j+1} w_i``.  An exact rule (Lanczos
    breakdown) is the measure itself.  Nodes of weight 0 are padding (rules cut short,
    padded by this module or by others with any value) and are left out.
    """
    # Padding moved past every node, then each rule sorted: the bounds need node order.
    nodes = np.where(weights > 0, nodes, np.inf)
    order = np.argsort(nodes, axis=1, kind="stable")
    nodes = np.take_along_axis(nodes, order, axis=1)
    weights = np.take_along_axis(weights, order, axis=1)
    below = nodes < threshold
    point = np.sum(weights * below, axis=1)
    j = below.sum(axis=1)
    cum = np.concatenate([np.zeros((nodes.shape[0], 1)), np.cumsum(weights, axis=1)],
                         axis=1)
    rows = np.arange(nodes.shape[0])
    low = cum[rows, np.maximum(j - 1, 0)]
    high = np.where(j < nodes.shape[1], cum[rows, np.minimum(j + 1, nodes.shape[1])], 1.0)
    low = np.where(exact, point, np.minimum(low, point))
    high = np.where(exact, point, np.maximum(high, point))
    return point, low, high


@dataclass(frozen=True)
class CountEstimate:
    """An eigenvalue-count estimate with its reliability.

    Attributes:
        estimate: the count estimate (a float; ``count`` rounds it).
        std_error: standard error of the probes' mean (0 for a dense count).
        num_matvecs: matvecs spent.
        confidence_interval: ``(low, high)`` at ``level``.  For the quadrature it covers
            the bias too: each probe's true share lies between Chebyshev-Markov-Stieltjes
            bounds, so the interval is a one-sided Student-t bound below the mean of the
            lower bounds and one above the mean of the upper bounds, each at
            ``(1 - level) / 2`` (a normal approximation over the probes, checked for
            coverage in the tests).  For a dense count it holds the eigenvalues within
            rounding (``n eps ||A||`` plus the operator's asymmetry) of the threshold.
        level: confidence level of the interval.
        bias_bound: the largest distance from ``estimate`` to the mean of the probes'
            bounds: how far the quadrature alone can be off.
        method: ``"dense"`` (the matrix formed from ``n`` products, then
            ``eigvalsh``) or ``"stochastic Lanczos quadrature"``.
    """

    estimate: float
    std_error: float
    num_matvecs: int
    confidence_interval: tuple = (-math.inf, math.inf)
    level: float = 0.95
    bias_bound: float = math.inf
    method: str = "stochastic Lanczos quadrature"

    @property
    def count(self):
        return int(round(self.estimate))


def _count_estimate(point, low, high, n, num_matvecs, level, method):
    """A :class:`CountEstimate` from per-probe counts and their bounds."""
    p = point.size
    std = lambda x: float(np.std(x, ddof=1) / math.sqrt(p)) if p > 1 else math.inf  # noqa
    est = float(point.mean())
    # One-sided bounds, each with tail (1 - level) / 2: the lower end of a two-sided
    # interval around the mean of the lower bounds, the upper end of one around the mean
    # of the upper bounds. E[low] <= truth <= E[high], so each misses with at most that
    # probability.
    lo = t_interval(float(low.mean()), std(low), p, level)[0]
    hi = t_interval(float(high.mean()), std(high), p, level)[1]
    bias = max(est - float(low.mean()), float(high.mean()) - est)
    return CountEstimate(est, std(point), num_matvecs, (max(lo, 0.0), min(hi, float(n))),
                         level, bias, method)


def negative_eigenvalue_count(A, *, threshold=0.0, num_probes=20, lanczos_steps=40,
                              max_lanczos_steps=None, level=0.95,
                              dense_max=DENSE_COUNT_MAX, rng=None):
    """Estimate how many eigenvalues of a symmetric operator are below ``threshold``.

    Small operators are counted exactly: when ``n <= dense_max`` and ``n`` products cost
    no more than the quadrature may (``num_probes * max_lanczos_steps``), the matrix is
    formed from about ``n`` products (``matmat`` blocks of 256 columns) and its
    eigenvalues computed.

    Otherwise by stochastic Lanczos quadrature: each probe gives ``n * sum_{theta_k <
    threshold} tau_k``.  Where many eigenvalues lie near ``threshold`` this is biased
    (a whole node's weight falls on one side), so each probe's rule is extended by
    ``lanczos_steps`` at a time, up to ``max_lanczos_steps``, while its bias bound
    (Chebyshev-Markov-Stieltjes) is wider than the probes' standard error would be and
    shrinks by 30% or more per extension; the interval returned covers what bias is left.

    Args:
        A: symmetric operator.
        threshold: count eigenvalues ``< threshold``.
        num_probes: number of Rademacher probes.
        lanczos_steps: Lanczos steps per probe to start with (capped at ``n``).
        max_lanczos_steps: at most this many per probe (default ``4 * lanczos_steps``).
        level: confidence level of the interval, ``0 < level < 1``.
        dense_max: largest ``n`` counted exactly (0: never).
        rng: seed or ``numpy.random.Generator``.

    Returns:
        :class:`CountEstimate` (``estimate``, ``std_error``, ``confidence_interval``,
        ``bias_bound``, ``method``, ``num_matvecs``, ``count``).

    Raises:
        ValueError: as :func:`spectral_density`, or a bad ``max_lanczos_steps``,
            ``level`` or ``dense_max``.

    >>> import numpy as np
    >>> negative_eigenvalue_count(np.diag([-2.0, -1.0, 1.0, 3.0]), rng=0).count
    2
    >>> import scipy.sparse
    >>> lam = np.linspace(-1.0, 1.0, 3001)                    # 1500 below 0
    >>> est = negative_eigenvalue_count(scipy.sparse.diags(lam), num_probes=30, rng=0)
    >>> lo, hi = est.confidence_interval
    >>> est.method, bool(lo <= 1500 <= hi)
    ('stochastic Lanczos quadrature', True)
    """
    caller = "negative_eigenvalue_count"
    op, n, rng = _slq_setup(caller, A, num_probes, lanczos_steps, rng)
    most = 4 * int(lanczos_steps) if max_lanczos_steps is None else max_lanczos_steps
    if not isinstance(most, numbers.Integral) or most < lanczos_steps:
        raise ValueError(f"{caller}: max_lanczos_steps must be an int >= lanczos_steps "
                         f"= {lanczos_steps}, got {max_lanczos_steps!r}")
    if not isinstance(dense_max, numbers.Integral) or dense_max < 0:
        raise ValueError(f"{caller}: dense_max must be an int >= 0, got {dense_max!r}")
    check_level(caller, level)
    threshold = float(threshold)
    if n <= dense_max and n <= num_probes * min(most, n):
        return _dense_count(op, n, threshold, level)
    start = op.nmatvec
    rules = []
    for _ in range(num_probes):
        rule = _GaussRule(op, _rademacher(n, rng), min(int(lanczos_steps), n), rng)
        _refine(rule, n, threshold, num_probes, int(lanczos_steps), min(int(most), n))
        rules.append(rule)
    return _density(rules, n, op.nmatvec - start).count_below(threshold, level)


def _refine(rule, n, threshold, num_probes, chunk, most):
    """Extend one probe's rule while its bias bound is wider than the standard error of
    a mean of ``num_probes`` such counts, ``sqrt(2 c (1 - c / n) / num_probes)`` for ``c``
    eigenvalues below the threshold (Hutchinson's variance for a projector of rank c), and
    while extending pays: a bound that shrank by less than 30% over the last ``chunk``
    steps (a cluster at the threshold that no affordable rule resolves) stops it."""
    last = math.inf
    while rule.m < most and not rule.exact:
        point, low, high = _count_brackets(rule.nodes[None], rule.weights[None],
                                           np.zeros(1, bool), threshold)
        c = n * float(point[0])
        noise = math.sqrt(max(2.0 * c * (1.0 - c / n), 1.0) / num_probes)
        width = n * float(high[0] - low[0])
        if width <= noise or width > 0.7 * last:
            return
        last = width
        rule.extend(min(rule.m + chunk, most))


def _dense_count(op, n, threshold, level):
    """Count eigenvalues below ``threshold`` of the matrix formed from ``n`` products."""
    start = op.nmatvec
    H = np.empty((n, n))
    # Blocks of one width (the last one overlaps its neighbour): an operator that
    # compiles its batched product per shape (a traced Hessian) compiles once.
    width = min(n, 256)
    for s in sorted({*range(0, n - width, width), n - width}):
        block = np.zeros((n, width))
        block[np.arange(s, s + width), np.arange(width)] = 1.0
        H[:, s:s + width] = op.matmat(block)
    if not np.all(np.isfinite(H)):
        raise FloatingPointError("negative_eigenvalue_count: the operator produced NaN "
                                 "or inf")
    asym = 0.5 * float(np.linalg.norm(H - H.T, 2)) if n else 0.0
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    slack = asym + 4 * n * np.finfo(np.float64).eps * float(np.abs(lam).max(initial=0.0))
    count = float(np.sum(lam < threshold))
    interval = (float(np.sum(lam < threshold - slack)), float(np.sum(lam < threshold + slack)))
    return CountEstimate(count, 0.0, op.nmatvec - start, interval, level,
                         max(count - interval[0], interval[1] - count), "dense")


def condition_number_estimate(A, *, tol=1e-8, maxiter=None, rng=None, full_output=False,
                              max_matvecs=CONDITION_MATVECS, max_seconds=None,
                              callback=None, progress=False):
    """Estimate the 2-norm condition number ``max|lambda| / min|lambda|``, with bounds.

    Extreme eigenvalues come from :func:`eigsh` (``which="BE"``).  If they have the
    same sign the operator is definite and their ratio is the answer; otherwise the
    smallest ``|lambda|`` lies inside the spectrum and is found as the smallest
    eigenvalue of ``A^2`` (two matvecs per step, slower to converge).  The run stops at
    ``max_matvecs`` products or ``max_seconds``, whichever comes first, and then reports
    what it knows.

    Bounds: for a Ritz pair ``(theta, y)`` with residual ``r``, ``||A y|| =
    sqrt(theta^2 + r^2)`` lies between ``min|lambda|`` and ``max|lambda|``, so the ratio
    of the largest such norm to the smallest (over the extreme pairs and, for an
    indefinite operator, ``sqrt(mu)`` with ``mu`` the Ritz value of ``A^2``) is a lower
    bound that always holds.  The upper bound takes each extreme eigenvalue within its
    residual of its Ritz value: it holds unless the Krylov space missed an eigenvalue
    beyond the extremes found (the assumption behind any Lanczos result).  An interior
    ``min|lambda|`` whose square is within rounding of ``A^2``'s products (``n eps
    max|lambda|^2``) is not resolved: the operator is then singular to that resolution
    (``inf``, upper bound ``inf``); eigenvalues of ``A^2`` that close cannot be told
    apart, and a Ritz value there may stand for a smaller eigenvalue.

    Args:
        A: symmetric operator.
        tol: eigensolver tolerance (relative to ``||A||``).
        maxiter: eigensolver restarts (default: eigsh's).
        rng: seed or ``numpy.random.Generator``.
        full_output: return an ``OptimizeResult`` instead of a float, also when
            unresolved (no exception then).
        max_matvecs: budget of products (``A^2`` counts two); ``None`` for no limit.
        max_seconds: time budget (default none).
        callback: called after each convergence test with an ``OptimizeResult``
            (``stage``, ``nmatvec``, ``seconds``, ``lower_bound``); raising
            ``StopIteration`` stops the run as a budget does.
        progress: print a progress line to stderr (at most every half second).

    Returns:
        float (``inf`` for a singular operator: for an indefinite one, when
        ``min|lambda| <= tol * max|lambda|`` or below the ``A^2`` solve's residual, its
        resolution, which rounding keeps above about ``sqrt(eps) * max|lambda|``).
        With ``full_output=True`` an ``OptimizeResult`` with ``condition_number`` (the
        estimate from the current Ritz values; for an unresolved interior
        ``min|lambda|`` it equals ``lower_bound``), ``lower_bound`` (always holds),
        ``upper_bound`` (under the Krylov assumption above; ``inf`` if unknown),
        ``success`` (resolved to ``tol``), ``definite``, ``nmatvec``, ``seconds`` and
        ``message``.

    Raises:
        ValueError: if ``A`` is not square, or ``tol``, ``maxiter``, ``max_matvecs`` or
            ``max_seconds`` is negative.
        TypeError: if ``tol`` is not a number.
        EigshNoConvergence: without ``full_output``, when the budget ran out first;
            its ``result`` holds the bounds.

    >>> import numpy as np
    >>> round(condition_number_estimate(np.diag([1.0, 10.0, 100.0]), rng=0), 6)
    100.0
    >>> res = condition_number_estimate(np.diag([-4.0, 0.5, 1.0, 2.0]), rng=0,
    ...                                 full_output=True)
    >>> round(res.condition_number, 6), res.success
    (8.0, True)
    >>> lam = np.r_[-2.0, np.geomspace(1e-6, 1e-3, 40) * np.tile([1, -1], 20), 3.0]
    >>> res = condition_number_estimate(np.diag(lam), rng=0, max_matvecs=200,
    ...                                 full_output=True)
    >>> res.success, bool(res.lower_bound <= 3e6 <= res.upper_bound)
    (False, True)
    """
    caller = "condition_number_estimate"
    op = aslinearoperator_like(A, caller=caller, name="A", caller_takes_size=False)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    # Checked here, not in eigsh, so that the errors name this function.
    _check_number(caller, "tol", tol)
    if maxiter is not None:
        _check_maxiter(caller, maxiter)
    if max_matvecs is not None and (not isinstance(max_matvecs, numbers.Integral)
                                    or max_matvecs < 1):
        raise ValueError(f"{caller}: max_matvecs must be an int >= 1 or None, "
                         f"got {max_matvecs!r}")
    if max_seconds is not None:
        _check_number(caller, "max_seconds", max_seconds)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    watch = _Watch(op, max_matvecs, max_seconds, callback, progress, caller)
    res = _condition(op, tol, maxiter, rng, watch)
    if full_output or res.success:
        return res if full_output else res.condition_number
    raise EigshNoConvergence(f"{caller}: {res.message}", np.empty(0), None, result=res)


class _Watch:
    """Budget, time limit, callback and progress line of one condition number run."""

    def __init__(self, op, max_matvecs, max_seconds, callback, progress, caller):
        self.op, self.start = op, op.nmatvec
        self.max_matvecs, self.max_seconds = max_matvecs, max_seconds
        self.callback, self.progress, self.caller = callback, progress, caller
        self.t0 = self.shown = time.perf_counter()
        self.stage, self.lower = "extreme eigenvalues", 0.0
        self.floor = None    # stop once the smallest Ritz value is at or below it

    def spent(self):
        return self.op.nmatvec - self.start

    def seconds(self):
        return time.perf_counter() - self.t0

    def left(self, per_product=1):
        """Products of an operator costing ``per_product`` each that the budget allows."""
        if self.max_matvecs is None:
            return None
        return max(0, (self.max_matvecs - self.spent()) // per_product)

    def __call__(self, state):
        """eigsh's callback: report, then stop when the time is up."""
        info = OptimizeResult(stage=self.stage, nmatvec=self.spent(),
                              seconds=self.seconds(), lower_bound=self.lower)
        if self.progress and (time.perf_counter() - self.shown >= 0.5):
            self.shown = time.perf_counter()
            print(f"{self.caller}: {self.stage}: {info.nmatvec} matvecs, "
                  f"{info.seconds:.1f} s", file=sys.stderr, flush=True)
        if self.callback is not None:
            self.callback(info)
        if self.max_seconds is not None and info.seconds >= self.max_seconds:
            raise StopIteration
        if self.floor is not None and state.ritz_values[0] <= self.floor:
            raise StopIteration


def _condition(op, tol, maxiter, rng, watch):
    """The condition number run behind :func:`condition_number_estimate`."""
    n = op.shape[0]
    # The budget allows one product at least (max_matvecs >= 1).
    ends = _budgeted_eigsh(op, min(2, n), "BE", tol, maxiter, rng, watch, watch.left())
    theta, resid = ends.eigenvalues, ends.residual_norms
    norms = np.hypot(theta, resid)                 # ||A y||: within [min|l|, max|l|]
    big = float(np.abs(theta).max())
    big_low = float(norms.max())
    big_high = float(max(theta[-1] + resid[-1], resid[0] - theta[0]))
    watch.lower = big_low / float(norms.min()) if norms.min() > 0 else math.inf
    if big_low == 0.0:
        return _condition_result(watch, ends, math.inf, math.inf, math.inf, None,
                                 definite=None, success=ends.success)
    if theta[0] - resid[0] > 0 or theta[-1] + resid[-1] < 0:   # definite: min|l| is an end
        near = 0 if theta[0] - resid[0] > 0 else -1
        small_high, small_low = float(norms[near]), float(abs(theta[near]) - resid[near])
        return _condition_result(watch, ends, big / abs(float(theta[near])),
                                 big_low / small_high,
                                 big_high / small_low if small_low > 0 else math.inf,
                                 None if ends.success else "extremes unconverged",
                                 definite=True, success=ends.success)
    return _interior(op, tol, maxiter, rng, watch, ends, big, big_low, big_high, norms)


def _interior(op, tol, maxiter, rng, watch, ends, big, big_low, big_high, norms):
    """An indefinite (or undecided) operator: ``min|lambda|^2`` as the smallest eigenvalue
    of ``A^2``."""
    n = op.shape[0]
    watch.stage = "min|eigenvalue| (Lanczos on A^2)"
    square = aslinearoperator_like(lambda x: op.matvec(op.matvec(x)), n)
    # Eigenvalues of A^2 within rounding (about n eps ||A||^2: each product of A^2 rounds
    # at eps ||A||^2) are not resolved, neither from 0 nor from each other: a Ritz value
    # there may stand for a smaller eigenvalue that Lanczos cannot separate. Once the
    # smallest Ritz value (an upper bound on min lambda(A^2)) is there, the operator is
    # singular to this resolution and nothing more can be learned: stop.
    floor = n * _EPS * big * big
    watch.floor = floor
    # ||A^2|| = big^2, so a residual tol^2 * big^2 resolves |lambda| to ~tol * big.
    sq = _budgeted_eigsh(square, 1, "SA", tol * tol, maxiter, rng, watch, watch.left(2))
    watch.floor = None
    small_high = float(norms.min())
    small_low = 0.0
    success = False
    if sq is not None:
        mu, rho = float(sq.eigenvalues[0]), float(sq.residual_norms[0])
        small_high = min(small_high, math.sqrt(max(mu, 0.0)))
        small_low = math.sqrt(mu - rho) if mu - rho > floor else 0.0
        success = bool((sq.success or mu <= floor) and ends.success)
        if success and (small_low == 0.0 or small_high <= tol * big):
            return _condition_result(
                watch, ends, math.inf, big_low / small_high if small_high > 0 else math.inf,
                math.inf, f"singular to the resolution of the A^2 solve: min|lambda| <= "
                          f"{small_high:.3g}, not resolved from 0 (rounding of A^2 is about "
                          f"{math.sqrt(floor):.2g} in |lambda|)", definite=False, success=True)
    lower = big_low / small_high if small_high > 0 else math.inf
    upper = big_high / small_low if small_low > 0 else math.inf
    estimate = big / small_high if small_high > 0 else math.inf
    note = None if success else "min|lambda| is interior and unresolved"
    return _condition_result(watch, ends, estimate, lower, upper, note,
                             definite=False if ends.eigenvalues[0] < 0 < ends.eigenvalues[-1]
                             else None, success=success)


def _budgeted_eigsh(op, k, which, tol, maxiter, rng, watch, budget):
    """eigsh's full result within ``budget`` products, or None if none is allowed."""
    if budget is not None and budget < 1:
        return None
    return eigsh(op, k=k, which=which, tol=tol, maxiter=maxiter, rng=rng,
                 return_eigenvectors=False, max_matvecs=budget, callback=watch,
                 full_output=True)


def _condition_result(watch, ends, estimate, lower, upper, note, *, definite,
                      success=False):
    """The ``OptimizeResult`` of :func:`condition_number_estimate`."""
    # Residuals enter the bounds, not the estimate: keep it inside them.
    estimate = min(max(estimate, lower), upper)
    spent, seconds = watch.spent(), watch.seconds()
    if success:
        message = note or "converged"
    else:
        why = "budget" if watch.max_matvecs is not None and spent >= watch.max_matvecs \
            else "time limit" if watch.max_seconds is not None and \
            seconds >= watch.max_seconds else "iteration limit"
        message = (f"{note or 'unresolved'} after {spent} matvecs ({why}); "
                   f"{lower:.6g} <= condition number <= {upper:.6g}")
    return OptimizeResult(condition_number=estimate, lower_bound=lower, upper_bound=upper,
                          success=bool(success), definite=definite, nmatvec=spent,
                          seconds=seconds, message=message, extremes=ends.eigenvalues)
