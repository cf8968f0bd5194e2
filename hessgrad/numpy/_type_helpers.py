"""Type questions and dtype-deciding helpers: ``isscalar``, ``iterable``, ``common_type``,
``real_if_close``. They read dtypes and shapes (static, fine while tracing); ``real_if_close``
reads values to choose its dtype, so it needs concrete input."""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import elementwise as _ew
from ._arguments import _array, _as_tensor, _concrete


def isscalar(element):
    """Whether ``element`` is a scalar: what numpy.isscalar says, and True for a 0-d tensor
    (as jax.numpy: a tensor indexed down to one element is 0-d, where numpy gives a scalar).

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.isscalar(2.0), hnp.isscalar(hg.constant(2.0)), hnp.isscalar(hg.constant([2.0]))
    (True, True, False)
    """
    if isinstance(element, _Tensor):
        return element.shape is not None and len(element.shape) == 0
    return bool(_np.isscalar(element))


def iterable(y):
    """Whether ``iter(y)`` works (numpy.iterable): False for 0-d arrays and tensors.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.iterable(hg.constant([1.0])), hnp.iterable(hg.constant(1.0))
    (True, False)
    """
    if isinstance(y, _Tensor):
        return y.shape is not None and len(y.shape) > 0
    return bool(_np.iterable(y))


def common_type(*arrays):
    """The inexact scalar type common to the arrays' dtypes (numpy.common_type: integers
    count as float64).

    Raises:
        TypeError: a non-numeric dtype.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.common_type(hg.constant(np.ones(2, np.float32)), np.arange(2)) is np.float64
    True
    """
    stand_ins = [_np.empty(0, dtype=_np.dtype(a.dtype)) if isinstance(a, _Tensor) else a
                 for a in arrays]
    try:
        return _np.common_type(*stand_ins)
    except TypeError as exc:
        raise TypeError(f"common_type: {exc} (dtypes "
                        f"{[str(_np.asarray(a).dtype) for a in stand_ins]})") from None


def real_if_close(a, tol=100):
    """``a``'s real part if every imaginary part is below ``tol`` machine epsilons (``tol``
    itself when <= 1), else ``a`` (numpy.real_if_close); real input is returned as it is.
    The dtype depends on the values, so complex input must be concrete; the real part is
    differentiable.

    Raises:
        TypeError: symbolic complex ``a``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.real_if_close([2.1 + 4e-14j, 5.2 + 3e-15j], tol=1000).tolist()
    [2.1, 5.2]
    """
    a = _array("real_if_close", a)
    if _np.dtype(a.dtype).kind != "c":
        return _as_tensor(a)
    if tol > 1:
        tol = _np.finfo(_np.dtype(a.dtype)).eps * tol
    values = _concrete("real_if_close", a, "a", "whether the result is real depends on them")
    if _np.all(_np.absolute(_np.imag(values)) < tol):
        return _ew.real(a)
    return _as_tensor(a)


__all__ = ["isscalar", "iterable", "common_type", "real_if_close"]
