"""Python operators on Tensor (``+``, ``@``, ``[]``, comparisons, ...), bound to primitives;
``a[i] = v`` and ``a += b`` write in place (see :mod:`.inplace`)."""

import numpy as np

from ..engine.dispatch import bind_eager
from ..engine.graph import python_operator
from ..engine.tensor import Tensor, Variable
from . import core, elementwise as ew, indexing, inplace, linalg, shape


# The operators bind their primitive directly: ``x * 1.01`` is one Python call, not three
# (every eager op pays for each call layer). A list or tuple operand becomes an array (so
# ``x - [1, 2]`` works as in numpy and rules see an array); lists holding tensors are stacked.
_COMMON = (Tensor, float, int, np.ndarray)  # the common operands: one test, no isinstance


def _binary(op, swapped=False, arithmetic=True):
    prim = op.primitive

    def method(self, other):
        if type(other) not in _COMMON and isinstance(other, (list, tuple)):
            other = shape.as_array(other, "operator")
        if self._weak:  # a traced Python scalar: see python_operator
            return python_operator(op, (other, self) if swapped else (self, other), arithmetic)
        return bind_eager(prim, other, self) if swapped else bind_eager(prim, self, other)
    return method


def _swap(op):
    return _binary(op, swapped=True)


def _logical(op):  # comparisons and & | ^: on Python bools and numbers, numpy's results
    return _binary(op, arithmetic=False)


def _unary(op):
    prim = op.primitive

    def method(self):
        return python_operator(op, (self,)) if self._weak else bind_eager(prim, self)
    return method


_BASIC = (slice, int, type(None), type(Ellipsis))  # exact types: bool (a mask) is not int


def _getitem(self, index):
    out = indexing.index(self, index)
    # numpy's basic indexing gives a view (of an array, not a scalar: x[0] of a vector is
    # not one): it sees later writes to ``self`` and writes into it
    if (type(index) in _BASIC or type(index) is tuple and all(type(p) in _BASIC
                                                              for p in index)) and \
            type(out) is Tensor and out.shape:
        inplace.note_view(self, out, inplace.IndexView(index))
    return out


def _iter(self):
    shape = self.shape
    if shape is None or not shape:
        raise TypeError("iteration over a 0-d tensor" if shape == () else
                        f"iteration over tensor {self.name} of unknown shape")
    if shape[0] is None:
        raise TypeError(f"iteration over tensor {self.name} whose first dimension is unknown")
    if len(shape) == 1:  # numpy's scalars
        return (core.getitem(self, index=i) for i in range(shape[0]))
    # the rows of a matrix are views, as numpy's: ``for row in a: row[0] = 1`` writes ``a``
    return (inplace.note_view(self, core.getitem(self, index=i), inplace.IndexView(i))
            for i in range(shape[0]))


def _copy(self, memo=None):
    """``copy.copy``, ``copy.deepcopy``: a new array with the same values, as numpy's (an
    identity, so it stays differentiable); a Variable copied is a new Variable."""
    if type(self) is Variable:
        return Variable(self.numpy(), trainable=self.trainable, dtype=self.dtype)
    return core.identity(self)


def _setitem(self, index, value):
    inplace.setitem(self, index, value)


def _in_place(method, name):
    """``a op= b``: numpy's arrays are written in place (their views and aliases see it);
    numpy's scalars, Python numbers and Variables make a new value."""
    def op(self, other):
        result = method(self, other)
        if result is NotImplemented or not inplace.updates_in_place(self):
            return result
        return inplace.in_place(self, result, name)
    op.__name__ = f"__i{method.__name__.strip('_')}__"
    return op


def _transposed(self):
    out = shape.transpose(self)
    return inplace.note_view(self, out, inplace.TransposeView(None))


METHODS = {
    "__add__": _binary(ew.add), "__radd__": _swap(ew.add),
    "__sub__": _binary(ew.subtract), "__rsub__": _swap(ew.subtract),
    "__mul__": _binary(ew.multiply), "__rmul__": _swap(ew.multiply),
    "__truediv__": _binary(ew.divide), "__rtruediv__": _swap(ew.divide),
    "__pow__": _binary(ew.power), "__rpow__": _swap(ew.power),
    "__matmul__": _binary(linalg.matmul), "__rmatmul__": _swap(linalg.matmul),
    "__neg__": _unary(ew.negative), "__pos__": _unary(ew.positive),
    "__abs__": _unary(ew.absolute),
    "__lt__": _logical(ew.less), "__le__": _logical(ew.less_equal),
    "__gt__": _logical(ew.greater), "__ge__": _logical(ew.greater_equal),
    "__eq__": _logical(ew.equal), "__ne__": _logical(ew.not_equal),
    "__and__": _logical(ew.logical_and), "__or__": _logical(ew.logical_or),
    "__xor__": _logical(ew.logical_xor),
    "__invert__": ew.logical_not,
    "__getitem__": _getitem, "__setitem__": _setitem, "__iter__": _iter,
    "__copy__": _copy, "__deepcopy__": _copy,
    "at": property(indexing.AtIndexer, doc=indexing.AtIndexer.__doc__),
    "T": property(_transposed),
}
for _name, _ufunc in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                      ("truediv", "divide"), ("pow", "power"), ("matmul", "matmul"),
                      ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
    METHODS[f"__i{_name}__"] = _in_place(METHODS[f"__{_name}__"], _ufunc)
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = object.__hash__  # defining __eq__ would otherwise unset it
