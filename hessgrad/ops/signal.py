"""Signal primitives: 1-D convolution (bilinear, its VJPs are correlations, i.e. convolutions
with a flipped operand) and the binning lookups ``searchsorted`` / ``digitize`` (integer
results, constants for differentiation)."""

import numpy as np

from ..engine.batching import per_member
from ..engine.registry import primitive
from ..engine.tensor import shape_of
from .core import getitem
from .patterns import contraction, dense
from .shape_rules import stand_in

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


def _convolve_pattern(step):
    """``out[i] = sum of a[j] v[i - j]``: an einsum with the 0/1 tensor ``T[i, j, l] = (i == j
    + l)``, exact for a constant operand (its zeros cut dependencies)."""
    (n,), (m,) = step.in_shapes
    if step.over(n * m * (n + m - 1)):
        return dense(step)
    j, l = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    t = np.zeros((n + m - 1, n, m))
    t[j + l, j, l] = 1.0
    return contraction(step, "j,l,ijl->i", list(step.deps) + [None], list(step.values) + [t],
                       list(step.in_shapes) + [t.shape])


def _convolve_shape(a, v):
    sa, sv, dtype = shape_of(a), shape_of(v), np.result_type(stand_in(a), stand_in(v))
    if sa is None or sv is None or len(sa) != 1 or len(sv) != 1 or None in sa + sv:
        return None, dtype
    return (sa[0] + sv[0] - 1,), dtype


convolve = primitive(
    "convolve", lambda a, v: np.convolve(a, v, mode="full"),
    vjp=[_convolve_vjp_a, _convolve_vjp_v],
    # bilinear, not jointly linear: one JVP per operand
    jvp=[lambda t, ans, a, v: convolve(t, v), lambda t, ans, a, v: convolve(a, t)],
    sparsity=_convolve_pattern, batch=per_member,  # 1-D operands only
    shape_rule=_convolve_shape)
convolve.__doc__ = """Full discrete convolution of two non-empty 1-D arrays (length
``len(a) + len(v) - 1``); ``hessgrad.numpy.convolve`` / ``correlate`` slice their modes out
of it."""

searchsorted = primitive(
    "searchsorted", lambda a, v, side="left": np.asarray(np.searchsorted(a, v, side=side)),
    nondiff=True, batch=per_member,  # 1-D ``a`` only
    shape_rule=lambda a, v, side="left": (shape_of(v), np.dtype(np.intp)))
searchsorted.__doc__ = """Insertion indices of ``v`` into the sorted 1-D ``a`` (a constant)."""

digitize = primitive(
    "digitize", lambda x, bins, right=False: np.asarray(np.digitize(x, bins, right=right)),
    nondiff=True, batch=per_member,  # 1-D ``bins`` only
    shape_rule=lambda x, bins, right=False: (shape_of(x), np.dtype(np.intp)))
digitize.__doc__ = """Indices of the bins (monotonic 1-D ``bins``) holding ``x`` (a constant)."""
