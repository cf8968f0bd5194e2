"""Dense inner loops for the solvers (a leaf: numpy, numba and SciPy's BLAS only).

Only dense loops live here, Numba-compiled and allocation-free where that is fastest; the
algorithms that call them are in :mod:`hessgrad.solvers.lanczos` and :mod:`hessgrad.solvers.krylov`.
"""

import math

import numba
import numpy as np
import scipy.linalg.blas as _blas


# Where the column-by-column loop stops paying: from about n = 30,000 the vector ``w`` no
# longer fits in cache, and BLAS's blocked matrix-vector products move less memory (m = 20:
# 0.8x the loop's time at n = 30,000, 0.6-0.7x at 60,000-100,000; 1.0-1.25x at 10,000).
BLAS_REORTHOGONALIZATION_SIZE = 25_000
_SQRT_HALF = 0.7071067811865476  # the DGKS test: re-orthogonalise when ||w|| fell below this


def cgs2(Q, m, w, h, wnorm=-1.0):
    """Orthogonalise ``w`` in place against columns ``Q[:, :m]``: classical
    Gram-Schmidt with one re-orthogonalisation pass when needed.

    A Numba loop for vectors that fit in cache, BLAS products for longer ones; see
    :func:`_cgs2_loop` for the method and the meaning of ``h`` and the result.
    ``wnorm`` is ``||w||`` if the caller knows it (saves a pass), else negative.
    """
    if w.shape[0] >= BLAS_REORTHOGONALIZATION_SIZE:
        return _cgs2_blas(Q, m, w, h, wnorm)
    return _cgs2_loop(Q, m, w, h, wnorm)


def _cgs2_blas(Q, m, w, h, wnorm):
    """:func:`_cgs2_loop` with each pass as two BLAS matrix-vector products, the
    second one in place (``dgemv`` with ``beta = 1``: no temporary the size of ``w``)."""
    Qm = Q[:, :m]
    h[:m] = 0.0
    before = initial = wnorm if wnorm >= 0 else math.sqrt(float(w @ w))
    for _ in range(2):
        c = Qm.T @ w
        h[:m] += c
        out = _blas.dgemv(-1.0, Qm, c, 1.0, w, overwrite_y=1)
        if out is not w:     # w was not contiguous float64: f2py worked on a copy
            w[:] = out
        after = math.sqrt(float(w @ w))
        if after > _SQRT_HALF * before:
            break
        before = after
    return after, initial


def lanczos_step(Q, j, y, h, beta_prev):
    """The next Lanczos vector, unnormalised, in ``Q[:, j+1]``, from ``y = A q_j``
    (``y`` is not modified).

    First the three-term recurrence, ``w = y - alpha q_j - beta_prev q_{j-1}`` with
    ``alpha = q_j^T y`` (``beta_prev = 0`` for ``j = 0``), written straight into the
    basis column, then :func:`cgs2` against all of ``Q[:, :j+1]``.  The recurrence
    leaves only rounding-sized components along the basis, so ``cgs2`` usually stops
    after one pass: half the memory traffic of orthogonalising ``A q_j`` directly,
    where the recurrence's large cancellation forces the second pass (the textbook
    "Lanczos with complete reorthogonalisation").  Returns ``(alpha, ||w|| after,
    ||A q_j||)``; ``alpha`` includes the correction of the full pass.
    """
    w = Q[:, j + 1]
    alpha, initial, wnorm = _recurrence(Q, j, y, w, beta_prev)
    after, _ = cgs2(Q, j + 1, w, h, wnorm)
    return alpha + h[j], after, initial


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _recurrence(Q, j, y, w, beta_prev):
    """``w = y - alpha q_j - beta_prev q_{j-1}``; returns ``(alpha, ||y||, ||w||)``.
    (Writing ``w`` from ``y`` spares copying the product into the basis first.)"""
    n = y.shape[0]
    a = 0.0
    s = 0.0
    for i in range(n):
        a += Q[i, j] * y[i]
        s += y[i] * y[i]
    t = 0.0
    if beta_prev != 0.0:
        for i in range(n):
            w[i] = y[i] - (a * Q[i, j] + beta_prev * Q[i, j - 1])
            t += w[i] * w[i]
    else:
        for i in range(n):
            w[i] = y[i] - a * Q[i, j]
            t += w[i] * w[i]
    return a, np.sqrt(s), np.sqrt(t)


# reassoc lets LLVM vectorise the dot-product reductions (3x at n = 10,000);
# the sums are only reordered, and orthogonality is checked, not assumed.
@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _cgs2_loop(Q, m, w, h, wnorm):
    """Orthogonalise ``w`` in place against columns ``Q[:, :m]``: classical
    Gram-Schmidt with one re-orthogonalisation pass when needed.

    Each pass computes all coefficients ``c = Q^T w`` first, then subtracts ``Q c``
    one column at a time.  The second pass ("twice is enough", Giraud et al.) runs
    only when the first removed more than about 30% of ``w``'s norm, the
    Daniel-Gragg-Kaufman-Stewart test ARPACK uses (``||w'|| < ||w|| / sqrt(2)``);
    otherwise cancellation was mild and one pass is accurate to working precision.
    ``Q`` should be Fortran-ordered so that each column is contiguous.  ``h[:m]``
    receives the summed coefficients of the passes; the function returns ``||w||``
    after and before orthogonalisation (the latter bounds ``||A||`` in Lanczos).
    """
    n = w.shape[0]
    c = np.empty(m)
    for j in range(m):
        h[j] = 0.0
    if wnorm < 0:
        s = 0.0
        for i in range(n):
            s += w[i] * w[i]
        wnorm = np.sqrt(s)
    before = initial = wnorm
    for _ in range(2):
        for j in range(m):
            s = 0.0
            for i in range(n):
                s += Q[i, j] * w[i]
            c[j] = s
        for j in range(m):
            cj = c[j]
            h[j] += cj
            for i in range(n):
                w[i] -= cj * Q[i, j]
        s = 0.0
        for i in range(n):
            s += w[i] * w[i]
        after = np.sqrt(s)
        if after > _SQRT_HALF * before:
            break
        before = after
    return after, initial


@numba.njit(cache=True)
def cg_step(x, r, p, q, rz, next_direction):
    """A whole CG iteration after the product ``q = A p``, in one call.

    ``pq = p.q``; if ``pq > 0``: ``alpha = rz / pq``, ``x += alpha p``,
    ``r -= alpha q``, ``rr = r.r`` and, if ``next_direction`` (no preconditioner, so
    ``z = r``), the next direction ``p = r + (rr / rz) p``.  Returns ``(pq, rr)``;
    ``x``, ``r`` and ``p`` are left untouched when ``pq`` is not positive.

    One call instead of four saves ~10 us of Python dispatch per iteration.  No
    fastmath: each element is rounded exactly as numpy's ``x += alpha * p`` would
    round it, the dots are BLAS ``dot`` (numba calls the same OpenBLAS kernel as
    ``np.dot``) and the scalars are rounded to the arrays' dtype, so the iterates
    match ``scipy.sparse.linalg.cg``'s bit for bit (CG on ill-conditioned systems is
    chaotic; identical rounding is what makes iteration counts comparable).
    """
    pq = np.dot(p, q)
    if not pq > 0:
        return pq, 0.0
    alpha = x.dtype.type(rz / pq)
    for i in range(r.shape[0]):
        r[i] -= alpha * q[i]
    rr = np.dot(r, r)
    # x's update waits for the pass that rewrites p: one read of p less.
    if next_direction:
        beta = x.dtype.type(rr / rz)
        for i in range(p.shape[0]):
            x[i] += alpha * p[i]
            p[i] = r[i] + beta * p[i]
    else:
        for i in range(x.shape[0]):
            x[i] += alpha * p[i]
    return pq, rr


@numba.njit(cache=True)
def xpby(z, beta, p):
    """In place ``p = z + beta p`` (the CG search-direction update)."""
    for i in range(p.shape[0]):
        p[i] = z[i] + beta * p[i]


# MINRES's vector work in two calls per iteration (one before the rotation, one after),
# each fusing numpy's several passes and temporaries. No fastmath: every element is
# rounded as numpy rounds it, and the dot products are BLAS's, so the iterates match
# scipy.sparse.linalg.minres's (the ill-conditioned tests compare them to 1e-8).
@numba.njit(cache=True)
def minres_lanczos(y, v, r_old, r_cur, out, shift, c_old, beta, residual_dot):
    """The Lanczos step after ``y = A v``: ``out = (y - shift v) - c_old r_old``,
    ``alpha = v.out``, ``out -= (alpha / beta) r_cur``.  Returns ``(alpha, out.out)``
    (the latter only if ``residual_dot``, i.e. without a preconditioner; else 0)."""
    sh = v.dtype.type(shift)  # numpy's y - shift * v rounds shift to the dtype
    for i in range(out.shape[0]):
        out[i] = (y[i] - sh * v[i]) - c_old * r_old[i]
    alpha = float(np.dot(v, out))
    c = alpha / beta
    for i in range(out.shape[0]):
        out[i] -= c * r_cur[i]
    return alpha, float(np.dot(out, out)) if residual_dot else 0.0


@numba.njit(cache=True)
def minres_update(v, w_old, w, x, eps_prev, delta, inv_gamma, phi, y, inv_beta):
    """``w_old = (v - eps_prev w_old - delta w) inv_gamma`` (the new direction, in
    ``w_old``'s buffer), ``x += phi w_old`` and the next Lanczos vector
    ``v = inv_beta y`` (in ``v``'s buffer).  Returns ``||x||``."""
    s = v.dtype.type(inv_beta)  # numpy rounds a Python scalar to the array's dtype
    for i in range(x.shape[0]):
        d = (v[i] - eps_prev * w_old[i] - delta * w[i]) * inv_gamma
        w_old[i] = d
        x[i] += phi * d
        v[i] = s * y[i]
    return np.sqrt(np.dot(x, x))
