"""``hessgrad.scipy.linalg``: ``scipy.linalg``'s functions, differentiable to any order.

>>> import numpy as np, hessgrad as hg
>>> import hessgrad.scipy.linalg as hla
>>> a = np.array([[1.0, 2.0], [0.0, 3.0]])
>>> np.round(np.asarray(hla.solve_triangular(a, np.array([5.0, 6.0]))), 12)
array([1., 2.])
>>> round(float(hg.grad(lambda t: hla.expm(t * a)[0, 1])(1.0)), 6)  # 3 e^3 - e
57.538329

Factorisations return what SciPy returns (``cho_factor``: ``(c, lower)``, ``lu_factor``:
``(lu, piv)``) and the matching solvers accept them; derivatives flow through the factors.
Matrix functions (``expm``, ``sqrtm``, ``logm``) differentiate through their Fréchet
derivatives (block-matrix formula, see :mod:`hessgrad.ops.matrix_functions`), matrix equations
through the same equations with the adjoint operators.
"""

import numpy as np

from .. import numpy as hnp
from ..ops import decompositions as dec, matrix_functions as mf


def _arr(x):
    return hnp.asarray(x)


def _H(x):
    x = hnp.swapaxes(x, -1, -2)
    return hnp.conj(x) if np.dtype(x.dtype).kind == "c" else x


def _vector_rhs(b):
    """``(b as a matrix, undo)``: a vector right-hand side as one column."""
    b = _arr(b)
    if b.ndim == 1:
        return hnp.reshape(b, (-1, 1)), lambda x: hnp.reshape(x, (-1,))
    return b, lambda x: x


def _trans_code(trans):
    codes = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}
    if trans not in codes:
        raise ValueError(f"trans must be one of 0, 1, 2, 'N', 'T', 'C', got {trans!r}")
    return codes[trans]


def _op(a, code):
    if code == 0:
        return a
    a = hnp.swapaxes(a, -1, -2)
    return hnp.conj(a) if code == 2 and np.dtype(a.dtype).kind == "c" else a


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``x`` with ``op(a) x = b``, ``op`` per ``trans`` (0/'N', 1/'T', 2/'C'), reading only the
    ``lower`` or upper triangle of ``a`` (its diagonal taken as ones with ``unit_diagonal``)."""
    a = _arr(a)
    code = _trans_code(trans)
    if unit_diagonal:
        n = a.shape[-1]
        a = a * (1.0 - np.eye(n)) + np.eye(n)
    if code:
        a, lower = _op(a, code), not lower
    b, undo = _vector_rhs(b)
    return undo(dec.solve_triangular(a, b, lower=bool(lower)))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor: upper ``U`` with ``a = U^H U`` (default, reading the upper
    triangle) or lower ``L`` with ``a = L L^H`` (``lower=True``, reading the lower one)."""
    return hnp.linalg.cholesky(_arr(a), upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for :func:`cho_solve`: ``c`` holds the factor in the ``lower`` (or upper)
    triangle and ``a``'s entries in the other, as SciPy's."""
    a = _arr(a)
    factor = cholesky(a, lower=lower)
    other = hnp.triu(a, 1) if lower else hnp.tril(a, -1)
    return factor + other, lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b`` from ``cho_factor(a)``."""
    c, lower = c_and_lower
    c = _arr(c)
    b, undo = _vector_rhs(b)
    if lower:
        y = dec.solve_triangular(c, b, lower=True)
        x = dec.solve_triangular(_H(c), y, lower=False)
    else:
        y = dec.solve_triangular(_H(c), b, lower=True)
        x = dec.solve_triangular(c, y, lower=False)
    return undo(x)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)``: LAPACK's packed LU factors and pivot indices (SciPy's values),
    differentiable in ``a`` (the pivots are constants)."""
    a = _arr(a)
    piv = mf.lu_pivots(a)
    perm = mf.pivots_to_permutation(piv)
    return mf.lu_nopivot(hnp.take(a, perm, axis=0)), piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``x`` with ``op(a) x = b`` from ``lu_factor(a)``, ``op`` per ``trans``."""
    lu, piv = lu_and_piv
    lu = _arr(lu)
    code = _trans_code(trans)
    n = lu.shape[-1]
    perm = mf.pivots_to_permutation(piv)
    b, undo = _vector_rhs(b)
    lower = lu * np.tril(np.ones((n, n)), -1) + np.eye(n)
    if code == 0:
        y = dec.solve_triangular(lower, hnp.take(b, perm, axis=0), lower=True)
        return undo(dec.solve_triangular(lu, y, lower=False))
    # a = P^T L U, so op(a) = op(U) op(L) P: solve op(U) z = b, op(L) y = z, x = P^T y
    z = dec.solve_triangular(_op(lu, code), b, lower=True)
    y = dec.solve_triangular(_op(lower, code), z, lower=False)
    inverse = hnp.argsort(perm)
    return undo(hnp.take(y, inverse, axis=0))


def _symmetric_from(a, lower):
    if lower:
        return hnp.tril(a) + _H(hnp.tril(a, -1))
    return hnp.triu(a) + _H(hnp.triu(a, 1))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``x`` with ``a x = b`` (``a^T x = b`` when ``transposed``). ``assume_a``: None or
    'general' (LU), 'symmetric'/'hermitian' (only the ``lower`` or upper triangle is read),
    'positive definite' (Cholesky), 'diagonal', 'lower triangular', 'upper triangular',
    SciPy's names and short forms ('gen', 'sym', 'her', 'pos')."""
    a = _arr(a)
    kind = {None: "gen", "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym",
            "her": "her", "hermitian": "her", "pos": "pos", "positive definite": "pos",
            "diagonal": "diagonal", "lower triangular": "lower", "upper triangular": "upper",
            "tridiagonal": "gen", "banded": "gen"}.get(assume_a)
    if kind is None:
        raise ValueError(f"solve: unknown assume_a {assume_a!r}")
    if transposed:
        if kind in ("lower", "upper"):
            return solve_triangular(a, b, trans=1, lower=kind == "lower")
        a = hnp.swapaxes(a, -1, -2)
        lower = not lower
    if kind in ("sym", "her"):
        a = _symmetric_from(a, lower)
    elif kind == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    elif kind == "diagonal":
        d = hnp.diagonal(a)
        b = _arr(b)
        return b / (d if b.ndim == 1 else d[:, None])
    elif kind in ("lower", "upper"):
        return solve_triangular(a, b, lower=kind == "lower")
    return hnp.linalg.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of a square matrix."""
    return hnp.linalg.inv(_arr(a))


def det(a, overwrite_a=False, check_finite=True):
    """The determinant."""
    return hnp.linalg.det(_arr(a))


def slogdet(a):
    """``(sign, log|det|)`` (numpy.linalg.slogdet's; scipy.linalg has none)."""
    return hnp.linalg.slogdet(_arr(a))


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None,  # noqa: A002
         driver=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric/Hermitian ``a`` (its ``lower``
    or upper triangle), or of the generalized problem ``a v = w b v`` (``type=1``, ``b``
    positive definite; eigenvectors normalized so ``v^H b v = I``). ``subset_by_index=(lo,
    hi)`` keeps eigenvalues ``lo..hi`` (inclusive). Eigenvector derivatives need distinct
    eigenvalues; eigenvector signs may differ from SciPy's (each column is determined up to
    sign)."""
    if subset_by_value is not None:
        raise NotImplementedError("eigh: subset_by_value is not supported (its size depends "
                                  "on the values); use subset_by_index")
    if type != 1:
        raise NotImplementedError("eigh: only the generalized problem type=1 is supported")
    a = _symmetric_from(_arr(a), lower)
    if b is not None:
        chol = hnp.linalg.cholesky(_symmetric_from(_arr(b), lower))
        c = dec.solve_triangular(chol, a, lower=True)
        c = _H(dec.solve_triangular(chol, _H(c), lower=True))
        w, u = hnp.linalg.eigh(c)
        v = dec.solve_triangular(_H(chol), u, lower=False)
    else:
        w, v = hnp.linalg.eigh(a)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


def eigvalsh(a, b=None, *, lower=True, subset_by_index=None, **kwargs):
    """The eigenvalues of :func:`eigh`."""
    return eigh(a, b, lower=lower, eigvals_only=True, subset_by_index=subset_by_index)


def expm(A):
    """The matrix exponential (of a matrix or a stack of them)."""
    return mf.expm(_arr(A))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``(expm(A), L(A, E))`` (or only the Fréchet derivative ``L`` with
    ``compute_expm=False``), from the block exponential ``expm([[A, E], [0, A]])``."""
    A, E = _arr(A), _arr(E)
    n = A.shape[-1]
    big = mf.expm(hnp.concatenate([hnp.concatenate([A, E], axis=-1),
                                   hnp.concatenate([hnp.zeros_like(A), A], axis=-1)], axis=-2))
    frechet = big[..., :n, n:]
    return (big[..., :n, :n], frechet) if compute_expm else frechet


def sqrtm(A, disp=True, blocksize=64):
    """The principal square root of a square matrix (or stack)."""
    return mf.sqrtm(_arr(A))


def logm(A, disp=True):
    """The principal logarithm of a square matrix (or stack)."""
    return mf.logm(_arr(A))


def solve_sylvester(a, b, q):
    """``x`` with ``a x + x b = q``."""
    return mf.solve_sylvester(_arr(a), _arr(b), _arr(q))


def solve_continuous_lyapunov(a, q):
    """``x`` with ``a x + x a^H = q``."""
    a = _arr(a)
    return mf.solve_sylvester(a, _H(a), _arr(q))


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b`` for the banded ``a`` stored in LAPACK's band form ``ab``
    (``ab[u + i - j, j] = a[i, j]``), differentiable in ``ab`` (the band is expanded to a
    dense matrix: O(n^2) memory)."""
    nlower, nupper = (int(v) for v in l_and_u)
    ab = _arr(ab)
    rows, n = ab.shape
    if rows != nlower + nupper + 1:
        raise ValueError(f"solve_banded: ab has {rows} rows, expected l + u + 1 = "
                         f"{nlower + nupper + 1}")
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    band = nupper + i - j
    inside = (band >= 0) & (band < rows)
    dense = hnp.where(inside, ab[np.clip(band, 0, rows - 1), j], 0.0)
    return hnp.linalg.solve(dense, _arr(b))


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR factorisation: ``mode`` 'full' (``Q`` square), 'economic', or 'r' (returns ``(R,)``
    as SciPy, ``R`` of ``a``'s shape). Derivatives for square and tall ``a``."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    a = _arr(a)
    if mode == "full":
        return hnp.linalg.qr(a, mode="complete")
    if mode == "economic":
        return hnp.linalg.qr(a, mode="reduced")
    if mode == "r":  # SciPy's R is M x N (numpy's K x N, K = min(M, N)): zero rows below
        r = hnp.linalg.qr(a, mode="r")
        m, k = a.shape[-2], r.shape[-2]
        if m > k:
            r = hnp.concatenate([r, hnp.zeros(r.shape[:-2] + (m - k, r.shape[-1]),
                                              dtype=r.dtype)], axis=-2)
        return (r,)
    raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """Singular value decomposition ``(U, s, Vh)`` (or ``s``)."""
    out = hnp.linalg.svd(_arr(a), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def svdvals(a, overwrite_a=False, check_finite=True):
    """The singular values, descending."""
    return hnp.linalg.svd(_arr(a), compute_uv=False)


def block_diag(*arrs):
    """The block diagonal matrix of the given arrays (scalars and 1-D arrays as rows)."""
    if not arrs:
        return np.zeros((1, 0))
    blocks = []
    for x in arrs:
        x = _arr(x)
        blocks.append(hnp.reshape(x, (1, -1)) if x.ndim < 2 else x)
    widths = [blk.shape[1] for blk in blocks]
    dtype = np.result_type(*[np.dtype(blk.dtype) for blk in blocks])
    rows = []
    for k, blk in enumerate(blocks):
        left, right = sum(widths[:k]), sum(widths[k + 1:])
        parts = [hnp.zeros((blk.shape[0], left), dtype=dtype), blk,
                 hnp.zeros((blk.shape[0], right), dtype=dtype)]
        rows.append(hnp.concatenate(parts, axis=1))
    return hnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored;
    ``r = conj(c)`` when omitted: a Hermitian Toeplitz matrix)."""
    c = hnp.ravel(_arr(c))
    r = hnp.conj(c) if r is None else hnp.ravel(_arr(r))
    m, n = c.shape[0], r.shape[0]
    vals = hnp.concatenate([c[::-1], r[1:]])
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return vals[(m - 1) - i + j]


def circulant(c):
    """The circulant matrix with first column ``c``: ``C[i, j] = c[(i - j) mod n]``."""
    c = hnp.ravel(_arr(c))
    n = c.shape[0]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return c[(i - j) % n]


__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "expm", "expm_frechet",
           "sqrtm", "logm", "solve_sylvester", "solve_continuous_lyapunov", "solve_banded",
           "qr", "svd", "svdvals", "block_diag", "toeplitz", "circulant"]
