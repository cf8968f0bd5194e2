"""Constants, dtypes and dtype rules, and the floating-point error state: exactly numpy's
(the dtype functions also read tensors, by their dtype)."""

import numpy as _np

pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.newaxis, \
    _np.euler_gamma


class _ScalarType(type):
    """The type of ``hessgrad.numpy``'s numeric scalar types (``hnp.float64``, ``hnp.int64``,
    ``hnp.intp``, ...). Each is a subclass of numpy's type that stands for it: ``dtype=``,
    ``np.dtype``, ``issubdtype``, ``issubclass``, ``isinstance`` and ``==`` treat it as
    numpy's. Called, it is numpy's constructor, which casts arrays: on a tensor, or a nested
    list or tuple holding tensors (stacked), it casts with hessgrad ops, so
    ``W[hnp.int64(W[:, -1])]`` or ``hnp.float64(x)`` work on data being differentiated (a cast
    to an integer or bool type is a constant for differentiation, as ``astype`` is)."""

    def __call__(cls, *args, **kwargs):
        numpy_type = cls.numpy_type
        if len(args) == 1 and not kwargs:
            from ._arraylike import has_tensor, stacked  # (this module loads with the engine)
            if has_tensor(args[0]):
                from ..ops.core import cast
                x = stacked(args[0], cls.__name__, "x")
                return x if x.dtype == numpy_type else cast(x, dtype=_np.dtype(numpy_type))
        return numpy_type(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.numpy_type)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.numpy_type)

    def __eq__(cls, other):
        return other is cls or other is cls.numpy_type

    def __hash__(cls):
        return hash(cls.numpy_type)


_SCALAR_TYPES = {}


def _scalar_type(numpy_type):
    """The one ``hessgrad.numpy`` scalar type standing for ``numpy_type`` (aliases such as
    ``double`` and ``float64`` are one type, as in numpy)."""
    if numpy_type not in _SCALAR_TYPES:
        _SCALAR_TYPES[numpy_type] = _ScalarType(
            numpy_type.__name__, (numpy_type,),
            {"numpy_type": numpy_type, "__module__": "hessgrad.numpy", "__slots__": (),
             "__doc__": f"numpy.{numpy_type.__name__}; called on tensors, a cast."})
    return _SCALAR_TYPES[numpy_type]


_NUMERIC_TYPES = ("float64", "float32", "float16", "int64", "int32", "int8", "uint8", "bool_",
                  "complex128", "int16", "uint16", "uint32", "uint64", "intp", "complex64",
                  "bool", "single", "double", "csingle", "cdouble",
                  # numpy's C names, so that ``hnp.int_`` or ``hnp.longdouble`` in a script
                  # written for numpy (or autograd, which re-exports them) names the same type
                  "int_", "intc", "uint", "uintc", "uintp", "long", "ulong", "longlong",
                  "ulonglong", "short", "ushort", "byte", "ubyte", "half", "longdouble",
                  "clongdouble")
globals().update({name: _scalar_type(getattr(_np, name)) for name in _NUMERIC_TYPES})
# numpy's non-numeric scalar types, as they are
_C_TYPES = ("object_", "str_", "bytes_", "void", "character", "flexible", "datetime64",
            "timedelta64")
globals().update({name: getattr(_np, name) for name in _C_TYPES})
# the abstract scalar types, for issubdtype(x.dtype, hnp.floating) and the like
generic, number, integer, signedinteger, unsignedinteger, inexact, floating, \
    complexfloating = (_np.generic, _np.number, _np.integer, _np.signedinteger,
                       _np.unsignedinteger, _np.inexact, _np.floating, _np.complexfloating)
dtype, finfo, iinfo, ndarray = _np.dtype, _np.finfo, _np.iinfo, _np.ndarray
promote_types, issubdtype = _np.promote_types, _np.issubdtype
# The error state governs the numpy kernels that eager ops and compiled graphs run.
errstate, seterr, geterr = _np.errstate, _np.seterr, _np.geterr
# Printing: numpy's options and formatters (a tensor prints by its value, see _interop).
set_printoptions, get_printoptions, printoptions = (_np.set_printoptions, _np.get_printoptions,
                                                    _np.printoptions)
array2string, array_repr, array_str = _np.array2string, _np.array_repr, _np.array_str
format_float_positional, format_float_scientific = (_np.format_float_positional,
                                                    _np.format_float_scientific)
min_scalar_type, mintypecode, typename = _np.min_scalar_type, _np.mintypecode, _np.typename


def _dtype_or_scalar(x):
    """What numpy's dtype rules should see for ``x``: a tensor's dtype, or for a weak
    (traced Python) scalar a Python number of its kind, which numpy 2 keeps weak."""
    from ..engine.tensor import Tensor  # the engine imports this package's constants late

    if not isinstance(x, Tensor):
        return x
    if x.weak:
        return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[x.dtype.kind]
    return x.dtype


def result_type(*arrays_and_dtypes):
    """numpy.result_type; tensors count by their dtype (Python numbers stay weak).

    >>> import hessgrad.numpy as hnp
    >>> hnp.result_type(hnp.ones(2, dtype=hnp.float32), 1.0)
    dtype('float32')
    """
    return _np.result_type(*[_dtype_or_scalar(x) for x in arrays_and_dtypes])


def can_cast(from_, to, casting="safe"):
    """numpy.can_cast; a tensor counts by its dtype."""
    return _np.can_cast(_dtype_or_scalar(from_), to, casting)


def isdtype(dtype, kind):
    """numpy.isdtype (the array API's dtype kinds); a tensor counts by its dtype."""
    return _np.isdtype(_dtype_or_scalar(dtype), kind)

__all__ = ["pi", "e", "inf", "nan", "newaxis", "euler_gamma", *_NUMERIC_TYPES, "dtype",
           "finfo", "iinfo", "ndarray", "generic", "number",
           "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
           "complexfloating", "promote_types", "issubdtype", "result_type", "can_cast",
           "isdtype", "errstate", "seterr", "geterr", "set_printoptions", "get_printoptions",
           "printoptions", "array2string", "array_repr", "array_str", "format_float_positional",
           "format_float_scientific", "min_scalar_type", "mintypecode", "typename", *_C_TYPES]
