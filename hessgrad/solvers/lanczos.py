"""Lanczos tridiagonalisation, thick-restart Lanczos eigensolver, power iteration.

All three see only a matvec.  The Lanczos basis is kept in a Fortran-ordered
float64 array so that full reorthogonalisation (two passes of classical
Gram-Schmidt, :func:`hessgrad.solvers._kernels.cgs2`) streams over contiguous columns.
"""

import math
import numbers
import warnings

import numpy as np
from scipy.optimize import OptimizeResult

from . import _kernels
from .krylov import _check_maxiter, _check_number
from .operators import aslinearoperator_like

__all__ = ["lanczos", "eigsh", "power_iteration", "LanczosResult",
           "EigshNoConvergence"]

_EPS = float(np.finfo(np.float64).eps)
_EPS23 = _EPS ** (2.0 / 3.0)


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _square(caller, A, v0=None):
    # A callable matvec takes its size from v0 when one is given.
    n = np.shape(v0)[0] if v0 is not None and np.ndim(v0) == 1 else None
    op = aslinearoperator_like(A, n, caller=caller, name="A")
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{caller}: A must be square, got shape {op.shape}")
    return op


def _start_vector(caller, v0, n, rng):
    if v0 is None:
        v = _rng(rng).standard_normal(n)
    else:
        v = np.asarray(v0)
        if v.shape != (n,):
            raise ValueError(f"{caller}: v0 has shape {v.shape} but A has shape {(n, n)}")
        if np.iscomplexobj(v):
            raise TypeError(f"{caller}: v0 is complex; only real operators are supported")
        v = v.astype(np.float64)
    nv = float(np.linalg.norm(v))
    if not (nv > 0 and math.isfinite(nv)):
        raise ValueError(f"{caller}: v0 must be nonzero and finite")
    return v / nv


def _extend(op, V, T, j0, m, rng, reorthogonalize=True, restart_on_breakdown=True,
            anorm=0.0):
    """Run Lanczos steps ``j0 .. m-1`` on the basis ``V`` (n x (m+1), Fortran order).

    On entry ``V[:, :j0+1]`` is orthonormal, ``V[:, j0]`` is the vector to expand
    and ``T[:j0, j0]`` holds its known couplings (zero, ``beta_{j0-1}`` or the
    arrow of a thick restart).  Fills ``T[:m, :m]`` and ``V[:, m]`` and returns
    ``(beta_m, steps, breakdown, anorm)``; ``steps < m`` only when an invariant
    subspace was found and ``restart_on_breakdown`` is False (or the whole space
    is spanned).
    """
    n = V.shape[0]
    h = np.empty(m + 1)
    beta = 0.0
    breakdown = False
    for j in range(j0, m):
        # The next basis column (Fortran order: a contiguous view) is written from the
        # product by the recurrence, then orthogonalised and scaled there, in place.
        w = V[:, j + 1]
        if reorthogonalize:
            y = op.matvec(V[:, j])
            if y.dtype != np.float64:
                y = y.astype(np.float64)
            alpha, beta, wnorm = _kernels.lanczos_step(V, j, y, h, T[j - 1, j] if j else 0.0)
        else:
            w[:] = op.matvec(V[:, j])
            wnorm = float(np.linalg.norm(w))
            if j > 0:
                w -= T[j - 1, j] * V[:, j - 1]
            alpha = float(np.dot(w, V[:, j]))
            w -= alpha * V[:, j]
            beta = float(np.linalg.norm(w))
        anorm = max(anorm, wnorm)
        T[j, j] = alpha
        if not math.isfinite(beta):
            raise FloatingPointError("lanczos: the operator produced NaN or inf")
        if beta <= max(n, 100) * _EPS * anorm:
            # Invariant subspace: T[:j+1, :j+1] has exact eigenvalues of A.
            breakdown = True
            if not restart_on_breakdown or j + 1 >= n:
                w[:] = 0.0
                return 0.0, j + 1, breakdown, anorm
            # Continue in the orthogonal complement with a zero coupling.
            w[:] = _rng(rng).standard_normal(n)
            nw, nw0 = _kernels.cgs2(V, j + 1, w, h)
            if nw <= 1e-8 * nw0:
                w[:] = 0.0
                return 0.0, j + 1, breakdown, anorm
            w /= nw
            beta = 0.0
        else:
            w /= beta
        if j + 1 < m:
            T[j, j + 1] = T[j + 1, j] = beta
    return beta, m, breakdown, anorm


class LanczosResult:
    """Output of :func:`lanczos`; unpacks as ``alpha, beta, Q = lanczos(A, k)``.

    Attributes:
        alpha: diagonal of the tridiagonal matrix ``T``, shape ``(m,)``.
        beta: off-diagonal of ``T``, shape ``(m - 1,)``.
        Q: orthonormal Lanczos basis, shape ``(n, m)``; ``Q^T A Q = T``.
        beta_next, q_next: the next coupling and vector,
            ``A Q = Q T + beta_next q_next e_m^T``.
        breakdown: True if an invariant subspace was found (then ``m < k`` is
            possible and ``beta_next == 0``).
        nmatvec: matvecs used.
    """

    def __init__(self, alpha, beta, Q, beta_next, q_next, breakdown, nmatvec):
        self.alpha, self.beta, self.Q = alpha, beta, Q
        self.beta_next, self.q_next = beta_next, q_next
        self.breakdown, self.nmatvec = breakdown, nmatvec

    def __iter__(self):
        return iter((self.alpha, self.beta, self.Q))

    def tridiagonal(self):
        """Return ``T`` as a dense ``(m, m)`` array."""
        return (np.diag(self.alpha) + np.diag(self.beta, 1) + np.diag(self.beta, -1))

    def __repr__(self):
        return (f"LanczosResult(m={self.alpha.size}, breakdown={self.breakdown}, "
                f"nmatvec={self.nmatvec})")


def lanczos(A, k, v0=None, *, reorthogonalize=True, rng=None):
    """Run ``k`` steps of Lanczos on a symmetric operator.

    Builds an orthonormal basis ``Q`` of the Krylov space
    ``span{v0, A v0, ..., A^{k-1} v0}`` and the tridiagonal ``T = Q^T A Q``.  With
    ``reorthogonalize=True`` (default) each new vector is orthogonalised against all
    previous ones by two passes of classical Gram-Schmidt (a Numba kernel), so
    ``Q`` stays orthonormal to machine precision.  If an invariant subspace is hit
    (``beta ~ 0``), the process stops early with ``breakdown=True``.

    Args:
        A: symmetric operator, in any form accepted by ``aslinearoperator_like``.
        k: number of steps, ``1 <= k <= n``.
        v0: starting vector (default: standard normal from ``rng``).
        reorthogonalize: full reorthogonalisation (recommended).
        rng: seed or ``numpy.random.Generator`` for ``v0``.

    Returns:
        :class:`LanczosResult` (``alpha``, ``beta``, ``Q``, ``beta_next``,
        ``q_next``, ``breakdown``, ``nmatvec``); unpacks as ``alpha, beta, Q``.

    Raises:
        ValueError: if ``k`` is out of range or ``v0`` has the wrong shape or is zero.

    >>> import numpy as np
    >>> A = np.diag([1.0, 2.0, 3.0, 4.0])
    >>> alpha, beta, Q = lanczos(A, 4, v0=np.ones(4))
    >>> np.allclose(np.linalg.eigvalsh(np.diag(alpha) + np.diag(beta, 1)
    ...                                + np.diag(beta, -1)), [1, 2, 3, 4])
    True
    >>> lanczos(np.eye(3), 3, v0=np.ones(3)).breakdown     # invariant subspace
    True
    """
    op = _square("lanczos", A, v0)
    n = op.shape[0]
    if not isinstance(k, numbers.Integral) or not 1 <= k <= max(n, 1):
        raise ValueError(f"lanczos: k must be an int with 1 <= k <= n = {n}, got {k!r}")
    start = op.nmatvec
    V = np.zeros((n, k + 1), order="F")
    T = np.zeros((k, k))
    V[:, 0] = _start_vector("lanczos", v0, n, rng)
    beta, m, breakdown, _ = _extend(op, V, T, 0, k, rng, reorthogonalize,
                                    restart_on_breakdown=False)
    alpha = np.diag(T)[:m].copy()
    offdiag = np.diag(T, 1)[:m - 1].copy()
    return LanczosResult(alpha, offdiag, np.asfortranarray(V[:, :m]), beta,
                         V[:, m].copy(), breakdown, op.nmatvec - start)


class EigshNoConvergence(RuntimeError):
    """Raised by :func:`eigsh` when not all requested pairs converged within its budget
    (``maxiter`` restarts, ``max_matvecs``, or a ``callback`` raising ``StopIteration``).

    Attributes:
        eigenvalues, eigenvectors: the converged pairs, ascending (as SciPy's
            ``ArpackNoConvergence``).
        ritz_values: the last Ritz values of all ``k`` wanted pairs, converged or not,
            ascending.  Ritz values lie inside the spectrum, so for ``which="SA"`` the
            smallest is an upper bound on the smallest eigenvalue (for ``"LA"`` the largest
            a lower bound on the largest).
        residual_norms: ``||A x - theta x||`` of each wanted Ritz pair.
        intervals: ``(k, 2)`` array; row ``i``, ``[theta_i - r_i, theta_i + r_i]``,
            contains an eigenvalue of ``A`` (a unit ``x`` with Rayleigh quotient
            ``theta`` has one within ``||A x - theta x||`` of ``theta``).
        result: the whole partial result, as ``eigsh(..., full_output=True)`` returns it.
    """

    def __init__(self, msg, eigenvalues, eigenvectors, ritz_values=None, result=None):
        super().__init__(msg)
        self.eigenvalues = eigenvalues
        self.eigenvectors = eigenvectors
        self.ritz_values = ritz_values
        self.result = result
        self.residual_norms = getattr(result, "residual_norms", None)
        self.intervals = getattr(result, "intervals", None)


def _combine(V, m, S):
    """``V[:, :m] @ S`` for Fortran-ordered ``V``, as ``(S^T V^T)^T``: the
    transposed product reads ``V`` row-major, which BLAS handles several times
    faster for these tall, thin shapes; the result is Fortran-ordered."""
    return (S.T @ V[:, :m].T).T


def _priority(theta, which):
    """Indices of Ritz values, most wanted first."""
    if which == "LA":
        return np.argsort(-theta, kind="stable")
    if which == "SA":
        return np.argsort(theta, kind="stable")
    if which == "LM":
        return np.argsort(-np.abs(theta), kind="stable")
    # "BE": alternate between the two ends, starting from the top (as ARPACK).
    asc = np.argsort(theta, kind="stable")
    out, lo, hi = [], 0, theta.size - 1
    take_hi = True
    while lo <= hi:
        if take_hi:
            out.append(asc[hi])
            hi -= 1
        else:
            out.append(asc[lo])
            lo += 1
        take_hi = not take_hi
    return np.asarray(out, dtype=np.intp)


def _restart_size(k, m, nconv, theta, which):
    """How many Ritz vectors a thick restart keeps (``m`` = basis size).

    ``theta`` holds the Ritz values, most wanted first; ``nconv`` counts the wanted
    pairs converged to ``tol``.  ``eigsh`` calls it for the part not locked (``k``,
    ``m``, ``nconv`` and ``theta`` without the locked pairs).  ARPACK's rule keeps
    ``k`` plus one unwanted neighbour per converged pair (up to half the spare room
    ``m - k``), so that the active window of unconverged wanted pairs and their nearest
    neighbours keeps its size.  Here a locked pair (converged to machine precision,
    deflated) counts as gone from the problem: ARPACK's rule is applied to the active
    part, so ``nconv`` excludes it, without the half cap (which mainly binds for large
    ``k``), plus a buffer of a quarter of the spare room (3 vectors for ``k = 6`` and the
    default ``ncv = 20``), which keeps the nearest unwanted neighbours of the last
    wanted eigenvalue in the basis from the start and so widens its effective gap.

    Measured against ARPACK's matvec counts (same ``tol``, ``ncv`` and start vector; the
    former rule was ARPACK's, locked pairs counted, plus a fixed buffer of 2): the 34
    cases of ``benchmarks/bench_solvers.py --eigsh-sweep``, start vectors 3-5: total
    0.827 of ARPACK's (was 0.847), above ARPACK in 2 of 102 runs (was 2; one is the
    same ``k = 1`` run, 72 vs 71); the perturbed Rosenbrock Hessian, LA k=6, start
    vectors 3-8 at n = 1e4 and 3-5 at n = 1e5: above in 2 of 9 runs, by 10% and 1% (was
    6, by up to 11%); the 120 random spectra of ``--eigsh-random`` (k = 3, 6, 10 with the
    default basis, k = 4, 6 with ``ncv = 2k + 1``): total 0.65 of ARPACK's (was 1.00),
    above ARPACK in 9 cases, 7 of them k = 4 with ``ncv = 9``, by up to 33% (was 44, by
    up to 61%). With that tight basis a buffer of 1 vector still costs a fifth of each
    cycle, but no buffer there, or at least three new vectors per cycle, was worse on 48
    other such runs (above ARPACK in 8 and 14 of them instead of 4).
    Halving the boost instead was worse everywhere (sweep 0.91). With the half cap
    kept, a buffer of 2 was above ARPACK in 5 sweep runs, one of 4 on Rosenbrock (652 vs
    621, start vector 4), one of 3 at ``k = 10`` on random spectra by up to 22%. Per case
    the counts move by about 10% with the start vector under any of these rules.

    Dynamic thick restart (TRLan, see ``_dynamic_restart_size``) for ``k > 1`` was
    measured (sweep with start vectors 3 and 4; Rosenbrock, n = 1e4 and 1e5, LA k=6,
    six start vectors) and is worse: unbounded it keeps up to ``m - 2`` vectors (13 of
    34 sweep cases above ARPACK, Rosenbrock 2.3-2.5x), capped at ``k + (m - k) / 2`` it
    picks the cap (Rosenbrock 1.36-1.40x), limited to at most the rule's size it
    changes little. Keeping the far end's Ritz vector as well (deflating the other end
    of the spectrum) costs a new vector per cycle and was worse on the sweep.

    For one wanted pair (``k == 1``, ``m >= 6``, not BE) the size is chosen per restart
    as in TRLan (Yamazaki et al., ACM TOMS 2010), see ``_dynamic_restart_size``: over
    the 17 ``k = 1`` cases of the sweep with start vectors 3 to 7 (85 runs) it took
    fewer matvecs than half the basis in 68 runs, as many in 15 and more in 2 (by 1% and
    3%); total 0.929 of ARPACK's instead of 0.956, above ARPACK in 1 run instead of 4
    (worst 72 against 71 in both). In the runs logged it keeps half the basis at most
    restarts and 1-4 vectors fewer at a few.
    """
    keep = k + nconv
    if keep == 1 and m >= 6 and which != "BE":
        return _dynamic_restart_size(theta, which, m // 2)
    if keep == 1:
        return m // 2 if m >= 6 else min(2, m - 1)
    return min(keep + (m - k) // 4, m - 2) if keep > 2 else keep


def _dynamic_restart_size(theta, which, most):
    """How many Ritz vectors to keep for one wanted pair, at most ``most``.

    TRLan's estimate of the next cycle's progress (Yamazaki, Bai, Simon, Wang and Wu,
    ACM TOMS 2010): keeping ``j`` vectors leaves ``m - j`` new Lanczos steps, and the
    wanted value ``t_0`` then converges at a rate set by the gap ratio
    ``gamma_j = (t_0 - t_j) / (t_j - t_far)`` to the first value not kept, so
    ``(m - j) sqrt(gamma_j)`` is maximised.  ``t`` are the Ritz values ``theta``
    (most wanted first) turned so that the wanted end is the top: ``-theta`` for SA,
    ``|theta|`` for LM.  Unbounded (``most = m - 2``) the estimate grows with ``j``
    (the far-end Ritz values crowd, so ``t_j - t_far`` is small), which is why
    ``most`` is ARPACK's half basis (see ``_restart_size``).
    """
    t = -theta if which == "SA" else (np.abs(theta) if which == "LM" else theta)
    m, best, keep = t.size, -1.0, most
    for j in range(1, most + 1):
        spread = t[j] - t[m - 1]
        if not spread > 0.0:
            break
        score = (m - j) * math.sqrt(max(t[0] - t[j], 0.0) / spread)
        if score > best:
            best, keep = score, j
    return keep


def _next_check(keep, m, steps, ratio, last_ratio):
    """First basis size at which to test convergence inside the next cycle.

    Testing costs a dense eigen-decomposition of ``T`` (tens of microseconds), so it
    is done at every step only where convergence is predicted: from the geometric
    decrease of the worst residual ratio over the last cycle (``steps`` Lanczos
    steps), from half the predicted number of steps on.  Otherwise only at the end
    of the cycle (size ``m``), as ARPACK does always.
    """
    worst, before = float(ratio.max()), float(last_ratio.max())
    if not 0.0 < worst < before or steps <= 0:
        return m
    per_step = math.log(before / worst) / steps
    needed = math.log(worst) / per_step
    return min(m, keep + max(1, int(0.5 * needed)))


# Basis growth (default ncv only) stops at this many bytes for the Lanczos vectors.
_MAX_BASIS_BYTES = 2 ** 27


def eigsh(A, k=6, which="LM", *, tol=0.0, maxiter=None, v0=None,
          return_eigenvectors=True, ncv=None, rng=None, check_steps=None,
          max_matvecs=None, callback=None, full_output=False):
    """A few eigenpairs of a symmetric operator by thick-restart Lanczos.

    Lanczos with full reorthogonalisation builds an ``ncv``-dimensional Krylov
    basis; if the wanted Ritz pairs have not converged, the best Ritz vectors
    (``k`` plus part of the spare room, see ``_restart_size``) are kept and the
    basis is extended again from the residual direction (Wu and Simon's thick
    restart, equivalent to ARPACK's implicit restart with exact shifts).  Unlike
    ARPACK, convergence is also tested inside a cycle once the residuals predict it,
    so the run stops at the step where the pairs converge. Pairs converged to machine
    precision are locked (decoupled, as ARPACK deflates them), and Ritz values equal to
    rounding are treated as one multiple eigenvalue (see ``_ritz``). With the default
    ``ncv``, a run that has spent ``n`` matvecs without converging doubles its basis
    (up to ``n``, memory permitting): past that point a longer basis is cheaper than
    more restarts (a basis of ``n`` vectors finds every eigenvalue).

    Multiple eigenvalues: a Krylov space grown from one start vector holds one copy of
    each multiple eigenvalue (in exact arithmetic; further copies emerge only from
    rounding), so a restarted Lanczos method alone (ARPACK included) can return, in place
    of missing copies, eigenvalues further from the wanted end, with small residuals. So
    once the wanted pairs converge they are locked and checked: Lanczos runs
    ``check_steps`` steps from a fresh random vector orthogonal to them; a Ritz value
    there that belongs among the wanted is an eigenvalue the first run missed (another
    copy, or one its start vector hardly touched): it joins the wanted pairs, the
    iteration continues, and a new check follows, until a check finds nothing. A
    random vector's weight on a missed eigenspace of dimension ``p`` is about
    ``sqrt(p / n)``, so large multiplicities (a ridge ``lam * I`` plus a low-rank term)
    show up within a few steps; a missed simple eigenvalue next to a tight cluster may
    need more than ``check_steps``: the check is probabilistic, not a proof.  What is
    certain: the returned vectors are orthonormal with residuals ``r_i``, so ``A`` has
    ``k`` eigenvalues, counted with multiplicity, within ``||R||_2 <= sqrt(sum r_i^2)``
    of the returned values (Kahan's theorem).

    Args:
        A: symmetric operator, in any form accepted by ``aslinearoperator_like``.
        k: number of eigenpairs, ``1 <= k <= n``.
        which: ``"LM"`` largest magnitude, ``"LA"`` largest algebraic, ``"SA"``
            smallest algebraic, ``"BE"`` both ends (``k // 2`` from the bottom, the
            rest from the top).
        tol: relative accuracy, as ARPACK's: a pair is converged when its residual
            ``||A x - theta x||`` is at most ``tol * max(|theta|, eps**(2/3))``
            (``tol = 0`` means machine precision ``eps``), or at most
            ``eps * ||A||`` (``||A||`` estimated from the iteration), the accuracy
            a product can have.  Residuals are those of the returned vectors, from the
            Lanczos relation (no extra products), including the couplings that locking
            drops.
        maxiter: maximum number of restarts (default ``10 * n``).
        v0: starting vector (default: standard normal from ``rng``).
        return_eigenvectors: also return eigenvectors.
        ncv: Krylov basis size, ``k < ncv <= n`` (default
            ``min(n, max(2 k + 1, 20))``, grown as described above).
        rng: seed or ``numpy.random.Generator`` (start vector and check vectors).
        check_steps: Lanczos steps of each multiplicity check (default
            ``max(10, ncv - k)``, at most ``n - k``); 0 skips the check (as ARPACK).
        max_matvecs: stop after this many matvecs (default: no limit but ``maxiter``).
        callback: called after each convergence test with an ``OptimizeResult``
            (``nmatvec``, ``ritz_values``, ``residual_norms``, ``phase``: "solve" or
            "check"); raising ``StopIteration`` in it stops the run as a budget does.
        full_output: return an ``OptimizeResult`` (below) instead, also when not
            converged (no exception then).

    Returns:
        ``w`` (eigenvalues, ascending) or ``(w, V)`` with orthonormal eigenvector
        columns ``V[:, i]``, as ``scipy.sparse.linalg.eigsh``.  With ``full_output``
        an ``OptimizeResult`` with ``eigenvalues``, ``eigenvectors`` (None unless
        ``return_eigenvectors``), ``residual_norms``, ``converged`` (per pair),
        ``intervals`` (``(k, 2)``: each row contains an eigenvalue of ``A``),
        ``checked`` (True when a check ran to its end without finding more, or the basis
        spanned the whole space), ``missed`` (eigenvalues the checks found), ``success``,
        ``message``, ``nmatvec``, ``nmatvec_check`` and ``nrestart``.

    Raises:
        ValueError: on a bad ``k``, ``which``, ``ncv``, ``v0``, ``tol``, ``maxiter``,
            ``check_steps`` or ``max_matvecs``.
        TypeError: if ``tol`` is not a number.
        EigshNoConvergence: if the budget ran out first (without ``full_output``); it
            carries the converged pairs and intervals for the rest.

    Warns:
        RuntimeWarning: converged, but the budget ran out during the check (without
            ``full_output``; the result then says ``checked=False``).

    >>> import numpy as np
    >>> A = np.diag(np.arange(1.0, 31.0))
    >>> w = eigsh(A, k=3, which="LA", return_eigenvectors=False, rng=0)
    >>> np.round(w, 10).tolist()
    [28.0, 29.0, 30.0]
    >>> B = np.diag(np.r_[np.full(20, 0.5), np.arange(1.0, 21.0)])  # 0.5 twenty times
    >>> res = eigsh(B, k=4, which="SA", tol=1e-10, rng=0, full_output=True)
    >>> np.round(res.eigenvalues, 10).tolist(), bool(res.checked)
    ([0.5, 0.5, 0.5, 0.5], True)
    """
    op = _square("eigsh", A, v0)
    n = op.shape[0]
    if which not in ("LM", "LA", "SA", "BE"):
        raise ValueError(f"eigsh: which must be one of 'LM', 'LA', 'SA', 'BE', "
                         f"got {which!r}")
    if not isinstance(k, numbers.Integral) or not 1 <= k <= n:
        raise ValueError(f"eigsh: k must be an int with 1 <= k <= n = {n}, got {k!r}")
    grow = ncv is None
    if ncv is None:
        ncv = min(n, max(2 * k + 1, 20))
    if not isinstance(ncv, numbers.Integral) or not (k < ncv <= n or ncv == k == n):
        raise ValueError(f"eigsh: ncv must be an int with k < ncv <= n "
                         f"(k={k}, n={n}), got {ncv!r}")
    _check_number("eigsh", "tol", tol)
    maxiter = 10 * n if maxiter is None else _check_maxiter("eigsh", maxiter)
    if check_steps is None:
        check_steps = max(10, int(ncv) - k)
    elif not isinstance(check_steps, numbers.Integral) or check_steps < 0:
        raise ValueError(f"eigsh: check_steps must be an int >= 0, got {check_steps!r}")
    if max_matvecs is not None and (not isinstance(max_matvecs, numbers.Integral)
                                    or max_matvecs < 1):
        raise ValueError(f"eigsh: max_matvecs must be an int >= 1 or None, "
                         f"got {max_matvecs!r}")
    rng = _rng(rng)
    v = _start_vector("eigsh", v0, n, rng)
    run = _ThickRestart(op, k, which, float(tol) if tol > 0 else _EPS, int(ncv), v, rng,
                        grow, min(int(check_steps), n - k))
    res = run.run(maxiter, max_matvecs, callback, return_eigenvectors)
    if full_output:
        return res
    if not res.success:
        good = res.converged
        vectors = None if res.eigenvectors is None else res.eigenvectors[:, good]
        raise EigshNoConvergence(f"eigsh: {res.message}", res.eigenvalues[good], vectors,
                                 res.eigenvalues, res)
    if not res.checked and check_steps > 0:
        warnings.warn(f"eigsh: {res.message}", RuntimeWarning, stacklevel=2)
    return (res.eigenvalues, res.eigenvectors) if return_eigenvectors else res.eigenvalues


class _Snapshot:
    """The Ritz pairs of the current basis, as a convergence test sees them."""

    __slots__ = ("size", "beta", "theta", "S", "resid", "lanczos", "tol", "anorm",
                 "wanted", "limit", "ratio")

    def __init__(self, size, beta, theta, S, resid, lanczos, tol, anorm, wanted):
        self.size, self.beta, self.theta, self.S = size, beta, theta, S
        self.resid, self.lanczos, self.tol, self.anorm = resid, lanczos, tol, anorm
        self.choose(wanted)

    def choose(self, wanted):
        """Make ``wanted`` the pairs tested (their tolerances and residual ratios)."""
        self.wanted = wanted
        self.limit = np.maximum(self.tol * np.maximum(np.abs(self.theta[wanted]), _EPS23),
                                _EPS * self.anorm)
        self.ratio = self.resid[wanted] / self.limit


class _ThickRestart:
    """The state of :func:`eigsh`'s iteration.

    ``V[:, :size]`` is orthonormal; its first ``nlock`` columns are locked eigenvector
    approximations (diagonal, decoupled rows of ``T``), the rest a thick-restarted
    Lanczos basis ``V_a`` with ``A V_a = V T_a + beta v_next e^T + X_L (R_L^T V_a)``:
    ``X_L`` are the locked columns and ``R_L`` their residual vectors ``A x - theta x``,
    whose couplings to later vectors the basis drops.  ``R`` is kept once a pair is
    locked at ``tol`` (a check); before that every locked pair is converged to machine
    precision and the term is rounding.
    """

    def __init__(self, op, k, which, tol, m, v, rng, grow, check_steps):
        n = op.shape[0]
        self.op, self.n, self.k, self.which, self.tol = op, n, k, which, tol
        self.rng, self.grow, self.check_steps = rng, grow, check_steps
        # The checks' vectors come from a stream of their own: a start vector drawn from
        # the same seed as the operator's data (default_rng(0) for both) can lie in a
        # special subspace, and the check must not follow it there.
        self.check_rng = np.random.default_rng(int(rng.integers(2 ** 63)))
        self.m, self.spare = m, m - k
        self.V = np.zeros((n, m + 1), order="F")
        self.V[:, 0] = v
        self.T = np.zeros((m, m))
        self.nlock = 0
        self.locked_resid = np.zeros(m)
        self.R = None
        self.anorm = 0.0
        self.in_check = False
        self.check_used = self.check_matvecs = self.missed = self.restarts = 0
        self.start = op.nmatvec

    def spent(self):
        return self.op.nmatvec - self.start

    def run(self, maxiter, max_matvecs, callback, vectors):
        j0, check_from, last_ratio = 0, self.m, None
        while True:
            verdict = snap = None
            for j in range(j0, self.m):
                beta, _, _, self.anorm = _extend(self.op, self.V, self.T, j, j + 1,
                                                 self.rng, anorm=self.anorm)
                size = j + 1
                if self.in_check:
                    self.check_used += 1
                    self.check_matvecs += 1
                out = max_matvecs is not None and self.spent() >= max_matvecs
                # A test costs an eigh of T (O(m^3)): in a grown basis, test mid-cycle only
                # every m // 32 steps.
                due = size >= check_from and (size - check_from) % max(1, self.m // 32) == 0
                if size == self.m or out or self.in_check or (size > self.k and due):
                    snap = self.snapshot(size, beta)
                    verdict = self.judge(snap, callback, max_matvecs)
                if size < self.m:
                    self.T[j, size] = self.T[size, j] = beta
                if verdict is not None:
                    break
            if isinstance(verdict, tuple):
                return self.outcome(snap, *verdict, vectors=vectors)
            if verdict == "check":
                j0, check_from, last_ratio = self.start_check(snap), self.m, None
                continue
            if self.in_check:       # the check filled the whole space: nothing left
                snap.choose(self.outranking(snap))
                return self.outcome(snap, True, None, vectors=vectors)
            if self.restarts >= maxiter:
                return self.outcome(snap, False, f"{maxiter} restarts (maxiter)",
                                    vectors=vectors)
            self.restarts += 1
            keep = self.restart(snap)
            if last_ratio is not None:
                check_from = _next_check(keep, self.m, self.m - j0, snap.ratio, last_ratio)
            last_ratio, j0 = snap.ratio, keep
            self.maybe_grow(keep)

    def snapshot(self, size, beta):
        """Ritz values, vectors (coefficients) and residual norms of the basis."""
        nl = self.nlock
        theta, S = _ritz(self.T, size, nl, self.anorm)
        self.anorm = max(self.anorm, float(np.abs(theta).max()))
        lan = np.zeros(size)
        lan[nl:] = np.abs(beta * S[size - 1, nl:])
        resid = lan.copy()
        resid[:nl] = self.locked_resid[:nl]
        if self.R is not None:
            # The couplings to locked pairs that the basis dropped: X_L (R_L^T y), which
            # is orthogonal to v_next, so the norms add in squares.
            G = self.R[:, :nl].T @ self.V[:, nl:size]
            resid[nl:] = np.hypot(lan[nl:], np.linalg.norm(G @ S[nl:, nl:], axis=0))
        return _Snapshot(size, beta, theta, S, resid, lan, self.tol, self.anorm,
                         _priority(theta, self.which)[:self.k])

    def judge(self, snap, callback, max_matvecs):
        """What to do after a test: None (go on), "check" (start one), or the
        ``(checked, stop reason)`` of the result to return."""
        if callback is not None:
            try:
                callback(self.progress(snap))
            except StopIteration:
                return False, "the callback raised StopIteration"
        if self.in_check:
            best = self.outranking(snap)
            found = best[best >= self.nlock]
            if found.size:
                self.in_check = False
                self.missed += int(found.size)
            elif self.check_used >= self.check_steps or snap.size == self.n:
                # The locked pairs stay the answer: a copy of the last wanted value in the
                # check's space is not a better one.
                snap.choose(best)
                return True, None
        elif snap.ratio.max() <= 1.0 or snap.size == self.n:
            unlocked = int(np.sum(snap.wanted >= self.nlock))
            if (snap.size == self.n or self.check_steps == 0
                    or self.nlock + unlocked >= self.n):
                return snap.size == self.n or self.nlock + unlocked >= self.n, None
            return "check"
        if max_matvecs is not None and self.spent() >= max_matvecs:
            return False, f"{max_matvecs} matvecs (max_matvecs)"
        return None

    def progress(self, snap):
        order = np.argsort(snap.theta[snap.wanted], kind="stable")
        return OptimizeResult(nmatvec=self.spent(), phase="check" if self.in_check
                              else "solve", ritz_values=snap.theta[snap.wanted][order],
                              residual_norms=snap.resid[snap.wanted][order])

    def outranking(self, snap):
        """The wanted pairs when unlocked Ritz values must outrank a locked one by more
        than twice the tolerance: an unlocked one among them is an eigenvalue the locked
        pairs missed."""
        nl = self.nlock
        margin = 2.0 * float(snap.limit.max())
        shifted = snap.theta.copy()
        shifted[nl:] = _worsen(snap.theta[nl:], self.which, margin,
                               snap.theta[snap.wanted])
        return _priority(shifted, self.which)[:self.k]

    def residual_vectors(self, snap, idx, X):
        """``A x - theta x`` for the unlocked Ritz vectors ``X = V S[:, idx]``."""
        r = np.outer(self.V[:, snap.size], snap.beta * snap.S[snap.size - 1, idx])
        if self.R is not None and self.nlock:
            r += self.V[:, :self.nlock] @ (self.R[:, :self.nlock].T @ X)
        return r

    def start_check(self, snap):
        """Lock the converged wanted pairs (at ``tol``, keeping their residual vectors)
        and continue from a random vector orthogonal to every locked one."""
        nl, size = self.nlock, snap.size
        new = snap.wanted[snap.wanted >= nl]
        X = _combine(self.V, size, snap.S[:, new])
        r = self.residual_vectors(snap, new, X)
        p = new.size
        # Room for the check, and, should it find a missed eigenvalue, for the solve that
        # follows: the spare room the run started with, beside all locked columns.
        need = min(self.n, nl + p + max(self.check_steps, self.spare))
        if need > self.m:
            self.resize(need, nl)
        if self.R is None:
            self.R = np.zeros((self.n, self.m), order="F")
        self.V[:, nl:nl + p] = X
        self.R[:, nl:nl + p] = r
        self.locked_resid[nl:nl + p] = snap.resid[new]   # = ||r||: the value tested
        diag = np.concatenate([snap.theta[:nl], snap.theta[new]])
        self.T[:] = 0.0
        self.T[np.arange(nl + p), np.arange(nl + p)] = diag
        self.nlock = nl + p
        self.V[:, self.nlock] = self.fresh_vector()
        self.in_check, self.check_used = True, 0
        return self.nlock

    def fresh_vector(self):
        """A random unit vector orthogonal to the locked columns."""
        h = np.empty(self.nlock + 1)
        for _ in range(3):
            w = self.check_rng.standard_normal(self.n)
            nw, nw0 = _kernels.cgs2(self.V, self.nlock, w, h)
            if nw > 1e-8 * nw0:
                return w / nw
        raise FloatingPointError("eigsh: no direction left orthogonal to the locked "
                                 "eigenvectors")

    def restart(self, snap):
        """Thick restart: keep the locked columns, lock the wanted pairs converged to
        machine precision, keep the best other Ritz vectors; returns the new size."""
        m, nl, theta = self.m, self.nlock, snap.theta
        # Wanted pairs converged to machine precision are locked, as ARPACK deflates: moved
        # to the front with their coupling to the new direction (below rounding) set to
        # zero, so that copies of a multiple eigenvalue emerging later from rounding do
        # not mix with them. (Locking at a loose ``tol`` instead costs matvecs: the
        # neighbours of a pair locked with a 1e-8 residual converge more slowly.) They
        # are out of the problem: the restart size is chosen for the others (with one
        # left, as for k = 1: keeping a single vector stagnates).
        order = _priority(theta, self.which)
        wanted = snap.wanted
        unlocked = wanted[wanted >= nl]
        exact = unlocked[snap.lanczos[unlocked] <= _EPS * self.anorm]
        newl = nl + exact.size
        locked_wanted = int(np.sum(wanted < nl)) + exact.size
        rest = order[(order >= nl) & ~np.isin(order, exact)]
        nconv = int(np.sum(snap.ratio <= 1.0))
        keep = newl + _restart_size(self.k - locked_wanted, m - newl,
                                    nconv - locked_wanted, theta[rest], self.which)
        keep = min(keep, m - 1)
        kept = np.concatenate([np.arange(nl), exact, rest[:keep - newl]])
        Sk = snap.S[:, kept]
        if self.R is not None and exact.size:
            self.R[:, nl:newl] = self.residual_vectors(
                snap, exact, _combine(self.V, m, Sk[:, nl:newl]))
        self.locked_resid[nl:newl] = snap.resid[exact]
        self.V[:, :keep] = _combine(self.V, m, Sk)
        self.V[:, keep] = self.V[:, m]
        self.T[:] = 0.0
        self.T[np.arange(keep), np.arange(keep)] = theta[kept]
        self.T[newl:keep, keep] = self.T[keep, newl:keep] = snap.beta * Sk[m - 1, newl:]
        self.nlock = newl
        return keep

    def maybe_grow(self, keep):
        """Double the basis (default ``ncv`` only) once ``n`` matvecs were not enough."""
        if not self.grow or self.m >= self.n or self.spent() < self.n:
            return
        cap = max(self.m, _MAX_BASIS_BYTES // (8 * self.n))
        m_new = min(self.n, 2 * self.m, cap)
        if m_new > self.m:
            self.resize(m_new, keep + 1)

    def resize(self, m_new, cols):
        """A basis of ``m_new`` (+1) columns holding the first ``cols`` of the old one."""
        V = np.zeros((self.n, m_new + 1), order="F")
        V[:, :cols] = self.V[:, :cols]
        T = np.zeros((m_new, m_new))
        c = min(cols, self.m)
        T[:c, :c] = self.T[:c, :c]
        locked_resid = np.zeros(m_new)
        locked_resid[:self.m] = self.locked_resid
        if self.R is not None:
            R = np.zeros((self.n, m_new), order="F")
            R[:, :self.m] = self.R
            self.R = R
        self.V, self.T, self.locked_resid, self.m = V, T, locked_resid, m_new

    def outcome(self, snap, checked, stopped, *, vectors):
        """The ``OptimizeResult`` of :func:`eigsh` from the last test."""
        order = np.argsort(snap.theta[snap.wanted], kind="stable")
        wanted = snap.wanted[order]
        w = snap.theta[wanted].copy()
        resid = snap.resid[wanted].copy()
        converged = snap.ratio[order] <= 1.0
        X = None
        if vectors:
            X = _combine(self.V, snap.size, snap.S[:, wanted])
            X /= np.linalg.norm(X, axis=0)
        success = bool(converged.all())
        found = (f"; the checks found {self.missed} eigenvalue(s) the first run had "
                 f"missed" if self.missed else "")
        if not success:
            message = (f"{int(converged.sum())} of {self.k} eigenpairs converged; stopped "
                       f"after {stopped} ({self.spent()} matvecs){found}")
        elif checked:
            message = (f"converged; a check from a fresh random vector found nothing "
                       f"further{found}" if self.check_matvecs else
                       "converged; the basis spans the whole space")
        elif self.check_steps == 0:
            message = "converged; multiplicity check skipped (check_steps=0)"
        else:
            message = (f"converged, but the multiplicity check was cut short by {stopped}: "
                       f"a further copy of an eigenvalue may be missing{found}")
        return OptimizeResult(
            eigenvalues=w, eigenvectors=X, residual_norms=resid, converged=converged,
            intervals=np.column_stack([w - resid, w + resid]), checked=bool(checked),
            missed=self.missed, success=success, message=message, nmatvec=self.spent(),
            nmatvec_check=self.check_matvecs, nrestart=self.restarts)


def _worsen(theta, which, margin, reference):
    """Ritz values moved ``margin`` away from the wanted end(s) (for ``"BE"``: toward the
    middle of the ``reference`` values)."""
    if which == "LA":
        return theta - margin
    if which == "SA":
        return theta + margin
    if which == "LM":
        return theta - np.sign(theta) * np.minimum(margin, np.abs(theta))
    center = 0.5 * (float(reference.min()) + float(reference.max()))
    return theta + np.sign(center - theta) * margin


def _ritz(T, size, nlock, anorm):
    """Ritz values and vectors of ``T[:size, :size]``, whose first ``nlock`` rows are
    locked pairs (diagonal and decoupled: their vectors stay unit vectors).

    Among the others, Ritz values equal to within ``eigh``'s rounding (consecutive gaps
    of at most ``16 eps ||A||``) are one multiple eigenvalue of ``T``, whose eigenvectors
    ``eigh`` returns in an arbitrary basis. That basis is rotated so that only one vector
    keeps a component along the last row (the coupling to the next Lanczos vector); the
    others have residual zero up to the cluster's width, with their Rayleigh quotients as
    values. Without this, copies of a multiple eigenvalue emerging from rounding keep
    mixing with the converged ones, and no pair in the cluster passes the convergence
    test. Locked pairs are left out of the rotation: their residuals are tracked apart.
    """
    theta, S_active = np.linalg.eigh(T[nlock:size, nlock:size])
    _rotate_clusters(theta, S_active, anorm)
    if not nlock:
        return theta, S_active
    S = np.zeros((size, size))
    S[np.arange(nlock), np.arange(nlock)] = 1.0
    S[nlock:, nlock:] = S_active
    return np.concatenate([np.diag(T)[:nlock], theta]), S


def _rotate_clusters(theta, S, anorm):
    """Rotate each cluster of equal Ritz values in place (see :func:`_ritz`)."""
    order = np.argsort(theta, kind="stable")
    close = np.diff(theta[order]) <= 16 * _EPS * anorm
    if not close.any():
        return
    last_row = S.shape[0] - 1
    starts = np.flatnonzero(np.diff(np.concatenate([[False], close, [False]]).astype(int)))
    for first, last in zip(starts[::2], starts[1::2]):
        cols = order[first:last + 1]
        z = S[last_row, cols]
        znorm = float(np.linalg.norm(z))
        if znorm == 0.0:
            continue
        u = z.copy()
        u[0] += math.copysign(znorm, z[0])  # Householder: z @ H = -sign(z0) ||z|| e_0
        H = np.eye(cols.size) - (2.0 / (u @ u)) * np.outer(u, u)
        S[:, cols] = S[:, cols] @ H
        S[last_row, cols[1:]] = 0.0
        theta[cols] = (H * H).T @ theta[cols]


def power_iteration(A, *, maxiter=1000, tol=1e-8, v0=None, rng=None):
    """Largest-magnitude eigenpair of a symmetric operator by power iteration.

    Iterates ``v <- A v / ||A v||`` and stops when the residual
    ``||A v - lambda v|| <= tol * |lambda|`` with ``lambda = v^T A v``.  Converges
    at rate ``|lambda_2 / lambda_1|``; it cannot converge when ``lambda`` and
    ``-lambda`` are both extreme eigenvalues (use :func:`eigsh` then).

    Args:
        A: symmetric operator, in any form accepted by ``aslinearoperator_like``.
        maxiter: maximum number of iterations (one matvec each).
        tol: relative residual tolerance.
        v0: starting vector (default: standard normal from ``rng``).
        rng: seed or ``numpy.random.Generator``.

    Returns:
        ``OptimizeResult`` with ``eigenvalue``, ``eigenvector`` (unit norm),
        ``residual_norm``, ``nit``, ``nmatvec``, ``success`` and ``message``.

    Raises:
        ValueError: if ``v0`` has the wrong shape or is zero, or ``tol`` or
            ``maxiter`` is negative.
        TypeError: if ``tol`` is not a number.

    >>> import numpy as np
    >>> res = power_iteration(np.diag([1.0, -5.0, 2.0]), rng=0)
    >>> round(res.eigenvalue, 6), res.success
    (-5.0, True)
    """
    op = _square("power_iteration", A, v0)
    n = op.shape[0]
    _check_number("power_iteration", "tol", tol)
    maxiter = _check_maxiter("power_iteration", maxiter)
    start = op.nmatvec
    v = _start_vector("power_iteration", v0, n, rng)
    lam, rnorm, nit, success = 0.0, math.inf, 0, False
    for nit in range(1, maxiter + 1):
        w = np.asarray(op.matvec(v), dtype=np.float64)
        lam = float(np.dot(v, w))
        rnorm = float(np.linalg.norm(w - lam * v))
        wn = float(np.linalg.norm(w))
        if rnorm <= tol * abs(lam) or wn == 0.0:
            success = True
            break
        v = w / wn
    return OptimizeResult(
        eigenvalue=lam, eigenvector=v, residual_norm=rnorm, nit=nit,
        nmatvec=op.nmatvec - start, success=success,
        message="converged" if success else "maximum number of iterations reached")
