"""Covariance and correlation: ``cov`` (weights, ddof, bias) and ``corrcoef``.
"""

import warnings

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, linalg as _la, reduction as _red, shape as _sh
from . import _reductions as _r
from ._arguments import _array, _as_tensor, _cast, _concrete, _const, _dtype, _symbolic, _value


# --- covariance, correlation --------------------------------------------------------------
def _observations(fname, m, rowvar, dtype, what):
    m = _array(fname, m, what)
    if len(m.shape) > 2:
        raise ValueError(f"{fname}: argument '{what}' has more than 2 dimensions (shape "
                         f"{tuple(m.shape)})")
    m = _cast(m, dtype)
    if len(m.shape) < 2:
        m = _core.reshape(_as_tensor(m), shape=(1, -1) if len(m.shape) else (1, 1))
    if not rowvar and m.shape[0] != 1:
        m = _sh.transpose(_as_tensor(m), axes=(1, 0))
    return _as_tensor(m)


def _check_weights(fname, w, what, n, integer):
    w = _array(fname, w, what)
    if integer:
        w = _np.asarray(_concrete(fname, w, what, "frequency weights are checked"), float)
        if not _np.all(w == _np.around(w)):
            raise TypeError(f"{fname}: {what} must be integer")
    w = _cast(w, _np.float64)
    if len(w.shape) > 1:
        raise RuntimeError(f"{fname}: cannot handle multidimensional {what} (shape "
                           f"{tuple(w.shape)})")
    if w.shape[0] != n:
        raise RuntimeError(f"{fname}: incompatible numbers of samples ({n}) and {what} "
                           f"({w.shape[0]})")
    if not _symbolic(w) and _np.any(_value(w) < 0):
        raise ValueError(f"{fname}: {what} cannot be negative")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if not ``rowvar``),
    numpy.cov; differentiable in ``m``, ``y`` and ``aweights``.

    Args:
        m, y: 1-D or 2-D observations; ``y`` adds variables.
        rowvar: variables are rows (else columns).
        bias, ddof: normalise by N (bias) or N - ddof (default N - 1).
        fweights: integer frequency weights; aweights: observation weights.
        dtype: the computation's dtype (default at least float64).
    Returns:
        The covariance matrix, squeezed as numpy squeezes it.
    Raises:
        ValueError: more than 2 dimensions, a non-integer ddof, negative weights.

    >>> import hessgrad.numpy as hnp
    >>> hnp.cov([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be integer, got {ddof!r}")
    if dtype is None:
        dtype = _np.result_type(_dtype(_array("cov", m)), _np.float64) if y is None else \
            _np.result_type(_dtype(_array("cov", m)), _dtype(_array("cov", y, "y")),
                            _np.float64)
    X = _observations("cov", m, rowvar, dtype, "m")
    if X.shape[0] == 0:
        return _const(_np.array([], dtype=dtype).reshape(0, 0))
    if y is not None:
        Y = _observations("cov", y, rowvar, dtype, "y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"cov: m and y have different numbers of observations "
                             f"({X.shape[1]} and {Y.shape[1]})")
        X = _sh.join([X, Y], 0, "cov")
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = None
    if fweights is not None:
        w = _check_weights("cov", fweights, "fweights", n, True)
    if aweights is not None:
        aw = _check_weights("cov", aweights, "aweights", n, False)
        w = aw if w is None else w * aw
    avg, w_sum = _r.average(X, axis=1, weights=w, returned=True)
    w_sum = _core.getitem(_as_tensor(w_sum), index=0)
    if w is None:
        fact = float(n - ddof)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _red.sum(w * aw) / w_sum
    if not _symbolic(fact) and float(_value(fact)) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - _core.reshape(avg, shape=(-1, 1))
    XT = _sh.transpose(X if w is None else X * w, axes=(1, 0))
    if _dtype(XT).kind == "c":
        XT = _ew.conjugate(XT)
    with _np.errstate(divide="ignore"):
        c = _la.matmul(X, XT) * _ew.reciprocal(_as_tensor(_np.asarray(fact, dtype))
                                                if not isinstance(fact, _Tensor) else fact)
    return _sh.squeeze(c, None)


def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None):
    """Pearson correlation coefficients (numpy.corrcoef), clipped to [-1, 1];
    differentiable in ``x`` and ``y``. ``bias`` and ``ddof`` have no effect (as in numpy).

    >>> import hessgrad.numpy as hnp
    >>> hnp.corrcoef([1.0, 2.0, 4.0], [2.0, 4.0, 8.0]).round(12).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if bias is not None or ddof is not None:
        warnings.warn("bias and ddof have no effect and are deprecated", DeprecationWarning,
                      stacklevel=2)
    c = cov(x, y, rowvar, dtype=dtype)
    if len(c.shape) == 0:
        return c / c
    if len(c.shape) != 2:
        raise ValueError(f"corrcoef: unexpected covariance shape {tuple(c.shape)}")
    std = _ew.sqrt(_ew.real(_sh.diagonal(c, 0, 0, 1)))
    c = c / _core.reshape(std, shape=(-1, 1))
    c = c / _core.reshape(std, shape=(1, -1))
    return _ew.clip(c, -1, 1)


__all__ = ["cov", "corrcoef"]
