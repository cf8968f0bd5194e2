"""Elementwise math (numpy ufuncs and friends)."""

from ..ops import elementwise as _ew

add, subtract, multiply, divide = _ew.add, _ew.subtract, _ew.multiply, _ew.divide
true_divide, negative, power, square = _ew.divide, _ew.negative, _ew.power, _ew.square
exp, log, log1p, expm1, sqrt, tanh = _ew.exp, _ew.log, _ew.log1p, _ew.expm1, _ew.sqrt, _ew.tanh
sin, cos, abs, absolute, sign = _ew.sin, _ew.cos, _ew.absolute, _ew.absolute, _ew.sign
maximum, minimum, where, logaddexp = _ew.maximum, _ew.minimum, _ew.where, _ew.logaddexp

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "negative", "power",
           "square", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos", "abs",
           "absolute", "sign", "maximum", "minimum", "where", "logaddexp"]
