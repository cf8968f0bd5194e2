"""Sparsity patterns of Hessians and Jacobians, read off a traced graph.

``f`` is traced once at the input's shape (:class:`hessgrad.function`); the plan's steps are
then walked with, for every tensor, a *dependency matrix*: a boolean ``scipy.sparse`` CSR
matrix with one row per tensor element and one column per input element, ``D[e, i]`` set when
element ``e`` may depend on input ``x.flat[i]``. Linear ops only move dependencies (row
selections and sparse products: ``D_out = L D_in``); a nonlinear op adds its second-order
interactions to the Hessian pattern (``g(u)`` elementwise adds ``D_u^T D_u``, ``u * v`` adds
``D_u^T D_v + D_v^T D_u``, ...). By the chain rule, ``H = sum over ops and elements of
J_in^T (d2 op) J_in``, so the union of those products contains every nonzero of the Hessian at
every point: the pattern is valid for all ``x`` of that shape and dtype.

Ops without a rule here are treated conservatively: every output element depends on every
input element, and (unless the op is linear) all of them interact. Piecewise-linear ops
(``abs``, ``maximum``, ``max``, ``clip``, ``sort``, ...) have a zero Hessian almost
everywhere, as hessgrad's own derivatives do, so they only move dependencies; piecewise
constant ops (``sign``, ``floor``, comparisons) and ``stop_gradient`` cut them.
"""

import numpy as np
import scipy.sparse as sp

from .engine.function import function
from .engine.tensor import Tensor

# A conservative step that would materialize more than this many dependency entries gives
# up on sparsity: the pattern is declared dense (always correct, and then dense is faster).
ENTRY_BUDGET = 50_000_000
# The budget of the walk in progress (``_propagate(budget=...)`` lowers it when a dense answer
# is as good as a sparse one, e.g. the structure check of ``hessgrad.hessian``).
_LIMIT = [ENTRY_BUDGET]


def _over(entries):
    return entries > _LIMIT[0]


class _TooDense(Exception):
    """Raised inside propagation when the pattern is (or would be) too dense to be worth it."""


_UNKNOWN = object()


# --- sparse boolean helpers --------------------------------------------------------------
def _bin(m):
    """A CSR matrix with the same nonzero positions and every stored value 1."""
    m = sp.csr_matrix(m)
    m.sum_duplicates()
    m.data = np.ones(len(m.data), np.float32)
    return m


def _select(rows, ncols):
    """A 0/1 matrix ``P`` with ``P[r, rows[r]] = 1`` (no entry where ``rows[r] < 0``)."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    keep = np.flatnonzero(rows >= 0)
    return sp.csr_matrix((np.ones(len(keep), np.float32), (keep, rows[keep])),
                         shape=(len(rows), ncols))


def _union(mats, nrows, n):
    mats = [m for m in mats if m is not None]
    if not mats:
        return None
    out = mats[0]
    for m in mats[1:]:
        out = out + m
    return _bin(out) if len(mats) > 1 else out


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _rows_broadcast(d, in_shape, out_shape):
    """Dependency rows of an input broadcast to ``out_shape``."""
    if d is None:
        return None
    if tuple(in_shape) == tuple(out_shape):
        return d
    ids = np.broadcast_to(np.arange(_size(in_shape)).reshape(in_shape), out_shape).ravel()
    return _bin(d[ids])


def _gram(a, b=None):
    """``a^T b + b^T a`` (``a^T a`` without ``b``) as a 0/1 pattern."""
    if b is None:
        return _bin(a.T @ a)
    return _bin(a.T @ b + b.T @ a)


# --- the propagation context -----------------------------------------------------------
class _Step:
    """One plan step as the rules see it."""

    def __init__(self, node, forward, deps, values, in_shapes, n, hess):
        self.node = node
        self.name = node.prim.name
        self.params = node.params
        self.forward = forward
        self.deps = deps
        self.values = values
        self.in_shapes = in_shapes
        self.out_shapes = [o.shape for o in node.outputs]
        self.n = n
        self.hess = hess

    @property
    def out_shape(self):
        return self.out_shapes[0]

    def add_hessian(self, term):
        if term is not None and term.nnz:
            if _over(term.nnz):
                raise _TooDense
            self.hess.append(term)

    def broadcast(self, k):
        return _rows_broadcast(self.deps[k], self.in_shapes[k], self.out_shape)


def _full_rows(u, nrows):
    """``nrows`` copies of the single dependency row ``u``."""
    if u is None:
        return None
    if _over(nrows * u.nnz):
        raise _TooDense
    return _bin(sp.csr_matrix(np.ones((nrows, 1), np.float32)) @ u)


def _all_union(step):
    rows = [sp.csr_matrix(d.sum(axis=0)) for d in step.deps if d is not None and d.shape[0]]
    return _union(rows, 1, step.n) if rows else None


def _generic(step, linear=False):
    """No rule: every output depends on everything; a nonlinear op makes it all interact."""
    u = _all_union(step)
    if u is not None and not linear:
        if _over(u.nnz ** 2):
            raise _TooDense
        step.add_hessian(_gram(u))
    outs = []
    for shape in step.out_shapes:
        if shape is None or None in shape:
            raise _TooDense
        outs.append(_full_rows(u, _size(shape)))
    return outs if step.node.prim.multiple_results else outs[0]


# --- rules -------------------------------------------------------------------------------
def _same(step):
    return step.deps[0]


def _cut(step):
    return None


def _unary_nonlinear(step):
    d = step.deps[0]
    step.add_hessian(_gram(d))
    return d


def _absolute(step):
    """|x| is piecewise linear for real x, but smooth and curved for complex x (the modulus
    sqrt(re^2 + im^2)): then its entries interact like any unary nonlinearity."""
    if np.dtype(step.node.inputs[0].dtype).kind == "c":
        return _unary_nonlinear(step)
    return _same(step)


def _fourier_groups(shape, axes):
    """One-hot ``(size, lines)`` matrix: the line (or plane) along ``axes`` holding each
    element, numbered by its position on the other axes."""
    kept = [k for k in range(len(shape)) if k not in axes]
    coords = np.indices(shape).reshape(len(shape), -1)[kept]
    line = np.ravel_multi_index(coords, [shape[k] for k in kept]) if kept else \
        np.zeros(_size(shape), np.intp)
    lines = _size([shape[k] for k in kept])
    return sp.csr_matrix((np.ones(len(line), np.float32), (np.arange(len(line)), line)),
                         shape=(len(line), lines))


def _fourier(step):
    """fft / rfft / irfft: linear; an output mixes its whole line along the transformed axes
    and nothing across the other axes (a batch of transforms stays block-diagonal)."""
    params, ndim = step.params, len(step.in_shapes[0])
    axes = tuple(a % ndim for a in (params["axes"] if "axes" in params else (params["axis"],)))
    gin = _fourier_groups(step.in_shapes[0], axes)
    gout = _fourier_groups(step.out_shape, axes)
    return _bin(gout @ (gin.T @ step.deps[0]))


def _cast(step):
    return step.deps[0] if np.dtype(step.node.outputs[0].dtype).kind in "fc" else None


def _union_rule(step):
    return _union([step.broadcast(k) for k in range(len(step.deps))], 0, step.n)


def _only(k):
    def rule(step):
        return step.broadcast(k) if k < len(step.deps) else None
    return rule


def _multiply(step):
    a, b = step.broadcast(0), step.broadcast(1)
    if a is not None and b is not None:
        step.add_hessian(_gram(a, b))
    return _union([a, b], 0, step.n)


def _divide(step):
    a, b = step.broadcast(0), step.broadcast(1)
    if b is None:
        return a
    if a is not None:
        step.add_hessian(_gram(a, b))
    step.add_hessian(_gram(b))
    return _union([a, b], 0, step.n)


def _binary_nonlinear(step):
    w = _union_rule(step)
    step.add_hessian(_gram(w))
    return w


def _power(step):
    base, expo = step.broadcast(0), step.broadcast(1)
    p = step.values[1]
    if expo is not None or p is _UNKNOWN or base is None:
        return _binary_nonlinear(step)
    p = np.broadcast_to(np.asarray(p), step.out_shape).ravel()
    if np.all(p == 1):
        return base
    keep = _select(np.where(p == 0, -1, np.arange(len(p))), len(p))
    nonlinear = _select(np.where((p == 0) | (p == 1), -1, np.arange(len(p))), len(p))
    step.add_hessian(_gram(_bin(nonlinear @ base)))
    return _bin(keep @ base)


def _id_forward(step):
    """Ops that only move elements: run the forward on element ids (0: no dependency)."""
    args, offset, blocks = [], 0, []
    for k, (d, v, shape) in enumerate(zip(step.deps, step.values, step.in_shapes)):
        if d is not None:
            size = _size(shape)
            args.append(np.arange(offset + 1, offset + size + 1, dtype=np.int64).reshape(shape))
            blocks.append(d)
            offset += size
        elif (step.name == "where" and k == 0) or (step.name == "getitem_dynamic" and k):
            if v is _UNKNOWN:          # a data-dependent index or condition: unknown moves
                return _generic(step, linear=True)
            args.append(v)
        elif v is None:
            args.append(v)
        else:                          # constant data: no dependency
            args.append(np.zeros(shape, np.int64))
    ids = np.asarray(step.forward(*args, **step.params)).ravel() - 1
    stacked = blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")
    return _bin(_select(ids, offset) @ stacked)


def _where(step):
    if step.values[0] is _UNKNOWN:    # the condition depends on the data: either branch
        return _union([step.broadcast(1), step.broadcast(2)], 0, step.n)
    return _id_forward(step)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _reduce_matrix(in_shape, kept_shape):
    """``R[o, i] = 1`` when input element ``i`` is summed into output element ``o``."""
    size = _size(in_shape)
    out_ids = np.broadcast_to(np.arange(_size(kept_shape)).reshape(kept_shape),
                              in_shape).ravel()
    return sp.csr_matrix((np.ones(size, np.float32), (out_ids, np.arange(size))),
                         shape=(_size(kept_shape), size))


def _reduction(nonlinear):
    def rule(step):
        shape = step.in_shapes[0]
        axes = _axes(step.params.get("axis"), len(shape))
        kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
        out = _bin(_reduce_matrix(shape, kept) @ step.deps[0])
        if nonlinear:
            step.add_hessian(_gram(out))
        return out
    return rule


def _sum_to(step):
    shape, target = step.in_shapes[0], tuple(step.params["shape"])
    lead = len(shape) - len(target)
    kept = (1,) * lead + target
    ids = np.broadcast_to(np.arange(_size(target)).reshape(kept), shape).ravel()
    size = _size(shape)
    r = sp.csr_matrix((np.ones(size, np.float32), (ids, np.arange(size))),
                      shape=(_size(target), size))
    return _bin(r @ step.deps[0])


def _scatter_matrix(g_shape, index, shape):
    target = np.arange(_size(shape)).reshape(shape)[index]
    source = np.broadcast_to(np.arange(_size(g_shape)).reshape(g_shape), np.shape(target))
    return sp.csr_matrix((np.ones(np.size(target), np.float32),
                          (np.ravel(target), np.ravel(source))),
                         shape=(_size(shape), _size(g_shape)))


def _scatter_add(step):
    return _bin(_scatter_matrix(step.in_shapes[0], step.params["index"], step.params["shape"])
                @ step.deps[0])


def _scatter_add_dynamic(step):
    from .ops.indexing import _fill
    if any(v is _UNKNOWN for v in step.values[1:]):
        return _generic(step, linear=True)
    index = _fill(step.params["template"], list(step.values[1:]))
    return _bin(_scatter_matrix(step.in_shapes[0], index, step.params["shape"])
                @ step.deps[0])


def _getitem_dynamic(step):
    if any(v is _UNKNOWN for v in step.values[1:]):
        return _generic(step, linear=True)
    return _id_forward(step)


def _prefix_matrix(shape, axis, reverse=False):
    """``L[o, i] = 1`` when ``i`` is at or before ``o`` along ``axis`` (after, if reversed)."""
    ids = np.moveaxis(np.arange(_size(shape)).reshape(shape), axis, -1)
    length = shape[axis]
    rows, cols = np.tril_indices(length)
    if reverse:
        rows, cols = cols, rows
    flat = ids.reshape(-1, length)
    if _over(flat.shape[0] * len(rows)):
        raise _TooDense
    r, c = flat[:, rows].ravel(), flat[:, cols].ravel()
    return sp.csr_matrix((np.ones(len(r), np.float32), (r, c)), shape=(_size(shape),) * 2)


def _cumulative(nonlinear):
    def rule(step):
        shape = step.in_shapes[0]
        axis = int(step.params["axis"]) % len(shape)
        d = _union([step.broadcast(k) for k in range(len(step.deps))], 0, step.n)
        out = _bin(_prefix_matrix(shape, axis, step.params.get("reverse", False)) @ d)
        if nonlinear:
            step.add_hessian(_gram(out))
        return out
    return rule


# --- products: matmul and einsum, exact for constant operands ---------------------------
def _indicator(v, shape):
    if v is _UNKNOWN:
        return np.ones(shape, np.float64)
    return (np.asarray(v) != 0).astype(np.float64)


def _matmul_spec(sa, sb):
    """matmul as einsum over explicitly broadcast batch axes: (spec, shape_a, shape_b)."""
    a1, b1 = len(sa) == 1, len(sb) == 1
    ca = (1,) + tuple(sa) if a1 else tuple(sa)
    cb = tuple(sb) + (1,) if b1 else tuple(sb)
    batch = np.broadcast_shapes(ca[:-2], cb[:-2])
    letters = "abcdefghijklmnopqrstuvw"[:len(batch)]
    spec_a = letters + ("j" if a1 else "ij")
    spec_b = letters + ("j" if b1 else "jk")
    out = letters + ("" if a1 else "i") + ("" if b1 else "k")
    full_a = batch + (tuple(sa) if a1 else tuple(sa[-2:]))
    full_b = batch + (tuple(sb) if b1 else tuple(sb[-2:]))
    return f"{spec_a},{spec_b}->{out}", full_a, full_b


def _matmul(step):
    sa, sb = step.in_shapes
    spec, full_a, full_b = _matmul_spec(sa, sb)
    deps = [_rows_broadcast(d, s, f) if d is not None else None
            for d, s, f in zip(step.deps, (sa, sb), (full_a, full_b))]
    values = [v if v is _UNKNOWN else np.broadcast_to(v, f)
              for v, f in zip(step.values, (full_a, full_b))]
    return _einsum_deps(step, spec, deps, values, [full_a, full_b])


def _einsum(step):
    return _einsum_deps(step, step.params["spec"], step.deps, step.values, step.in_shapes)


def _contract(spec_in, operands, out_labels, sizes):
    """Indicator einsum onto ``out_labels`` (labels absent from the operands are free)."""
    free = [c for c in out_labels if not any(c in s for s in spec_in)]
    specs = list(spec_in) + free
    ops = list(operands) + [np.ones(sizes[c]) for c in free]
    if not specs:
        return np.ones([sizes[c] for c in out_labels])
    return np.einsum(",".join(specs) + "->" + out_labels, *ops, optimize=True) > 0


def _positions(labels, sub, sizes, mask):
    """Flat positions, in an operand indexed by ``sub``, of the nonzeros of ``mask``."""
    coords = np.nonzero(mask)
    shape = [sizes[c] for c in sub]
    picked = tuple(coords[labels.index(c)] for c in sub)
    return np.ravel_multi_index(picked, shape) if sub else np.zeros(len(coords[0]), np.int64)


def _label_sizes(subs, shapes):
    """Each label's size after numpy's broadcasting: a size-1 axis takes the other size."""
    sizes = {}
    for s, shape in zip(subs, shapes):
        for c, n in zip(s, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = int(n)
    return sizes


def _broadcast_operand(d, shape, full):
    """Dependency rows of an einsum operand with its size-1 axes broadcast to ``full``."""
    if d is None or tuple(shape) == tuple(full):
        return d
    if _over(d.nnz * (_size(full) // max(_size(shape), 1))):
        raise _TooDense
    return _rows_broadcast(d, shape, full)


def _einsum_deps(step, spec, deps, values, shapes):
    lhs, out = spec.split("->")
    subs = lhs.split(",")
    if any(len(set(s)) != len(s) for s in subs):  # repeated letters (diagonals): no rule
        return _generic(step)
    sizes = _label_sizes(subs, shapes)
    full = [tuple(sizes[c] for c in s) for s in subs]
    # numpy broadcasts an operand's size-1 axes: its rows and indicator are repeated first
    deps = [_broadcast_operand(d, shape, f) for d, shape, f in zip(deps, shapes, full)]
    ind = [np.broadcast_to(_indicator(v, shape), f) if d is None else np.ones(f)
           for d, v, shape, f in zip(deps, values, shapes, full)]
    out_size = _size([sizes[c] for c in out])
    result = []
    live = [k for k, d in enumerate(deps) if d is not None]
    for k in live:
        labels = out + "".join(c for c in subs[k] if c not in out)
        if _over(np.prod([sizes[c] for c in labels], dtype=np.float64)):
            return _generic(step)
        others = [i for i in range(len(subs)) if i != k]
        mask = _contract([subs[i] for i in others], [ind[i] for i in others], labels, sizes)
        o = _positions(labels, out, sizes, mask)
        i = _positions(labels, subs[k], sizes, mask)
        lin = sp.csr_matrix((np.ones(len(o), np.float32), (o, i)),
                            shape=(out_size, deps[k].shape[0]))
        result.append(_bin(lin @ deps[k]))
    for a_pos, k in enumerate(live):          # pairs of live operands interact
        for l in live[a_pos + 1:]:
            labels = subs[k] + "".join(c for c in subs[l] if c not in subs[k])
            if _over(np.prod([sizes[c] for c in labels], dtype=np.float64)):
                return _generic(step)
            others = [i for i in range(len(subs)) if i not in (k, l)]
            mask = _contract([subs[i] for i in others], [ind[i] for i in others], labels,
                             sizes)
            pk = _positions(labels, subs[k], sizes, mask)
            pl = _positions(labels, subs[l], sizes, mask)
            pair = sp.csr_matrix((np.ones(len(pk), np.float32), (pk, pl)),
                                 shape=(deps[k].shape[0], deps[l].shape[0]))
            cross = deps[k].T @ (pair @ deps[l])
            step.add_hessian(_bin(cross + cross.T))
    return _union(result, out_size, step.n)


# --- the rule table ------------------------------------------------------------------------
UNARY_NONLINEAR = (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
    "reciprocal", "sigmoid", "tanh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "arcsinh", "arccosh", "arctanh", "sinc")
LINEAR_SAME = ("negative", "positive", "identity", "conjugate", "real", "imag", "deg2rad",
               "rad2deg", "fabs")          # fabs: piecewise linear
CUTS = ("stop_gradient", "sign", "floor", "ceil", "rint", "trunc", "round", "floor_divide")
PIECEWISE_LINEAR_UNION = ("add", "subtract", "add_n", "maximum", "minimum", "fmax", "fmin",
                          "remainder", "fmod", "clip")
BINARY_NONLINEAR = ("logaddexp", "logaddexp2", "arctan2", "hypot")
# Permutations of the data (sorting): piecewise linear, but which element goes where is
# data-dependent, so every output may depend on every input.
MIXING_LINEAR = ("sort", "permute_along_axis", "tie_mean")

RULES = {name: _unary_nonlinear for name in UNARY_NONLINEAR}
RULES.update({name: _same for name in LINEAR_SAME})
RULES.update({name: _cut for name in CUTS})
RULES.update({name: _union_rule for name in PIECEWISE_LINEAR_UNION})
RULES.update({name: _binary_nonlinear for name in BINARY_NONLINEAR})
RULES.update({name: (lambda step: _generic(step, linear=True)) for name in MIXING_LINEAR})
RULES.update({
    "cast": _cast, "absolute": _absolute, "fft": _fourier, "rfft": _fourier,
    "irfft": _fourier, "multiply": _multiply, "divide": _divide, "power": _power,
    "float_power": _power, "copysign": _only(0), "heaviside": _only(1), "where": _where,
    "getitem": _id_forward, "reshape": _id_forward, "transpose": _id_forward,
    "broadcast_to": _id_forward, "stack": _id_forward, "concatenate": _id_forward,
    "getitem_dynamic": _getitem_dynamic, "scatter_add": _scatter_add,
    "scatter_add_dynamic": _scatter_add_dynamic, "sum_to": _sum_to,
    "sum": _reduction(False), "mean": _reduction(False), "max": _reduction(False),
    "min": _reduction(False), "logsumexp": _reduction(True), "prod": _reduction(True),
    "cumsum": _cumulative(False), "cumprod": _cumulative(True),
    "linear_recurrence": _cumulative(True), "matmul": _matmul, "einsum": _einsum,
})


def register_rule(name, rule):
    """Give primitive ``name`` a sparsity rule ``rule(step) -> dependency matrix``.

    ``step.deps[k]`` is input ``k``'s dependency matrix (or None), ``step.values[k]`` its
    value when it is a constant of the trace, ``step.add_hessian(m)`` records interactions.
    """
    RULES[name] = rule


# --- the walk ------------------------------------------------------------------------------
def _propagate(plan, n, source=0, hessian=True, budget=ENTRY_BUDGET):
    """Dependency matrices of the plan's fetches on feed ``source``, and the Hessian terms;
    raises ``_TooDense`` when a matrix would hold more than ``budget`` entries."""
    _LIMIT[0] = budget
    try:
        return _walk(plan, n, source, hessian)
    finally:
        _LIMIT[0] = ENTRY_BUDGET


def _walk(plan, n, source, hessian):
    dynamic = set(plan.feed_slots)
    for *_, out, node in plan.steps:
        dynamic.update(out if type(out) is not int else (out,))
    dynamic.update(s for s, _ in plan.variables)
    uses = {}
    for _, arg_slots, *_ in plan.steps:
        for s in arg_slots:
            uses[s] = uses.get(s, 0) + 1
    keep = set(plan.fetch_slots)
    deps = {plan.feed_slots[source]: sp.identity(n, np.float32, format="csr")}
    hess = []
    for forward, arg_slots, params, out, node in plan.steps:
        outs = out if type(out) is not int else (out,)
        ins = [deps.get(s) for s in arg_slots]
        result = None
        if any(d is not None for d in ins) and not node.prim.nondiff:
            values = [plan.template[s] if s not in dynamic else _UNKNOWN for s in arg_slots]
            shapes = [a.shape if isinstance(a, Tensor) else np.shape(a) for a in node.inputs]
            if any(d is not None and (s is None or None in s) for d, s in zip(ins, shapes)):
                raise _TooDense
            step = _Step(node, forward, ins, values, shapes, n, hess if hessian else [])
            rule = RULES.get(node.prim.name)
            if rule is None:
                result = _generic(step, linear=node.prim.linear)
            else:
                result = rule(step)
        results = result if node.prim.multiple_results else (result,)
        if result is None:
            results = (None,) * len(outs)
        for s, r in zip(outs, results):
            if r is not None:
                if _over(r.nnz):
                    raise _TooDense
                deps[s] = r
        for s in arg_slots:                 # free what no later step reads
            uses[s] -= 1
            if uses[s] == 0 and s not in keep:
                deps.pop(s, None)
    return [deps.get(s) for s in plan.fetch_slots], hess


def plain_function(f):
    """``hessgrad.function(f)`` without graph optimizations where they exist: the analysis and
    the batched products here read and run the plan itself."""
    try:
        return function(f, optimize=False)
    except TypeError:
        return function(f)


def _trace(f, x, args, what):
    x = _check_point(x, what)
    concrete = plain_function(f).get_concrete_function(x, *args)
    if not concrete._fetch_index:
        return x, concrete, None
    return x, concrete, concrete.plan


def _check_point(x, what):
    if isinstance(x, Tensor):
        x = x.numpy()
    x = np.asarray(x)
    if x.dtype.kind not in "f":
        raise TypeError(f"{what}: argument x must be a real floating-point array, got dtype "
                        f"{x.dtype} (shape {x.shape}); cast it to float first")
    return x


def dense_pattern(n, m=None):
    """The all-true ``m x n`` pattern (``n x n`` by default)."""
    m = n if m is None else m
    return sp.csr_matrix(np.ones((m, n), dtype=bool))


def hessian_sparsity(f, x, args=()):
    """The sparsity pattern of the Hessian of scalar ``f`` w.r.t. ``x`` (flattened).

    Exact for common ops, conservative otherwise: it contains every entry that is nonzero at
    any point of that shape and dtype (``args`` may take any value: they are treated as
    unknown data).

    Args:
        f: scalar function ``f(x, *args)`` written with hessgrad ops.
        x: a floating-point array; only its shape and dtype matter.
        args: further arguments of ``f`` (held fixed, values not used).
    Returns:
        A boolean ``scipy.sparse.csr_matrix`` of shape ``(x.size, x.size)``.
    Raises:
        TypeError: ``x`` is not a floating-point array.
        ValueError: ``f`` does not return a scalar.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> f = lambda x: hnp.sum(x[1:] * x[:-1]) + hnp.sum(hnp.exp(x))
    >>> hg.hessian_sparsity(f, np.zeros(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1],
           [0, 0, 1, 1]])
    """
    return _hessian_pattern(f, x, args, "hessian_sparsity")[0]


def _hessian_pattern(f, x, args, what, budget=ENTRY_BUDGET):
    """(pattern, is_dense) where ``is_dense`` says the walk gave up (pattern all true) because
    some dependency matrix would exceed ``budget`` entries."""
    x, concrete, plan = _trace(f, x, args, what)
    n = x.size
    if plan is None:
        return sp.csr_matrix((n, n), dtype=bool), False
    out = concrete.outputs[concrete._fetch_index[0]]
    if len(concrete._fetch_index) != 1 or (out.shape is not None and _size(out.shape) != 1):
        raise ValueError(f"{what}: f must return a scalar, got an output of shape "
                         f"{out.shape} for x of shape {x.shape}")
    try:
        _, hess = _propagate(plan, n, budget=budget)
        if not hess:
            return sp.csr_matrix((n, n), dtype=bool), False
        total = hess[0]
        for term in hess[1:]:
            total = total + term
            if total.nnz > budget:
                raise _TooDense
        pattern = sp.csr_matrix(total, dtype=bool)
        pattern.sort_indices()
        return pattern, False
    except _TooDense:
        return dense_pattern(n), True


def jacobian_sparsity(f, x, args=()):
    """The sparsity pattern of the Jacobian of ``f`` (output flattened) w.r.t. ``x``.

    Args:
        f: function ``f(x, *args)`` returning one array.
        x: a floating-point array; only its shape and dtype matter.
        args: further arguments of ``f`` (held fixed, values not used).
    Returns:
        A boolean ``scipy.sparse.csr_matrix`` of shape ``(f(x).size, x.size)``.
    Raises:
        TypeError: ``x`` is not a floating-point array.
        ValueError: ``f`` does not return exactly one array.

    >>> import hessgrad as hg
    >>> f = lambda x: x[1:] ** 2 - x[:-1]
    >>> hg.jacobian_sparsity(f, np.zeros(3)).toarray().astype(int)
    array([[1, 1, 0],
           [0, 1, 1]])
    """
    return _jacobian_pattern(f, x, args, "jacobian_sparsity")[0]


def _jacobian_pattern(f, x, args, what):
    x, concrete, plan = _trace(f, x, args, what)
    n = x.size
    if len(concrete.outputs) != 1:
        raise ValueError(f"{what}: f must return one array, got {len(concrete.outputs)} "
                         "outputs")
    out = concrete.outputs[0]
    shape = out.shape if isinstance(out, Tensor) else np.shape(out)
    if shape is None or None in shape:
        raise ValueError(f"{what}: the output shape of f is not known when traced at x of "
                         f"shape {x.shape}")
    m = _size(shape)
    if plan is None:
        return sp.csr_matrix((m, n), dtype=bool), False, shape
    try:
        (d,), _ = _propagate(plan, n, hessian=False)
    except _TooDense:
        return dense_pattern(n, m), True, shape
    if d is None:
        return sp.csr_matrix((m, n), dtype=bool), False, shape
    pattern = sp.csr_matrix(d, dtype=bool)
    pattern.sort_indices()
    return pattern, False, shape
