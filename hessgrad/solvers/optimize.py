"""Second-order minimisation with SciPy's calling conventions: Newton-CG and trust region.

:func:`minimize` normalises the user's callbacks once into a small problem object
(value, gradient, Hessian operator, counters); the algorithms see only that object
and a matvec.  When ``jac`` or ``hessp``/``hess`` are omitted they come from
hessgrad (``hessgrad.scipy.objective``), which is the only place this module touches
hessgrad, and it imports it lazily.
"""

import inspect
import math

import numpy as np
from scipy.optimize import OptimizeResult

from .krylov import cg
from .operators import aslinearoperator_like
from .trust_region import SUBPROBLEMS, negative_curvature, trust_region_loop

__all__ = ["minimize", "METHODS"]

METHODS = ("newton-cg", "trust-ncg", "trust-lanczos")

_MESSAGES = {
    0: "Optimization terminated successfully.",
    1: "Maximum number of iterations has been exceeded.",
    2: "Desired error not necessarily achieved due to precision loss.",
    3: "NaN result encountered.",
    99: "`callback` raised `StopIteration`.",
}


class _Problem:
    """The user's callbacks behind one interface, with SciPy's counters.

    ``fun``/``grad`` evaluate at a point, ``hess_op`` returns the Hessian at a point as
    an operator, ``report`` calls the user's callback.
    """

    def __init__(self, fun, x0, jac, hessp, hess, args, callback):
        self.n = x0.size
        self.args = args
        self.nfev = self.njev = self.nhev = self.nhessp = 0
        self._objective = None
        self._pair = None                  # (x bytes, f, g) for jac=True
        self._hess_at = None               # (x bytes, matrix operator) for hess=
        self._user_fun = fun
        if jac is True:
            self._fun, self._jac = self._pair_fun, self._pair_jac
        elif jac is None or jac is False:
            obj = self._hessgrad_objective()
            self._fun, self._jac = obj.fun, obj.jac
        elif callable(jac):
            self._fun, self._jac = fun, jac
        else:
            raise ValueError(f"minimize: jac must be a callable, True or None, got "
                             f"{jac!r} (finite differences are not supported: pass "
                             f"jac=None to differentiate fun with hessgrad)")
        if hessp is not None and not callable(hessp):
            raise TypeError(f"minimize: hessp must be callable, got {type(hessp).__name__}")
        if hess is not None and not callable(hess):
            raise TypeError(f"minimize: hess must be callable (returning a matrix or "
                            f"operator), got {type(hess).__name__}")
        self._hessp = hessp
        self._hess = hess
        if hessp is None and hess is None:
            self._hessp = self._hessgrad_objective().hessp
        self._callback = callback
        self._pass_result = False
        if callback is not None:
            try:
                params = inspect.signature(callback).parameters
            except (TypeError, ValueError):
                params = {}
            self._pass_result = "intermediate_result" in params

    def _hessgrad_objective(self):
        if self._objective is None:
            import hessgrad  # noqa: PLC0415 - only to differentiate the user's fun

            self._objective = hessgrad.scipy.objective(self._user_fun)
        return self._objective

    # ---------------------------------------------------------------- evaluations
    def _pair_fun(self, x, *args):
        key = x.tobytes()
        if self._pair is None or self._pair[0] != key:
            out = self._user_fun(x, *args)
            if not isinstance(out, tuple) or len(out) != 2:
                raise ValueError("minimize: with jac=True, fun must return a pair "
                                 f"(value, gradient), got {type(out).__name__}")
            self._pair = (key, out[0], out[1])
        return self._pair[1]

    def _pair_jac(self, x, *args):
        self._pair_fun(x, *args)
        return self._pair[2]

    def fun(self, x):
        self.nfev += 1
        try:
            value = self._fun(x, *self.args)
        except Exception as exc:
            if self._objective is not None and self.nfev == 1:
                raise type(exc)(
                    f"minimize: jac was not given, so fun is differentiated with "
                    f"hessgrad and must be written with hessgrad.numpy operations; "
                    f"evaluating it failed: {exc}") from exc
            raise
        value = np.asarray(value)
        if value.size != 1:
            raise ValueError(f"minimize: fun must return a scalar, got an array of "
                             f"shape {value.shape}")
        return float(value.reshape(()))

    def grad(self, x):
        self.njev += 1
        g = np.asarray(self._jac(x, *self.args), dtype=np.float64)
        if g.shape != (self.n,):
            if g.size == self.n and g.ndim <= 2 and max(g.shape, default=1) == self.n:
                g = g.reshape(self.n)
            else:
                raise ValueError(f"minimize: jac returned shape {g.shape} for x0 of "
                                 f"shape {(self.n,)}; expected {(self.n,)}")
        return g.copy()

    def hess_op(self, x):
        """The Hessian at ``x`` as an operator counting its products."""
        n = self.n
        if self._hess is not None and self._hessp is None:
            key = x.tobytes()
            if self._hess_at is None or self._hess_at[0] != key:
                self.nhev += 1
                H = self._hess(x, *self.args)
                if isinstance(H, np.ndarray) or np.isscalar(H):
                    H = np.asarray(H, dtype=np.float64)
                op = aslinearoperator_like(H, n, caller="minimize", name="hess(x)")
                if op.shape != (n, n):
                    raise ValueError(f"minimize: hess returned shape {op.shape}; "
                                     f"expected {(n, n)}")
                self._hess_at = (key, op)
            inner = self._hess_at[1]

            def matvec(v):
                self.nhessp += 1
                return inner.matvec(v)
        else:
            hessp, args = self._hessp, self.args
            x = x.copy()

            def matvec(v):
                self.nhessp += 1
                self.nhev += self._hess is None
                out = np.asarray(hessp(x, v, *args), dtype=np.float64)
                if out.size != n:
                    raise ValueError(f"minimize: hessp returned shape {out.shape}; "
                                     f"expected {(n,)}")
                return out.reshape(n)
        return aslinearoperator_like(matvec, n, caller="minimize", name="hessp")

    def report(self, x, f):
        """Call the user's callback; True means it asked to stop."""
        if self._callback is None:
            return False
        try:
            if self._pass_result:
                self._callback(intermediate_result=OptimizeResult(x=x.copy(), fun=f))
            else:
                self._callback(x.copy())
        except StopIteration:
            return True
        return False


# -------------------------------------------------------------------------- Newton-CG
# Upper bound of the CG forcing term: ||H p + g|| <= min(_FORCING_CAP, sqrt(||g||)) ||g||.
# Nocedal and Wright suggest 0.5; SciPy uses 0.5 with 1-norms, which for large n is a
# much tighter test than 0.5 in the 2-norm.  0.5 in the 2-norm took 1.7x SciPy's
# iterations and 3.5x its function values on extended Rosenbrock n = 1000 (crude steps
# leave the curved valley and are cut back by the line search).  Caps from 0.15 to 0.25
# all beat SciPy's Newton-CG in iterations, values and products on Rosenbrock
# (n = 100, 1000; the standard, the all -1.2 and three random starts) and on the
# ill-conditioned logistic regression of the tests; 0.3 needed 0.5% more values than
# SciPy from the all -1.2 start, 0.1 took the standard Rosenbrock start to the local
# minimiser near x_0 = -1.
_FORCING_CAP = 0.2


def _newton_cg_loop(problem, x, *, gtol, maxiter, escape_saddles=True, rng=None,
                    c1=1e-4, max_backtracks=40):
    """Line-search Newton-CG.  Returns ``(x, f, g, nit, status)`` like the trust-region
    loop.

    Each step solves ``H p = -g`` inexactly by CG with the forcing term
    ``||H p + g|| <= min(0.2, sqrt(||g||)) ||g||`` (superlinear convergence near a
    minimiser; the cap is discussed at ``_FORCING_CAP``).  CG never divides by
    non-positive curvature: when it meets some, the last CG iterate is used (a
    descent direction whenever CG made progress), or the steepest-descent direction
    when the first direction already had non-positive curvature (as SciPy).  The step
    length comes from a strong Wolfe line search (with hessgrad the trial gradients
    cost nothing extra: value and gradient are one evaluation) that tries the full
    Newton step first, unless the previous step had to be cut: then it starts where
    a quadratic with the current slope would repeat the previous decrease (the
    initial step of SciPy's line search, which saves evaluations while the Newton
    steps are too long).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    n = x.size
    f = problem.fun(x)
    g = problem.grad(x)
    nit = 0
    curvature = None
    decrease = 0.0          # f decrease of the previous step if it was cut, else 0
    while True:
        gnorm = float(np.linalg.norm(g))
        if not (math.isfinite(f) and math.isfinite(gnorm)):
            return x, f, g, nit, 3
        saddle = False
        if gnorm <= gtol:
            if not escape_saddles:
                return x, f, g, nit, 0
            if curvature is None:
                curvature = negative_curvature(problem.hess_op(x), n, rng) or False
            if curvature is False:
                return x, f, g, nit, 0
            saddle = True
        if nit >= maxiter:
            return x, f, g, nit, 1
        if saddle:
            theta, z = curvature
            p = z if np.dot(g, z) <= 0 else -z
            # Sufficient decrease measured against the second-order model.
            found = _backtrack(problem, x, f, p, float(np.dot(g, p)), theta, c1,
                               max_backtracks)
        else:
            res = cg(problem.hess_op(x), -g, rtol=min(_FORCING_CAP, math.sqrt(gnorm)),
                     maxiter=20 * n, full_output=True)
            p = res.x
            if not (np.all(np.isfinite(p)) and p.any()):
                p = -g
            slope = float(np.dot(g, p))
            if not slope < 0:
                p, slope = -g, -gnorm * gnorm
            alpha0 = min(1.0, 2.02 * decrease / -slope) if decrease > 0 else 1.0
            found = _wolfe(problem, x, f, p, slope, c1, 0.9, max_backtracks, alpha0)
        if found is None:
            return x, f, g, nit, 2
        alpha, x_new, f_new, g_new = found
        if g_new is None:
            g_new = problem.grad(x_new)
        decrease = f - f_new if alpha < 1.0 and not saddle else 0.0
        x, f, g = x_new, f_new, g_new
        curvature = None
        nit += 1
        if problem.report(x, f):
            return x, f, g, nit, 99


def _backtrack(problem, x, f, p, slope, curv, c1, max_steps):
    """Backtracking until ``f(x + a p) <= f + c1 (a slope + a^2 curv / 2)`` (a second-order
    Armijo condition, used along directions of negative curvature ``curv``).  Returns
    ``(alpha, x_new, f_new, None)`` or None."""
    alpha = 1.0
    for _ in range(max_steps):
        x_new = x + alpha * p
        f_new = problem.fun(x_new)
        if math.isfinite(f_new) and \
                f_new <= f + c1 * (alpha * slope + 0.5 * alpha * alpha * curv):
            return alpha, x_new, f_new, None
        alpha *= 0.5
    return None


def _interpolate(a_lo, f_lo, d_lo, a_hi, f_hi, d_hi):
    """Next trial step inside the bracket ``[a_lo, a_hi]`` (``a_lo`` the best point so
    far), kept away from both ends.

    The cubic matching values and slopes at both ends (Nocedal and Wright, eq. 3.59)
    fits a smooth minimum well, but when ``f_hi > f_lo`` because the far end
    overshot a steeply rising function (Rosenbrock is quartic along a line) it keeps
    cutting the bracket by only about a third.  There, as in Moré and Thuente's line
    search, the cubic step is taken only when it is closer to ``a_lo`` than the
    quadratic step (through ``f_lo``, ``d_lo``, ``f_hi``), else the midpoint of the
    two.  The quadratic alone serves when ``d_hi`` is unknown.
    """
    span = a_hi - a_lo
    quad = math.nan
    denom = 2.0 * (f_hi - f_lo - d_lo * span)
    if denom > 0 and math.isfinite(denom):
        quad = a_lo - d_lo * span * span / denom
    cubic = math.nan
    if math.isfinite(d_hi) and math.isfinite(f_hi):
        d1 = d_lo + d_hi - 3.0 * (f_lo - f_hi) / (a_lo - a_hi)
        rad = d1 * d1 - d_lo * d_hi
        if rad >= 0:
            d2 = math.copysign(math.sqrt(rad), span)
            den = d_hi - d_lo + 2.0 * d2
            if den != 0:
                cubic = a_hi - span * (d_hi + d2 - d1) / den
    lo, hi = sorted((a_lo + 0.01 * span, a_hi - 0.1 * span))

    def clip(a):
        return min(max(a, lo), hi)
    if not math.isfinite(cubic):
        trial = quad if math.isfinite(quad) else a_lo + 0.5 * span
    elif f_hi > f_lo and math.isfinite(quad):
        cubic, quad = clip(cubic), clip(quad)
        trial = cubic if abs(cubic - a_lo) < abs(quad - a_lo) else 0.5 * (cubic + quad)
    else:
        trial = cubic
    return clip(trial)


def _wolfe(problem, x, f0, p, slope, c1, c2, max_steps, alpha0=1.0, alpha_max=64.0):
    """Strong Wolfe line search (bracketing, then zoom; Nocedal and Wright, Alg. 3.5-3.6).

    Starts from ``alpha0`` (the full step unless told otherwise); expands (doubling)
    only while the slope is still steeply negative, which rescues too-short
    truncated-CG or steepest-descent directions.  Returns
    ``(alpha, x_new, f_new, g_new)`` or None.  A non-finite value is treated as
    "too far".
    """
    def phi(alpha):
        x_new = x + alpha * p
        f_new = problem.fun(x_new)
        if not math.isfinite(f_new):
            return x_new, f_new, None, math.nan
        g_new = problem.grad(x_new)
        return x_new, f_new, g_new, float(np.dot(g_new, p))

    def zoom(a_lo, f_lo, d_lo, lo_point, a_hi, f_hi, d_hi, steps):
        # lo_point: (x, f, g) at a_lo, None while a_lo == 0.
        for _ in range(steps):
            if abs(a_hi - a_lo) <= 1e-12 * max(abs(a_lo), abs(a_hi)):
                break                    # the bracket collapsed
            a = _interpolate(a_lo, f_lo, d_lo, a_hi, f_hi, d_hi)
            x_new, f_new, g_new, d = phi(a)
            if not math.isfinite(f_new) or f_new > f0 + c1 * a * slope or f_new >= f_lo:
                a_hi, f_hi, d_hi = a, f_new if math.isfinite(f_new) else math.inf, d
            else:
                if abs(d) <= -c2 * slope:
                    return a, x_new, f_new, g_new
                if d * (a_hi - a_lo) >= 0:
                    a_hi, f_hi, d_hi = a_lo, f_lo, d_lo
                a_lo, f_lo, d_lo, lo_point = a, f_new, d, (x_new, f_new, g_new)
        # Out of steps: any point with sufficient decrease will do.
        return None if lo_point is None else (a_lo, *lo_point)

    a_prev, f_prev, d_prev, prev_point = 0.0, f0, slope, None
    alpha = alpha0
    for i in range(max_steps):
        x_new, f_new, g_new, d = phi(alpha)
        if not math.isfinite(f_new) or f_new > f0 + c1 * alpha * slope or \
                (i > 0 and f_new >= f_prev):
            f_hi = f_new if math.isfinite(f_new) else math.inf
            return zoom(a_prev, f_prev, d_prev, prev_point, alpha, f_hi, d, max_steps)
        if abs(d) <= -c2 * slope:
            return alpha, x_new, f_new, g_new
        point = (x_new, f_new, g_new)
        if d >= 0:
            return zoom(alpha, f_new, d, point, a_prev, f_prev, d_prev, max_steps)
        if alpha >= alpha_max:
            return (alpha, *point)
        a_prev, f_prev, d_prev, prev_point = alpha, f_new, d, point
        alpha = min(2.0 * alpha, alpha_max)
    return None


# --------------------------------------------------------------------------- front end
def minimize(fun, x0, method="newton-cg", jac=None, hessp=None, hess=None, args=(), *,
             tol=None, gtol=1e-5, maxiter=None, callback=None, initial_trust_radius=1.0,
             max_trust_radius=1000.0, eta=0.15, escape_saddles=True):
    """Minimise a smooth function with Newton-CG or a trust-region Newton method.

    Calling conventions follow ``scipy.optimize.minimize``: ``fun(x, *args)``,
    ``jac(x, *args)``, ``hessp(x, p, *args)``, ``hess(x, *args)``, the result is an
    ``OptimizeResult`` and ``callback`` may take ``intermediate_result`` or ``xk``.
    Only Hessian-vector products are needed; when ``jac`` is omitted ``fun`` is
    differentiated by hessgrad (value and gradient from one evaluation), and when
    ``hessp`` and ``hess`` are omitted too, products come from hessgrad's Hessian
    operator at the current point.

    Methods:

    * ``"newton-cg"``: line-search Newton-CG (inexact Newton step by CG with the
      forcing term ``min(0.2, sqrt(||g||))``, last CG iterate or steepest descent on
      negative curvature, strong Wolfe line search).
    * ``"trust-ncg"``: trust region with the Steihaug-Toint truncated CG subproblem.
    * ``"trust-lanczos"``: trust region with the GLTR subproblem (Lanczos plus an
      exact Moré-Sorensen solve on the tridiagonal; follows negative curvature).

    All three stop when ``||g||_2 <= gtol``.  With ``escape_saddles`` (default) a
    point that passes this test is then probed by 20 Lanczos steps from a seeded
    random vector; if negative curvature is found, the iteration steps along it
    instead of stopping at a saddle point.

    Args:
        fun: objective ``fun(x, *args) -> float`` (with ``jac=True``: returns
            ``(f, g)``).
        x0: starting point, 1-D array of length ``n >= 1``.
        method: one of ``"newton-cg"``, ``"trust-ncg"``, ``"trust-lanczos"``
            (case-insensitive).
        jac: gradient callable, True (``fun`` returns ``(f, g)``) or None (hessgrad).
        hessp: Hessian-vector product ``hessp(x, p, *args)``.
        hess: Hessian ``hess(x, *args)``: an array, sparse matrix or operator (used
            only through products).  Ignored when ``hessp`` is given.
        args: extra positional arguments for every callback.
        tol: if given, overrides ``gtol`` (as SciPy's ``tol``).
        gtol: gradient-norm tolerance.
        maxiter: maximum iterations (default ``200 * n``).
        callback: called after every iteration as ``callback(intermediate_result)``
            (an ``OptimizeResult`` with ``x`` and ``fun``) if its signature has a
            parameter named ``intermediate_result``, else ``callback(xk)``; raising
            ``StopIteration`` ends the run (status 99).
        initial_trust_radius, max_trust_radius, eta: trust-region parameters
            (``eta``: minimal ratio of actual to predicted reduction to accept a step).
        escape_saddles: probe for negative curvature at first-order points.

    Returns:
        ``OptimizeResult`` with ``x, fun, jac, nit, nfev, njev, nhev, nhessp,
        status, message, success, method``.  ``nfev``/``njev`` count requested
        values/gradients (with hessgrad both come from one cached evaluation per
        point), ``nhessp`` Hessian-vector products, ``nhev`` calls of ``hess`` or,
        when products come from ``hessp`` or hessgrad, products (as SciPy).
        Status: 0 success, 1 maxiter, 2 precision loss (no acceptable step),
        3 NaN/inf, 99 stopped by the callback.

    Raises:
        ValueError: unknown method (the message lists the known ones), ``x0`` not
            1-D / empty / not finite, bad parameters, or callbacks returning
            arrays of the wrong shape.

    >>> import numpy as np
    >>> import hessgrad.numpy as hnp
    >>> from hessgrad.solvers import minimize
    >>> rosen = lambda x: hnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> res = minimize(rosen, np.array([-1.2, 1.0]), method="trust-lanczos", gtol=1e-8)
    >>> res.success, np.round(res.x, 8), res.nit > 0
    (True, array([1., 1.]), True)
    >>> res = minimize(lambda x: (x[0] - 2.0) ** 2, np.zeros(1), jac=lambda x: 2 * (x - 2),
    ...                hessp=lambda x, p: 2 * p)
    >>> res.x, res.nit, res.message
    (array([2.]), 1, 'Optimization terminated successfully.')
    """
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(f"minimize: unknown method {method!r}; known methods: "
                         f"{', '.join(repr(m) for m in METHODS)}")
    method = method.lower()
    x = np.asarray(x0)
    if x.ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-D, got shape {x.shape}")
    if x.size == 0:
        raise ValueError("minimize: x0 is empty")
    if np.iscomplexobj(x):
        raise TypeError("minimize: x0 is complex; only real problems are supported")
    x = np.array(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("minimize: x0 contains NaN or inf")
    if not isinstance(args, tuple):
        args = (args,)
    if tol is not None:
        gtol = tol
    if not (gtol >= 0 and math.isfinite(gtol)):
        raise ValueError(f"minimize: gtol must be a finite number >= 0, got {gtol!r}")
    maxiter = 200 * x.size if maxiter is None else maxiter
    if int(maxiter) != maxiter or maxiter < 0:
        raise ValueError(f"minimize: maxiter must be an int >= 0, got {maxiter!r}")
    maxiter = int(maxiter)
    if not 0 < initial_trust_radius <= max_trust_radius:
        raise ValueError(f"minimize: need 0 < initial_trust_radius <= max_trust_radius,"
                         f" got {initial_trust_radius!r} and {max_trust_radius!r}")
    if not 0 <= eta < 0.25:
        raise ValueError(f"minimize: eta must be in [0, 0.25), got {eta!r}")
    if callback is not None and not callable(callback):
        raise TypeError("minimize: callback must be callable")

    problem = _Problem(fun, x, jac, hessp, hess, args, callback)
    if method == "newton-cg":
        x, f, g, nit, status = _newton_cg_loop(
            problem, x, gtol=gtol, maxiter=maxiter, escape_saddles=escape_saddles)
    else:
        x, f, g, nit, status = trust_region_loop(
            problem, x, SUBPROBLEMS[method], gtol=gtol, maxiter=maxiter,
            initial_trust_radius=initial_trust_radius,
            max_trust_radius=max_trust_radius, eta=eta, escape_saddles=escape_saddles)
    return OptimizeResult(
        x=x, fun=f, jac=g, nit=nit, nfev=problem.nfev, njev=problem.njev,
        nhev=problem.nhev, nhessp=problem.nhessp, status=status,
        success=status == 0, message=_MESSAGES[status], method=method)
