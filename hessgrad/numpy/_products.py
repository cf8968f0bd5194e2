"""Products: dot, vdot, matmul, inner, outer, tensordot, einsum, kron, cross, and numpy 2's
vecdot, matvec, vecmat."""

import numpy as _np

from ..engine.tensor import shape_of as _shape_of
from ..ops import core as _core, elementwise as _ew, linalg as _la, reduction as _red, \
    shape as _sh
from ._arraylike import asarray as _asarray
from ._out import writes_out as _writes_out


def _arr(x, fname="dot", what="a"):
    return _asarray(x, fname, what)


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (hessgrad arrays are immutable; use "
                        "the returned array)")


def dot(a, b, out=None):
    """numpy.dot: scalars multiply, vectors and matrices matmul, N-D arrays contract the
    last axis of ``a`` with the second-to-last of ``b``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.dot([1.0, 2.0], [3.0, 4.0]))
    11.0
    """
    _no_out("dot", out)
    return _la.dot(_arr(a), _arr(b))


def vdot(a, b):
    """numpy.vdot: the dot product of the flattened inputs (the first conjugated when complex)."""
    return _la.vdot(_arr(a), _arr(b))


def matmul(x1, x2, /, out=None, **kwargs):
    """numpy.matmul (1-D operands promoted and their axes removed, stacks broadcast)."""
    _no_out("matmul", out)
    unsupported = sorted(set(kwargs) - {"casting", "order", "dtype", "subok"})
    if unsupported:
        raise TypeError(f"matmul: unsupported keyword arguments {unsupported}")
    x1, x2 = _arr(x1), _arr(x2)
    if kwargs.get("dtype") is not None:
        x1, x2 = (_core.cast(x, dtype=_np.dtype(kwargs["dtype"])) for x in (x1, x2))
    return _la.matmul(x1, x2)


def inner(a, b, /):
    """numpy.inner: sum of products over the last axes."""
    return _la.inner(_arr(a), _arr(b))


def outer(a, b, out=None):
    """numpy.outer of the flattened inputs."""
    _no_out("outer", out)
    return _la.outer(_arr(a), _arr(b))


def tensordot(a, b, axes=2):
    """numpy.tensordot (``axes`` an int or a pair of axis sequences).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    return _la.tensordot(_arr(a), _arr(b), axes=axes)


def _sublist_subscripts(args):
    """numpy's interleaved form ``einsum(op0, sublist0, op1, sublist1, ..., [out])``."""
    operands, terms = list(args[0::2]), list(args[1::2])
    out = None
    if len(args) % 2:  # a trailing output sublist
        out = operands.pop()
    letters = {}

    def term(sub):
        chars = []
        for s in sub:
            if s is Ellipsis:
                chars.append("...")
            else:
                s = int(s)
                if s not in letters:
                    letters[s] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[
                        len(letters)]
                chars.append(letters[s])
        return "".join(chars)

    spec = ",".join(term(t) for t in terms)
    if out is not None:
        spec += "->" + term(out)
    return spec, operands


def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """numpy.einsum (explicit, implicit and interleaved forms, ellipses); contracted by
    opt_einsum with a cached path, so ``optimize`` is accepted and ignored.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.einsum("ij,jk->ik", np.eye(2), np.ones((2, 3)), optimize=True).shape
    (2, 3)
    """
    _no_out("einsum", out)
    if not operands:
        raise ValueError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        spec, arrays = operands[0], list(operands[1:])
    else:
        spec, arrays = _sublist_subscripts(operands)
    arrays = [_arr(a) for a in arrays]
    if dtype is not None:
        arrays = [_core.cast(a, dtype=_np.dtype(dtype)) for a in arrays]
    return _la.einsum(spec, *arrays)


def kron(a, b):
    """numpy.kron: the Kronecker product (inputs of any ndim)."""
    return _la.kron(_arr(a), _arr(b))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of 3-vectors along ``axisa``/``axisb`` (``axis`` sets all three)."""
    return _la.cross(_arr(a), _arr(b), axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def _core_dims(fname, x1, x2, axis1, axis2, what):
    """numpy's gufunc check: core dimensions match exactly (they do not broadcast)."""
    s1, s2 = _shape_of(x1), _shape_of(x2)
    for s, name, need in ((s1, "x1", -axis1), (s2, "x2", -axis2)):
        if len(s) < need:
            raise ValueError(f"{fname}: {name} has shape {tuple(s)}, which has no {what}")
    if s1[axis1] != s2[axis2]:
        raise ValueError(f"{fname}: x1 of shape {tuple(s1)} and x2 of shape {tuple(s2)} differ in "
                         f"their {what} ({s1[axis1]} and {s2[axis2]})")


def vecdot(x1, x2, /, *, axis=-1):
    """numpy.vecdot: ``sum(conj(x1) * x2, axis)``, the leading axes broadcast.

    >>> import hessgrad.numpy as hnp
    >>> hnp.vecdot([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0]).tolist()
    [3.0, 7.0]
    """
    x1, x2 = _arr(x1), _arr(x2)
    n1, n2 = len(_shape_of(x1)), len(_shape_of(x2))
    if not (-min(n1, n2) <= axis < min(n1, n2)) or min(n1, n2) == 0:
        raise _np.exceptions.AxisError(f"vecdot: axis {axis} is out of bounds for x1 of shape "
                         f"{tuple(_shape_of(x1))} and x2 of shape {tuple(_shape_of(x2))}")
    a1, a2 = axis - n1 if axis >= 0 else axis, axis - n2 if axis >= 0 else axis
    _core_dims("vecdot", x1, x2, a1, a2, "vector axis")
    x1, x2 = _sh.moveaxis(x1, a1, -1), _sh.moveaxis(x2, a2, -1)
    return _red.sum(_ew.multiply(_ew.conj(x1), x2), axis=-1)


def matvec(x1, x2, /):
    """numpy.matvec: matrix (..., m, n) times vector (..., n), stacks broadcast; no
    conjugation.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.matvec(np.eye(2) * 3.0, [1.0, 2.0]).tolist()
    [3.0, 6.0]
    """
    x1, x2 = _arr(x1), _arr(x2)
    _core_dims("matvec", x1, x2, -1, -1, "contracted dimension")
    if len(_shape_of(x1)) < 2:
        raise ValueError(f"matvec: x1 has shape {tuple(_shape_of(x1))} but must be at least "
                         "2-D")
    return _core.getitem(_la.matmul(x1, _sh.expand_dims(x2, -1)), index=(Ellipsis, 0))


def vecmat(x1, x2, /):
    """numpy.vecmat: conj(vector (..., n)) times matrix (..., n, m), stacks broadcast.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.vecmat([1.0, 2.0], np.eye(2) * 3.0).tolist()
    [3.0, 6.0]
    """
    x1, x2 = _arr(x1), _arr(x2)
    _core_dims("vecmat", x1, x2, -1, -2, "contracted dimension")
    row = _sh.expand_dims(_ew.conj(x1), -2)
    return _core.getitem(_la.matmul(row, x2), index=(Ellipsis, 0, slice(None)))


_KEYWORD = 1 << 20  # out= is keyword-only
# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("dot", 2, "same_kind"),
    ("matmul", 2, "same_kind"),
    ("outer", 2, "same_kind"),
    ("einsum", _KEYWORD, "safe"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["dot", "vdot", "matmul", "inner", "outer", "tensordot", "einsum", "kron", "cross",
           "vecdot", "matvec", "vecmat"]
