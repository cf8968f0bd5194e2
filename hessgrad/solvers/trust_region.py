"""Trust-region Newton: one driver, and subproblem strategies that need only a matvec.

The driver (:func:`trust_region_loop`) owns the ratio test and the radius update; a
*subproblem strategy* approximately minimises the quadratic model
``m(p) = g^T p + 1/2 p^T H p`` subject to ``||p|| <= radius`` and returns the step,
its model value and whether it reached the boundary.  Two strategies:

* ``steihaug``  -- Steihaug-Toint truncated CG (:func:`hessgrad.solvers.steihaug`);
* :func:`gltr`  -- the Generalised Lanczos Trust-Region idea of Gould, Lucidi, Roma
  and Toint (1999): Lanczos builds ``Q^T H Q = T`` from the gradient, the subproblem
  restricted to the Krylov space is solved *exactly* on the small tridiagonal ``T``
  by the Moré-Sorensen iteration (:func:`tridiagonal_trs`), and the step is mapped
  back with ``Q``.  Unlike truncated CG it does not stop at the first direction of
  negative curvature, so it finds better boundary steps on indefinite problems.

:func:`negative_curvature` probes a Hessian with a few Lanczos steps from a random
vector; the drivers use it to leave saddle points, where the gradient (and so every
gradient-seeded Krylov space) vanishes.
"""

import math

import numpy as np
from scipy.linalg import eigh_tridiagonal
from scipy.linalg.lapack import dpttrf, dpttrs
from scipy.optimize import OptimizeResult

from .krylov import _check_number, _check_params, _setup, steihaug
from .operators import aslinearoperator_like

__all__ = ["gltr", "tridiagonal_trs", "negative_curvature", "trust_region_loop",
           "SUBPROBLEMS"]

_EPS = float(np.finfo(np.float64).eps)


# ------------------------------------------------------------- tridiagonal subproblem
def _shifted_solve(alpha, beta, lam, rhs):
    """Solve ``(T + lam I) y = rhs``; returns ``(y, factor)``, or ``(None, None)`` when
    ``T + lam I`` is not positive definite (LAPACK's tridiagonal LDL^T, O(k))."""
    if alpha.size == 1:
        d = alpha[0] + lam
        return (rhs / d, (d, None)) if d > 0 else (None, None)
    d, e, info = dpttrf(alpha + lam, beta)
    if info != 0:
        return None, None
    y, info = dpttrs(d, e, rhs)
    return y, (d, e)


def _refactor_solve(factor, rhs):
    d, e = factor
    if e is None:
        return rhs / d
    return dpttrs(d, e, rhs)[0]


def _tridiag_matvec(alpha, beta, y):
    out = alpha * y
    if beta.size:
        out[:-1] += beta * y[1:]
        out[1:] += beta * y[:-1]
    return out


def tridiagonal_trs(alpha, beta, gnorm, radius, lam0=0.0, *, rtol=1e-10):
    """Exactly minimise ``gnorm * y[0] + 1/2 y^T T y`` subject to ``||y|| <= radius``.

    ``T`` is symmetric tridiagonal (diagonal ``alpha``, off-diagonal ``beta``), as
    produced by Lanczos started from the gradient, whose coordinates are then
    ``||g|| e1``.  Moré and Sorensen's characterisation: ``y`` is optimal iff
    ``(T + lam I) y = -gnorm e1`` with ``T + lam I`` positive semidefinite,
    ``lam >= 0`` and ``lam (radius - ||y||) = 0``.  If ``T`` is positive definite and
    its Newton step fits, ``lam = 0``; otherwise Newton's method on the secular
    equation ``1/||y(lam)|| = 1/radius`` (concave, so iterates approach the root
    monotonically from the left), safeguarded by the bracket
    ``max(0, -lambda_min(T)) <= lam <= gnorm / radius - lambda_min(T)``, with one
    LDL^T factorisation of ``T + lam I`` per step.  In the hard case (the gradient
    is orthogonal to the eigenvectors of ``lambda_min``, so ``||y(lam)||`` stays
    below ``radius`` as ``lam -> -lambda_min``) the step is completed to the
    boundary along the eigenvector of ``lambda_min``.

    Args:
        alpha: diagonal of ``T``, shape ``(k,)``.
        beta: off-diagonal of ``T``, shape ``(k - 1,)``.
        gnorm: norm of the gradient (>= 0).
        radius: trust-region radius (> 0).
        lam0: starting multiplier (the previous solution, when ``T`` grows by one
            Lanczos step); clipped into the bracket.
        rtol: relative accuracy of ``||y|| = radius`` on the boundary.

    Returns:
        ``(y, lam, hits_boundary)``.

    >>> import numpy as np
    >>> y, lam, hits = tridiagonal_trs(np.array([2.0, 2.0]), np.array([0.0]), 2.0, 10.0)
    >>> np.round(y, 12) + 0.0, lam, hits        # interior Newton step
    (array([-1.,  0.]), 0.0, False)
    >>> y, lam, hits = tridiagonal_trs(np.array([-1.0]), np.array([]), 1.0, 2.0)
    >>> np.round(y, 9), round(lam, 9), hits     # negative curvature: to the boundary
    (array([-2.]), 1.5, True)
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    k = alpha.size
    rhs = np.zeros(k)
    rhs[0] = -gnorm
    if gnorm == 0.0 and k == 0:
        return rhs, 0.0, False

    y, _ = _shifted_solve(alpha, beta, 0.0, rhs)
    if y is not None and np.linalg.norm(y) <= radius:
        return y, 0.0, False                      # T is positive definite: Newton step

    if k == 1:
        lmin, z = float(alpha[0]), np.ones(1)
    else:
        w, v = eigh_tridiagonal(alpha, beta, select="i", select_range=(0, 0))
        lmin, z = float(w[0]), v[:, 0]
    lo = max(0.0, -lmin)
    hi = max(lo, gnorm / radius - lmin)
    if hi <= lo:
        hi = lo + gnorm / radius + _EPS * max(1.0, abs(lmin))

    # Hard case: the gradient has (almost) no component along the eigenvector of
    # lambda_min, and the step from the pseudo-inverse fits inside the region.
    if lo > 0.0 and abs(gnorm * z[0]) <= math.sqrt(_EPS) * max(gnorm, _EPS):
        theta, V = (np.array([lmin]), np.ones((1, 1))) if k == 1 else \
            eigh_tridiagonal(alpha, beta)
        c = V.T @ rhs
        gap = theta - lmin
        keep = gap > math.sqrt(_EPS) * max(1.0, float(np.max(np.abs(theta))))
        y = V[:, keep] @ (c[keep] / gap[keep])
        ny = float(np.linalg.norm(y))
        if ny <= radius:
            # ||y + tau z|| = radius with y orthogonal to z: both signs give the same
            # model value; take the one with g^T p <= 0 for determinism.
            tau = math.sqrt(max(radius * radius - ny * ny, 0.0))
            if gnorm * z[0] > 0:
                tau = -tau
            return y + tau * z, lo, True

    lam = lam0 if lo < lam0 < hi else lo + 0.5 * (hi - lo) if lo > 0.0 else lo + \
        min(hi - lo, gnorm / radius) * 1e-3
    y = None
    for _ in range(100):
        y_lam, factor = _shifted_solve(alpha, beta, lam, rhs)
        if y_lam is None:                          # lam at or below -lambda_min
            lo = max(lo, lam)
            lam = 0.5 * (lo + hi)
            continue
        y = y_lam
        ny = float(np.linalg.norm(y))
        if abs(ny - radius) <= rtol * radius:
            break
        if ny > radius:
            lo = lam
        else:
            hi = lam
        if hi - lo <= 4 * _EPS * max(1.0, hi):
            break
        # Newton on phi(lam) = 1/||y|| - 1/radius: phi' = (y^T (T+lam)^-1 y) / ||y||^3.
        ww = float(np.dot(y, _refactor_solve(factor, y)))
        step = (ny * ny / ww) * (ny - radius) / radius
        lam_new = lam + step
        if not lo < lam_new < hi:
            lam_new = 0.5 * (lo + hi)
        lam = lam_new
    if y is None:                                  # bracket collapsed onto -lambda_min
        y, _ = _shifted_solve(alpha, beta, hi, rhs)
        lam = hi
    ny = float(np.linalg.norm(y))
    if ny > radius:                                # guard against rounding
        y = y * (radius / ny)
    return y, lam, True


# ----------------------------------------------------------------------------- Lanczos
class _Lanczos:
    """Lanczos with full reorthogonalisation, one step at a time (rows of ``Q`` are the
    basis vectors, so ``Q[:j] @ w`` streams over contiguous memory)."""

    def __init__(self, op, q0):
        n = q0.size
        self.op = op
        self.Q = np.empty((min(n, 16), n))
        self.Q[0] = q0
        self.alpha, self.beta = [], []
        self.k = 0                # number of completed steps
        self.beta_next = 0.0
        self.anorm = 0.0

    def step(self):
        """Add one column to ``T``; returns ``beta_{k+1}`` (the next coupling)."""
        j = self.k
        q = self.Q[j]
        w = np.array(self.op.matvec(q), dtype=np.float64)
        self.anorm = max(self.anorm, float(np.linalg.norm(w)))
        a = float(np.dot(q, w))
        w -= a * q
        if j > 0:
            w -= self.beta[-1] * self.Q[j - 1]
        B = self.Q[:j + 1]
        for _ in range(2):                         # "twice is enough" (Kahan-Parlett)
            w -= B.T @ (B @ w)
        b = float(np.linalg.norm(w))
        self.alpha.append(a)
        self.k = j + 1
        self.beta_next = b
        self._w = w
        if not math.isfinite(b) or not math.isfinite(a):
            raise FloatingPointError("Hessian-vector product returned NaN or inf")
        return b

    def invariant(self):
        n = self.Q.shape[1]
        return self.beta_next <= max(n, 100) * _EPS * max(self.anorm, _EPS) or \
            self.k >= n

    def advance(self):
        """Append ``q_{k+1} = w / beta_{k+1}`` to the basis."""
        if self.k >= self.Q.shape[0]:
            grown = np.empty((min(2 * self.Q.shape[0], self.Q.shape[1]),
                              self.Q.shape[1]))
            grown[:self.k] = self.Q[:self.k]
            self.Q = grown
        self.beta.append(self.beta_next)
        self.Q[self.k] = self._w / self.beta_next

    def T(self):
        return np.array(self.alpha), np.array(self.beta)


def gltr(A, g, radius, *, rtol=None, maxiter=None):
    """Trust-region subproblem by Lanczos + exact solve on the tridiagonal (GLTR).

    Minimises ``m(p) = g^T p + 1/2 p^T A p`` subject to ``||p|| <= radius`` over the
    growing Krylov space ``span{g, A g, A^2 g, ...}``: after each Lanczos step the
    subproblem in the space is solved exactly by :func:`tridiagonal_trs` and the
    iteration stops once the residual of the full optimality condition,
    ``||(A + lam I) p + g|| = beta_{k+1} |y_k|``, is at most ``rtol * ||g||``.
    ``A`` may be indefinite: the step then lies on the boundary and follows the
    negative curvature found in the Krylov space.

    Args:
        A: symmetric operator (any form accepted by ``aslinearoperator_like``).
        g: gradient, shape ``(n,)``.
        radius: trust-region radius > 0.
        rtol: relative residual tolerance; default ``min(0.5, sqrt(||g||))`` (the
            forcing sequence of inexact Newton methods, as :func:`hessgrad.solvers.steihaug`).
        maxiter: maximum Lanczos steps (default ``n``).

    Returns:
        ``OptimizeResult`` with ``p`` (also ``x``), ``lam`` (the multiplier),
        ``hits_boundary``, ``model_value``, ``residual_norm``, ``nit``,
        ``nmatvec``, ``success`` and ``message``.  ``success`` is False only when
        ``maxiter=0`` left a nonzero gradient without a step.

    Raises:
        ValueError: on shape mismatches, NaN/inf in ``g``, ``radius <= 0``, or a
            negative ``rtol`` or ``maxiter``.
        TypeError: if ``g`` is complex, or ``radius`` or ``rtol`` is not a number.

    >>> import numpy as np
    >>> res = gltr(np.diag([2.0, 4.0]), np.array([-2.0, -4.0]), radius=10.0, rtol=1e-12)
    >>> np.round(res.p, 12).tolist(), res.hits_boundary
    ([1.0, 1.0], False)
    >>> res = gltr(np.diag([-1.0, 1.0]), np.array([0.1, 1.0]), radius=3.0, rtol=1e-12)
    >>> res.hits_boundary, round(float(np.linalg.norm(res.p)), 12), bool(res.p[0] < -2.5)
    (True, 3.0, True)
    """
    # The same checks as steihaug: complex g, bad radius, rtol or maxiter are errors.
    op, g, _, _ = _setup("gltr", A, g, bname="g")
    g = g.astype(np.float64, copy=False)          # the Lanczos basis is float64
    n = g.size
    _check_number("gltr", "radius", radius, positive=True)
    maxiter = _check_params("gltr", rtol, None, n if maxiter is None else maxiter)
    start = op.nmatvec
    gnorm = float(np.linalg.norm(g))
    if gnorm == 0.0 or maxiter == 0:
        # As steihaug: with g != 0, maxiter=0 stops before any step, which is no solution.
        zero = gnorm == 0.0
        message = ("zero gradient: zero step" if zero else
                   "maximum number of Lanczos steps reached")
        return OptimizeResult(p=np.zeros(n), x=np.zeros(n), lam=0.0,
                              hits_boundary=False, model_value=0.0,
                              residual_norm=gnorm, nit=0, nmatvec=0, success=zero,
                              message=message)
    if rtol is None:
        rtol = min(0.5, math.sqrt(gnorm))
    lz = _Lanczos(op, g / gnorm)
    lam = 0.0
    while True:
        b = lz.step()
        alpha, beta = lz.T()
        y, lam, hits = tridiagonal_trs(alpha, beta, gnorm, radius, lam)
        resid = b * abs(y[-1])
        if resid <= rtol * gnorm:
            message = "converged: ||(A + lam I) p + g|| <= rtol ||g||"
            break
        if lz.invariant():
            message = "invariant Krylov subspace: exact in the subspace"
            break
        if lz.k >= maxiter:
            message = "maximum number of Lanczos steps reached"
            break
        lz.advance()
    k = lz.k
    p = lz.Q[:k].T @ y
    mval = gnorm * y[0] + 0.5 * float(np.dot(y, _tridiag_matvec(alpha, beta, y)))
    return OptimizeResult(p=p, x=p, lam=lam, hits_boundary=hits, model_value=mval,
                          residual_norm=resid, nit=k, nmatvec=op.nmatvec - start,
                          success=True, message=message)


def negative_curvature(A, n, rng, *, steps=20, tol=None):
    """Look for a direction of negative curvature by a short Lanczos run.

    Ritz values lie inside the spectrum, so a Ritz value below ``-tol`` certifies
    negative curvature (the converse does not hold: a missed direction is possible
    when it is badly represented in ``steps`` Lanczos steps from a random vector).

    Args:
        A: symmetric operator of size ``n``.
        n: the size.
        rng: ``numpy.random.Generator`` for the start vector.
        steps: Lanczos steps (at most ``n``).
        tol: threshold; default ``sqrt(eps) * max(1, |Ritz values|)``.

    Returns:
        ``(theta, z)`` with ``theta < 0`` the smallest Ritz value and ``z`` its unit
        Ritz vector (``z^T A z = theta``), or None.

    >>> import numpy as np
    >>> theta, z = negative_curvature(np.diag([1.0, -2.0, 3.0]), 3,
    ...                               np.random.default_rng(0))
    >>> round(theta, 12), np.round(np.abs(z), 12).tolist()
    (-2.0, [0.0, 1.0, 0.0])
    >>> negative_curvature(np.eye(3), 3, np.random.default_rng(0)) is None
    True
    """
    op = aslinearoperator_like(A, n, caller="negative_curvature", name="A")
    v = rng.standard_normal(n)
    lz = _Lanczos(op, v / np.linalg.norm(v))
    for _ in range(max(1, min(steps, n))):
        lz.step()
        if lz.invariant() or lz.k >= min(steps, n):
            break
        lz.advance()
    alpha, beta = lz.T()
    theta, S = eigh_tridiagonal(alpha, beta) if alpha.size > 1 else \
        (alpha.copy(), np.ones((1, 1)))
    if tol is None:
        tol = math.sqrt(_EPS) * max(1.0, float(np.max(np.abs(theta))))
    if theta[0] >= -tol:
        return None
    z = lz.Q[:lz.k].T @ S[:, 0]
    return float(theta[0]), z / np.linalg.norm(z)


# ------------------------------------------------------------------------------ driver
def _steihaug_step(op, g, radius):
    # CG in floating point can need more than n steps on ill-conditioned Hessians (lost
    # orthogonality); stopping at n leaves a poor step that costs outer iterations.
    res = steihaug(op, g, radius, maxiter=10 * g.size)
    return res.p, res.model_value, res.hits_boundary


def _gltr_step(op, g, radius):
    res = gltr(op, g, radius)
    return res.p, res.model_value, res.hits_boundary


SUBPROBLEMS = {"trust-ncg": _steihaug_step, "trust-lanczos": _gltr_step}


def trust_region_loop(problem, x, subproblem, *, gtol, maxiter, initial_trust_radius,
                      max_trust_radius, eta, escape_saddles=True, rng=None):
    """The trust-region iteration shared by every subproblem strategy.

    ``problem`` supplies ``fun(x)``, ``grad(x)``, ``hess_op(x)`` (an operator) and
    ``report(x, f) -> bool`` (callback; True stops).  ``subproblem(op, g, radius)``
    returns ``(p, model_value, hits_boundary)``.  Steps with
    ``rho = (f(x) - f(x + p)) / -m(p) > eta`` are accepted; the radius shrinks to
    ``||p|| / 4`` when ``rho < 1/4`` and doubles (up to ``max_trust_radius``) when
    ``rho > 3/4`` on the boundary (Nocedal and Wright, Algorithm 4.1).

    Returns ``(x, f, g, nit, status)`` with SciPy's status codes: 0 converged,
    1 maxiter, 2 no further progress possible (radius collapsed), 3 NaN,
    99 callback raised StopIteration.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    radius = float(initial_trust_radius)
    f = problem.fun(x)
    g = problem.grad(x)
    nit = 0
    curvature = None      # cached (theta, z) from a saddle probe at the current x
    while True:
        gnorm = float(np.linalg.norm(g))
        if not (math.isfinite(f) and math.isfinite(gnorm)):
            return x, f, g, nit, 3
        if gnorm <= gtol:
            if not escape_saddles:
                return x, f, g, nit, 0
            if curvature is None:
                curvature = negative_curvature(problem.hess_op(x), x.size, rng) or False
            if curvature is False:
                return x, f, g, nit, 0
        if nit >= maxiter:
            return x, f, g, nit, 1
        if gnorm <= gtol:
            # A saddle point: step to the boundary along the negative curvature.
            theta, z = curvature
            p = radius * z if np.dot(g, z) <= 0 else -radius * z
            mval = float(np.dot(g, p)) + 0.5 * theta * radius * radius
            hits = True
        else:
            p, mval, hits = subproblem(problem.hess_op(x), g, radius)
        x_new = x + p
        f_new = problem.fun(x_new) if mval < 0 else math.nan
        pnorm = float(np.linalg.norm(p))
        if mval < 0 and math.isfinite(f_new):
            # Near a minimiser both reductions sink into the rounding of f; shifting
            # them by a few ulps of f keeps the ratio meaningful (Conn, Gould and
            # Toint, Trust-Region Methods, sec. 17.4.2) instead of collapsing the
            # radius on noise.
            delta = 10.0 * _EPS * max(1.0, abs(f))
            rho = (f - f_new + delta) / (-mval + delta)
        else:
            rho = -math.inf
        if rho < 0.25:
            radius = 0.25 * min(radius, pnorm) if pnorm > 0 else 0.25 * radius
        elif rho > 0.75 and hits:
            radius = min(2.0 * radius, max_trust_radius)
        if rho > eta:
            x, f, g = x_new, f_new, problem.grad(x_new)
            curvature = None
        nit += 1
        if problem.report(x, f):
            return x, f, g, nit, 99
        if radius <= _EPS * max(1.0, float(np.linalg.norm(x))):
            return x, f, g, nit, 2
