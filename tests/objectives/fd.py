"""Finite-difference reference derivatives for the objective corpus.

All helpers work on plain ``numpy`` float64 arrays and treat ``f``/``grad`` as
black boxes.  Step sizes are scaled per coordinate, ``h_i = h * max(1, |x_i|)``.

* ``fd_gradient(f, x, h=None, order=2)``: central differences, 2nd order
  (default ``h = eps**(1/3)``) or 4th order five-point stencil (default
  ``h = eps**(1/5)``).
* ``fd_hessian_of_grad(grad, x, h=None, symmetrize=True)``: central
  differences of a (typically analytic) gradient, ``h = eps**(1/3)``.
* ``fd_hessian(f, x, h=None, grad=None)``: Hessian from differences of a
  gradient -- the analytic ``grad`` if given, otherwise a 4th-order FD
  gradient of ``f`` (outer step ``h = 1e-4`` by default).
"""
import numpy as np

_EPS = np.finfo(float).eps


def _as_float_vector(x):
    x = np.array(x, dtype=float, copy=True)
    if x.ndim != 1:
        raise ValueError("x must be 1-D, got shape %r" % (x.shape,))
    return x


def _steps(x, h):
    return h * np.maximum(1.0, np.abs(x))


def _scalar(v):
    v = np.asarray(v, dtype=float)
    if v.ndim != 0:
        raise ValueError("objective must return a scalar, got shape %r" % (v.shape,))
    return float(v)


def fd_gradient(f, x, h=None, order=2):
    """Central-difference gradient of the scalar function ``f`` at ``x``."""
    x = _as_float_vector(x)
    if order not in (2, 4):
        raise ValueError("order must be 2 or 4")
    if h is None:
        h = _EPS ** (1.0 / 3.0) if order == 2 else _EPS ** (1.0 / 5.0)
    steps = _steps(x, h)
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        hi = steps[i]
        e[i] = hi
        if order == 2:
            g[i] = (_scalar(f(x + e)) - _scalar(f(x - e))) / (2.0 * hi)
        else:
            g[i] = (-_scalar(f(x + 2 * e)) + 8.0 * _scalar(f(x + e))
                    - 8.0 * _scalar(f(x - e)) + _scalar(f(x - 2 * e))) / (12.0 * hi)
    return g


def fd_hessian_of_grad(grad, x, h=None, symmetrize=True):
    """Hessian by central differences of the gradient function ``grad``.

    Column ``j`` is ``(grad(x + h_j e_j) - grad(x - h_j e_j)) / (2 h_j)``.
    With ``symmetrize`` the result is ``(H + H.T) / 2``.
    """
    x = _as_float_vector(x)
    if h is None:
        h = _EPS ** (1.0 / 3.0)
    steps = _steps(x, h)
    n = x.size
    H = np.empty((n, n))
    for j in range(n):
        e = np.zeros_like(x)
        e[j] = steps[j]
        gp = np.asarray(grad(x + e), dtype=float).reshape(n)
        gm = np.asarray(grad(x - e), dtype=float).reshape(n)
        H[:, j] = (gp - gm) / (2.0 * steps[j])
    if symmetrize:
        H = 0.5 * (H + H.T)
    return H


def fd_hessian(f, x, h=None, grad=None, symmetrize=True):
    """Hessian of ``f`` at ``x`` from differences of a gradient.

    Uses the analytic ``grad`` when supplied (step ``eps**(1/3)``), otherwise a
    4th-order finite-difference gradient of ``f`` (outer step ``1e-4``, which
    balances the O(h^2) truncation error against the amplified rounding noise
    of the inner gradient).
    """
    if grad is not None:
        return fd_hessian_of_grad(grad, x, h=h, symmetrize=symmetrize)
    if h is None:
        h = 1e-4
    return fd_hessian_of_grad(lambda y: fd_gradient(f, y, order=4), x, h=h, symmetrize=symmetrize)
