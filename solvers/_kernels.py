"""Numba inner loops for the solvers (a leaf: numpy and numba only).

Only dense, allocation-free loops live here; the algorithms that call them are in
:mod:`solvers.lanczos` and :mod:`solvers.krylov`.
"""

import numba
import numpy as np


# reassoc lets LLVM vectorise the dot-product reductions (3x at n = 10,000);
# the sums are only reordered, and orthogonality is checked, not assumed.
@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def cgs2(Q, m, w, h):
    """Orthogonalise ``w`` in place against columns ``Q[:, :m]``: classical
    Gram-Schmidt with one re-orthogonalisation pass when needed.

    Each pass computes all coefficients ``c = Q^T w`` first, then subtracts ``Q c``
    one column at a time.  The second pass ("twice is enough", Giraud et al.) runs
    only when the first removed more than about 30% of ``w``'s norm, the
    Daniel-Gragg-Kaufman-Stewart test ARPACK uses (``||w'|| < ||w|| / sqrt(2)``);
    otherwise cancellation was mild and one pass is accurate to working precision.
    ``Q`` should be Fortran-ordered so that each column is contiguous.  ``h[:m]``
    receives the summed coefficients of the passes; the function returns ``||w||``
    after orthogonalisation.
    """
    n = w.shape[0]
    c = np.empty(m)
    for j in range(m):
        h[j] = 0.0
    s = 0.0
    for i in range(n):
        s += w[i] * w[i]
    before = np.sqrt(s)
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
        if after > 0.7071067811865476 * before:
            break
        before = after
    return after


@numba.njit(cache=True)
def cg_update(x, r, p, q, alpha):
    """Fused CG update ``x += alpha p``, ``r -= alpha q`` in one pass.

    No fastmath: each element is rounded exactly as numpy's ``x += alpha * p``
    would round it, so the iterates match ``scipy.sparse.linalg.cg`` bit for bit
    (CG on ill-conditioned systems is chaotic; identical rounding is what makes
    iteration counts comparable).
    """
    for i in range(x.shape[0]):
        x[i] += alpha * p[i]
        r[i] -= alpha * q[i]


@numba.njit(cache=True)
def xpby(z, beta, p):
    """In place ``p = z + beta p`` (the CG search-direction update)."""
    for i in range(p.shape[0]):
        p[i] = z[i] + beta * p[i]
