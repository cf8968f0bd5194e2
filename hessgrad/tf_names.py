"""The TensorFlow-named functions of the top-level namespace, with TensorFlow's signatures.

Their parameters (``dtype``, ``shape``, ``axis``, ...) reach the primitives by keyword, so
they stay static in every mode: passed positionally to a primitive they would be inputs, and
forward mode would give them tangents (``hg.reduce_sum(x, 1)`` summed over axis 0 in a
forward-over-reverse Hessian-vector product). ``name`` is accepted and ignored, as eager
TensorFlow does.
"""

import numpy as np

from .ops import core, elementwise, reduction, shape


def _static(shape):
    return tuple(shape) if isinstance(shape, list) else shape


def cast(x, dtype, name=None):
    """``x`` converted to ``dtype`` (complex to real keeps the real part, as TensorFlow)."""
    return core.cast(x, dtype=dtype)


def reshape(tensor, shape, name=None):
    """``tensor`` with a new ``shape`` (one entry may be -1)."""
    return core.reshape(tensor, shape=_static(shape))


def broadcast_to(input, shape, name=None):  # noqa: A002 - TensorFlow's name
    """``input`` broadcast to ``shape`` (numpy's rules)."""
    return core.broadcast_to(input, shape=_static(shape))


def transpose(a, perm=None, conjugate=False, name=None, *, axes=None):
    """``a`` with its axes permuted by ``perm`` (reversed by default; numpy's name ``axes``
    works too); ``conjugate`` also conjugates it."""
    if axes is not None:
        if perm is not None:
            raise TypeError("transpose: give perm or axes, not both")
        perm = axes
    out = shape.transpose(a, axes=None if perm is None else tuple(perm))
    return elementwise.conjugate(out) if conjugate else out


def _reduce(prim):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        if axis is not None and not isinstance(axis, (int, np.integer)):
            axis = tuple(axis)
        return prim(input_tensor, axis=axis, keepdims=keepdims)
    reduce.__name__ = reduce.__qualname__ = f"reduce_{prim.__name__}"
    reduce.__doc__ = (f"The {prim.__name__} of ``input_tensor`` over ``axis`` (every axis by "
                      "default); ``keepdims`` keeps the reduced axes with length 1.")
    return reduce


reduce_sum = _reduce(reduction.sum)
reduce_mean = _reduce(reduction.mean)
reduce_max = _reduce(reduction.max)
reduce_min = _reduce(reduction.min)
reduce_logsumexp = _reduce(reduction.logsumexp)


def concat(values, axis, name=None):
    """Concatenate a list of tensors along ``axis``."""
    return shape.concatenate(*values, axis=axis)


def stack(*values, axis=0, name=None):
    """Stack tensors along a new ``axis``: ``stack([a, b])`` (one list, TensorFlow's form) or
    ``stack(a, b)``."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = tuple(values[0])
    return shape.stack(*values, axis=axis)
