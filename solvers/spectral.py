"""Spectral density by stochastic Lanczos quadrature, and what follows from it.

For a unit probe ``v``, ``v^T f(A) v = sum_k tau_k f(theta_k)`` exactly when ``f``
is a polynomial of degree ``< 2 m`` (Gauss quadrature from ``m`` Lanczos steps:
nodes are the Ritz values, weights the squared first components of the
eigenvectors of ``T``).  Averaging over random probes (Hutchinson) estimates
``tr f(A) / n`` (Ubaru, Chen and Saad, 2017).
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeResult

from .krylov import _check_maxiter, _check_number
from .lanczos import EigshNoConvergence, eigsh, lanczos
from .operators import aslinearoperator_like

__all__ = ["spectral_density", "SpectralDensity", "condition_number_estimate",
           "negative_eigenvalue_count", "CountEstimate"]


class SpectralDensity:
    """Quadrature rules of stochastic Lanczos quadrature, one per probe.

    Attributes:
        nodes: Ritz values, shape ``(num_probes, lanczos_steps)``; a rule cut short by
            a Lanczos breakdown (an operator with few distinct eigenvalues) is padded
            with its largest node at weight 0.
        weights: quadrature weights (each row sums to 1), same shape.
        n: size of the operator.
        num_matvecs: matvecs spent.
    """

    def __init__(self, nodes, weights, n, num_matvecs):
        self.nodes, self.weights = nodes, weights
        self.n, self.num_matvecs = n, num_matvecs

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

    def density(self, grid, sigma):
        """Gaussian-smoothed spectral density on ``grid``; integrates to ~1.

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
        :class:`SpectralDensity` with ``nodes``, ``weights``, ``trace(f)`` and
        ``density(grid, sigma)``.

    Raises:
        ValueError: if ``A`` is not square or the counts are not positive ints.

    >>> import numpy as np
    >>> sd = spectral_density(np.diag(np.arange(1.0, 11.0)), num_probes=3, rng=0)
    >>> round(sd.trace(lambda x: x), 8)      # tr(A) = 55, exact for Rademacher
    55.0
    """
    return _slq("spectral_density", A, num_probes, lanczos_steps, rng)


def _slq(caller, A, num_probes, lanczos_steps, rng):
    """:func:`spectral_density`, with errors naming ``caller``."""
    op = aslinearoperator_like(A, caller=caller, name="A", caller_takes_size=False)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    for name, val in (("num_probes", num_probes), ("lanczos_steps", lanczos_steps)):
        if not isinstance(val, numbers.Integral) or val < 1:
            raise ValueError(f"{caller}: {name} must be an int >= 1, got {val!r}")
    n = op.shape[0]
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    steps = min(int(lanczos_steps), n)
    nodes = np.zeros((num_probes, steps))
    weights = np.zeros((num_probes, steps))
    start = op.nmatvec
    for i in range(num_probes):
        v = rng.integers(0, 2, size=n) * 2.0 - 1.0
        res = lanczos(op, steps, v0=v, rng=rng)
        theta, S = np.linalg.eigh(res.tridiagonal())
        m = theta.size               # < steps after an early breakdown
        nodes[i, :m] = theta
        nodes[i, m:] = theta[-1]     # padding: a real Ritz value (weight 0), so f(node)
        weights[i, :m] = S[0, :] ** 2  # is finite where f is (0 * log(0) would be NaN)
    return SpectralDensity(nodes, weights, n, op.nmatvec - start)


@dataclass(frozen=True)
class CountEstimate:
    """An eigenvalue-count estimate: ``estimate`` (float), ``std_error``,
    ``num_matvecs``; ``count`` is the estimate rounded to an int."""

    estimate: float
    std_error: float
    num_matvecs: int

    @property
    def count(self):
        return int(round(self.estimate))


def negative_eigenvalue_count(A, *, threshold=0.0, num_probes=20, lanczos_steps=40,
                              rng=None):
    """Estimate how many eigenvalues of a symmetric operator are below ``threshold``.

    Integrates the SLQ quadrature rule against the step function: each probe gives
    ``n * sum_{theta_k < threshold} tau_k``.  Accurate when few Ritz values fall
    near ``threshold`` (a spectral gap there); the standard error is that of the
    probe average.

    Args:
        A: symmetric operator.
        threshold: count eigenvalues ``< threshold``.
        num_probes, lanczos_steps, rng: as for :func:`spectral_density`.

    Returns:
        :class:`CountEstimate` (``estimate``, ``std_error``, ``num_matvecs``,
        ``count``).

    Raises:
        ValueError: as :func:`spectral_density`.

    >>> import numpy as np
    >>> negative_eigenvalue_count(np.diag([-2.0, -1.0, 1.0, 3.0]), rng=0).count
    2
    """
    sd = _slq("negative_eigenvalue_count", A, num_probes, lanczos_steps, rng)
    est, err = sd.trace(lambda x: (x < threshold).astype(np.float64),
                        return_std_error=True)
    return CountEstimate(est, err, sd.num_matvecs)


def condition_number_estimate(A, *, tol=1e-8, maxiter=None, rng=None, full_output=False):
    """Estimate the 2-norm condition number ``max|lambda| / min|lambda|``.

    Extreme eigenvalues come from :func:`eigsh` (``which="BE"``).  If they have the
    same sign the operator is definite and their ratio is the answer; otherwise the
    smallest ``|lambda|`` lies inside the spectrum and is found as the smallest
    eigenvalue of ``A^2`` (two matvecs per step, slower to converge).

    Args:
        A: symmetric operator.
        tol: eigensolver tolerance (relative to ``||A||``).
        maxiter: eigensolver restarts.
        rng: seed or ``numpy.random.Generator``.
        full_output: return an ``OptimizeResult`` instead of a float, and do not
            raise when the ``A^2`` solve stops unconverged: report a lower bound.

    Returns:
        float; ``inf`` for a singular operator (for an indefinite one: when
        ``min|lambda| <= tol * max|lambda|``, the resolution of the ``A^2`` solve).
        With ``full_output=True`` an ``OptimizeResult`` with ``condition_number``
        (None if unresolved), ``lower_bound`` (guaranteed: ``max|lambda| /
        sqrt(theta)`` with ``theta`` the smallest Ritz value of ``A^2``, which is at
        least ``min lambda(A^2)``; equal to the estimate when resolved), ``success``,
        ``nmatvec`` and ``message``.

    Raises:
        ValueError: if ``A`` is not square, or ``tol`` or ``maxiter`` is negative.
        TypeError: if ``tol`` is not a number.
        EigshNoConvergence: if the extreme eigenvalues do not converge, or (without
            ``full_output``) the ``A^2`` solve does not.

    >>> import numpy as np
    >>> round(condition_number_estimate(np.diag([1.0, 10.0, 100.0]), rng=0), 6)
    100.0
    >>> res = condition_number_estimate(np.diag([-4.0, 0.5, 1.0, 2.0]), rng=0,
    ...                                 full_output=True)
    >>> round(res.condition_number, 6), res.success
    (8.0, True)
    """
    op = aslinearoperator_like(A, caller="condition_number_estimate", name="A",
                               caller_takes_size=False)
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"condition_number_estimate: A must be square, "
                         f"got shape {op.shape}")
    # Checked here, not in eigsh, so that the errors name this function.
    _check_number("condition_number_estimate", "tol", tol)
    if maxiter is not None:
        _check_maxiter("condition_number_estimate", maxiter)
    n = op.shape[0]
    start = op.nmatvec
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def result(kappa, bound=None, message="converged"):
        if not full_output:
            return kappa
        return OptimizeResult(condition_number=kappa,
                              lower_bound=kappa if bound is None else bound,
                              success=kappa is not None, nmatvec=op.nmatvec - start,
                              message=message)

    k = min(2, n)
    w = eigsh(op, k=k, which="BE", tol=tol, maxiter=maxiter, rng=rng,
              return_eigenvectors=False)
    lo, hi = float(w[0]), float(w[-1])
    big = max(abs(lo), abs(hi))
    if lo > 0 or hi < 0:
        return result(big / min(abs(lo), abs(hi)))
    if big == 0.0:
        return result(math.inf)
    # ||A^2|| = big^2, so a residual tol^2 * big^2 resolves |lambda| to ~tol * big.
    square = aslinearoperator_like(lambda x: op.matvec(op.matvec(x)), n)
    try:
        mu = float(eigsh(square, k=1, which="SA", tol=tol * tol, maxiter=maxiter,
                         rng=rng, return_eigenvectors=False)[0])
    except EigshNoConvergence as e:
        if not full_output:
            raise
        theta = float(e.ritz_values[0])
        bound = big / math.sqrt(theta) if theta > 0 else math.inf
        return result(None, bound, f"min|lambda| is interior and unresolved after "
                                   f"{op.nmatvec - start} matvecs; lower bound only")
    smallest = math.sqrt(max(mu, 0.0))
    if smallest <= tol * big:
        return result(math.inf)
    return result(big / smallest)
