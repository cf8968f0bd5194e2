"""Shape rules shared by the op families: a graph node's output shape and dtype from its
operands' (symbolic tensors' ``shape`` and ``dtype``), in time independent of their size.

Without a rule the engine runs the forward on stand-ins of the operands' full shapes, which
costs as much as the op itself on a large array. These rules derive the shape from the
operands' shapes and params, and the dtype by running the forward on tiny stand-ins (0-d, or
one element per axis), which keeps numpy's promotion rules exactly. A dimension may be
unknown (None). An op declares its rule with ``shape_rule=``; the families' are here.
"""

import numpy as np

from ..engine.tensor import Tensor, dtype_of, shape_of

_ARG_NAMES = ("x1", "x2", "x3")


def static_broadcast(name, shapes, names=_ARG_NAMES):
    """numpy's broadcast of static shapes, where a dimension may be unknown (None)."""
    if any(s is None for s in shapes):
        return None
    first = shapes[0] if shapes else ()
    if all(s == first for s in shapes) and None not in first:  # the commonest case
        return tuple(first)
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            detail = ", ".join(f"{n} of shape {s}" for n, s in zip(names, shapes))
            raise ValueError(f"{name}: operands cannot be broadcast together: {detail}")
        if known:
            out.append(known.pop())
        elif None in dims:
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def stand_in(a, ndim=0):
    """A value with the dtype ``a`` would have in the forward, of ``ndim`` unit axes (Python
    scalars stay themselves: numpy promotes them weakly)."""
    if isinstance(a, Tensor):
        return np.ones((1,) * ndim, a.dtype)
    if a is None or isinstance(a, (bool, int, float, complex)):
        return a
    a = np.asarray(a)
    return a.reshape(-1)[:1].reshape((1,) * ndim).copy() if a.size else np.ones((1,) * ndim,
                                                                                  a.dtype)


# The result dtype of (forward, stand-ins' dtypes and ranks, params): under numpy 2's
# promotion (NEP 50) it does not depend on values, except a Python int's (uint8 + 300).
_DTYPES = {}
_DTYPES_CAP = 4096
_CACHE_DTYPES = int(np.__version__.split(".")[0]) >= 2


def _stand_in_key(a):
    if isinstance(a, np.ndarray):
        return a.dtype.str, a.ndim
    if type(a) is int:
        return int, a
    return type(a)


def _dtype(forward, stand_ins, params, operands):
    if not _CACHE_DTYPES:
        return _computed_dtype(forward, stand_ins, params, operands)
    try:
        key = (forward, tuple(map(_stand_in_key, stand_ins)), tuple(params.items()))
        hash(key)
    except TypeError:  # unhashable params (arrays, lists)
        return _computed_dtype(forward, stand_ins, params, operands)
    dtype = _DTYPES.get(key)
    if dtype is None:
        if len(_DTYPES) >= _DTYPES_CAP:
            _DTYPES.clear()
        dtype = _DTYPES[key] = _computed_dtype(forward, stand_ins, params, operands)
    return dtype


def _computed_dtype(forward, stand_ins, params, operands):
    try:
        with np.errstate(all="ignore"):
            out = forward(*stand_ins, **params)
        return np.result_type(out)
    except Exception:  # noqa: BLE001 - value-dependent failures (int ** -1): promotion
        return np.result_type(*[dtype_of(a) for a in operands if a is not None])


def _scalar_key(a):
    """What ``_stand_in_key(stand_in(a))`` is, without making the stand-in."""
    if isinstance(a, Tensor):
        return a.dtype.str, 0
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype.str, 0
    return _stand_in_key(a) if a is None or type(a) in (bool, int, float, complex) else None


def broadcasting(name, forward, names=_ARG_NAMES):
    """The rule of ops that broadcast their operands as numpy does (elementwise): a clear
    error at trace time, the dtype from the forward on 0-d stand-ins (remembered per operand
    dtypes: a traced loop of scalar operations asks the same question thousands of times)."""
    def rule(*operands, **params):
        shape = static_broadcast(name, [shape_of(a) if a is not None else ()
                                        for a in operands], names)
        if _CACHE_DTYPES and not params:
            keys = tuple(map(_scalar_key, operands))
            if None not in keys:
                key = (forward, keys, ())
                dtype = _DTYPES.get(key)
                if dtype is not None:
                    return shape, dtype
        return shape, _dtype(forward, [stand_in(a) for a in operands], params, operands)
    return rule


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    out = tuple(int(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if any(not -ndim <= a < max(ndim, 1) for a in out):
        return None  # numpy raises at run time, naming the axis
    return tuple(a % ndim for a in out) if ndim else ()


def reducing(forward):
    """The rule of reductions over ``axis`` (None: all) with ``keepdims``."""
    def rule(x, axis=None, keepdims=False, **params):
        shape = shape_of(x)
        dtype = _dtype(forward, [stand_in(x, len(shape) if shape is not None else 0)],
                       dict(params, axis=axis, keepdims=keepdims), [x])
        axes = None if shape is None else _axes(axis, len(shape))
        if axes is None:
            return None, dtype
        if keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(shape)), dtype
        return tuple(d for i, d in enumerate(shape) if i not in axes), dtype
    return rule


def same_shape(forward):
    """The rule of ops whose result has their first operand's shape (scans, sorts, casts);
    with ``axis=None`` (numpy's flatten first) a 1-D result."""
    def rule(x, *rest, **params):
        shape = shape_of(x)
        ndim = len(shape) if shape is not None else 0
        dtype = _dtype(forward, [stand_in(x, ndim)] + [stand_in(a, ndim) for a in rest], params,
                       (x,) + rest)
        if shape is not None and "axis" in params and params["axis"] is None and ndim != 1:
            size = None if None in shape else int(np.prod(shape, dtype=np.int64))
            return (size,), dtype
        return shape, dtype
    return rule
