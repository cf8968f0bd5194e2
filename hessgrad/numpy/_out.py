"""numpy's ``out=``: a function's result written into an array the caller gives (and that
array returned), in place as numpy writes it (``hessgrad.ops.inplace``), with numpy's checks:
the result must broadcast to ``out``'s shape (a reduction's must have it exactly) and cast to
its dtype by the ``casting`` rule (``same_kind`` for ufuncs, ``unsafe`` for reductions).

>>> import hessgrad.numpy as hnp
>>> buf = hnp.zeros(3)
>>> hnp.add(hnp.ones(3), 2.0, out=buf) is buf, buf.tolist()
(True, [3.0, 3.0, 3.0])
"""

import functools as _functools

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, current as _current, dtype_of as _dtype_of, \
    shape_of as _shape_of
from ..ops import core as _core, elementwise as _ew, inplace as _ip


def single_out(fname, out):
    """``out`` as one array or None (numpy passes ufunc outputs as a tuple)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{fname}: out= must hold one array for one result, got "
                             f"{len(out)}")
        out = out[0]
    return out


def write_out(fname, out, result, casting="same_kind", broadcast=True, where=True):
    """``result`` written into ``out`` (returned): a hessgrad array is written in place (its
    views and aliases see it), a numpy array receives the values (refused for a value being
    differentiated, whose derivative numpy could not keep). ``where``: a mask of the
    elements written (numpy's ufunc ``where=``); the others keep their values.

    Raises:
        ValueError: the result does not broadcast to ``out``'s shape.
        TypeError: ``out`` is not an array, or the result cannot be cast to its dtype.
    """
    out = single_out(fname, out)
    if out is None:
        return result
    if not isinstance(out, (_Tensor, _np.ndarray)):
        raise TypeError(f"{fname}: out= must be an array, got {type(out).__name__}")
    if isinstance(out, _Tensor):
        _ip.check_writable(out, f"{fname}(..., out=)")
    r_shape, o_shape = tuple(_shape_of(result)), tuple(_shape_of(out))
    if r_shape != o_shape:
        try:
            fits = broadcast and _np.broadcast_shapes(r_shape, o_shape) == o_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{fname}: non-broadcastable output operand with shape {o_shape} doesn't "
                f"match the broadcast shape {r_shape}" if broadcast else
                f"{fname}: output parameter out= has shape {o_shape}, but the result has "
                f"shape {r_shape}")
    r_dtype, o_dtype = _np.dtype(_dtype_of(result)), _np.dtype(_dtype_of(out))
    if not _np.can_cast(r_dtype, o_dtype, casting):
        raise TypeError(f"{fname}: Cannot cast ufunc {fname!r} output from {r_dtype!r} to "
                        f"{o_dtype!r} with casting rule {casting!r}")
    if isinstance(out, _np.ndarray):
        value = result.__array__() if isinstance(result, _Tensor) else _np.asarray(result)
        mask = True if where is True else _np.asarray(
            where.__array__() if isinstance(where, _Tensor) else where)
        _np.copyto(out, value, casting="unsafe", where=mask)
        return out
    if not isinstance(result, _Tensor):
        result = _core.constant(_np.asarray(result))
    if r_dtype != o_dtype:
        result = _core.cast(result, dtype=o_dtype)
    if r_shape != o_shape:
        result = _core.broadcast_to(result, shape=o_shape)
    if where is not True:
        result = _ew.where(where, result, _current(out))
    _ip.assign(out, result, f"{fname}(..., out=)")
    return out


def writes_out(fname, position, casting="unsafe", broadcast=False):
    """Decorator: the function's ``out`` argument (a keyword, or positional at ``position``)
    receives its result (:func:`write_out`; numpy's reductions cast unsafely into an ``out``
    of the result's exact shape). The function itself never sees ``out``."""
    def decorate(fn):
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if "out" in kwargs:
                out = kwargs.pop("out")
            elif len(args) > position:
                out = args[position]
                args = args[:position] + (None,) + args[position + 1:]
            else:
                return fn(*args, **kwargs)
            result = fn(*args, **kwargs)
            if out is None:
                return result
            return write_out(fname, out, result, casting, broadcast)
        return wrapper
    return decorate
