"""Randomised trace and diagonal estimators that see only a matvec.

Hutchinson (1990), Hutch++ (Meyer, Musco, Musco and Woodruff, 2021) and the
diagonal estimator of Bekas, Kokiopoulou and Saad (2007).  Probes are applied as
one block through ``matmat`` when the operator has one.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .operators import aslinearoperator_like

__all__ = ["hutchinson", "hutchpp", "diagonal", "TraceEstimate", "DiagonalEstimate",
           "t_interval"]


def t_interval(estimate, std_error, num_samples, level):
    """The Student-t confidence interval ``estimate +- t std_error`` with
    ``num_samples - 1`` degrees of freedom (the whole real line below two samples).

    >>> [round(x, 4) for x in t_interval(10.0, 1.0, 31, 0.95)]
    [7.9577, 12.0423]
    """
    check_level("t_interval", level)
    std_error = np.asarray(std_error, dtype=np.float64)
    if not np.any(std_error):              # nothing random: an exact value
        return (estimate, estimate)
    if num_samples < 2:
        std_error = np.full(std_error.shape, math.inf)
        quantile = 1.0
    else:
        quantile = float(stats.t.ppf(0.5 + level / 2, num_samples - 1))
    half = quantile * std_error
    if half.ndim == 0:
        half = float(half)
    return (estimate - half, estimate + half)


def check_level(caller, level):
    """Raise ValueError unless ``0 < level < 1``."""
    if not (isinstance(level, numbers.Real) and 0.0 < level < 1.0):
        raise ValueError(f"{caller}: level must be a number with 0 < level < 1, "
                         f"got {level!r}")


@dataclass(frozen=True)
class TraceEstimate:
    """A trace estimate with its reliability.

    Attributes:
        trace: the estimate of ``tr(A)`` (unbiased).
        std_error: sample standard deviation of the Hutchinson samples divided by
            ``sqrt(num_samples)`` (for Hutch++ only the residual part is random).
        num_matvecs: matvecs spent.
        num_samples: the random samples averaged (Hutch++: the residual probes).
        level: confidence level of ``confidence_interval``.
        confidence_interval: ``(low, high)``, Student-t with ``num_samples - 1``
            degrees of freedom, widened by ``rounding``.  A normal approximation of the
            mean: it covers the trace at about ``level`` when there are a few dozen
            samples (the tests check the coverage over many seeds); with few samples, or
            samples dominated by a few large eigenvalues (Gaussian probes), it is a
            heuristic that can cover less often.
        rounding: a bound on the rounding of the sums (``n eps`` times the sum of the
            terms' magnitudes): what is left of the interval when nothing is random
            (a diagonal matrix with Rademacher probes, a sketch spanning everything).
    """

    trace: float
    std_error: float
    num_matvecs: int
    num_samples: int = None
    level: float = 0.95
    confidence_interval: tuple = None
    rounding: float = 0.0

    def __post_init__(self):
        if self.num_samples is None:
            object.__setattr__(self, "num_samples", self.num_matvecs)
        if self.confidence_interval is None:
            lo, hi = t_interval(self.trace, self.std_error, self.num_samples, self.level)
            object.__setattr__(self, "confidence_interval",
                               (lo - self.rounding, hi + self.rounding))


@dataclass(frozen=True)
class DiagonalEstimate:
    """A diagonal estimate: ``diagonal`` (n,), per-entry ``std_error`` (n,),
    ``num_matvecs``, and per-entry Student-t intervals ``low``, ``high`` (n,) at
    ``level`` (as :class:`TraceEstimate`'s, entry by entry)."""

    diagonal: np.ndarray
    std_error: np.ndarray
    num_matvecs: int
    level: float = 0.95
    low: np.ndarray = None
    high: np.ndarray = None

    def __post_init__(self):
        if self.low is None:
            low, high = t_interval(self.diagonal, self.std_error, self.num_matvecs,
                                   self.level)
            object.__setattr__(self, "low", np.broadcast_to(low, self.diagonal.shape))
            object.__setattr__(self, "high", np.broadcast_to(high, self.diagonal.shape))


def _probes(n, m, distribution, rng, caller):
    if distribution == "rademacher":
        # One random bit per sign, unpacked from random bytes: 8x faster than drawing
        # int64 integers, which dominated the estimators' cost on cheap operators.
        bits = np.unpackbits(np.frombuffer(rng.bytes((n * m + 7) // 8), np.uint8),
                             count=n * m)
        Z = np.empty((n, m))    # written in place: no float temporaries
        np.multiply(bits.reshape(n, m), 2.0, out=Z)
        Z -= 1.0
        return Z
    if distribution == "gaussian":
        return rng.standard_normal((n, m))
    raise ValueError(f"{caller}: distribution must be 'rademacher' or 'gaussian', "
                     f"got {distribution!r}")


def _setup(caller, A, num_matvecs, rng, minimum=1, level=0.95):
    op = aslinearoperator_like(A, caller=caller, name="A", caller_takes_size=False)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    if not isinstance(num_matvecs, numbers.Integral) or num_matvecs < minimum:
        raise ValueError(f"{caller}: num_matvecs must be an int >= {minimum}, "
                         f"got {num_matvecs!r}")
    check_level(caller, level)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return op, op.shape[0], int(num_matvecs), rng


def _apply(op, X):
    return np.asarray(op.matmat(X), dtype=np.float64)


def _rounding(n, absX, absAX):
    """A bound on the rounding of ``sum_j x_j^T (A x_j)`` over the columns: ``n eps`` times
    the sum of the terms' magnitudes (the products' own rounding included at that scale)."""
    return 2.0 * n * float(np.finfo(np.float64).eps) * float(np.einsum("ij,ij->", absX,
                                                                         absAX))


def _std_error(samples):
    m = samples.shape[-1]
    if m < 2:
        return np.full(samples.shape[:-1], np.inf) if samples.ndim > 1 else math.inf
    return np.std(samples, axis=-1, ddof=1) / math.sqrt(m)


def hutchinson(A, num_matvecs, *, distribution="rademacher", rng=None, level=0.95):
    """Hutchinson's estimator ``tr(A) ~ mean_i z_i^T A z_i``.

    For Rademacher probes the variance is ``2 (||A||_F^2 - sum_i A_ii^2) / m``, for
    Gaussian probes ``2 ||A||_F^2 / m``.

    Args:
        A: square operator (for a callable pass it through
            ``aslinearoperator_like(f, n)`` first).
        num_matvecs: number of probes ``m >= 1``.
        distribution: ``"rademacher"`` (default) or ``"gaussian"``.
        rng: seed or ``numpy.random.Generator``.
        level: confidence level of the interval, ``0 < level < 1``.

    Returns:
        :class:`TraceEstimate` (``trace``, ``std_error``, ``num_matvecs``,
        ``confidence_interval`` at ``level``).

    Raises:
        ValueError: if ``num_matvecs < 1``, the distribution is unknown, or ``A`` is
            not square.

    >>> import numpy as np
    >>> est = hutchinson(np.diag([1.0, 2.0, 3.0]), 10, rng=0)
    >>> float(est.trace), est.num_matvecs     # exact for diagonal A (Rademacher)
    (6.0, 10)
    """
    op, n, m, rng = _setup("hutchinson", A, num_matvecs, rng, level=level)
    Z = _probes(n, m, distribution, rng, "hutchinson")
    AZ = _apply(op, Z)
    samples = np.einsum("ij,ij->j", Z, AZ)
    return TraceEstimate(float(samples.mean()), float(_std_error(samples)), m, m, level,
                         rounding=_rounding(n, np.abs(Z), np.abs(AZ)) / m)


def hutchpp(A, num_matvecs, *, distribution="rademacher", rng=None, level=0.95):
    """Hutch++: exact trace on a sketched dominant range, Hutchinson on the rest.

    A third of the budget sketches ``Y = A S``; with ``Q = qr(Y)`` the trace
    ``tr(Q^T A Q)`` is computed exactly (another third) and the remaining probes,
    projected onto the complement of ``range(Q)``, estimate ``tr((I - QQ^T) A
    (I - QQ^T))``.  For matrices with decaying spectra the error falls as ``1/m``
    instead of ``1/sqrt(m)``.

    Args:
        A: square operator.
        num_matvecs: total budget ``m >= 3``.
        distribution: probe distribution, ``"rademacher"`` or ``"gaussian"``.
        rng: seed or ``numpy.random.Generator``.
        level: confidence level of the interval, ``0 < level < 1``.

    Returns:
        :class:`TraceEstimate`; ``std_error`` and ``confidence_interval`` are those of
        the Hutchinson part (given the sketch the estimate is unbiased, and only that
        part is random).

    Raises:
        ValueError: if ``num_matvecs < 3`` or ``A`` is not square.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U = rng.standard_normal((50, 3))
    >>> est = hutchpp(U @ U.T, 12, rng=1)      # rank 3 <= 12 // 3: exact
    >>> bool(np.isclose(est.trace, np.sum(U * U)))
    True
    """
    op, n, m, rng = _setup("hutchpp", A, num_matvecs, rng, minimum=3, level=level)
    s = min(m // 3, n)           # a sketch wider than n is wasted
    g = m - 2 * (m // 3)
    start = op.nmatvec
    S = _probes(n, s, distribution, rng, "hutchpp")
    Q, _ = np.linalg.qr(_apply(op, S))
    AQ = _apply(op, Q)
    exact = float(np.einsum("ij,ij->", Q, AQ))
    rounding = _rounding(n, np.abs(Q), np.abs(AQ))
    if Q.shape[1] >= n:                  # range(Q) is everything: nothing left
        return TraceEstimate(exact, 0.0, op.nmatvec - start, 0, level, rounding=rounding)
    G = _probes(n, g, distribution, rng, "hutchpp")
    G -= Q @ (Q.T @ G)
    AG = _apply(op, G)
    samples = np.einsum("ij,ij->j", G, AG)
    return TraceEstimate(exact + float(samples.mean()), float(_std_error(samples)),
                         op.nmatvec - start, g, level,
                         rounding=rounding + _rounding(n, np.abs(G), np.abs(AG)) / g)


def diagonal(A, num_matvecs, *, distribution="rademacher", rng=None, level=0.95):
    """Estimate ``diag(A)`` as ``sum_i v_i * (A v_i) / sum_i v_i * v_i``.

    The estimator of Bekas, Kokiopoulou and Saad.  With Rademacher probes the
    error of entry ``j`` has variance ``sum_{k != j} A_jk^2 / m``, so it is exact
    for diagonal ``A``.

    Args:
        A: square operator.
        num_matvecs: number of probes ``m >= 1``.
        distribution: ``"rademacher"`` (default) or ``"gaussian"``.
        rng: seed or ``numpy.random.Generator``.
        level: confidence level of the per-entry intervals, ``0 < level < 1``.

    Returns:
        :class:`DiagonalEstimate` (``diagonal``, ``std_error``, ``num_matvecs``,
        ``low``, ``high``).

    Raises:
        ValueError: if ``num_matvecs < 1`` or ``A`` is not square.

    >>> import numpy as np
    >>> diagonal(np.diag([1.0, 2.0]), 4, rng=0).diagonal.tolist()
    [1.0, 2.0]
    """
    op, n, m, rng = _setup("diagonal", A, num_matvecs, rng, level=level)
    V = _probes(n, m, distribution, rng, "diagonal")
    prod = V * _apply(op, V)
    est = prod.sum(axis=1) / (V * V).sum(axis=1)
    return DiagonalEstimate(est, _std_error(prod), m, level)
