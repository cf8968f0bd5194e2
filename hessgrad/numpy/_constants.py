"""Constants, dtypes and dtype rules, and the floating-point error state: exactly numpy's
(the dtype functions also read tensors, by their dtype)."""

import numpy as _np

pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.newaxis, \
    _np.euler_gamma
float64, float32, float16, int64, int32, int8, uint8, bool_, complex128 = (
    _np.float64, _np.float32, _np.float16, _np.int64, _np.int32, _np.int8, _np.uint8,
    _np.bool_, _np.complex128)
int16, uint16, uint32, uint64, intp, complex64, bool = (
    _np.int16, _np.uint16, _np.uint32, _np.uint64, _np.intp, _np.complex64, _np.bool)
single, double, csingle, cdouble = _np.single, _np.double, _np.csingle, _np.cdouble
# numpy's other scalar types, by their C names, so that ``hnp.int_`` or ``hnp.longdouble`` in
# a script written for numpy (or autograd, which re-exports them) names the same type
_C_TYPES = ("int_", "intc", "uint", "uintc", "uintp", "long", "ulong", "longlong",
            "ulonglong", "short", "ushort", "byte", "ubyte", "half", "longdouble",
            "clongdouble", "object_", "str_", "bytes_", "void", "character", "flexible",
            "datetime64", "timedelta64")
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

__all__ = ["pi", "e", "inf", "nan", "newaxis", "euler_gamma", "float64", "float32",
           "float16", "int64", "int32", "int8", "uint8", "bool_", "complex128", "dtype",
           "finfo", "iinfo", "ndarray", "int16", "uint16", "uint32", "uint64", "intp",
           "complex64", "bool", "single", "double", "csingle", "cdouble", "generic", "number",
           "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
           "complexfloating", "promote_types", "issubdtype", "result_type", "can_cast",
           "isdtype", "errstate", "seterr", "geterr", "set_printoptions", "get_printoptions",
           "printoptions", "array2string", "array_repr", "array_str", "format_float_positional",
           "format_float_scientific", "min_scalar_type", "mintypecode", "typename", *_C_TYPES]
