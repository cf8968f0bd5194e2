"""Matrix functions and matrix equations: ``expm``, ``sqrtm``, ``logm`` (SciPy's values),
``solve_sylvester`` and the LU factorisation ``lu_nopivot``.

A primary matrix function ``f`` has the Fréchet derivative ``L_f(A, E)``, the upper right
block of ``f([[A, E], [0, A]])`` (Higham, *Functions of Matrices*, thm. 3.6): the JVP is ``f``
of a block matrix twice the size, so it differentiates again with the same rule (every order
exact; each order doubles the size). The VJP uses that the adjoint of ``L_f(A, .)`` is
``L_f(A^H, .)`` (f with real Taylor coefficients).

``solve_sylvester(a, b, q)`` solves ``a x + x b = q``; differentiating it gives Sylvester
equations with the same ``a`` and ``b`` (JVP) or their adjoints (VJP).

``lu_nopivot(a)``: ``a = L U`` with unit lower ``L`` and upper ``U`` packed in one matrix
(LAPACK's layout), for an ``a`` whose rows are already in partial-pivoting order (the public
``lu_factor`` permutes the rows first, by the pivots of a constant ``lu_pivots``).
"""

import numpy as np
import scipy.linalg as sla

from ..engine.batching import per_member
from ..engine.tensor import dtype_of, shape_of
from .core import getitem, zeros_like
from .decompositions import solve_triangular
from .elementwise import conjugate
from .families import stacked
from .linalg import matmul
from .shape import concatenate, swapaxes


def _H(x):
    x = swapaxes(x, axis1=-1, axis2=-2)
    return conjugate(x) if np.dtype(dtype_of(x)).kind == "c" else x


def _square(name, a):
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{name}: a has shape {tuple(s)} but must be a square matrix (or a "
                         f"stack of them)")


def _stackwise(name, fn):
    """``fn`` on each matrix of a stack ``(..., n, n)``."""
    def forward(a):
        a = np.asarray(a)
        _square(name, a)
        if a.ndim == 2:
            return np.asarray(fn(a))
        flat = a.reshape((-1,) + a.shape[-2:])
        out = [np.asarray(fn(m)) for m in flat]
        dtype = np.result_type(*out) if out else a.dtype
        return np.array(out, dtype=dtype).reshape(a.shape)
    forward.__name__ = name
    return forward


def frechet(f, a, e):
    """``L_f(a, e)``: the upper right block of ``f([[a, e], [0, a]])``."""
    n = shape_of(a)[-1]
    top = concatenate(a, e, axis=-1)
    bottom = concatenate(zeros_like(a), a, axis=-1)
    big = f(concatenate(top, bottom, axis=-2))
    index = (Ellipsis, slice(0, n), slice(n, 2 * n))
    return getitem(big, index=index)


def _matrix_function(name, fn, doc):
    op = stacked(
        name, _stackwise(name, fn),
        vjp=[lambda g, ans, a: frechet(op, _H(a), g)],
        jvp=[lambda t, ans, a: frechet(op, a, t)],
        shape_rule=lambda a: (shape_of(a), np.result_type(dtype_of(a), np.float64)))
    op.__doc__ = doc
    return op


def _real_if_close(fn):
    def f(a):
        out = fn(a)
        if np.isrealobj(a) and np.iscomplexobj(out) and np.allclose(out.imag, 0, atol=0):
            return out.real
        return out
    return f


expm = _matrix_function("expm", sla.expm, """The matrix exponential (scipy.linalg.expm) of a
square matrix or stack; derivative its Fréchet derivative (scipy.linalg.expm_frechet).""")
sqrtm = _matrix_function("sqrtm", _real_if_close(lambda a: sla.sqrtm(a)), """The principal
matrix square root (scipy.linalg.sqrtm); derivative the Fréchet derivative.""")
logm = _matrix_function("logm", _real_if_close(lambda a: sla.logm(a)), """The principal matrix
logarithm (scipy.linalg.logm); derivative the Fréchet derivative.""")


# --- Sylvester equations ---------------------------------------------------------------------
def _sylvester_forward(a, b, q):
    a, b, q = np.asarray(a), np.asarray(b), np.asarray(q)
    if a.ndim != 2 or b.ndim != 2 or q.shape != (a.shape[0], b.shape[0]):
        raise ValueError(f"solve_sylvester: a {a.shape}, b {b.shape} and q {q.shape} must be "
                         f"matrices (n, n), (m, m) and (n, m)")
    return sla.solve_sylvester(a, b, q)


def _sylvester_vjp(g, ans, a, b, q):
    qbar = solve_sylvester(_H(a), _H(b), g)
    return [-matmul(qbar, _H(ans)), -matmul(_H(ans), qbar), qbar]


solve_sylvester = stacked(
    "solve_sylvester", _sylvester_forward, vjp=_sylvester_vjp,
    jvp=[lambda t, ans, a, b, q: solve_sylvester(a, b, -matmul(t, ans)),
         lambda t, ans, a, b, q: solve_sylvester(a, b, -matmul(ans, t)),
         lambda t, ans, a, b, q: solve_sylvester(a, b, t)],
    batch=per_member,  # one equation (2-D operands) per call
    shape_rule=lambda a, b, q: (shape_of(q), np.result_type(dtype_of(a), dtype_of(b),
                                                            dtype_of(q), np.float64)))
solve_sylvester.__doc__ = """``x`` with ``a x + x b = q`` (scipy.linalg.solve_sylvester; 2-D
operands), differentiable in ``a``, ``b`` and ``q``."""


# --- LU without pivoting (rows already in pivot order) ----------------------------------------
def _lu_nopivot_forward(a):
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"lu_nopivot: a has shape {a.shape} but must be a square matrix")
    lu, piv = sla.lu_factor(a, check_finite=False)
    if np.any(piv != np.arange(len(piv))):  # rows not in pivot order: factor without pivoting
        lu = _doolittle(a)
    return lu


def _doolittle(a):
    lu = np.array(a, dtype=np.result_type(a.dtype, np.float64))
    n = lu.shape[0]
    for k in range(n - 1):
        lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu


def _lu_parts(lu):
    n = shape_of(lu)[-1]
    eye = np.eye(n)
    lower = lu * np.tril(np.ones((n, n)), -1) + eye
    upper = lu * np.triu(np.ones((n, n)))
    return lower, upper


def _lu_jvp(t, ans, a):
    lower, upper = _lu_parts(ans)
    n = shape_of(ans)[-1]
    x = solve_triangular(lower, t, lower=True)           # L^-1 dA
    x = _H(solve_triangular(_H(upper), _H(x), lower=True))  # L^-1 dA U^-1
    dl = matmul(lower, x * np.tril(np.ones((n, n)), -1))
    du = matmul(x * np.triu(np.ones((n, n))), upper)
    return dl + du  # packed: dL strictly below the diagonal, dU on and above


def _lu_vjp(g, ans, a):
    lower, upper = _lu_parts(ans)
    n = shape_of(ans)[-1]
    gl = g * np.tril(np.ones((n, n)), -1)
    gu = g * np.triu(np.ones((n, n)))
    inner = matmul(_H(lower), gl) * np.tril(np.ones((n, n)), -1) + \
        matmul(gu, _H(upper)) * np.triu(np.ones((n, n)))
    y = solve_triangular(_H(lower), inner, lower=False)                   # L^-H inner
    return _H(solve_triangular(upper, _H(y), lower=False))               # ... U^-H


lu_nopivot = stacked(
    "lu_nopivot", _lu_nopivot_forward, vjp=[_lu_vjp], jvp=[_lu_jvp], batch=per_member,
    shape_rule=lambda a: (shape_of(a), np.result_type(dtype_of(a), np.float64)))
lu_nopivot.__doc__ = """The LU factors of a square ``a`` whose rows are in partial-pivoting
order, packed as LAPACK's getrf (unit lower ``L`` below the diagonal, ``U`` on and above)."""


def _lu_pivots(a):
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"lu_factor: a has shape {a.shape} but must be a square matrix")
    return sla.lu_factor(a, check_finite=False)[1].astype(np.int32)


lu_pivots = stacked("lu_pivots", _lu_pivots, nondiff=True, batch=per_member,
                    shape_rule=lambda a: ((shape_of(a)[-1],), np.dtype(np.int32)))
lu_pivots.__doc__ = """LAPACK's pivot indices of the LU factorisation of ``a`` (a constant)."""

def _permutation(piv):
    piv = np.asarray(piv)
    perm = np.arange(piv.shape[-1])
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


pivots_to_permutation = stacked(
    "pivots_to_permutation", _permutation, nondiff=True, batch=per_member,
    shape_rule=lambda piv: (shape_of(piv), np.dtype(np.int64)))
pivots_to_permutation.__doc__ = """The row permutation ``perm`` (``a[perm] = L U``) that
LAPACK's pivot indices ``piv`` (row ``i`` swapped with row ``piv[i]``, in turn) describe."""

__all__ = ["pivots_to_permutation", "expm", "sqrtm", "logm", "frechet", "solve_sylvester", "lu_nopivot", "lu_pivots"]
