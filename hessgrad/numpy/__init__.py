"""``import hessgrad.numpy as np``: numpy's API over hessgrad primitives, differentiable."""

import numpy as _np

from ..ops import core as _core, elementwise as _ew, linalg as _la, reduction as _red
from ..ops import shape as _shape

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, _np.newaxis
float64, float32, int64, int32 = _np.float64, _np.float32, _np.int64, _np.int32

add, subtract, multiply, divide = _ew.add, _ew.subtract, _ew.multiply, _ew.divide
true_divide, negative, power, square = _ew.divide, _ew.negative, _ew.power, _ew.square
exp, log, log1p, expm1, sqrt, tanh = _ew.exp, _ew.log, _ew.log1p, _ew.expm1, _ew.sqrt, _ew.tanh
sin, cos, abs, absolute, sign = _ew.sin, _ew.cos, _ew.absolute, _ew.absolute, _ew.sign
maximum, minimum, where, logaddexp = _ew.maximum, _ew.minimum, _ew.where, _ew.logaddexp
matmul, einsum = _la.matmul, _la.einsum


def sum(a, axis=None, keepdims=False):  # noqa: A001
    return _red.sum(a, axis=axis, keepdims=keepdims)


def mean(a, axis=None, keepdims=False):
    return _red.mean(a, axis=axis, keepdims=keepdims)


def max(a, axis=None, keepdims=False):  # noqa: A001
    return _red.max(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    return _red.min(a, axis=axis, keepdims=keepdims)


def reshape(a, newshape):
    return _core.reshape(a, shape=newshape)


def transpose(a, axes=None):
    return _shape.transpose(a, axes=axes)
