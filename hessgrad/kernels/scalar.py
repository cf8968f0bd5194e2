"""Per-element helpers for generated kernels, matching numpy's ufuncs on float64 scalars."""

import math

from numba import njit

LN2 = math.log(2.0)


@njit(cache=True, inline="always", error_model="numpy")
def sigmoid(x):
    e = math.exp(-abs(x))  # never overflows; as hessgrad's sigmoid forward
    return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)


@njit(cache=True, inline="always", error_model="numpy")
def logaddexp(x, y):
    if x == y:  # also +-inf: no inf - inf
        return x + LN2
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return d  # NaN


@njit(cache=True, inline="always", error_model="numpy")
def maximum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x >= y else y


@njit(cache=True, inline="always", error_model="numpy")
def minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


@njit(cache=True, inline="always", error_model="numpy")
def sign(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x  # 0.0, -0.0 and NaN as numpy
