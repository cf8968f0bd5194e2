"""Krylov linear solvers that see only a matvec: CG, Steihaug-Toint CG and MINRES.

Signatures, stopping rules and ``(x, info)`` returns follow
``scipy.sparse.linalg``; ``full_output=True`` returns an ``OptimizeResult`` with
iteration and matvec counts, a status code and (for CG) negative-curvature
information, which Newton-CG and trust-region methods need.
"""

import math

import numpy as np
from scipy.optimize import OptimizeResult

from . import _kernels
from .operators import aslinearoperator_like

__all__ = ["cg", "steihaug", "minres"]

# Status codes shared by the full results.
CONVERGED = 0
MAXITER = 1
NEGATIVE_CURVATURE = 2
BREAKDOWN = 3

_CG_MESSAGES = {
    CONVERGED: "converged: ||r|| <= max(rtol * ||b||, atol)",
    MAXITER: "maximum number of iterations reached",
    NEGATIVE_CURVATURE: "negative (or zero) curvature p^T A p <= 0 detected",
    BREAKDOWN: "breakdown: preconditioner not positive definite or non-finite values",
}


# --------------------------------------------------------------------------- checks
def _as_vector(caller, name, v, shape_of_A=None):
    v = np.asarray(v)
    if v.ndim == 2 and v.shape[1] == 1:     # SciPy accepts column vectors
        v = v[:, 0]
    if v.ndim != 1:
        if shape_of_A is None:
            raise ValueError(f"{caller}: {name} must be 1-D, got shape {v.shape}")
        raise ValueError(f"{caller}: {name} has shape {v.shape} but A has shape "
                         f"{shape_of_A}")
    if np.iscomplexobj(v):
        raise TypeError(f"{caller}: {name} is complex; only real systems are supported")
    return v


def _setup(caller, A, b, x0=None, bname="b"):
    """Normalise (A, b, x0) once; returns (op, b, x or None, dtype)."""
    b = _as_vector(caller, bname, b)
    n = b.shape[0]
    op = aslinearoperator_like(A, n, caller=caller, name="A")
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    if op.shape[1] != n:
        raise ValueError(f"{caller}: {bname} has shape {b.shape} but A has shape "
                         f"{op.shape}")
    dtype = np.result_type(op.dtype, b.dtype)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.dtype(np.float64)
    _check_finite(caller, bname, b)
    b = np.ascontiguousarray(b, dtype=dtype)
    x = None
    if x0 is not None:
        x0 = _as_vector(caller, "x0", x0, op.shape)
        if x0.shape != (n,):
            raise ValueError(f"{caller}: x0 has shape {x0.shape} but A has shape "
                             f"{op.shape}")
        x = np.array(x0, dtype=dtype, copy=True)
    return op, b, x, dtype


def _check_finite(caller, name, v):
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{caller}: {name} contains NaN or inf")


def _check_number(caller, name, val, *, positive=False):
    """Check that ``val`` is a finite number >= 0 (> 0 if ``positive``); returns it."""
    try:
        ok = (val > 0 if positive else val >= 0) and math.isfinite(val)
    except TypeError:
        # None, a string or a complex number: name the argument rather than let a bare
        # "'>=' not supported" escape.
        raise TypeError(f"{caller}: {name} must be a real number, got {val!r}") from None
    if not ok:
        raise ValueError(f"{caller}: {name} must be a finite number "
                         f"{'> 0' if positive else '>= 0'}, got {val!r}")
    return val


def _check_maxiter(caller, maxiter):
    """Check that ``maxiter`` is an int >= 0 (an integral float is accepted); returns it."""
    try:
        ok = int(maxiter) == maxiter and maxiter >= 0
    except (TypeError, ValueError, OverflowError):    # None, 'a', nan, inf
        ok = False
    if not ok:
        raise ValueError(f"{caller}: maxiter must be an int >= 0, got {maxiter!r}")
    return int(maxiter)


def _check_params(caller, rtol=None, atol=None, maxiter=None, n=0):
    for name, val in (("rtol", rtol), ("atol", atol)):
        if val is not None:
            _check_number(caller, name, val)
    if maxiter is None:
        return 10 * n
    return _check_maxiter(caller, maxiter)


def _preconditioner(caller, M, n):
    if M is None:
        return None
    prec = aslinearoperator_like(M, n, caller=caller, name="M")
    if prec.shape != (n, n):
        raise ValueError(f"{caller}: M has shape {prec.shape} but A has shape {(n, n)}")
    return prec


# ------------------------------------------------------------------------------ CG
def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       full_output=False):
    """Solve ``A x = b`` for symmetric positive definite ``A`` by (preconditioned) CG.

    Same signature and stopping rule as ``scipy.sparse.linalg.cg``: iterate until
    ``||b - A x|| <= max(rtol * ||b||, atol)`` (recursively updated residual).  It
    never divides by a non-positive curvature ``p^T A p``: it stops and reports the
    direction ``p`` instead, so it is safe on indefinite operators.

    Args:
        A: operator (ndarray, sparse matrix, LinearOperator, object with ``matvec``
            and ``shape``, or callable matvec); symmetric positive definite.
        b: right-hand side, shape ``(n,)``.
        x0: starting guess (default zeros; a nonzero ``x0`` costs one matvec).
        rtol, atol: relative and absolute tolerances on the residual norm.
        maxiter: maximum number of iterations (default ``10 * n``).
        M: preconditioner approximating ``A^{-1}`` (symmetric positive definite),
            given in any form accepted for ``A``.
        callback: called as ``callback(xk)`` after every iteration.
        full_output: if True return an ``OptimizeResult`` instead of ``(x, info)``.

    Returns:
        ``(x, info)`` with ``info == 0`` on convergence, ``info > 0`` the number of
        iterations when not converged, ``info == -1`` when negative curvature
        stopped the iteration and ``info == -2`` on breakdown (non-finite values or
        a preconditioner that is not positive definite).  With ``full_output=True``
        an ``OptimizeResult`` with fields ``x, nit, nmatvec, success, status,
        message, negative_curvature, d`` (the direction with ``d^T A d <= 0``, or
        None) and ``residual_norm``.  Status codes: 0 converged, 1 maxiter,
        2 negative curvature, 3 breakdown.

    Raises:
        ValueError: on shape mismatches, NaN/inf in ``b``, or bad tolerances.
        TypeError: if ``A`` cannot be used as an operator or is complex, or a
            tolerance is not a number.

    >>> import numpy as np
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> x, info = cg(A, np.array([1.0, 2.0]))
    >>> info, np.allclose(A @ x, [1.0, 2.0])
    (0, True)
    >>> res = cg(np.diag([1.0, -1.0]), np.ones(2), full_output=True)
    >>> res.status, res.negative_curvature
    (2, True)
    """
    op, b, x, dtype = _setup("cg", A, b, x0)
    n = b.shape[0]
    maxiter = _check_params("cg", rtol, atol, maxiter, n)
    prec = _preconditioner("cg", M, n)
    start = op.nmatvec

    bnorm = float(np.linalg.norm(b))
    tol = max(rtol * bnorm, atol)
    if bnorm == 0.0:
        x = None  # A x = 0 has the solution x = 0, whatever x0 (as SciPy)
    if x is None:
        x = np.zeros(n, dtype=dtype)
        r = b.copy()
    elif x.any():
        r = np.ascontiguousarray(b - op.matvec(x), dtype=dtype)
    else:
        r = b.copy()
    rr = np.dot(r, r)
    rnorm = math.sqrt(float(rr))

    # The arithmetic mirrors scipy.sparse.linalg.cg operation for operation (same
    # dots, same elementwise rounding), so both follow the same trajectory.
    status = MAXITER
    d = None
    nit = 0
    p = None
    rz = float(rr)  # r.z: without a preconditioner z = r, and r.r is already computed
    for it in range(maxiter):
        if rnorm <= tol:
            status = CONVERGED
            break
        if prec is not None:
            z = np.ascontiguousarray(prec.matvec(r), dtype=dtype)
            rz_old, rz = rz, float(np.dot(r, z))
            if not rz > 0:
                status = BREAKDOWN
                break
            if p is not None:
                _kernels.xpby(z, dtype.type(rz / rz_old), p)
        if p is None:
            p = r.copy() if prec is None else z.copy()
        q = op.matvec(p)
        if q.dtype != dtype or not q.flags.c_contiguous:
            q = np.ascontiguousarray(q, dtype=dtype)
        # Without a preconditioner the step also forms the next direction.
        pq, rr = _kernels.cg_step(x, r, p, q, rz, prec is None)
        if not pq > 0:
            status = NEGATIVE_CURVATURE if pq <= 0 else BREAKDOWN
            d = p.copy()
            break
        if prec is None:
            rz = rr
        rnorm = math.sqrt(rr)
        nit = it + 1
        if callback is not None:
            callback(x)
        if not math.isfinite(rnorm):
            status = BREAKDOWN
            break
    else:
        if rnorm <= tol:
            status = CONVERGED

    if not full_output:
        info = {CONVERGED: 0, MAXITER: max(nit, 1), NEGATIVE_CURVATURE: -1,
                BREAKDOWN: -2}[status]
        return x, info
    return OptimizeResult(
        x=x, nit=nit, nmatvec=op.nmatvec - start, success=status == CONVERGED,
        status=status, message=_CG_MESSAGES[status],
        negative_curvature=status == NEGATIVE_CURVATURE, d=d,
        residual_norm=rnorm)


# -------------------------------------------------------------------------- Steihaug
def _to_boundary(p, d, radius):
    """Both roots ``tau_lo <= 0 <= tau_hi`` of ``||p + tau d|| = radius``."""
    dd = float(np.dot(d, d))
    pd = float(np.dot(p, d))
    pp = float(np.dot(p, p))
    disc = math.sqrt(max(pd * pd + dd * (radius * radius - pp), 0.0))
    # Cancellation-free quadratic roots.
    if pd >= 0:
        tau_lo = -(pd + disc) / dd
        tau_hi = (radius * radius - pp) / (pd + disc) if pd + disc > 0 else 0.0
    else:
        tau_hi = (disc - pd) / dd
        tau_lo = (radius * radius - pp) / (pd - disc) if pd - disc < 0 else 0.0
    return tau_lo, tau_hi


def steihaug(A, g, radius, *, rtol=None, maxiter=None, M=None):
    """Steihaug-Toint truncated CG for the trust-region subproblem.

    Approximately solves ``min_p g^T p + 1/2 p^T A p`` subject to
    ``||p|| <= radius`` (Euclidean norm) using only matvecs with ``A``, which may be
    indefinite.  CG runs from ``p = 0`` until the model gradient ``A p + g`` is
    small, an iterate leaves the trust region (the step is cut at the boundary), or
    a direction of non-positive curvature appears (the step goes to the boundary
    along it, choosing the root with the lower model value).

    Args:
        A: symmetric operator (any form accepted by ``aslinearoperator_like``).
        g: gradient, shape ``(n,)``.
        radius: trust-region radius > 0.
        rtol: stop when ``||A p + g|| <= rtol ||g||``; default
            ``min(0.5, sqrt(||g||))`` (the superlinear forcing sequence of SciPy's
            ``trust-ncg``).
        maxiter: maximum CG iterations (default ``n``).
        M: optional SPD preconditioner approximating ``A^{-1}``.  The radius is
            still measured in the Euclidean norm, where preconditioned iterates
            need not grow monotonically; the first crossing is taken.

    Returns:
        ``OptimizeResult`` with ``p`` (also as ``x``), ``hits_boundary``,
        ``negative_curvature``, ``d`` (the direction of non-positive curvature or
        None), ``model_value`` (``g^T p + 1/2 p^T A p``), ``residual_norm``,
        ``nit``, ``nmatvec``, ``status`` (0 converged inside the region, 1 maxiter,
        2 negative curvature, 4 boundary reached), ``success`` and ``message``.

    Raises:
        ValueError: on shape mismatches, NaN/inf in ``g``, or ``radius <= 0``.
        TypeError: if ``g`` is complex, or ``radius`` or ``rtol`` is not a number.

    >>> import numpy as np
    >>> res = steihaug(np.diag([2.0, 2.0]), np.array([-2.0, 0.0]), radius=10.0)
    >>> res.p.tolist(), res.hits_boundary
    ([1.0, 0.0], False)
    >>> res = steihaug(np.diag([-1.0, 1.0]), np.array([1.0, 0.0]), radius=2.0)
    >>> res.p.tolist(), res.negative_curvature, res.hits_boundary
    ([-2.0, 0.0], True, True)
    """
    op, g, _, dtype = _setup("steihaug", A, g, bname="g")
    n = g.shape[0]
    _check_number("steihaug", "radius", radius, positive=True)
    if maxiter is None:
        maxiter = n
    maxiter = _check_params("steihaug", rtol, None, maxiter, n)
    prec = _preconditioner("steihaug", M, n)
    start = op.nmatvec

    gnorm = float(np.linalg.norm(g))
    if rtol is None:
        rtol = min(0.5, math.sqrt(gnorm))
    tol = rtol * gnorm
    p = np.zeros(n, dtype=dtype)
    r = g.copy()                                  # model gradient A p + g
    z = r if prec is None else np.asarray(prec.matvec(r), dtype=dtype)
    rz = float(np.dot(r, z))
    d = -z
    mval = 0.0
    status, hits, negcurv, dneg, nit = MAXITER, False, False, None, 0
    rnorm = gnorm
    if gnorm == 0.0 or rnorm <= tol:
        status = CONVERGED
    elif prec is not None and not rz > 0:
        status = BREAKDOWN
    else:
        for it in range(maxiter):
            Ad = op.matvec(d)
            dAd = float(np.dot(d, Ad))
            rd = float(np.dot(r, d))
            nit = it + 1
            if not dAd > 0:
                # Model is unbounded below along d: pick the better boundary point.
                lo, hi = _to_boundary(p, d, radius)
                m_lo = lo * rd + 0.5 * lo * lo * dAd
                m_hi = hi * rd + 0.5 * hi * hi * dAd
                tau, dm = (lo, m_lo) if m_lo < m_hi else (hi, m_hi)
                p += tau * d
                mval += dm
                status, hits, negcurv, dneg = NEGATIVE_CURVATURE, True, True, d.copy()
                break
            alpha = rz / dAd
            p_next = p + alpha * d
            if float(np.dot(p_next, p_next)) >= radius * radius:
                _, tau = _to_boundary(p, d, radius)
                p += tau * d
                mval += tau * rd + 0.5 * tau * tau * dAd
                status, hits = 4, True
                break
            p = p_next
            mval += alpha * rd + 0.5 * alpha * alpha * dAd
            r += alpha * Ad
            rnorm = float(np.linalg.norm(r))
            if rnorm <= tol:
                status = CONVERGED
                break
            if prec is None:
                z, rz_new = r, rnorm * rnorm
            else:
                z = np.asarray(prec.matvec(r), dtype=dtype)
                rz_new = float(np.dot(r, z))
                if not rz_new > 0:
                    status = BREAKDOWN
                    break
            d *= rz_new / rz
            d -= z
            rz = rz_new
    messages = {CONVERGED: "converged inside the trust region",
                MAXITER: "maximum number of iterations reached",
                NEGATIVE_CURVATURE: "negative curvature: step to the boundary",
                BREAKDOWN: "breakdown: preconditioner not positive definite",
                4: "step reached the trust-region boundary"}
    return OptimizeResult(
        p=p, x=p, hits_boundary=hits, negative_curvature=negcurv, d=dneg,
        model_value=mval, residual_norm=rnorm, nit=nit,
        nmatvec=op.nmatvec - start, status=status,
        success=status in (CONVERGED, NEGATIVE_CURVATURE, 4),
        message=messages[status])


# --------------------------------------------------------------------------- MINRES
def minres(A, b, x0=None, *, rtol=1e-5, shift=0.0, maxiter=None, M=None,
           callback=None, full_output=False):
    """Solve ``(A - shift I) x = b`` for symmetric (possibly indefinite) ``A``.

    MINRES of Paige and Saunders (1975): Lanczos tridiagonalisation plus a QR
    factorisation updated by Givens rotations, minimising ``||b - A x||`` over the
    Krylov space.  Stopping tests are those of ``scipy.sparse.linalg.minres``: stop
    when ``||r|| <= rtol ||A|| ||x||`` or ``||A r|| <= rtol ||A|| ||r||`` (norms
    estimated from the Lanczos process), when ``x`` is exact to machine precision,
    or when the condition estimate exceeds ``0.1 / eps``.

    Args:
        A: symmetric operator, in any form accepted by ``aslinearoperator_like``.
        b: right-hand side, shape ``(n,)``.
        x0: starting guess (default zeros; a nonzero ``x0`` costs one matvec).
        rtol: relative tolerance.
        shift: solve with ``A - shift * I`` instead of ``A``.
        maxiter: maximum iterations (default ``5 * n`` as in SciPy).
        M: symmetric positive definite preconditioner approximating ``A^{-1}``.
        callback: called as ``callback(xk)`` after every iteration.
        full_output: if True return an ``OptimizeResult`` instead of ``(x, info)``.

    Returns:
        ``(x, info)``, ``info == 0`` on any successful stop and ``info == maxiter``
        otherwise (as SciPy); or with ``full_output=True`` an ``OptimizeResult``
        with ``x, nit, nmatvec, success, status, message, residual_norm`` (estimate,
        in the ``M``-norm when preconditioned), ``anorm`` and ``acond``
        (estimates).  Status: 0 converged, 1 maxiter, 5 ill-conditioned
        (``acond >= 0.1/eps``, ``x`` may be inaccurate).

    Raises:
        ValueError: on shape mismatches, NaN/inf in ``b``, or a preconditioner that
            is not positive definite.
        TypeError: if ``rtol`` is not a number.

    >>> import numpy as np
    >>> A = np.diag([3.0, -1.0, 2.0])
    >>> x, info = minres(A, np.ones(3))
    >>> info, np.allclose(x, [1 / 3, -1.0, 0.5])
    (0, True)
    """
    op, b, x, dtype = _setup("minres", A, b, x0)
    n = b.shape[0]
    maxiter = _check_params("minres", rtol, None, 5 * n if maxiter is None else maxiter)
    if not math.isfinite(shift):
        raise ValueError(f"minres: shift must be finite, got {shift!r}")
    prec = _preconditioner("minres", M, n)
    start = op.nmatvec
    eps = float(np.finfo(dtype).eps)

    if x is None or not b.any():  # for b = 0, x = 0 whatever x0 (as SciPy)
        x = np.zeros(n, dtype=dtype)
        r_old = b.copy()
    else:
        # (SciPy forgets the shift here; the residual of the shifted system is meant.)
        r_old = np.asarray(b - (op.matvec(x) - shift * x), dtype=dtype)
    y = r_old if prec is None else np.asarray(prec.matvec(r_old), dtype=dtype)
    beta1_sq = float(np.dot(r_old, y))
    if beta1_sq < 0:
        raise ValueError("minres: the preconditioner M is not positive definite")

    def finish(status, nit, rnorm, anorm, acond, message):
        if not full_output:
            return x, (maxiter if status == MAXITER else 0)
        return OptimizeResult(
            x=x, nit=nit, nmatvec=op.nmatvec - start, success=status == CONVERGED,
            status=status, message=message, residual_norm=rnorm, anorm=anorm,
            acond=acond)

    if beta1_sq == 0:
        return finish(CONVERGED, 0, 0.0, 0.0, 1.0,
                      "b - A x0 is zero" if b.any() else "b is zero: x = 0")
    beta1 = math.sqrt(beta1_sq)

    # Lanczos state: r_old, r_cur are unpreconditioned vectors; y = M r_cur.
    beta_old, beta = 0.0, beta1
    r_cur = r_old
    # QR state: previous rotation (c, s), pending entries, rhs phibar.
    c, s = -1.0, 0.0
    dbar, eps_k = 0.0, 0.0
    phibar = beta1
    tnorm2 = 0.0
    gmax, gmin = 0.0, math.inf
    w_old = np.zeros(n, dtype=dtype)
    w = np.zeros(n, dtype=dtype)
    status, message, nit = MAXITER, "maximum number of iterations reached", 0
    anorm = acond = 0.0
    rnorm = phibar
    exact = False

    spare = None   # a free buffer for the next Lanczos vector
    v = y * (1.0 / beta)
    while nit < maxiter:
        nit += 1
        y = op.matvec(v)
        if y.dtype != dtype or not y.flags.c_contiguous:
            y = np.ascontiguousarray(y, dtype=dtype)
        out = np.empty(n, dtype=dtype) if spare is None else spare
        alpha, beta_sq = _kernels.minres_lanczos(
            y, v, r_old, r_cur, out, shift, beta / beta_old if nit > 1 else 0.0, beta,
            prec is None)
        spare = r_old if r_old is not r_cur else None
        r_old, r_cur = r_cur, out
        if prec is None:
            y = r_cur
        else:
            y = np.asarray(prec.matvec(r_cur), dtype=dtype)
            beta_sq = float(np.dot(r_cur, y))
        beta_old = beta
        if beta_sq < 0:
            raise ValueError("minres: the preconditioner M is not positive definite "
                             "(or A is not symmetric)")
        beta = math.sqrt(beta_sq)
        tnorm2 += alpha * alpha + beta_old * beta_old + beta * beta
        if nit == 1 and beta / beta1 <= 10 * eps:
            exact = True                        # b is (numerically) an eigenvector

        # Apply the previous rotation to the new column of the tridiagonal matrix.
        eps_prev = eps_k
        delta = c * dbar + s * alpha
        gbar = s * dbar - c * alpha
        eps_k = s * beta
        dbar = -c * beta
        root = math.hypot(gbar, dbar)
        # New rotation annihilating beta.
        gamma = max(math.hypot(gbar, beta), eps)
        c, s = gbar / gamma, beta / gamma
        phi = c * phibar
        phibar = s * phibar

        # w_k = (v_k - eps_{k} w_{k-2} - delta_k w_{k-1}) / gamma_k; x += phi w_k; and
        # the next Lanczos vector v = y / beta (unused when this iteration stops).
        xnorm = float(_kernels.minres_update(v, w_old, w, x, eps_prev, delta, 1.0 / gamma,
                                             phi, y, 1.0 / beta if beta != 0 else 0.0))
        w_old, w = w, w_old

        gmax, gmin = max(gmax, gamma), min(gmin, gamma)
        anorm = math.sqrt(tnorm2)
        acond = gmax / gmin
        rnorm = phibar
        test1 = rnorm / (anorm * xnorm) if anorm > 0 and xnorm > 0 else math.inf
        test2 = root / anorm if anorm > 0 else math.inf

        if callback is not None:
            callback(x)
        if exact:
            status, message = CONVERGED, "b is an eigenvector of A: x is exact"
        elif test1 <= rtol or 1 + test1 <= 1:
            status, message = CONVERGED, "converged: ||r|| <= rtol ||A|| ||x||"
        elif test2 <= rtol or 1 + test2 <= 1:
            status, message = CONVERGED, ("converged: least-squares solution, "
                                          "||A r|| <= rtol ||A|| ||r||")
        elif anorm * xnorm * eps >= beta1:
            status, message = CONVERGED, "x is an exact solution to machine precision"
        elif acond >= 0.1 / eps:
            status, message = 5, "condition estimate >= 0.1/eps: x may be inaccurate"
        else:
            continue
        break
    if status == 5 and not full_output:
        return x, 0
    return finish(status, nit, rnorm, anorm, acond, message)
