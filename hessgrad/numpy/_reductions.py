"""Reductions with numpy's axis/keepdims semantics."""

from ..ops import reduction as _red


def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
    return _red.sum(a, axis=axis, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return _red.mean(a, axis=axis, keepdims=keepdims)


def max(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _red.max(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _red.min(a, axis=axis, keepdims=keepdims)


__all__ = ["sum", "mean", "max", "min"]
