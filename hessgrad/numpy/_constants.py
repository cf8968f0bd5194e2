"""Constants and dtypes, exactly numpy's."""

import numpy as _np

pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.newaxis, \
    _np.euler_gamma
float64, float32, float16, int64, int32, int8, uint8, bool_, complex128 = (
    _np.float64, _np.float32, _np.float16, _np.int64, _np.int32, _np.int8, _np.uint8,
    _np.bool_, _np.complex128)
dtype, finfo, iinfo, ndarray = _np.dtype, _np.finfo, _np.iinfo, _np.ndarray

__all__ = ["pi", "e", "inf", "nan", "newaxis", "euler_gamma", "float64", "float32",
           "float16", "int64", "int32", "int8", "uint8", "bool_", "complex128", "dtype",
           "finfo", "iinfo", "ndarray"]
