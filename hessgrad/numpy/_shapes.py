"""Shapes, joining, slicing and rearranging."""

from ..ops import core as _core, shape as _shape


def reshape(a, newshape):
    return _core.reshape(a, shape=newshape)


def transpose(a, axes=None):
    return _shape.transpose(a, axes=axes)


def stack(arrays, axis=0):
    return _core.stack(*arrays, axis=axis)


def concatenate(arrays, axis=0):
    return _shape.concatenate(*arrays, axis=axis)


__all__ = ["reshape", "transpose", "stack", "concatenate"]
