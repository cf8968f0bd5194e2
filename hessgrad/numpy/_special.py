"""Special functions with numpy's names: ``i0``, the modified Bessel function of the first kind
of order 0 (numpy's values; its derivative ``i1`` and all higher ones are exact)."""

import numpy as _np

from ..engine.tensor import dtype_of as _dtype_of
from ..ops import special as _special
from ._arguments import _array


def i0(x):
    """Modified Bessel function of the first kind, order 0 (numpy.i0), elementwise;
    differentiable to any order (``i0' = i1``, ``i1' = i0 - i1 / x``).

    Args:
        x: a real array or tensor (integers are computed in float64).
    Returns:
        A float tensor of ``x``'s shape.
    Raises:
        TypeError: complex ``x`` (as numpy).

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> round(float(hnp.i0(1.0)), 12)
    1.266065877752
    >>> round(float(hg.grad(hnp.i0)(1.0)), 12)  # i1(1)
    0.565159103992
    """
    x = _array("i0", x, "x")
    if _np.dtype(_dtype_of(x)).kind == "c":
        raise TypeError(f"i0: i0 not supported for complex values (argument 'x' has dtype "
                        f"{_np.dtype(_dtype_of(x))})")
    return _special.i0(x)


__all__ = ["i0"]
