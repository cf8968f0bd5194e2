"""Signal primitives: 1-D convolution (bilinear, its VJPs are correlations, i.e. convolutions
with a flipped operand) and the binning lookups ``searchsorted`` / ``digitize`` (integer
results, constants for differentiation)."""

import numpy as np

from ..engine.registry import primitive
from ..engine.tensor import shape_of
from .core import getitem

_FLIP = (slice(None, None, -1),)


def _flip(x):
    return getitem(x, index=_FLIP)


def _convolve_vjp_a(g, ans, a, v):
    # dL/da[i] = sum_k g[k] v[k - i]: a 'valid' correlation of g with v
    n, m = shape_of(a)[0], shape_of(v)[0]
    return getitem(convolve(g, _flip(v)), index=(slice(m - 1, m - 1 + n),))


def _convolve_vjp_v(g, ans, a, v):
    n, m = shape_of(a)[0], shape_of(v)[0]
    return getitem(convolve(g, _flip(a)), index=(slice(n - 1, n - 1 + m),))


convolve = primitive(
    "convolve", lambda a, v: np.convolve(a, v, mode="full"),
    vjp=[_convolve_vjp_a, _convolve_vjp_v],
    # bilinear, not jointly linear: one JVP per operand
    jvp=[lambda t, ans, a, v: convolve(t, v), lambda t, ans, a, v: convolve(a, t)])
convolve.__doc__ = """Full discrete convolution of two non-empty 1-D arrays (length
``len(a) + len(v) - 1``); ``hessgrad.numpy.convolve`` / ``correlate`` slice their modes out
of it."""

searchsorted = primitive(
    "searchsorted", lambda a, v, side="left": np.asarray(np.searchsorted(a, v, side=side)),
    nondiff=True)
searchsorted.__doc__ = """Insertion indices of ``v`` into the sorted 1-D ``a`` (a constant)."""

digitize = primitive(
    "digitize", lambda x, bins, right=False: np.asarray(np.digitize(x, bins, right=right)),
    nondiff=True)
digitize.__doc__ = """Indices of the bins (monotonic 1-D ``bins``) holding ``x`` (a constant)."""
