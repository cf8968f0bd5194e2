"""Array constructors with numpy's names and signatures: array, asarray, zeros, ones, full,
the ``*_like`` family, eye, identity, arange, linspace, logspace, geomspace, copy.

They return tensors (graph constants while tracing), never numpy arrays, so that
``a[i] = tensor`` cannot silently drop a gradient: hessgrad arrays, which numpy code writes
in place as it writes numpy's (``a[i] = v``, ``a += b``, see ``hessgrad.ops.inplace``), with
exact derivatives. ``array``/``asarray`` of lists holding tensors stack them, and
``full``/``full_like``/``linspace`` differentiate in tensor arguments.

>>> import hessgrad.numpy as hnp
>>> hnp.zeros((2, 3)).shape
(2, 3)
"""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, current as _current
from ..ops import core as _core, elementwise as _ew, inplace as _ip, shape as _sh
from ._arraylike import has_tensor as _has_tensor, stacked as _stacked


def _const(value):
    return _ip.mark_array(_core.constant(value))


def _new(out, *inputs):
    """``out`` as a new array (numpy's constructors copy): never one of ``inputs``, which a
    write into it would change too."""
    if any(out is x for x in inputs):
        out = _core.identity(out)
    return _ip.mark_array(out)


def _cast(x, dtype):
    if dtype is None:
        return x
    dtype = _np.dtype(dtype)
    return x if x.dtype == dtype else _core.cast(x, dtype=dtype)




def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """numpy.array. Tensors (also inside nested lists) keep their gradient: lists holding
    tensors are stacked.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> x = hg.constant(2.0)
    >>> hnp.array([[x, 1.0], [0.0, x * x]]).numpy()
    array([[2., 1.],
           [0., 4.]])
    """
    if _has_tensor(object):
        out = _sh.as_array(object, "array")
        if copy and out is object:
            out = _core.identity(out)
        out = _cast(out, dtype)
        if out is not object:
            _ip.mark_array(out)
    else:
        out = _const(_np.array(object, dtype=dtype))
    if ndmin and len(out.shape) < ndmin:
        out = _ip.mark_array(
            _core.reshape(out, shape=(1,) * (ndmin - len(out.shape)) + tuple(out.shape)))
    return out


def asarray(a, dtype=None, order=None, *, copy=None, like=None):
    """numpy.asarray: a tensor is returned as it is (cast to ``dtype`` if given)."""
    if isinstance(a, _Tensor):
        return _cast(_core.strong(a), dtype)
    return array(a, dtype=dtype, copy=False)


asanyarray = asarray


def astype(x, dtype, /, *, copy=True, device=None):
    """numpy.astype (numpy 2): ``x`` cast to ``dtype`` (``copy`` is moot: arrays are
    immutable); differentiable between floating and complex dtypes.

    >>> import hessgrad.numpy as hnp
    >>> hnp.astype(hnp.ones(2), hnp.float32).dtype
    dtype('float32')
    """
    if device not in (None, "cpu"):
        raise ValueError(f"astype: device must be None or 'cpu', got {device!r}")
    out = _cast(asarray(x), dtype)
    return _new(out, x) if copy else out


def ascontiguousarray(a, dtype=None, *, like=None):
    """numpy's ``ascontiguousarray``: ``a`` as an array (``asarray``); differentiable, the
    identity."""
    return asarray(a, dtype)


def copy(a, order="K", subok=False):
    """A copy of ``a`` (the identity for differentiation)."""
    if isinstance(a, _Tensor):
        return _ip.mark_array(_core.identity(a))
    return array(a)


def _shape_arg(shape, what):
    try:
        return (int(shape),) if _np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be an int or a sequence of ints, got {shape!r}") \
            from None


def zeros(shape, dtype=float, order="C", *, like=None):
    """numpy's ``zeros``: a constant array of zeros."""
    return _const(_np.zeros(_shape_arg(shape, "zeros"), dtype=dtype))


def ones(shape, dtype=None, order="C", *, like=None):
    """numpy's ``ones``: a constant array of ones."""
    return _const(_np.ones(_shape_arg(shape, "ones"), dtype=dtype))


def empty(shape, dtype=float, order="C", *, like=None):
    """Like ``zeros`` (hessgrad never hands out uninitialised memory)."""
    return _const(_np.zeros(_shape_arg(shape, "empty"), dtype=dtype))


def full(shape, fill_value, dtype=None, order="C", *, like=None):
    """numpy.full; a tensor ``fill_value`` is broadcast (and differentiates)."""
    shape = _shape_arg(shape, "full")
    if _has_tensor(fill_value):
        value = _cast(_sh.as_array(fill_value, "full"), dtype)
        return _new(_sh.broadcast_to(value, shape), fill_value, value)
    return _const(_np.full(shape, fill_value, dtype=dtype))


def _like_shape(a, shape, what):
    if shape is not None:
        return _shape_arg(shape, what)
    a = _stacked(a, what)
    s = a.shape if isinstance(a, _Tensor) else _np.shape(a)
    if s is None or None in s:
        raise ValueError(f"{what}: the shape of the prototype must be known, got {s}")
    return tuple(s)


def _like_dtype(a, dtype):
    if dtype is not None:
        return _np.dtype(dtype)
    a = _stacked(a, "zeros_like")
    return a.dtype if isinstance(a, _Tensor) else _np.result_type(_np.asarray(a))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy's ``zeros_like``: zeros with the shape and dtype of ``a`` (a constant: no gradient
    flows to ``a``)."""
    return _const(_np.zeros(_like_shape(a, shape, "zeros_like"), _like_dtype(a, dtype)))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy's ``ones_like``: ones with the shape and dtype of ``a`` (a constant: no gradient
    flows to ``a``)."""
    return _const(_np.ones(_like_shape(a, shape, "ones_like"), _like_dtype(a, dtype)))


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy's ``empty_like``: an array with the shape and dtype of ``prototype`` (a constant; as
    numpy's, its values are unspecified)."""
    return zeros_like(prototype, dtype, shape=shape)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.full_like; a tensor ``fill_value`` differentiates."""
    shape = _like_shape(a, shape, "full_like")
    dtype = _like_dtype(a, dtype)
    if _has_tensor(fill_value):
        value = _cast(_sh.as_array(fill_value, "full_like"), dtype)
        return _new(_sh.broadcast_to(value, shape), fill_value, value)
    return _const(_np.full(shape, fill_value, dtype=dtype))


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):
    """numpy's ``eye``: a constant 2-d array with ones on diagonal ``k``."""
    return _const(_np.eye(N, M, k, dtype=dtype))


def identity(n, dtype=None, *, like=None):
    """numpy's ``identity``: the constant ``n`` by ``n`` identity matrix."""
    return _const(_np.identity(n, dtype=dtype))


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """numpy's ``tri``: a constant array with ones at and below diagonal ``k``."""
    return _const(_np.tri(N, M, k, dtype=dtype))


def _value(x, what):
    return x._concrete(what) if isinstance(x, _Tensor) else x


def arange(start, stop=None, step=None, dtype=None, *, like=None):
    """numpy.arange. Tensor bounds must be concrete (they decide the length); the values,
    ``start + i * step``, differentiate in a float tensor ``start`` or ``step``.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.arange(3).tolist()
    [0, 1, 2]
    >>> float(hg.grad(lambda s: hnp.sum(hnp.arange(s, 4.0)))(0.5))  # 0.5, 1.5, 2.5, 3.5
    4.0
    """
    args = [_value(v, "arange") for v in (start, stop, step) if v is not None]
    out = _const(_np.arange(*args, dtype=dtype))
    if stop is None:  # arange(stop): start 0
        start, stop = None, start
    if out.dtype.kind not in "fc":
        return out
    # numpy's own values, plus zero-valued terms that carry the derivatives
    n = out.shape[0]
    for arg, ramp in ((start, None), (step, _np.arange(n, dtype=out.dtype))):
        if isinstance(arg, _Tensor) and arg.dtype.kind in "fc":
            delta = _cast(arg - _core.stop_gradient(arg), out.dtype)
            out = out + (delta if ramp is None else delta * ramp)
    return out


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace; differentiable in tensor ``start``/``stop``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.linspace(0.0, 1.0, 5).numpy()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if not (_has_tensor(start) or _has_tensor(stop)):
        out = _np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
        return (_const(out[0]), out[1]) if retstep else _const(out)
    start, stop = (x if type(x) in (int, float) else _sh.as_array(x, "linspace")
                   for x in (start, stop))
    # numpy's result dtype: a float32 start or stop gives float32, a Python number is weak
    result_dtype = _np.result_type(*(x.dtype if isinstance(x, _Tensor) else x
                                     for x in (start, stop)), float(num))
    div = (num - 1) if endpoint else num
    frac = _np.arange(num, dtype=float) / div if div > 0 else _np.zeros(num)
    bshape = _np.broadcast_shapes(_np.shape(start) if not isinstance(start, _Tensor)
                                  else start.shape,
                                  _np.shape(stop) if not isinstance(stop, _Tensor)
                                  else stop.shape)
    frac = frac.reshape((num,) + (1,) * len(bshape))
    delta = _ew.subtract(stop, start)
    out = _ew.add(start, _ew.multiply(delta, frac))
    if endpoint and num > 1:  # exactly ``stop`` at the end, as numpy
        last = _np.zeros((num,) + (1,) * len(bshape), bool)
        last[-1] = True
        out = _ew.where(last, _sh.broadcast_to(stop, tuple(out.shape[1:])), out)
    if axis != 0:
        out = _sh.moveaxis(out, 0, axis)
    out = _cast(out, result_dtype if dtype is None else dtype)
    if retstep:
        return out, _ew.divide(delta, div) if div > 0 else _np.nan
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy.logspace; differentiable in tensor ``start``/``stop``/``base``."""
    if not (_has_tensor(start) or _has_tensor(stop) or _has_tensor(base)):
        return _const(_np.logspace(start, stop, num, endpoint, base, dtype, axis))
    y = linspace(start, stop, num, endpoint, axis=axis)
    return _cast(_ew.power(base, y), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """numpy.geomspace; differentiable in tensor ``start``/``stop``.

    As numpy: the sequence runs from ``start`` to ``stop`` (both of ``start``'s sign, or
    phase), ``start * (stop / start) ** (k / (num - 1))``, with the endpoints exactly
    ``start`` and ``stop``.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.geomspace(1.0, 8.0, 4).numpy()
    array([1., 2., 4., 8.])
    >>> round(float(hg.grad(lambda s: hnp.geomspace(s, 8.0, 4)[1])(1.0)), 12)  # (s*s*8)**(1/3)
    1.333333333333
    """
    if not (_has_tensor(start) or _has_tensor(stop)):
        return _const(_np.geomspace(start, stop, num, endpoint, dtype, axis))
    num = int(num)
    if num < 0:
        raise ValueError(f"geomspace: number of samples, {num}, must be non-negative")
    start = _sh.as_array(start, "geomspace")
    stop = _sh.as_array(stop, "geomspace")
    for bound in (start, stop):
        value = _current(bound)._value if isinstance(bound, _Tensor) else _np.asarray(bound)
        if value is not None and _np.any(value == 0):
            raise ValueError("geomspace: Geometric sequence cannot include zero "
                             "(a 'start' or 'stop' entry is 0)")
    # complex: the phase of start (differentiable, unlike the piecewise-constant sign)
    if start.dtype.kind == "c" or stop.dtype.kind == "c":
        sign = start / _ew.absolute(start)
    else:
        sign = _ew.sign(start)
    start, stop = start / sign, stop / sign
    out = logspace(_ew.log10(start), _ew.log10(stop), num, endpoint, base=10.0)
    nd = len(out.shape) - 1
    if num > 0:  # exactly start (and stop) at the ends, as numpy
        first = _np.zeros((num,) + (1,) * nd, bool)
        first[0] = True
        out = _ew.where(first, _sh.broadcast_to(start, tuple(out.shape[1:])), out)
        if num > 1 and endpoint:
            out = _ew.where(first[::-1], _sh.broadcast_to(stop, tuple(out.shape[1:])), out)
    out = out * sign
    if axis != 0:
        out = _sh.moveaxis(out, 0, axis)
    return _cast(out, dtype)


__all__ = ["array", "asarray", "asanyarray", "astype", "ascontiguousarray", "copy", "zeros", "ones",
           "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye",
           "identity", "tri", "arange", "linspace", "logspace", "geomspace"]
