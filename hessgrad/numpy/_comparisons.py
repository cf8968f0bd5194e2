"""Comparisons and tests (boolean constants): ``isclose``, ``allclose``, ``array_equal``,
``array_equiv``, ``isreal``, ``iscomplex``, ``isrealobj``, ``iscomplexobj``.
"""

import numpy as _np

from ..ops import elementwise as _ew
from ._arguments import _array, _cast, _concrete, _const, _dtype, _value


# --- comparisons and tests (constants) ----------------------------------------------------
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (numpy.isclose), a boolean constant.

    >>> import hessgrad.numpy as hnp
    >>> hnp.isclose([1.0, 1.1], 1.0).tolist()
    [True, False]
    """
    # Python numbers stay as they are: numpy compares float32_array with 0.1 in float32
    a, b = (x if type(x) in (int, float, complex) else _array("isclose", x, name)
            for x, name in ((a, "a"), (b, "b")))
    if type(b) is int:
        b = float(b)
    elif not isinstance(b, (float, complex)) and _dtype(b).kind not in "fcmM":
        b = _cast(b, _np.result_type(_dtype(b), 1.0))
    with _np.errstate(invalid="ignore", over="ignore"):
        res = _ew.logical_or(
            _ew.logical_and(_ew.less_equal(_ew.absolute(a - b), atol + rtol * _ew.absolute(b)),
                            _ew.isfinite(b)),
            _ew.equal(a, b))
        if equal_nan:
            res = _ew.logical_or(res, _ew.logical_and(_ew.isnan(a), _ew.isnan(b)))
    return res


def _concrete_pair(fname, a, b, why):
    return (_concrete(fname, _array(fname, a, "a1" if fname.startswith("array") else "a"),
                      "a1" if fname.startswith("array") else "a", why),
            _concrete(fname, _array(fname, b, "a2" if fname.startswith("array") else "b"),
                      "a2" if fname.startswith("array") else "b", why))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all of ``isclose(a, b)`` hold: a Python bool, so it needs concrete values
    (inside a traced function use ``hnp.all(hnp.isclose(a, b))``).

    >>> import hessgrad.numpy as hnp
    >>> hnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
    True
    """
    a, b = _concrete_pair("allclose", a, b, "the result is a Python bool (use "
                          "hnp.all(hnp.isclose(a, b)) while tracing)")
    return bool(_np.all(_value(isclose(a, b, rtol, atol, equal_nan))))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements: a Python bool (different
    static shapes give False even while tracing; otherwise concrete values are needed).

    >>> import hessgrad.numpy as hnp
    >>> hnp.array_equal([1.0, 2.0], [1.0, 2.0]), hnp.array_equal([1.0], [1.0, 1.0])
    (True, False)
    """
    s1, s2 = _array("array_equal", a1, "a1").shape, _array("array_equal", a2, "a2").shape
    if tuple(s1) != tuple(s2):
        return False
    v1, v2 = _concrete_pair("array_equal", a1, a2, "the result is a Python bool")
    return bool(_np.array_equal(v1, v2, equal_nan=equal_nan))


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast to each other with equal elements (a Python bool).

    >>> import hessgrad.numpy as hnp
    >>> hnp.array_equiv([1.0, 2.0], [[1.0, 2.0], [1.0, 2.0]])
    True
    """
    v1, v2 = _concrete_pair("array_equiv", a1, a2, "the result is a Python bool")
    return bool(_np.array_equiv(v1, v2))


def isreal(x):
    """Whether each element has a zero imaginary part (a boolean constant).

    >>> import hessgrad.numpy as hnp
    >>> hnp.isreal([1.0, 2.0]).tolist()
    [True, True]
    """
    return _ew.equal(_ew.imag(_array("isreal", x, "x")), 0)


def iscomplex(x):
    """Whether each element has a non-zero imaginary part (a boolean constant; all False for
    real input).

    >>> import hessgrad.numpy as hnp
    >>> hnp.iscomplex([1.0, 2.0]).tolist()
    [False, False]
    """
    x = _array("iscomplex", x, "x")
    if _dtype(x).kind == "c":
        return _ew.not_equal(_ew.imag(x), 0)
    return _const(_np.zeros(x.shape, dtype=bool))


def isrealobj(x):
    """Whether ``x`` has a real dtype (static)."""
    return _dtype(_array("isrealobj", x, "x")).kind != "c"


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (static)."""
    return _dtype(_array("iscomplexobj", x, "x")).kind == "c"


__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "isreal", "iscomplex", "isrealobj",
           "iscomplexobj"]
