"""Batching rules: run a primitive's forward on arguments that carry a leading batch axis.

The executor uses them to push a whole matrix of tangents through a traced Hessian-vector
product at once (``Plan.run_batched``), so that dense Hessians cost matrix-matrix products
instead of one matrix-vector product per column. A primitive without a rule is run once per
batch member, which is always correct.
"""

import numpy as np

from ..engine.registry import PRIMITIVES
from .reduction import _axes


def _core_ndim(a, flag):
    return np.ndim(a) - 1 if flag else np.ndim(a)


def _align(args, flags):
    """Insert axes after the batch axis so that numpy broadcasting lines the core shapes up
    as it would without the batch."""
    rank = max(_core_ndim(a, f) for a, f in zip(args, flags))
    out = []
    for a, f in zip(args, flags):
        if f and np.ndim(a) - 1 < rank:
            a = np.reshape(a, (a.shape[0],) + (1,) * (rank - a.ndim + 1) + a.shape[1:])
        out.append(a)
    return out


def elementwise(forward, args, flags, **params):
    return forward(*_align(args, flags), **params)


def shift_axis(axis, ndim):
    """Axes of a batched array for core ``axis`` (None means all core axes; a 0-d core has
    none, though numpy accepts ``axis=0`` or ``-1`` for it)."""
    return tuple(a + 1 for a in _axes(axis, ndim)) if ndim else ()


def reduction(forward, args, flags, axis=None, keepdims=False, **params):
    (x,) = args
    return forward(x, axis=shift_axis(axis, x.ndim - 1), keepdims=keepdims, **params)


def _reshape(forward, args, flags, shape):
    (x,) = args
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return np.reshape(x, (x.shape[0],) + shape)


def _transpose(forward, args, flags, axes=None):
    (x,) = args
    nd = x.ndim - 1
    core = tuple(reversed(range(nd))) if axes is None else tuple(a % nd for a in axes)
    return np.transpose(x, (0,) + tuple(a + 1 for a in core))


def _batched_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [isinstance(p, (np.ndarray, list)) and np.ndim(p) > 0 for p in parts]
    # beside an array index numpy counts an integer as advanced too (x[1, :, idx] has its
    # advanced axes separated, so they move to the front)
    advanced = [i for i, p in enumerate(parts) if arrays[i] or any(arrays) and isinstance(
        p, (int, np.integer, np.ndarray)) and not isinstance(p, (bool, np.bool_))]
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return None  # separated advanced indices move their axes to the front: loop instead
    return (slice(None),) + parts


def _getitem(forward, args, flags, index):
    (x,) = args
    batched = _batched_index(index)
    if batched is None:
        return np.stack([x[j][index] for j in range(len(x))])
    return x[batched]


def _scatter_add(forward, args, flags, index, shape):
    (g,) = args
    out = np.zeros((g.shape[0],) + tuple(shape), dtype=g.dtype)
    batched = _batched_index(index)
    if batched is None:
        for j in range(len(g)):
            np.add.at(out[j], index, g[j])
        return out
    parts = index if isinstance(index, tuple) else (index,)
    basic = all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
                for p in parts)
    if basic:
        out[batched] = g
    else:
        np.add.at(out, batched, g)
    return out


def _broadcast_to(forward, args, flags, shape):
    (x,) = args
    (x,) = _align([x, np.empty(shape)], [True, False])[:1]
    return np.broadcast_to(x, (x.shape[0],) + tuple(shape))


def _sum_to(forward, args, flags, shape):
    (x,) = args
    shape = tuple(shape)
    core = x.shape[1:]
    lead = len(core) - len(shape)
    axes = tuple(range(1, 1 + lead)) + tuple(
        1 + lead + i for i, d in enumerate(shape) if d == 1 and core[lead + i] != 1)
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape((x.shape[0],) + shape)


def _unit_rows(v):
    """``j`` such that row ``r`` of the 2-D batch ``v`` is the unit vector ``e_j[r]``, or None.
    Dense Hessians feed such blocks of basis vectors; ``A @ e_j`` is then a column of ``A``,
    gathered instead of multiplied (the check costs one pass over ``v``)."""
    if v.ndim != 2 or not len(v) or np.count_nonzero(v) != len(v):
        return None
    rows, cols = np.nonzero(v)
    if not np.array_equal(rows, np.arange(len(v))) or not np.all(v[rows, cols] == 1):
        return None
    if cols[-1] - cols[0] == len(cols) - 1 and np.all(np.diff(cols) == 1):
        return slice(int(cols[0]), int(cols[-1]) + 1)  # consecutive: a view, no copy
    return cols


def _matmul(forward, args, flags):
    a, b = args
    fa, fb = flags
    na, nb = _core_ndim(a, fa), _core_ndim(b, fb)
    dtype = np.result_type(a, b)
    if fb and not fa and na == 2 and nb == 1 and (j := _unit_rows(b)) is not None:
        return a[:, j].T.astype(dtype, copy=False)     # A @ e_j = A[:, j]
    if fa and not fb and na == 1 and nb == 2 and (j := _unit_rows(a)) is not None:
        return b[j].astype(dtype, copy=False)          # e_j @ B = B[j]
    if fa and not fb and nb <= 2 and na >= 1:
        # (k, ..., n, p) @ (p, m): one GEMM over all leading rows; @ (p,): one GEMV
        return np.matmul(a, b)
    if fb and not fa and na == 2 and (nb == 1 or (nb == 2 and b.shape[2] == 1)):
        # A @ v for k vectors (or (p, 1) columns): the rows of V A^T, one GEMM, no copies
        out = np.matmul(b if nb == 1 else b[:, :, 0], a.T)
        return out if nb == 1 else out[:, :, None]
    if fb and not fa and na == 2 and nb == 2:
        # A @ (k, p, m): stack the batch into the columns of one GEMM.
        k = b.shape[0]
        out = np.matmul(a, np.moveaxis(b, 0, 1).reshape(b.shape[1], -1))
        return np.moveaxis(out.reshape(a.shape[0], k, -1), 1, 0)
    if fb and not fa and na == 1 and nb == 1:
        return np.matmul(b, a)                       # (p,) @ (k, p): the rows of V a
    if fb and not fa and na == 1 and nb >= 2:
        return np.matmul(a, b)                       # (p,) @ (k, ..., p, m)
    if fa and fb and na == nb == 1:
        return np.einsum("ki,ki->k", a, b)
    return _matmul_aligned(a, b, fa, fb, na, nb)


def _matmul_aligned(a, b, fa, fb, na, nb):
    """Any other case: vectors become matrices (a row on the left, a column on the right),
    batched operands get unit axes behind the batch axis up to the other's rank, one
    broadcast matmul, and the vectors' unit axes are dropped."""
    if na == 1:
        a = a[..., None, :]
    if nb == 1:
        b = b[..., None]
    a, b = _align([a, b], [fa, fb])
    out = np.matmul(a, b)
    if nb == 1:
        out = out[..., 0]
    if na == 1:
        out = out[..., 0, :] if nb > 1 else out[..., 0]
    return out


def _batch_loop(forward, args, flags, **params):
    k = next(len(a) for a, f in zip(args, flags) if f)
    return np.stack([forward(*[a[j] if f else a for a, f in zip(args, flags)], **params)
                     for j in range(k)])


def _einsum(forward, args, flags, spec):
    inputs, out = spec.split("->")
    terms = inputs.split(",")
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                  if c not in spec)
    terms = [letter + t if f else t for t, f in zip(terms, flags)]
    return forward(*args, spec=",".join(terms) + "->" + letter + out)


def stacked(forward, args, flags, **params):
    """Ops that treat leading axes as a stack (linear algebra on ``(..., m, n)``, ``zeros_like``):
    the batch axis is one more stack axis, in front of the aligned core axes."""
    return forward(*_align(args, flags), **params)


def _solve(forward, args, flags, **params):
    """``solve(a, B)`` for one matrix ``a`` and a batch of right-hand sides: the batch becomes
    more columns of one solve (one factorization, not one per member)."""
    a, b = args
    fa, fb = flags
    if fb and not fa and np.ndim(a) == 2 and np.ndim(b) == 3:
        k, n, m = b.shape
        x = forward(a, np.moveaxis(b, 0, 1).reshape(n, k * m), **params)
        return np.moveaxis(x.reshape(n, k, m), 1, 0)
    return stacked(forward, args, flags, **params)


def _along_axis(default):
    """Ops along one integer ``axis`` (cumsum, sort, argmax, unstack; ``default`` when the
    node has none): that axis moves behind the batch axis. ``axis=None`` (flatten first)
    runs once per member."""
    def rule(forward, args, flags, axis=default, **params):
        if axis is None:
            return _batch_loop(forward, args, flags, axis=axis, **params)
        (x,) = args
        return forward(x, axis=axis % (np.ndim(x) - 1) + 1, **params)
    return rule


def _joined(is_concat):
    """concatenate / stack: unbatched members are broadcast over the batch; the axis moves."""
    def rule(forward, args, flags, axis=0, **params):
        k = next(len(a) for a, f in zip(args, flags) if f)
        full = [a if f else np.broadcast_to(a, (k,) + np.shape(a)) for a, f in zip(args, flags)]
        out_core_ndim = full[0].ndim - 1 + (0 if is_concat else 1)
        return forward(*full, axis=axis % out_core_ndim + 1, **params)
    return rule


def _fourier(forward, args, flags, axes=None, axis=None, **params):
    """fft / rfft / irfft: their one operand carries the batch; the transformed axes move."""
    core = np.ndim(args[0]) - 1
    if axes is not None:
        return forward(*args, axes=tuple(a % core + 1 for a in axes), **params)
    return forward(*args, axis=axis % core + 1, **params)


ELEMENTWISE = {
    "add", "subtract", "multiply", "divide", "negative", "power", "square", "reciprocal",
    "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos", "absolute", "sign",
    "sigmoid", "logaddexp", "maximum", "minimum", "where", "add_n", "cast", "identity",
    "stop_gradient", "read_variable", "positive", "float_power", "cbrt", "exp2", "log2",
    "log10", "logaddexp2", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
    "arccosh", "arctanh", "hypot", "arctan2", "sinc", "deg2rad", "rad2deg", "fabs",
    "copysign", "heaviside", "floor", "ceil", "rint", "trunc", "fmax", "fmin", "clip",
    "remainder", "fmod", "floor_divide", "real", "imag", "conjugate"}
ELEMENTWISE |= {"ldexp", "frexp_exponent", "spacing", "nextafter", "i0", "i1", "gcd", "lcm",
                "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
                "invert", "bitwise_count"}
# Comparisons and predicates broadcast like arithmetic (their results feed where()).
ELEMENTWISE |= {"greater", "less", "greater_equal", "less_equal", "equal", "not_equal",
                "isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not",
                "logical_xor", "signbit"}
REDUCTIONS = {"sum", "mean", "max", "min", "logsumexp", "prod", "all", "any", "count_nonzero"}
# Every op of hessgrad.ops.decompositions (and eig, eigvals) works on stacks of matrices.
STACKED = {"inv", "solve", "solve_triangular", "det", "slogdet", "pinv", "matrix_rank",
           "cholesky", "eigh", "eigvalsh", "qr", "svd", "svd_full", "svdvals", "zeros_like",
           "ones_like", "round", "eig", "eigvals"}
ALONG_AXIS = {"cumsum", "cumprod", "sort", "argsort", "argmax", "argmin", "unstack"}
AXIS_DEFAULTS = {"argmax": None, "argmin": None, "unstack": 0}  # the others: -1
RULES = {"reshape": _reshape, "transpose": _transpose, "getitem": _getitem,
         "scatter_add": _scatter_add, "broadcast_to": _broadcast_to, "sum_to": _sum_to,
         "matmul": _matmul, "einsum": _einsum, "concatenate": _joined(True),
         "stack": _joined(False), "fft": _fourier, "rfft": _fourier, "irfft": _fourier,
         "solve": _solve, "solve_triangular": _solve}


def install():
    for name, prim in PRIMITIVES.items():
        if name in RULES:
            prim.batch_rule = RULES[name]
        elif name in ELEMENTWISE:
            prim.batch_rule = elementwise
        elif name in REDUCTIONS:
            prim.batch_rule = reduction
        elif name in STACKED:
            prim.batch_rule = stacked
        elif name in ALONG_AXIS:
            prim.batch_rule = _along_axis(AXIS_DEFAULTS.get(name, -1))


install()
