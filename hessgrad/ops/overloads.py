"""Python operators on Tensor (``+``, ``@``, ``[]``, comparisons, ...), bound to primitives."""

from ..engine.tensor import Tensor
from . import core, elementwise as ew, linalg, shape


def _swap(op):
    return lambda self, other: op(other, self)


def _normalize_index(index):
    """Tensors inside an index become their (concrete) values; lists become arrays."""
    import numpy as np

    def part(p):
        if isinstance(p, Tensor):
            return p._concrete("an index")
        if isinstance(p, list):
            return np.asarray(p)
        return p

    return tuple(part(p) for p in index) if isinstance(index, tuple) else part(index)


def _getitem(self, index):
    return core.getitem(self, index=_normalize_index(index))


def _setitem(self, index, value):
    raise TypeError(
        "hessgrad tensors are immutable: `a[i] = v` cannot be differentiated in place. Build "
        "the new array functionally, e.g. `a = hg.numpy.where(mask, v, a)`, or collect "
        "values in a list and `hg.numpy.stack` them.")


METHODS = {
    "__add__": ew.add, "__radd__": _swap(ew.add),
    "__sub__": ew.subtract, "__rsub__": _swap(ew.subtract),
    "__mul__": ew.multiply, "__rmul__": _swap(ew.multiply),
    "__truediv__": ew.divide, "__rtruediv__": _swap(ew.divide),
    "__pow__": ew.power, "__rpow__": _swap(ew.power),
    "__matmul__": linalg.matmul, "__rmatmul__": _swap(linalg.matmul),
    "__neg__": ew.negative, "__pos__": lambda self: self, "__abs__": ew.absolute,
    "__lt__": ew.less, "__le__": ew.less_equal, "__gt__": ew.greater,
    "__ge__": ew.greater_equal, "__eq__": ew.equal, "__ne__": ew.not_equal,
    "__and__": ew.logical_and, "__or__": ew.logical_or, "__xor__": ew.logical_xor,
    "__invert__": ew.logical_not,
    "__getitem__": _getitem, "__setitem__": _setitem,
    "T": property(lambda self: shape.transpose(self)),
}
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = object.__hash__  # defining __eq__ would otherwise unset it
