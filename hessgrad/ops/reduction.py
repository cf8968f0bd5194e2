"""Reductions with numpy's ``axis`` (int, tuple, negative, None) and ``keepdims``."""

import builtins
import math

import numpy as np

from ..engine.registry import primitive
from ..engine.tensor import dtype_of, shape_of
from .core import REAL_FLOATS, broadcast_to, cast, getitem, ones_like, reshape
from .elementwise import conjugate, equal, exp, logical_not, not_equal, real, sqrt, where
from .batching import along_axis as along_one_axis
from .families import along_axis, reduction
from .patterns import cumulative, reduced
from .shape_rules import reducing, same_shape
from .shape import concatenate, transpose


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise np.exceptions.AxisError(f"axis {a} is out of bounds for array of dimension "
                                          f"{ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(out))


def kept_shape(shape, axis):
    """``shape`` with the reduced axes kept as length 1."""
    axes = _axes(axis, len(shape))
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def expand_to(g, x, axis, keepdims):
    """A reduced gradient ``g`` broadcast back over the input's shape."""
    shape = shape_of(x)
    if not keepdims and axis is not None:  # a full reduction's 0-d gradient broadcasts as is
        g = reshape(g, shape=kept_shape(shape, axis))
    return broadcast_to(g, shape=shape)


def _keep(ans, x, axis, keepdims):
    return ans if keepdims else reshape(ans, shape=kept_shape(shape_of(x), axis))


def _count(x, axis):
    shape = shape_of(x)
    return math.prod(shape[i] for i in _axes(axis, len(shape)))


# np.add.reduce is np.sum without its Python-level wrapper (a microsecond per call)
sum = reduction(  # noqa: A001 - numpy's name
    "sum", lambda x, axis=None, keepdims=False: np.add.reduce(x, axis=axis, keepdims=keepdims),
    vjp=[lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x, axis, keepdims)],
    linear=True)


def _mean(x, axis=None, keepdims=False):
    # np.mean's own numbers (the same sum, then one division) without its Python wrapper (2 us)
    if type(x) is np.ndarray and x.dtype in REAL_FLOATS and x.size:
        total = np.add.reduce(x, axis=axis, keepdims=keepdims)
        return total / (x.size // total.size)
    return np.mean(x, axis=axis, keepdims=keepdims)  # others, and empty slices' warning


mean = reduction(
    "mean", _mean,
    # divided before it is broadcast: one division per reduced element, not per input
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g / builtins.max(_count(x, axis), 1), x, axis, keepdims)],
    linear=True)


def _extremum_mask(ans, x, axis, keepdims):
    """Where ``x`` attains the extremum, each tie sharing the gradient equally."""
    hit = cast(equal(x, _keep(ans, x, axis, keepdims)), dtype=dtype_of(x))  # float32 stays
    return hit / sum(hit, axis=axis, keepdims=True)


def _extremum(name, forward):
    return reduction(
        name, lambda x, axis=None, keepdims=False: forward(x, axis=axis, keepdims=keepdims),
        vjp=[lambda g, ans, x, axis=None, keepdims=False:
             expand_to(g, x, axis, keepdims) * _extremum_mask(ans, x, axis, keepdims)],
        jvp=[lambda t, ans, x, axis=None, keepdims=False:
             sum(t * _extremum_mask(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)],
        sparsity=reduced(nonlinear=False))  # piecewise linear


max = _extremum("max", np.max)  # noqa: A001
min = _extremum("min", np.min)  # noqa: A001


def _logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=_axes(axis, x.ndim))


def _softmax_of(ans, x, axis, keepdims):
    return exp(x - _keep(ans, x, axis, keepdims))


logsumexp = reduction(
    "logsumexp", _logsumexp,
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g, x, axis, keepdims) * _softmax_of(ans, x, axis, keepdims)],
    jvp=[lambda t, ans, x, axis=None, keepdims=False:
         sum(t * _softmax_of(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)])


# --- products, cumulative sums and products -----------------------------------------------
# The derivative of a product with respect to one factor is the product of all the *other*
# factors. Dividing the product by the factor fails at zeros, so the rules below build those
# exclusive products from prefix and suffix products (cumprod), and cumprod's own rules use a
# first-order linear recurrence; the recurrence differentiates into recurrences, so every
# order is exact, zeros included, in O(n) per slice.

def _shift(x, axis, step, fill):
    """``x`` moved ``step`` (+1 or -1) places along ``axis``, the vacated slot set to ``fill``."""
    shape = shape_of(x)
    axis %= len(shape)
    n = shape[axis]
    if n == 0:
        return x
    lead = (slice(None),) * axis
    pad = np.full(shape[:axis] + (1,) + shape[axis + 1:], fill, dtype=dtype_of(x))
    if step > 0:
        return concatenate(pad, getitem(x, index=lead + (slice(0, n - 1),)), axis=axis)
    return concatenate(getitem(x, index=lead + (slice(1, n),)), pad, axis=axis)


def _flip(x, axis):
    axis %= len(shape_of(x))
    return getitem(x, index=(slice(None),) * axis + (slice(None, None, -1),))


def _recurrence(a, b, axis, reverse=False):
    """h[j] = b[j] + a[j] * h[j - 1] along ``axis`` (h[j + 1] when ``reverse``), h outside 0."""
    a, b = np.asarray(a), np.asarray(b)
    h = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    a_, b_ = (np.moveaxis(np.broadcast_to(v, h.shape), axis, 0) for v in (a, b))
    h_ = np.moveaxis(h, axis, 0)
    prev = 0
    for j in (range(h_.shape[0] - 1, -1, -1) if reverse else range(h_.shape[0])):
        prev = b_[j] + a_[j] * prev
        h_[j] = prev
    return h


def _recurrence_vjp_a(g, ans, a, b, axis, reverse=False):
    lam = linear_recurrence(_shift(a, axis, 1 if reverse else -1, 0), g, axis=axis,
                            reverse=not reverse)
    return lam * _shift(ans, axis, -1 if reverse else 1, 0)


def _recurrence_vjp_b(g, ans, a, b, axis, reverse=False):
    return linear_recurrence(_shift(a, axis, 1 if reverse else -1, 0), g, axis=axis,
                             reverse=not reverse)


linear_recurrence = primitive(
    "linear_recurrence", _recurrence,
    vjp=[_recurrence_vjp_a, _recurrence_vjp_b],
    jvp=[lambda t, ans, a, b, axis, reverse=False: linear_recurrence(
            a, t * _shift(ans, axis, -1 if reverse else 1, 0), axis=axis, reverse=reverse),
         lambda t, ans, a, b, axis, reverse=False: linear_recurrence(
            a, t, axis=axis, reverse=reverse)],
    batch=along_one_axis(), sparsity=cumulative(nonlinear=True), shape_rule=same_shape(_recurrence))
linear_recurrence.__doc__ = """First-order linear recurrence ``h[j] = b[j] + a[j] * h[j-1]``
along ``axis`` (``h[j+1]`` when ``reverse``); ``a`` and ``b`` have the same shape."""

cumsum = along_axis(
    "cumsum", lambda x, axis: np.cumsum(x, axis=axis),
    vjp=[lambda g, ans, x, axis: _flip(cumsum(_flip(g, axis), axis=axis), axis)],
    linear=True)


def _cumprod_vjp(g, ans, x, axis):
    # d y[i] / d x[j] = prod(x[:j]) * prod(x[j+1:i+1]) for i >= j: a prefix product times the
    # solution of the reverse recurrence s[j] = g[j] + x[j+1] * s[j+1].
    suffix = linear_recurrence(_shift(x, axis, -1, 0), g, axis=axis, reverse=True)
    return _shift(ans, axis, 1, 1) * suffix


cumprod = along_axis(
    "cumprod", lambda x, axis: np.cumprod(x, axis=axis),
    vjp=[_cumprod_vjp],
    jvp=[lambda t, ans, x, axis: linear_recurrence(x, t * _shift(ans, axis, 1, 1), axis=axis)])


def exclusive_prod(x, axis):
    """``out[..., j, ...] = prod over k != j`` along the reduced axes (zeros handled)."""
    shape = shape_of(x)
    axes = _axes(axis, len(shape))
    if not axes:
        return ones_like(x)
    if len(axes) == 1:
        ax = axes[0]
        left = _shift(cumprod(x, axis=ax), ax, 1, 1)
        right = _flip(_shift(cumprod(_flip(x, ax), axis=ax), ax, 1, 1), ax)
        return left * right
    # several axes: bring them last, flatten them into one, and come back
    rest = [i for i in range(len(shape)) if i not in axes]
    order = tuple(rest) + axes
    moved = transpose(x, axes=order)
    moved_shape = shape_of(moved)
    flat = reshape(moved, shape=moved_shape[:len(rest)] + (-1,))
    out = reshape(exclusive_prod(flat, len(rest)), shape=moved_shape)
    return transpose(out, axes=tuple(np.argsort(order)))


prod = reduction(
    "prod", lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g, x, axis, keepdims) * exclusive_prod(x, axis)],
    jvp=[lambda t, ans, x, axis=None, keepdims=False:
         sum(t * exclusive_prod(x, axis), axis=axis, keepdims=keepdims)])

# --- logic and indices: constants for differentiation -------------------------------------
all = reduction(  # noqa: A001 - numpy's name
    "all", lambda x, axis=None, keepdims=False: np.all(x, axis=axis, keepdims=keepdims),
    nondiff=True)
any = reduction(  # noqa: A001 - numpy's name
    "any", lambda x, axis=None, keepdims=False: np.any(x, axis=axis, keepdims=keepdims),
    nondiff=True)
count_nonzero = reduction(
    "count_nonzero",
    lambda x, axis=None, keepdims=False: np.asarray(
        np.count_nonzero(x, axis=axis, keepdims=keepdims)),
    nondiff=True)
def _argmax(x, axis=None, keepdims=False):
    return np.argmax(x, axis=axis, keepdims=keepdims)


def _argmin(x, axis=None, keepdims=False):
    return np.argmin(x, axis=axis, keepdims=keepdims)


argmax = along_axis("argmax", _argmax, nondiff=True, axis_default=None,
                    shape_rule=reducing(_argmax))
argmin = along_axis("argmin", _argmin, nondiff=True, axis_default=None,
                    shape_rule=reducing(_argmin))


# --- statistics composed of primitives ---------------------------------------------------
def isnan(x):
    """NaN test as a constant (NaN is the only value unequal to itself)."""
    return not_equal(x, x)


def abs2(x):
    """``|x| ** 2`` elementwise: ``x * x`` for real ``x``, ``real(x * conj(x))`` (a real
    array, as numpy's var and norm compute it) for complex ``x``."""
    if dtype_of(x).kind == "c":
        return real(x * conjugate(x))
    return x * x


def var(x, axis=None, ddof=0, keepdims=False):
    """Variance: sum of squared deviations over ``count - ddof`` (inf/nan when <= 0); real
    for complex ``x`` (squared magnitudes of the deviations, as numpy)."""
    centered = x - mean(x, axis=axis, keepdims=True)
    return sum(abs2(centered), axis=axis, keepdims=keepdims) / \
        float(builtins.max(_count(x, axis) - ddof, 0))


def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation. Where the variance is 0 (a constant slice) the derivative is the
    finite subgradient 0, not ``0 / 0``."""
    v = var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    flat = equal(v, 0)
    return where(flat, 0.0, sqrt(where(flat, 1.0, v)))


def ptp(x, axis=None, keepdims=False):
    """Peak to peak: ``max - min`` (ties share the gradient evenly)."""
    return max(x, axis=axis, keepdims=keepdims) - min(x, axis=axis, keepdims=keepdims)


def nansum(x, axis=None, keepdims=False):
    """Sum treating NaN as 0; the derivative is 0 at NaN entries."""
    return sum(where(isnan(x), 0.0, x), axis=axis, keepdims=keepdims)


def _nan_weights(x, axis):
    """Each entry's weight in its slice's NaN-ignoring mean: 1 / (non-NaN count), 0 at NaNs."""
    kept = cast(logical_not(isnan(x)), dtype=dtype_of(x))
    count = sum(kept, axis=axis, keepdims=True)
    return kept / where(equal(count, 0.0), 1.0, count)


def _nanmean(x, axis=None, keepdims=False):
    x = np.asarray(x)
    if x.dtype.kind not in "fc":
        return np.mean(x, axis=axis, keepdims=keepdims)
    total = np.nansum(x, axis=axis, keepdims=keepdims)
    count = np.sum(~np.isnan(x), axis=axis, keepdims=keepdims, dtype=x.real.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):  # an all-NaN slice: NaN, no warning
        return total / count


nanmean = reduction(
    "nanmean", _nanmean,
    vjp=[lambda g, ans, x, axis=None, keepdims=False:
         expand_to(g, x, axis, keepdims) * _nan_weights(x, axis)],
    jvp=[lambda t, ans, x, axis=None, keepdims=False:
         sum(t * _nan_weights(x, axis), axis=axis, keepdims=keepdims)],
    sparsity=reduced(nonlinear=False))  # linear in the entries that are not NaN
nanmean.__doc__ = """Mean of the non-NaN entries over ``axis`` (NaN for an all-NaN slice);
the derivative is 0 at NaN entries."""
