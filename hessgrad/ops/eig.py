"""General (non-symmetric) eigendecomposition: eig and eigvals of square real or complex
matrices (stacks ``(..., n, n)``).

Outputs are always complex (complex64 for float32/complex64 input, complex128 otherwise): a
real matrix may have complex eigenvalues, and a primitive's dtype must be known before its
values are (``hessgrad.numpy.linalg`` gives numpy's real results in eager mode).

Derivatives follow JAX (``jax.lax.linalg.eig`` with ``enable_eigvec_derivs``), built from
hessgrad ops so that they differentiate again:

* eigenvalues: ``dw = diag(V^-1 dA V)``;
* eigenvectors: ``dV = V (F * (V^-1 dA V)) + V diag(c)`` with ``F_ij = 1 / (w_j - w_i)``; the
  free multiple ``c_j`` of ``v_j`` is fixed by LAPACK's normalisation (unit 2-norm, largest
  component real), which the derivative keeps.

A VJP is the transpose of the R-linear JVP under ``Re(sum(g * t))`` (no conjugation), so the
gradient of a real loss of complex input is ``dL/dx - i dL/dy``; for real input it is the real
part. Eigenvector derivatives need distinct eigenvalues (they are infinite or NaN otherwise)
and depend on the normalisation, a gauge: only functions invariant to each column's phase
(``|V|^2``, ``V diag(w) V^-1``) have derivatives independent of it.
"""

import numpy as np

from ..engine.tensor import dtype_of, shape_of
from .core import cast
from .decompositions import _T, _check_matrix, _conj, _diag_embed, _diag_part, _gap_inverse, \
    _guard, _row, _add, solve
from .elementwise import absolute, equal, imag, real
from .families import stacked
from .linalg import matmul
from .reduction import argmax, sum as reduce_sum
from .shape import expand_dims


def complex_dtype(dt):
    """The dtype of ``eig``'s results for input of dtype ``dt``."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)


def _shapes(name):
    def rule(a):
        s = tuple(shape_of(a))
        _check_matrix(name, "a", s)
        dt = complex_dtype(dtype_of(a))
        return [(s[:-1], dt), (s, dt)] if name == "eig" else (s[:-1], dt)
    return rule


def _eig_forward(a):
    _check_matrix("eig", "a", np.shape(a))
    w, v = _guard("eig", "the eigenvalue computation failed")(np.linalg.eig, a)
    dt = complex_dtype(np.asarray(a).dtype)
    return w.astype(dt), v.astype(dt)


def _as_complex(t, like):
    return t if dtype_of(t) == dtype_of(like) else cast(t, dtype=dtype_of(like))


def _largest_entries(v):
    """A constant mask, 1 at each column's largest-magnitude entry (the one LAPACK makes
    real), and that entry's real part."""
    k = argmax(absolute(v), axis=-2)                      # (..., n), a constant
    rows = np.arange(shape_of(v)[-2]).reshape(-1, 1)
    mask = cast(equal(expand_dims(k, -2), rows), dtype=dtype_of(v))
    return mask, real(reduce_sum(mask * v, axis=-2))


def _eig_jvp(t, ans, a):
    w, v = ans
    p = matmul(solve(v, _as_complex(t, v)), v)            # V^-1 dA V
    u = matmul(v, _gap_inverse(w) * p)
    mask, top = _largest_entries(v)
    # dv_j = u_j + c_j v_j; unit norm fixes Re c_j, a real largest entry fixes Im c_j
    c = -real(reduce_sum(_conj(v) * u, axis=-2)) - \
        1j * (imag(reduce_sum(mask * u, axis=-2)) / top)
    return (_diag_part(p), u + v * _row(c))


def _eig_vjp(g, ans, a):
    gw, gv = g
    w, v = ans
    terms = []
    if gw is not None:
        terms.append(_diag_embed(_as_complex(gw, v)))
    if gv is not None:
        gv = _as_complex(gv, v)
        s = reduce_sum(gv * v, axis=-2)                   # the pairing of gv with each v_j
        mask, top = _largest_entries(v)
        gu = gv - _conj(v) * _row(real(s)) - 1j * (mask * _row(imag(s) / top))
        terms.append(_gap_inverse(w) * matmul(_T(v), gu))
    if not terms:
        return None
    ga = solve(_T(v), matmul(_add(*terms), _T(v)))        # V^-T gP V^T
    return ga if dtype_of(a).kind == "c" else real(ga)


eig = stacked("eig", _eig_forward, vjp=[_eig_vjp], jvp=[_eig_jvp], multiple_results=True,
                none_grads_ok=True, shape_rule=_shapes("eig"))
eig.__doc__ = """Eigenvalues ``w`` and right eigenvectors ``V`` (columns, unit norm, largest
entry real) of a square ``a``, both complex: ``a @ V = V * w``."""


def _eigvals_forward(a):
    _check_matrix("eigvals", "a", np.shape(a))
    # eig's values (not LAPACK's values-only path): the rules below pair them with eig's V
    w = _guard("eigvals", "the eigenvalue computation failed")(np.linalg.eig, a)[0]
    return w.astype(complex_dtype(np.asarray(a).dtype))


def _eigvals_jvp(t, ans, a):
    v = eig(a)[1]
    return reduce_sum(solve(v, _as_complex(t, v)) * _T(v), axis=-1)   # diag(V^-1 dA V)


def _eigvals_vjp(g, ans, a):
    v = eig(a)[1]
    ga = solve(_T(v), expand_dims(_as_complex(g, v), -1) * _T(v))    # V^-T diag(g) V^T
    return ga if dtype_of(a).kind == "c" else real(ga)


eigvals = stacked("eigvals", _eigvals_forward, vjp=[_eigvals_vjp], jvp=[_eigvals_jvp],
                    shape_rule=_shapes("eigvals"))
eigvals.__doc__ = """Eigenvalues of a square ``a`` (complex), in ``eig``'s order; their
derivatives stay finite at repeated eigenvalues only where ``V`` stays invertible."""

__all__ = ["eig", "eigvals", "complex_dtype"]
