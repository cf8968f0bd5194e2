"""Tensors behave like ndarrays: methods, numpy's dispatch protocols, Python builtins.

* Methods (``x.sum()``, ``x.reshape(-1, 4)``, ``x.astype(float)``, ...) call the function of
  the same name in ``hessgrad.numpy``, looked up when called, so they pick up whatever the
  namespace offers. The methods that write in place (``fill``, ``sort``, ``resize``, ``put``,
  ``x.flat[i] = v``, ``x //= y``) do so as numpy's (``hessgrad.ops.inplace``).
* ``Tensor.__array_ufunc__``: numpy ufuncs given a tensor (``np.exp(t)``, ``ndarray + t``,
  ``np.float64(2.0) * t``) run the same-named ``hessgrad.numpy`` function.
* ``Tensor.__array_function__``: numpy functions given a tensor (``np.sum(t)``,
  ``np.linalg.norm(t)``, ``np.concatenate([t, a])``) run ``hessgrad.numpy`` (or ``.linalg``)
  by name. A function hessgrad lacks raises a TypeError, unless its result is integer or
  boolean (a constant: ``np.allclose``, ``np.searchsorted``), which is computed on concrete
  values: passing a tensor to numpy never silently drops its gradient. ``out=`` tensors are
  written in place, and ``np.add.at(t, ...)`` (any ufunc's ``at``) updates ``t`` in place.

>>> import numpy as np
>>> import hessgrad as hg
>>> hg.grad(lambda x: np.sum(np.exp(x)))(np.array([0.0, 1.0]))
array([1.        , 2.71828183])
"""

import importlib
import sys

import numpy as _np

from ..engine.graph import WEAK_SCALARS, python_operator
from ..engine.nest import flatten as _flatten
from ..engine.tensor import Tensor, current as _current
from ..ops import core as _core, elementwise as _ew, indexing as _ix, inplace as _ip
from ._out import write_out as _write_out

_CUSTOM_HINT = ("write it with hessgrad.numpy functions, or declare a numpy implementation a "
                "primitive and give its gradient: `@hessgrad.primitive def f(x): ...` with "
                "`hessgrad.defvjp(f, lambda ans, x: lambda g: ...)`, the rule written with "
                "hessgrad.numpy (it then differentiates again, eagerly and traced)")


def _hnp():
    return importlib.import_module("hessgrad.numpy")


def _lookup(name, *fallbacks, module=None):
    module = module or _hnp()
    for n in (name,) + fallbacks:
        fn = getattr(module, n, None)
        if fn is not None and not isinstance(fn, type(_np)):
            return fn
    return None


def _require(name, *fallbacks):
    fn = _lookup(name, *fallbacks)
    if fn is None:
        raise AttributeError(f"hessgrad.numpy has no function {name!r} (needed by "
                             f"Tensor.{name})")
    return fn


# --- methods -----------------------------------------------------------------------------------
def _method(name, *fallbacks):
    def method(self, *args, **kwargs):
        return _require(name, *fallbacks)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``hessgrad.numpy.{name}(self, ...)``."
    return method


def _shape_args(args, what):
    if len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple, list))):
        return args[0]
    return args


def _reshape(self, *shape, order="C", copy=None):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))`` (numpy's method signature)."""
    shape = _shape_args(shape, "reshape")
    if shape == ():
        shape = ()
    return _require("reshape")(self, shape, order=order)


def _transpose(self, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    axes = _shape_args(axes, "transpose")
    return _require("transpose")(self, None if axes == () else axes)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dtype = _np.dtype(dtype)
    if self.dtype == dtype:
        return _core.identity(self) if copy else self
    return _core.cast(self, dtype=dtype)


def _flatten_method(self, order="C"):
    out = _require("reshape")(self, -1, order=order, copy=True)  # a copy, never a view
    return out if out is not self else _core.identity(self)


def _copy(self, order="C"):
    return _core.identity(self)


def _conj(self):
    if self.dtype is not None and _np.dtype(self.dtype).kind != "c":
        return self
    return _require("conjugate", "conj")(self)


def _fill(self, value):
    """``x.fill(value)``: every element set to the scalar ``value``, in place."""
    if _np.size(value) != 1 if not isinstance(value, Tensor) else value.size != 1:
        raise ValueError(f"Tensor.fill: the value must be a scalar, got shape "
                         f"{_np.shape(value) if not isinstance(value, Tensor) else value.shape}")
    _ip.setitem(self, Ellipsis, value)


def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None):
    """``x.sort(axis)``: sorted in place along ``axis`` (numpy's method; returns None)."""
    if order is not None:
        raise TypeError("Tensor.sort: order= (fields of structured arrays) is not supported")
    _ip.check_writable(self, "Tensor.sort")
    _ip.assign(self, _require("sort")(_current(self), axis=axis, kind=kind, stable=stable),
               "Tensor.sort")


def _resize_method(self, *new_shape, refcheck=True):
    """``x.resize(new_shape)``: reshaped in place to ``new_shape``, its elements in C order,
    zeros appended (numpy's method, not ``np.resize``, which repeats them); only for an eager
    array that is no view and has none, as numpy (which also counts references)."""
    _ip.check_writable(self, "Tensor.resize")
    shape = new_shape[0] if len(new_shape) == 1 and not isinstance(new_shape[0], int) \
        else new_shape
    shape = (int(shape),) if _np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"Tensor.resize: negative dimensions are not allowed, got {shape}")
    x = _current(self)
    size, new = int(_np.prod(x.shape, dtype=_np.int64)), int(_np.prod(shape, dtype=_np.int64))
    flat = _core.reshape(x, shape=(size,))
    if new <= size:
        flat = _core.getitem(flat, index=slice(0, new))
    else:
        flat = _require("concatenate")([flat, _np.zeros(new - size, x.dtype)])
    _ip.resized(self, _core.reshape(flat, shape=shape), "Tensor.resize")


def _put_method(self, indices, values, mode="raise"):
    return _require("put")(self, indices, values, mode)


class FlatIterator:
    """``x.flat``: ``x`` as a 1-D sequence of its elements in C order; ``x.flat[i] = v``
    writes into ``x`` (values repeated as needed, as numpy's)."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return int(_np.prod(self.base.shape, dtype=_np.int64))

    def __getitem__(self, index):
        return _require("ravel")(self.base)[index]

    def __setitem__(self, index, value):
        a = self.base
        shape = tuple(a.shape)
        positions = _np.arange(len(self))[index]
        if isinstance(value, (list, tuple)) or _np.ndim(value) or isinstance(value, Tensor) \
                and value.shape:
            value = _require("resize")(value, _np.shape(positions))
        _ip.setitem(a, _np.unravel_index(positions, shape), value)

    def __iter__(self):
        return iter(_require("ravel")(self.base))

    def __array__(self, dtype=None, copy=None):
        return _np.asarray(_require("ravel")(self.base).__array__(dtype))

    def copy(self):
        return _core.identity(_require("ravel")(self.base))


def _real(self):
    if self.dtype is not None and _np.dtype(self.dtype).kind != "c":
        return self
    return _require("real")(self)


def _imag(self):
    if self.dtype is not None and _np.dtype(self.dtype).kind != "c":
        return _core.zeros_like(self)
    return _require("imag")(self)


def _scalar_attribute(method):
    """``method`` as an attribute of Python numbers too: on a weak tensor (a traced Python
    scalar) its result is weak, as ``(0.5 + 1j).real`` is a Python float."""
    def attribute(self):
        return python_operator(method, (self,)) if self._weak else method(self)
    return attribute


def _binary(name, swap=False):
    def op(self, other):
        args = (other, self) if swap else (self, other)
        if self._weak:  # a traced Python scalar: see python_operator
            return python_operator(_require(name), args)
        return _require(name)(*args)
    return op


def _round_builtin(self, ndigits=None):
    out = _require("round")(self, 0 if ndigits is None else ndigits)
    if ndigits is None and out.shape == () and out._value is not None:
        return int(out._value)
    return out


METHODS = {
    "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "flatten": _flatten_method, "ravel": _method("ravel"), "copy": _copy,
    "squeeze": _method("squeeze"), "swapaxes": _method("swapaxes"),
    "conj": _conj, "conjugate": _scalar_attribute(_conj),
    "real": property(_scalar_attribute(_real)), "imag": property(_scalar_attribute(_imag)),
    "mT": property(lambda self: _require("swapaxes")(self, -1, -2)),
    "nbytes": property(lambda self: self.size * _np.dtype(self.dtype).itemsize),
    "itemsize": property(lambda self: _np.dtype(self.dtype).itemsize),
    "sort": _sort_method, "fill": _fill, "resize": _resize_method, "put": _put_method,
    "flat": property(FlatIterator, doc=FlatIterator.__doc__),
    "__round__": _round_builtin,
}
for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "cumsum", "cumprod",
              "argmax", "argmin", "all", "any", "ptp", "clip", "dot", "diagonal", "trace",
              "repeat", "take", "nonzero", "argsort", "searchsorted"):
    METHODS[_name] = _method(_name)
METHODS["round"] = _method("round", "around")
for _dunder, _fname, _swap in (("__floordiv__", "floor_divide", False),
                               ("__rfloordiv__", "floor_divide", True),
                               ("__mod__", "remainder", False), ("__rmod__", "remainder", True),
                               ("__divmod__", "divmod", False),
                               ("__rdivmod__", "divmod", True)):
    if _dunder not in Tensor.__dict__:
        METHODS[_dunder] = _binary(_fname, _swap)


def _in_place_binary(dunder, fname):
    """``x //= y``, ``x %= y``: in place where numpy's arrays are (see ops.inplace)."""
    def op(self, other):
        result = getattr(self, dunder)(other)
        if result is NotImplemented or not _ip.updates_in_place(self):
            return result
        return _ip.in_place(self, result, fname)
    op.__name__ = dunder.replace("__", "__i", 1)
    return op


for _dunder, _fname in (("__floordiv__", "floor_divide"), ("__mod__", "remainder")):
    _idunder = _dunder.replace("__", "__i", 1)
    if _idunder not in Tensor.__dict__:
        METHODS[_idunder] = _in_place_binary(_dunder, _fname)


# --- numpy's dispatch protocols ------------------------------------------------------------------
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def _concrete_values(args, kwargs, what):
    """``args``/``kwargs`` with every tensor replaced by a read-only view of its value (eager
    tensors only): numpy's in-place writers (``np.put``, ``np.copyto``) must not change a
    tensor behind the tape's back."""
    def conv(x):
        if isinstance(x, Tensor):
            value = x._concrete(what)
            if isinstance(value, _np.ndarray):
                value = value.view()
                value.flags.writeable = False
            return value
        if isinstance(x, list):
            return [conv(y) for y in x]
        if isinstance(x, tuple):
            return tuple(conv(y) for y in x)
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        return x
    return conv(args), conv(kwargs)


def _is_constant_result(result):
    for leaf in _flatten(result if isinstance(result, (list, tuple)) else [result]):
        kind = _np.result_type(leaf).kind if not isinstance(leaf, (str, type(None))) else "b"
        if kind in "fcmMO":
            return False
    return True


def _unsupported(qualname):
    return TypeError(f"{qualname} is not supported for hessgrad Tensors: hessgrad.numpy has "
                     f"no such function, and running numpy on the tensor's value would silently "
                     f"drop its gradient; {_CUSTOM_HINT}")


def _constant_fallback(func, qualname, args, kwargs):
    """Run numpy on concrete values when the result is a constant (integers, booleans)."""
    values, kw = _concrete_values(args, kwargs, f"{qualname} (not a hessgrad.numpy function)")
    try:
        result = func(*values, **kw)
    except ValueError as exc:
        if "read-only" not in str(exc):
            raise
        raise TypeError(f"{qualname} writes into its argument in place, and hessgrad tensors "
                        f"are immutable; build an updated copy instead, e.g. "
                        f"`x = x.at[index].set(values)` or `hnp.where(mask, values, x)`") \
            from None
    if not _is_constant_result(result):
        raise _unsupported(qualname)
    return result


def _out_given(kwargs):
    out = kwargs.get("out")
    return out is not None and any(o is not None for o in (out if isinstance(out, tuple)
                                                           else (out,)))


# ufunc -> the hessgrad function it calls: ``ndarray * tensor`` comes here on every call
# (numpy never defers to an operand with __array_ufunc__), also inside gradient rules
_CALLS = {}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "__call__" and not kwargs:
        fn = _CALLS.get(ufunc)
        if fn is not None:
            return fn(*inputs)
    name = ufunc.__name__
    if _out_given(kwargs) and (method != "__call__" or _lookup(name) is None):
        # out= a tensor (or a numpy array given tensor inputs): the result written into it
        out = kwargs.pop("out")
        casting = kwargs.get("casting", "same_kind" if method == "__call__" else "unsafe")
        return _write_out(f"numpy.{name}", out, _array_ufunc(self, ufunc, method, *inputs,
                                                              **kwargs), casting)
    if not _out_given(kwargs):
        kwargs.pop("out", None)
    if method == "__call__":
        fn = _lookup(name) or _lookup(name, module=_ew)
        if fn is not None:
            _CALLS[ufunc] = fn
            return fn(*inputs, **kwargs)
        _refuse_scipy_special(ufunc)
        return _constant_fallback(ufunc, f"numpy.{name}", inputs, kwargs)
    if method == "reduce" and name in _REDUCE:
        kwargs.setdefault("axis", 0)
        return _require(_REDUCE[name])(inputs[0], **kwargs)
    if method == "accumulate" and name in _ACCUMULATE:
        kwargs.setdefault("axis", 0)
        return _require(_ACCUMULATE[name])(inputs[0], **kwargs)
    if method == "outer" and len(inputs) == 2:
        a, b = (_hnp().asarray(x) for x in inputs)
        a = _core.reshape(a, shape=tuple(a.shape) + (1,) * len(b.shape))
        return _array_ufunc(self, ufunc, "__call__", a, b, **kwargs)
    if method == "at":
        fn = _lookup(name)
        if fn is None or not hasattr(fn, "at"):
            raise TypeError(f"numpy.{name}.at is not supported for hessgrad Tensors: "
                            f"hessgrad.numpy has no ufunc {name!r}")
        return fn.at(*inputs, **kwargs)
    raise TypeError(f"numpy.{name}.{method} is not supported for hessgrad Tensors; "
                    f"{_CUSTOM_HINT}")


def _refuse_scipy_special(ufunc):
    """A scipy.special ufunc given a tensor: a TypeError naming hessgrad.scipy.special's
    differentiable version (looked up by name in the loaded modules: this layer does not
    import hessgrad.scipy)."""
    special = sys.modules.get("scipy.special")
    name = ufunc.__name__
    if special is None or getattr(special, name, None) is not ufunc:
        return
    ours = sys.modules.get("hessgrad.scipy.special")
    if ours is not None and hasattr(ours, name):
        raise TypeError(f"scipy.special.{name} cannot differentiate hessgrad Tensors (running "
                        f"it on the tensor's value would silently drop its gradient); use "
                        f"hessgrad.scipy.special.{name}, its differentiable version")
    raise TypeError(f"scipy.special.{name} is not supported for hessgrad Tensors, and "
                    f"hessgrad.scipy.special has no {name}; {_CUSTOM_HINT}")


def _dtype_stand_in(x):
    if isinstance(x, Tensor):  # a weak tensor as the Python scalar it stands for
        return WEAK_SCALARS[x.dtype.kind] if x._weak else _np.dtype(x.dtype)
    return x


_STATIC = {  # functions of static facts (dtypes): fine on symbolic tensors too
    "result_type": lambda *a: _np.result_type(*[_dtype_stand_in(x) for x in a]),
    "can_cast": lambda f, t, casting="safe": _np.can_cast(_dtype_stand_in(f), t, casting),
    "iscomplexobj": lambda x: _np.dtype(x.dtype).kind == "c",
    "isrealobj": lambda x: _np.dtype(x.dtype).kind != "c",
}


def _array_function(self, func, types, args, kwargs):
    module = func.__module__ or "numpy"
    name = func.__name__
    qualname = f"{module}.{name}"
    if module == "numpy" or module.startswith("numpy._core") or module.startswith("numpy.lib"):
        target = _hnp()
    elif module.startswith("numpy."):
        target = getattr(_hnp(), module.split(".")[1], None)
    else:
        target = None
    fn = _lookup(name, module=target) if target is not None else None
    if fn is not None and fn is not func and getattr(fn, "__wrapped__", None) is not func:
        return fn(*args, **kwargs)
    if name in _STATIC and target is _hnp():
        return _STATIC[name](*args, **kwargs)
    return _constant_fallback(func, qualname, args, kwargs)


METHODS["__array_ufunc__"] = _array_ufunc
METHODS["__array_function__"] = _array_function
METHODS["at"] = property(_ix.AtIndexer, doc=_ix.AtIndexer.__doc__)

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
