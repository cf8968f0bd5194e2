"""Reductions with numpy's ``axis`` (int, tuple, negative, None) and ``keepdims``."""

import builtins

import numpy as np

from ..engine.registry import primitive
from ..engine.tensor import shape_of
from .core import broadcast_to, reshape
from .elementwise import equal, exp


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise np.exceptions.AxisError(f"axis {a} is out of bounds for array of dimension "
                                          f"{ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(out))


def kept_shape(shape, axis):
    """``shape`` with the reduced axes kept as length 1."""
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def expand_to(g, x, axis, keepdims):
    """A reduced gradient ``g`` broadcast back over the input's shape."""
    shape = shape_of(x)
    if not keepdims:
        g = reshape(g, shape=kept_shape(shape, axis))
    return broadcast_to(g, shape=shape)


def _keep(ans, x, axis, keepdims):
    return ans if keepdims else reshape(ans, shape=kept_shape(shape_of(x), axis))


def _count(x, axis):
    shape = shape_of(x)
    return int(np.prod([shape[i] for i in _axes(axis, len(shape))], dtype=np.int64))


sum = primitive(  # noqa: A001 - numpy's name
    "sum", lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
    vjp=[lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x, axis, keepdims)],
    linear=True)
mean = primitive(
    "mean", lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g, x, axis, keepdims) / builtins.max(_count(x, axis), 1)],
    linear=True)


def _extremum_mask(ans, x, axis, keepdims):
    """Where ``x`` attains the extremum, each tie sharing the gradient equally."""
    hit = equal(x, _keep(ans, x, axis, keepdims)) * 1.0
    return hit / sum(hit, axis=axis, keepdims=True)


def _extremum(name, forward):
    return primitive(
        name, lambda x, axis=None, keepdims=False: forward(x, axis=axis, keepdims=keepdims),
        vjp=[lambda g, ans, x, axis=None, keepdims=False:
             expand_to(g, x, axis, keepdims) * _extremum_mask(ans, x, axis, keepdims)],
        jvp=[lambda t, ans, x, axis=None, keepdims=False:
             sum(t * _extremum_mask(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)])


max = _extremum("max", np.max)  # noqa: A001
min = _extremum("min", np.min)  # noqa: A001


def _logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=_axes(axis, x.ndim))


def _softmax_of(ans, x, axis, keepdims):
    return exp(x - _keep(ans, x, axis, keepdims))


logsumexp = primitive(
    "logsumexp", _logsumexp,
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g, x, axis, keepdims) * _softmax_of(ans, x, axis, keepdims)],
    jvp=[lambda t, ans, x, axis=None, keepdims=False:
         sum(t * _softmax_of(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)])
