"""Shape primitives: transpose, concatenate, expand_dims/squeeze (via reshape), slicing."""

import numpy as np

from ..engine.registry import primitive
from ..engine.tensor import shape_of
from .core import getitem, reshape, stack  # noqa: F401 - re-exported family members


def _transpose_vjp(g, ans, x, axes=None):
    if axes is None:
        return transpose(g)
    inverse = tuple(np.argsort([a % len(axes) for a in axes]))
    return transpose(g, axes=inverse)


transpose = primitive("transpose", lambda x, axes=None: np.transpose(x, axes),
                      vjp=[_transpose_vjp], linear=True)


def _concatenate_vjp(g, ans, *xs, axis=0):
    ndim = len(shape_of(ans))
    axis = axis % ndim
    grads, start = [], 0
    for x in xs:
        size = shape_of(x)[axis]
        index = (slice(None),) * axis + (slice(start, start + size),)
        grads.append(getitem(g, index=index))
        start += size
    return grads


concatenate = primitive("concatenate", lambda *xs, axis=0: np.concatenate(xs, axis=axis),
                        vjp=_concatenate_vjp, linear=True)


def swapaxes(x, axis1, axis2):
    ndim = len(shape_of(x))
    axes = list(range(ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(x, axes=tuple(axes))


def expand_dims(x, axis):
    shape = list(shape_of(x))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = len(shape) + len(axes)
    for a in sorted(a % ndim for a in axes):
        shape.insert(a, 1)
    return reshape(x, shape=tuple(shape))


def squeeze(x, axis=None):
    shape = shape_of(x)
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        for a in axes:
            if shape[a] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                                 f"not equal to one (axis {a} of shape {shape})")
    return reshape(x, shape=tuple(d for i, d in enumerate(shape) if i not in axes))
