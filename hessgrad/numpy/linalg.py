"""``hessgrad.numpy.linalg``: numpy.linalg with derivatives (any order, stacked matrices where
numpy stacks them).

Derivative conventions (see ``hessgrad.ops.decompositions`` and ``hessgrad.ops.eig``): complex
input follows JAX's; ``cholesky``, ``eigh``, ``eigvalsh`` and ``pinv``/``svd``/``matrix_rank``
with ``hermitian=True`` read one triangle of their input as numpy does (the lower one, or the
one ``UPLO``/``upper`` names; never the diagonal's imaginary parts) and are differentiated as
the functions they compute: their gradients live on that triangle (differentiate
``f((a + a^H) / 2)`` for the symmetric gradient of a symmetric parametrisation);
eigenvector and singular-vector derivatives need distinct eigenvalues / singular values (they
are NaN or infinite at degenerate spectra, where the vectors are not unique), and complex ones
only exist for phase-invariant functions of the vectors (``|V|^2``, ``V V^H``, ``U Vh``);
``eig``'s eigenvector derivatives keep LAPACK's
normalisation (unit norm, largest entry real), as JAX's do; ``pinv`` and ``lstsq`` are
differentiable where the rank is locally constant; ``det`` and ``slogdet`` need an invertible
matrix for their derivatives.
"""

import operator as _operator
from collections import namedtuple as _namedtuple

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, dtype_of as _dtype_of, shape_of as _shape_of
from ..ops import core as _core, decompositions as _dec, eig as _eig, elementwise as _ew, \
    linalg as _la, reduction as _red
from ..ops.shape import swapaxes as _swapaxes, transpose as _transpose
from ._arraylike import asarray as _asarray, constant as _constant
from ._products import vecdot as _vecdot
from ._reductions import argsort as _argsort, sort as _sort
from ._shapes import take_along_axis as _take_along_axis
from ._out import writes_out as _writes_out

LinAlgError = _np.linalg.LinAlgError

EigResult = _namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = _namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = _namedtuple("QRResult", ["Q", "R"])
SVDResult = _namedtuple("SVDResult", ["U", "S", "Vh"])
SlogdetResult = _namedtuple("SlogdetResult", ["sign", "logabsdet"])

_NOVALUE = object()  # pinv's rtol left unset (numpy distinguishes it from None)


def _arr(x, fname="linalg", what="a"):
    """A tensor or a float array (integer input is promoted, as numpy.linalg does); nested
    sequences holding tensors are stacked."""
    x = _asarray(x, f"linalg.{fname}" if fname != "linalg" else fname, what)
    if not isinstance(x, _Tensor):
        return x if x.dtype.kind in "fc" else x.astype(_np.float64)
    return x if x.dtype.kind in "fc" else _core.cast(x, dtype=_np.float64)


def _T(x):
    return _swapaxes(x, -1, -2)


_H = _dec._H  # the conjugate transpose (the transpose of real input)


def _is_symbolic(x):
    return isinstance(x, _Tensor) and x.is_symbolic


# --- inverses, solves, determinants --------------------------------------------------------
def inv(a):
    """Inverse of a square matrix (or a stack of them).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return _dec.inv(_arr(a))


def pinv(a, rcond=None, hermitian=False, *, rtol=_NOVALUE):
    """Moore-Penrose pseudo-inverse, numpy's ``rcond``/``rtol``; differentiable where the rank
    is locally constant. With ``hermitian=True`` only the lower triangle of ``a`` is read (the
    Hermitian matrix ``tril(a, -1) + tril(a, -1)^H + Re(diag(a))``), as in numpy."""
    a = _arr(a)
    if hermitian:
        a = _dec.hermitian_from_lower(a)
    if rcond is None:
        if rtol is _NOVALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(_shape_of(a)[-2:]) * _np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NOVALUE:
        raise ValueError("pinv: rtol and rcond cannot both be set")
    return _dec.pinv(a, rcond=float(rcond))


def solve(a, b):
    """``x`` with ``a @ x = b``: ``b`` a vector (n,) or a stack of matrices (..., n, k), as in
    numpy 2. Derivatives are solves with ``a`` and its transpose.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([1.0, 1.0])).numpy()
    array([0.5 , 0.25])
    """
    a, b = _arr(a), _arr(b)
    sa, sb = _shape_of(a), _shape_of(b)
    if len(sb) == 1:
        if len(sa) >= 2 and sb[0] != sa[-1]:
            raise ValueError(f"solve: a has shape {sa} and b has shape {sb}; b must have "
                             f"length {sa[-1]}")
        x = _dec.solve(a, _core.reshape(b, shape=(sb[0], 1)))
        return _core.getitem(x, index=(Ellipsis, 0))
    return _dec.solve(a, b)


def det(a):
    """Determinant of a square matrix (or stack)."""
    return _dec.det(_arr(a))


def slogdet(a):
    """``(sign, logabsdet)`` of a square matrix (or stack); a real sign is a constant, a
    complex one (``det / |det|``) is differentiable, as in JAX.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> sign, logdet = hnp.linalg.slogdet(np.diag([-2.0, 3.0]))
    >>> float(sign), round(float(logdet), 6)
    (-1.0, 1.791759)
    """
    sign, logabsdet = _dec.slogdet(_arr(a))
    return SlogdetResult(sign, logabsdet)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Numerical rank (an integer constant) by numpy's rule; with ``hermitian=True`` of the
    Hermitian matrix held in the lower triangle of ``A``, as in numpy."""
    A, tol = _arr(A), _constant(tol, "linalg.matrix_rank", "tol")
    return _dec.matrix_rank(_dec.hermitian_from_lower(A) if hermitian else A, tol=tol, rtol=rtol)


def lstsq(a, b, rcond=None):
    """Least squares ``(x, residuals, rank, s)`` as numpy returns them. ``x`` (and the
    residuals) are differentiable where ``a`` has locally constant rank, e.g. full rank.

    Residuals are the squared 2-norms of ``b - a x`` per column when ``a`` has full column
    rank and more rows than columns, else an empty array; while tracing a graph the rank is
    not known, so full rank is assumed.
    """
    a, b = _arr(a), _arr(b)
    sa, sb = _shape_of(a), _shape_of(b)
    if len(sa) != 2:
        raise ValueError(f"lstsq: a has shape {sa} but must be 2-D")
    if len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise ValueError(f"lstsq: a has shape {sa} and b has shape {sb}; b must be "
                         f"({sa[0]},) or ({sa[0]}, k)")
    m, n = sa
    eps = _np.finfo(a.dtype).eps
    rcond = eps * max(m, n) if rcond is None else max(float(rcond), eps)
    x = _la.matmul(_dec.pinv(a, rcond=rcond), b)
    rank = _dec.matrix_rank(a, rtol=rcond)
    full = m > n and (_is_symbolic(rank) or int(rank.numpy()) == n)
    if full:
        residuals = _red.sum(_red.abs2(b - _la.matmul(a, x)), axis=0)  # real, as numpy
        if len(sb) == 1:
            residuals = _core.reshape(residuals, shape=(1,))
    else:
        residuals = _np.empty((0,), dtype=_np.result_type(a.dtype, b.dtype))
    return x, residuals, rank, _dec.svdvals(a)


def matrix_power(a, n):
    """``a`` to the integer power ``n`` (0 gives the identity, negative powers invert) by
    repeated squaring."""
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent n must be an integer, got {n!r}") from None
    a = _asarray(a, "linalg.matrix_power")
    if n < 0 or _dtype_of(a).kind in "fc":  # numpy keeps integer/boolean matrices' dtype
        a = _arr(a)                         # for n >= 0 (products only)
    s = _shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"matrix_power: a has shape {s} but must be a square matrix (or a "
                         "stack of them)")
    if n == 0:
        return _core.zeros_like(a) + _np.eye(s[-1], dtype=a.dtype)
    if n < 0:
        a, n = _dec.inv(a), -n
    result, z = None, a
    while True:
        if n & 1:
            result = z if result is None else _la.matmul(result, z)
        n >>= 1
        if not n:
            return result
        z = _la.matmul(z, z)


def multi_dot(arrays, *, out=None):
    """``dot`` of a chain of matrices in the cheapest order (the first and last may be
    vectors), chosen by dynamic programming on the shapes."""
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (hessgrad arrays are immutable)")
    arrays = [_arr(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expecting at least two arrays, got {len(arrays)}")
    if len(arrays) == 2:
        return _la.dot(arrays[0], arrays[1])
    shapes = [_shape_of(x) for x in arrays]
    first_vec, last_vec = len(shapes[0]) == 1, len(shapes[-1]) == 1
    if first_vec:
        arrays[0] = _core.reshape(arrays[0], shape=(1, shapes[0][0]))
    if last_vec:
        arrays[-1] = _core.reshape(arrays[-1], shape=(shapes[-1][0], 1))
    shapes = [_shape_of(x) for x in arrays]
    for k, s in enumerate(shapes):
        if len(s) != 2:
            raise ValueError(f"multi_dot: array {k} has shape {s}; all but the first and "
                             "last must be 2-D")
    for k in range(len(shapes) - 1):
        if shapes[k][1] != shapes[k + 1][0]:
            raise ValueError(f"multi_dot: shapes {shapes[k]} (array {k}) and "
                             f"{shapes[k + 1]} (array {k + 1}) are not aligned")
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    result = _chain(arrays, _chain_order(dims), 0, len(arrays) - 1)
    if first_vec and last_vec:
        return _core.reshape(result, shape=())
    if first_vec or last_vec:
        return _core.reshape(result, shape=(-1,))
    return result


def _chain_order(dims):
    """``split[i][j]``: where the cheapest product of matrices i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _la.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


# --- factorisations ------------------------------------------------------------------------
def cholesky(a, /, *, upper=False):
    """Cholesky factor of a symmetric (Hermitian) positive definite matrix (or stack): lower
    ``L`` with ``a = L L^H`` read from the lower triangle of ``a``, or, when ``upper=True``,
    upper ``U`` with ``a = U^H U`` read from the upper triangle, as in numpy (the other
    triangle and the diagonal's imaginary parts are not read, and get no gradient).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.cholesky(np.array([[4.0, 99.0], [2.0, 5.0]])).numpy()
    array([[2., 0.],
           [1., 2.]])
    """
    a = _arr(a)
    if upper:  # a^H's lower triangle is a's upper one
        return _H(_dec.cholesky(_H(a)))
    return _dec.cholesky(a)


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric or Hermitian matrix (or stack),
    reading only the ``UPLO`` triangle ('L' lower, 'U' upper) as numpy does; derivatives are
    those of that function (gradients lie in that triangle). Eigenvector derivatives need
    distinct eigenvalues.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> w, v = hnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.numpy()
    array([1., 3.])
    """
    a = _arr(a)
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    # a^H's lower triangle is a's upper one (a^T's would be its conjugate)
    w, v = _dec.eigh(_H(a) if UPLO == "U" else a)
    return EighResult(w, v)


def _real_if_numpy_would(a, w, *rest):
    """numpy's dtype rule for real ``a``: real results when every eigenvalue (of the whole
    stack) has a zero imaginary part. It reads values, so it applies in eager mode only; a
    traced result stays complex, as JAX's always is (a traced dtype cannot depend on data,
    and only complex can hold every answer)."""
    if _np.dtype(a.dtype).kind == "c" or _is_symbolic(w) or \
            _np.any(_np.imag(_np.asarray(w.numpy())) != 0):
        return (w,) + rest
    return tuple(_ew.real(x) for x in (w,) + rest)


def eig(a):
    """Eigenvalues and right eigenvectors of a square matrix (or stack): ``EigResult(w, V)``
    with ``a @ V[..., :, j] = w[..., j] * V[..., :, j]``, each column of unit norm with its
    largest entry real (LAPACK's normalisation, as numpy gives it).

    Dtypes are numpy's in eager mode: complex for complex ``a``, and for real ``a`` real when
    every eigenvalue is real, complex otherwise. Inside ``hessgrad.function`` the values are
    unknown while tracing, so the results are always complex (as in JAX).

    Derivatives (any order, forward and reverse) follow JAX: ``dw = diag(V^-1 dA V)``;
    eigenvector derivatives need distinct eigenvalues and differentiate the normalisation,
    so only phase-invariant functions of ``V`` (``abs(V)**2``) have gauge-free derivatives.

    Args:
        a: a square matrix or a stack of them (..., n, n); integers are promoted to float64.
    Returns:
        ``EigResult(eigenvalues (..., n), eigenvectors (..., n, n))``.
    Raises:
        ValueError: ``a`` is not a stack of square matrices.
        LinAlgError: the eigenvalue computation failed (NaN or inf entries, no convergence).

    >>> import numpy as np, hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.linalg.eig(np.array([[0.0, 1.0], [-1.0, 0.0]])).eigenvalues.numpy()
    array([0.+1.j, 0.-1.j])
    >>> hg.grad(lambda a: hnp.sum(hnp.linalg.eig(a)[0]))(np.diag([1.0, 2.0]))  # d trace
    array([[1., 0.],
           [0., 1.]])
    """
    a = _arr(a)
    w, v = _eig.eig(a)
    return EigResult(*_real_if_numpy_would(a, w, v))


def eigvals(a):
    """Eigenvalues of a square matrix (or stack), as ``eig(a).eigenvalues`` (same dtype rule:
    numpy's in eager mode, always complex when traced); differentiable to any order.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]])).numpy()
    array([2., 3.])
    """
    a = _arr(a)
    return _real_if_numpy_would(a, _eig.eigvals(a))[0]


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending, real) of a symmetric or Hermitian matrix (or stack), reading
    only the ``UPLO`` triangle ('L' lower, 'U' upper) as numpy does."""
    a = _arr(a)
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigvalsh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return _dec.eigvalsh(_H(a) if UPLO == "U" else a)


def qr(a, mode="reduced"):
    """QR factorisation; ``mode`` 'reduced' (Q, R), 'r' (R only) or 'complete' (for square
    and wide ``a`` it equals 'reduced'; for tall ``a`` Q's completed columns are numpy's
    values, not unique, so a derivative through Q raises, as ``svd`` with ``full_matrices``).
    Derivatives for square and tall ``a``."""
    a = _arr(a)
    s = _shape_of(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: unsupported mode {mode!r} (use 'reduced', 'complete' or 'r')")
    if mode == "complete" and len(s) >= 2 and s[-2] > s[-1]:
        return QRResult(*_dec.qr_complete(a))
    q, r = _dec.qr(a)
    return r if mode == "r" else QRResult(q, r)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition ``a = U diag(S) Vh`` (stacks allowed). With
    ``full_matrices=True`` (numpy's default) and a non-square ``a`` the completed columns of U
    or Vh are not unique: the values are numpy's, the singular values differentiate in reverse
    mode, and a derivative through U or Vh raises (as in JAX). Singular-vector derivatives
    need distinct nonzero singular values. With ``hermitian=True`` it is numpy's: from
    ``eigh`` of the lower triangle of ``a`` (``S = |w|`` descending, ``Vh = (U sign(w))^H``),
    differentiated as that function (eigenvector derivatives need distinct eigenvalues).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.svd(np.diag([3.0, 4.0]), compute_uv=False).numpy()
    array([4., 3.])
    """
    a = _arr(a)
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    if not compute_uv:
        return _dec.svdvals(a)
    s = _shape_of(a)
    full = full_matrices and len(s) >= 2 and s[-1] != s[-2]
    u, sv, vh = (_dec.svd_full if full else _dec.svd)(a)
    return SVDResult(u, sv, vh)


def _svd_hermitian(a, compute_uv):
    """numpy's ``svd(a, hermitian=True)``, step by step: eigenvalues and vectors of the lower
    triangle, absolute values sorted descending, the signs moved into ``Vh``."""
    _dec._check_matrix("svd", "a", _shape_of(a))
    if not compute_uv:
        s = _sort(_ew.absolute(_dec.eigvalsh(a)), axis=-1)
        return _core.getitem(s, index=(Ellipsis, slice(None, None, -1)))
    w, u = _dec.eigh(a)
    sgn, s = _ew.sign(w), _ew.absolute(w)
    order = _core.getitem(_argsort(s, axis=-1), index=(Ellipsis, slice(None, None, -1)))
    sgn = _take_along_axis(sgn, order, axis=-1)
    s = _take_along_axis(s, order, axis=-1)
    u = _take_along_axis(u, _core.getitem(order, index=(Ellipsis, None, slice(None))), axis=-1)
    return SVDResult(u, s, _H(u * _core.getitem(sgn, index=(Ellipsis, None, slice(None)))))


def svdvals(x, /):
    """Singular values, descending."""
    return _dec.svdvals(_arr(x))


# --- norms ---------------------------------------------------------------------------------
def _safe_root(s, p=2):
    """``s ** (1/p)`` for ``s >= 0`` whose derivative is 0 (not NaN) where ``s == 0``."""
    zero = _ew.equal(s, 0)
    safe = _ew.where(zero, 1.0, s)
    root = _ew.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return _ew.where(zero, 0.0, root)


def _axes_tuple(axis, nd):
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        ax = _operator.index(ax)
        if not -nd <= ax < nd:
            raise _np.exceptions.AxisError(f"norm: axis {ax} is out of bounds for an array "
                                           f"of dimension {nd}")
        out.append(ax % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"norm: duplicate axes given: {axis!r}")
    return tuple(out)


def _vector_norm(x, ord, ax, keepdims):
    if ord is None or ord == 2:
        return _safe_root(_red.sum(_red.abs2(x), axis=ax, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    if ord == _np.inf:
        return _red.max(_ew.absolute(x), axis=ax, keepdims=keepdims)
    if ord == -_np.inf:
        return _red.min(_ew.absolute(x), axis=ax, keepdims=keepdims)
    if ord == 0:
        nonzero = _core.cast(_ew.not_equal(x, 0), dtype=x.dtype)
        return _red.sum(nonzero, axis=ax, keepdims=keepdims)
    if ord == 1:
        return _red.sum(_ew.absolute(x), axis=ax, keepdims=keepdims)
    p = float(ord)
    return _safe_root(_red.sum(_ew.absolute(x) ** p, axis=ax, keepdims=keepdims), p)


def _max_or_zero(x, axis):
    """max over ``axis``, 0 when that axis is empty (numpy's ``initial=0`` for matrix norms)."""
    if _shape_of(x)[axis] == 0:
        return _red.sum(x, axis=axis)
    return _red.max(x, axis=axis)


def _matrix_norm(x, ord, row, col, keepdims):
    nd = len(_shape_of(x))
    if ord in (None, "fro"):
        out = _safe_root(_red.sum(_red.abs2(x), axis=(row, col)))
    elif ord in ("nuc", 2, -2):
        perm = tuple(i for i in range(nd) if i not in (row, col)) + (row, col)
        s = _dec.svdvals(_transpose(x, axes=perm))
        out = _red.sum(s, axis=-1) if ord == "nuc" else \
            (_max_or_zero(s, -1) if ord == 2 else _red.min(s, axis=-1))
    elif ord in (1, -1):
        sums = _red.sum(_ew.absolute(x), axis=row)
        c = col - 1 if col > row else col
        out = _max_or_zero(sums, c) if ord == 1 else _red.min(sums, axis=c)
    elif ord in (_np.inf, -_np.inf):
        sums = _red.sum(_ew.absolute(x), axis=col)
        r = row - 1 if row > col else row
        out = _max_or_zero(sums, r) if ord == _np.inf else _red.min(sums, axis=r)
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        shape = list(_shape_of(x))
        shape[row] = shape[col] = 1
        out = _core.reshape(out, shape=tuple(shape))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms (ord None/2, 1, inf, -inf, 0, any p) over one axis,
    matrix norms ('fro', 'nuc', 1, -1, 2, -2, inf, -inf) over two. The 2-norm (and 'fro') of
    a zero vector has the subgradient 0 (not NaN).

    >>> import numpy as np, hessgrad as hg, hessgrad.numpy as hnp
    >>> hg.grad(lambda v: hnp.linalg.norm(v))(np.zeros(3))
    array([0., 0., 0.])
    """
    x = _arr(x)
    nd = len(_shape_of(x))
    if axis is None:
        if ord is None:
            out = _safe_root(_red.sum(_red.abs2(x)))
            return _core.reshape(out, shape=(1,) * nd) if keepdims else out
        if nd == 1:
            axis = (0,)
        elif nd == 2:
            axis = (0, 1)
        else:
            raise ValueError(f"norm: ord={ord!r} without axis needs a 1-D or 2-D array, got "
                             f"shape {_shape_of(x)}")
    axes = _axes_tuple(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError(f"norm: axis must name one or two axes, got {axis!r}")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """numpy.linalg.vector_norm: ``axis=None`` flattens."""
    x = _arr(x)
    if axis is None:
        out = _vector_norm(_core.reshape(x, shape=(-1,)), ord, 0, False)
        return _core.reshape(out, shape=(1,) * len(_shape_of(x))) if keepdims else out
    axes = _axes_tuple(axis, len(_shape_of(x)))
    if len(axes) != 1:  # several axes: move them last and flatten them
        nd = len(_shape_of(x))
        rest = tuple(i for i in range(nd) if i not in axes)
        moved = _transpose(x, axes=rest + axes)
        shape = _shape_of(moved)
        flat = _core.reshape(moved, shape=tuple(shape[:len(rest)]) + (-1,))
        out = _vector_norm(flat, ord, -1, False)
        if keepdims:
            out = _core.reshape(out, shape=tuple(1 if i in axes else d
                                                 for i, d in enumerate(_shape_of(x))))
        return out
    return _vector_norm(x, ord, axes[0], keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm over the last two axes."""
    x = _arr(x)
    nd = len(_shape_of(x))
    if nd < 2:
        raise ValueError(f"matrix_norm: x has shape {_shape_of(x)} but must be at least 2-D")
    return _matrix_norm(x, ord, nd - 2, nd - 1, keepdims)


# --- numpy 2's array-API helpers -------------------------------------------------------------
def matrix_transpose(x, /):
    """Swap the last two axes."""
    return _T(_arr(x))


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the (offset) diagonal of the last two axes."""
    return _red.sum(diagonal(x, offset=offset), axis=-1)


def diagonal(x, /, *, offset=0):
    """The (offset) diagonal of the last two axes, as the last axis."""
    x = _arr(x)
    s = _shape_of(x)
    if len(s) < 2:
        raise ValueError(f"diagonal: x has shape {s} but must be at least 2-D")
    if offset > 0:
        x = _core.getitem(x, index=(Ellipsis, slice(None), slice(offset, None)))
    elif offset < 0:
        x = _core.getitem(x, index=(Ellipsis, slice(-offset, None), slice(None)))
    m, n = _shape_of(x)[-2:]
    k = min(m, n)
    x = _core.getitem(x, index=(Ellipsis, slice(0, k), slice(0, k)))
    return _la.einsum("...ii->...i", x)


def outer(x1, x2, /):
    """Outer product of two vectors."""
    x1, x2 = _arr(x1), _arr(x2)
    if len(_shape_of(x1)) != 1 or len(_shape_of(x2)) != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-D, got shapes {_shape_of(x1)} and "
                         f"{_shape_of(x2)}")
    return _la.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis``."""
    return _la.cross(_arr(x1), _arr(x2), axis=axis)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.linalg.tensordot``: the array API's ``tensordot`` (keyword-only ``axes``), differentiable."""
    return _la.tensordot(_arr(x1), _arr(x2), axes=axes)


def matmul(x1, x2, /):
    """``numpy.linalg.matmul``: the array API's ``matmul`` (no broadcasting of 1-d operands beyond numpy's), differentiable."""
    return _la.matmul(_arr(x1), _arr(x2))


vecdot = _vecdot  # numpy.linalg.vecdot is numpy.vecdot


# --- tensor inverse and solve: the matrix ones on reshaped operands ------------------------
def _size(shape):
    return int(_np.prod(shape, dtype=_np.int64))


def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv: the inverse of ``a`` read as a square matrix with rows
    ``a.shape[:ind]`` and columns ``a.shape[ind:]``; the result has shape
    ``a.shape[ind:] + a.shape[:ind]``.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.linalg.tensorinv(np.eye(6).reshape(6, 2, 3), ind=1).shape
    (2, 3, 6)
    """
    a = _arr(a)
    shape = tuple(_shape_of(a))
    if not isinstance(ind, int) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind!r}")
    rows, cols = _size(shape[:ind]), _size(shape[ind:])
    if rows != cols:
        raise LinAlgError(f"tensorinv: a of shape {shape} with ind={ind} is a {rows} x {cols} "
                          "matrix, which is not square")
    flat = _core.reshape(a, shape=(rows, cols))
    return _core.reshape(inv(flat), shape=shape[ind:] + shape[:ind])


def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve: the ``x`` with ``tensordot(a, x, x.ndim) == b``; ``x`` has
    shape ``a.shape[b.ndim:]`` (after moving ``axes`` of ``a`` to the end).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> a = np.eye(6).reshape(6, 2, 3)
    >>> hnp.linalg.tensorsolve(a, np.arange(6.0)).shape
    (2, 3)
    """
    a, b = _arr(a), _arr(b)
    if axes is not None:
        nd = len(_shape_of(a))
        axes = [ax % nd if -nd <= ax < nd else ax for ax in axes]
        if any(not 0 <= ax < nd for ax in axes):
            raise _np.exceptions.AxisError(f"tensorsolve: axes {axes} out of range for a of "
                                           f"shape {tuple(_shape_of(a))}")
        rest = [k for k in range(nd) if k not in axes]
        a = _transpose(a, axes=tuple(rest + list(axes)))
    a_shape, b_shape = tuple(_shape_of(a)), tuple(_shape_of(b))
    x_shape = a_shape[len(b_shape):]
    n = _size(x_shape)
    if _size(a_shape[:len(b_shape)]) != n or _size(b_shape) != n:
        raise LinAlgError(f"tensorsolve: a of shape {a_shape} and b of shape {b_shape} do not "
                          "form a square system (prod(a.shape[b.ndim:]) == "
                          "prod(a.shape[:b.ndim]) == b.size is needed)")
    x = solve(_core.reshape(a, shape=(n, n)), _core.reshape(b, shape=(n,)))
    return _core.reshape(x, shape=x_shape)


def cond(x, p=None):
    """numpy.linalg.cond: the condition number in the norm ``p`` (None, 2, -2: ratios of
    singular values; 'fro', 'nuc', 1, -1, inf, -inf: ``norm(x) * norm(inv(x))``, square
    matrices). A singular matrix gives inf as in numpy for None/2/-2 and raises
    ``LinAlgError`` for the others.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> float(hnp.linalg.cond(np.diag([4.0, 2.0])))
    2.0
    """
    x = _arr(x)
    s = _shape_of(x)
    if len(s) < 2:
        raise LinAlgError(f"cond: x has shape {tuple(s)} but must be at least 2-D")
    if p is None or p == 2 or p == -2:
        sv = svdvals(x)
        first = _core.getitem(sv, index=(Ellipsis, 0))
        last = _core.getitem(sv, index=(Ellipsis, -1))
        with _np.errstate(divide="ignore", invalid="ignore"):
            r = _ew.divide(last, first) if p == -2 else _ew.divide(first, last)
        # numpy: 0 / 0 (a zero matrix) is inf too, unless x itself holds NaN
        finite_x = _ew.logical_not(_red.any(_ew.isnan(x), axis=(-2, -1)))
        return _ew.where(_ew.logical_and(_ew.isnan(r), finite_x), _np.inf, r)
    if s[-1] != s[-2]:
        raise LinAlgError(f"cond: p={p!r} needs square matrices, x has shape {tuple(s)}")
    return _ew.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


_KEYWORD = 1 << 20  # out= is keyword-only
# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("multi_dot", _KEYWORD, "same_kind"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "pinv", "solve",
           "lstsq", "det", "slogdet", "matrix_rank", "cholesky", "eig", "eigvals", "eigh",
           "eigvalsh", "qr", "svd", "svdvals", "matrix_power", "multi_dot", "matrix_transpose",
           "trace",
           "diagonal", "outer", "cross", "tensordot", "matmul", "vecdot", "tensorinv",
           "tensorsolve", "cond", "EigResult", "EighResult", "QRResult",
           "SVDResult", "SlogdetResult"]
