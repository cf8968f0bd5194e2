"""Two matrix-vector products with the same matrix in one pass over it.

``matvec_pair(A, x, y) = (A @ x, A @ y)`` and ``vecmat_pair(A, g, h) = (g @ A, h @ A)`` for a
C-contiguous float64 matrix. When ``A`` does not fit in the cache each product is a pass over
memory, and BLAS has no batched matrix-vector product: its GEMM with two columns is slower
than two GEMVs (12 ms against 8 ms for a 10,000 x 1000 matrix here), while these loops read
``A`` once (4.6-5.7 ms). The sums are reassociated for SIMD (as BLAS does), so results agree
with numpy's to rounding, not bit for bit. Anything else runs as two numpy products.
"""

import numpy as np
from numba import njit

_F64 = np.dtype(np.float64)


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _matvec_pair(A, x, y):
    m, n = A.shape
    ax, ay = np.empty(m), np.empty(m)
    for i in range(m):
        s = 0.0
        t = 0.0
        for j in range(n):
            a = A[i, j]
            s += a * x[j]
            t += a * y[j]
        ax[i] = s
        ay[i] = t
    return ax, ay


@njit(cache=True, nogil=True)
def _vecmat_pair(A, g, h):
    m, n = A.shape
    ga, ha = np.zeros(n), np.zeros(n)
    for i in range(m):
        gi = g[i]
        hi = h[i]
        for j in range(n):
            a = A[i, j]
            ga[j] += gi * a
            ha[j] += hi * a
    return ga, ha


# Row kernels (:mod:`hessgrad.compiler.streamed`) take rows four at a time: four independent
# sums hide the latency of each addition, and a sweep of ``total`` adds four rows' terms.
@njit(cache=True, nogil=True, fastmath={"reassoc"})
def rows_dot4(A, i, x):
    """``A[i:i + 4] @ x``, the sums reassociated for SIMD."""
    s0 = s1 = s2 = s3 = 0.0
    for j in range(A.shape[1]):
        xj = x[j]
        s0 += A[i, j] * xj
        s1 += A[i + 1, j] * xj
        s2 += A[i + 2, j] * xj
        s3 += A[i + 3, j] * xj
    return s0, s1, s2, s3


@njit(cache=True, nogil=True)
def rows_axpy4(total, g0, g1, g2, g3, A, i):
    """``total += [g0, g1, g2, g3] @ A[i:i + 4]``."""
    for j in range(A.shape[1]):
        total[j] += g0 * A[i, j] + g1 * A[i + 1, j] + g2 * A[i + 2, j] + g3 * A[i + 3, j]


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def row_dot(A, i, x):
    """``A[i] @ x``, the sum reassociated for SIMD."""
    s = 0.0
    for j in range(A.shape[1]):
        s += A[i, j] * x[j]
    return s


@njit(cache=True, nogil=True)
def row_axpy(total, g, A, i):
    """``total += g * A[i]``."""
    for j in range(A.shape[1]):
        total[j] += g * A[i, j]


def _fits(A, u, w):
    return (type(A) is np.ndarray and A.ndim == 2 and A.dtype == _F64 and A.flags.c_contiguous
            and all(type(v) is np.ndarray and v.ndim == 1 and v.dtype == _F64 for v in (u, w)))


def matvec_pair(A, x, y):
    """``(A @ x, A @ y)`` reading ``A`` once."""
    if _fits(A, x, y) and x.shape[0] == y.shape[0] == A.shape[1]:
        return _matvec_pair(A, x, y)
    return np.matmul(A, x), np.matmul(A, y)


def vecmat_pair(A, g, h):
    """``(g @ A, h @ A)`` reading ``A`` once."""
    if _fits(A, g, h) and g.shape[0] == h.shape[0] == A.shape[0]:
        return _vecmat_pair(A, g, h)
    return np.matmul(g, A), np.matmul(h, A)
