"""Sparsity rules: how an op moves and combines the dependencies of its operands.

The pattern of a Hessian (or Jacobian) is read off a traced graph by
:mod:`hessgrad.sparsity`, which walks the plan with, for every tensor, a *dependency matrix*: a
boolean ``scipy.sparse`` CSR matrix with one row per tensor element and one column per input
element, ``D[e, i]`` set when element ``e`` may depend on input ``x.flat[i]``. Each primitive
declares its rule (``primitive(..., sparsity=rule)``; the families' defaults in
:mod:`.families`): ``rule(step)`` returns the dependency matrix of the op's output (a list of
them for multiple results; None: no dependency) and records, with ``step.add_hessian(m)``, the
second-order interactions it adds (``g(u)`` elementwise adds ``D_u^T D_u``, ``u * v`` adds
``D_u^T D_v + D_v^T D_u``, ...). By the chain rule the union of those terms contains every
nonzero of the Hessian at every point of that shape: a rule may over-approximate (the
conservative :func:`dense`), never under-approximate.

This module holds the machinery rules are written with and the rules several ops share; rules
of one op live in its file.
"""

import numpy as np
import scipy.sparse as sp

# A conservative step that would materialize more than this many dependency entries gives
# up on sparsity: the pattern is declared dense (always correct, and then dense is faster).
ENTRY_BUDGET = 50_000_000


class TooDense(Exception):
    """Raised inside propagation when the pattern is (or would be) too dense to be worth it."""


UNKNOWN = object()  # the value of an operand that depends on the data (rules see a value
# for constants of the trace)


# --- sparse boolean helpers --------------------------------------------------------------
def binary(m):
    """A CSR matrix with the same nonzero positions and every stored value 1."""
    m = sp.csr_matrix(m)
    m.sum_duplicates()
    m.data = np.ones(len(m.data), np.float32)
    return m


def select(rows, ncols):
    """A 0/1 matrix ``P`` with ``P[r, rows[r]] = 1`` (no entry where ``rows[r] < 0``)."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    keep = np.flatnonzero(rows >= 0)
    return sp.csr_matrix((np.ones(len(keep), np.float32), (keep, rows[keep])),
                         shape=(len(rows), ncols))


def union(mats):
    mats = [m for m in mats if m is not None]
    if not mats:
        return None
    out = mats[0]
    for m in mats[1:]:
        out = out + m
    return binary(out) if len(mats) > 1 else out


def size(shape):
    return int(np.prod(shape, dtype=np.int64))


def broadcast_rows(d, in_shape, out_shape):
    """Dependency rows of an input broadcast to ``out_shape``."""
    if d is None:
        return None
    if tuple(in_shape) == tuple(out_shape):
        return d
    ids = np.broadcast_to(np.arange(size(in_shape)).reshape(in_shape), out_shape).ravel()
    return binary(d[ids])


def gram(a, b=None):
    """``a^T b + b^T a`` (``a^T a`` without ``b``) as a 0/1 pattern."""
    if b is None:
        return binary(a.T @ a)
    return binary(a.T @ b + b.T @ a)


# --- the propagation context -----------------------------------------------------------
class Step:
    """One plan step as the rules see it."""

    def __init__(self, node, forward, deps, values, in_shapes, hess, budget=ENTRY_BUDGET):
        self.node = node
        self.budget = budget  # a pattern with more entries is declared dense (TooDense)
        self.params = node.params
        self.forward = forward
        self.deps = deps
        self.values = values
        self.in_shapes = in_shapes
        self.out_shapes = [o.shape for o in node.outputs]
        self.hess = hess

    @property
    def out_shape(self):
        return self.out_shapes[0]

    def over(self, entries):
        """Whether ``entries`` dependency entries exceed the walk's budget."""
        return entries > self.budget

    def add_hessian(self, term):
        if term is not None and term.nnz:
            if self.over(term.nnz):
                raise TooDense
            self.hess.append(term)

    def broadcast(self, k):
        return broadcast_rows(self.deps[k], self.in_shapes[k], self.out_shape)


def _full_rows(step, u, nrows):
    """``nrows`` copies of the single dependency row ``u``."""
    if u is None:
        return None
    if step.over(nrows * u.nnz):
        raise TooDense
    return binary(sp.csr_matrix(np.ones((nrows, 1), np.float32)) @ u)


def _all_union(step):
    rows = [sp.csr_matrix(d.sum(axis=0)) for d in step.deps if d is not None and d.shape[0]]
    return union(rows) if rows else None


def dense(step, linear=False):
    """The conservative rule (and an op's without one): every output depends on everything;
    unless the op is linear, it all interacts."""
    u = _all_union(step)
    if u is not None and not linear:
        if step.over(u.nnz ** 2):
            raise TooDense
        step.add_hessian(gram(u))
    outs = []
    for shape in step.out_shapes:
        if shape is None or None in shape:
            raise TooDense
        outs.append(_full_rows(step, u, size(shape)))
    return outs if step.node.prim.multiple_results else outs[0]


# --- rules -------------------------------------------------------------------------------
def same(step):
    """Elementwise and linear in its one operand: dependencies pass through."""
    return step.deps[0]


def cut(step):
    """Piecewise constant (sign, floor, comparisons) or a constant for differentiation
    (stop_gradient): no dependency passes."""
    return None


def dense_linear(step):
    """Linear, but which element goes where depends on the data (sorting): every output may
    depend on every input."""
    return dense(step, linear=True)


def piecewise_linear(step):
    """Elementwise and piecewise linear (add, maximum, clip): each output depends on its
    broadcast operands, with no second-order interaction (hessgrad's derivatives are zero
    at the kinks too)."""
    return union([step.broadcast(k) for k in range(len(step.deps))])


def only(k):
    """Depends on operand ``k`` only, piecewise linearly (copysign, heaviside)."""
    def rule(step):
        return step.broadcast(k) if k < len(step.deps) else None
    return rule


def elementwise_nonlinear(step):
    """Elementwise and smooth (exp, tanh, logaddexp): each output's operands interact."""
    w = piecewise_linear(step)
    step.add_hessian(gram(w))
    return w


def moves(index=None):
    """The rule of ops that only move elements (reshape, transpose, getitem, where, ...): the
    forward runs on element ids (0: no dependency). ``index(k)``: whether operand ``k`` says
    where elements go (a where's condition, a dynamic getitem's indices); one whose value
    depends on the data moves anything anywhere."""
    def rule(step):
        args, offset, blocks = [], 0, []
        for k, (d, v, shape) in enumerate(zip(step.deps, step.values, step.in_shapes)):
            if d is not None:
                n = size(shape)
                args.append(np.arange(offset + 1, offset + n + 1, dtype=np.int64).reshape(shape))
                blocks.append(d)
                offset += n
            elif index is not None and index(k):
                if v is UNKNOWN:       # a data-dependent index or condition: unknown moves
                    return dense(step, linear=True)
                args.append(v)
            elif v is None:
                args.append(v)
            else:                      # constant data: no dependency
                args.append(np.zeros(shape, np.int64))
        out = step.forward(*args, **step.params)
        stacked = blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")

        def rows(ids):
            return binary(select(np.asarray(ids).ravel() - 1, offset) @ stacked)
        return [rows(o) for o in out] if step.node.prim.multiple_results else rows(out)
    return rule


MOVES = moves()  # reshape, transpose, broadcast_to, getitem, stack, unstack, concatenate


def _lines(shape, axes):
    """One-hot ``(size, lines)`` matrix: the line (or plane) along ``axes`` holding each
    element, numbered by its position on the other axes."""
    kept = [k for k in range(len(shape)) if k not in axes]
    coords = np.indices(shape).reshape(len(shape), -1)[kept]
    line = np.ravel_multi_index(coords, [shape[k] for k in kept]) if kept else \
        np.zeros(size(shape), np.intp)
    return sp.csr_matrix((np.ones(len(line), np.float32), (np.arange(len(line)), line)),
                         shape=(len(line), size([shape[k] for k in kept])))


def within_lines(axes_of, linear=True):
    """Ops that mix each line (or plane) along some axes and nothing across the others
    (fft, sort): ``axes_of(params, ndim)`` names the axes."""
    def rule(step):
        axes = axes_of(step.params, len(step.in_shapes[0]))
        within = _lines(step.out_shape, axes) @ _lines(step.in_shapes[0], axes).T
        out = binary(within @ step.deps[0])
        if not linear:
            step.add_hessian(gram(out))
        return out
    return rule


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _reduce_matrix(in_shape, kept_shape):
    """``R[o, i] = 1`` when input element ``i`` is summed into output element ``o``."""
    count = size(in_shape)
    out_ids = np.broadcast_to(np.arange(size(kept_shape)).reshape(kept_shape),
                              in_shape).ravel()
    return sp.csr_matrix((np.ones(count, np.float32), (out_ids, np.arange(count))),
                         shape=(size(kept_shape), count))


def reduced(nonlinear):
    """A reduction over ``axis`` (None: all): each output depends on the elements it reduces,
    which interact when ``nonlinear`` (logsumexp, prod; not sum, max)."""
    def rule(step):
        shape = step.in_shapes[0]
        axes = _axes(step.params.get("axis"), len(shape))
        kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
        out = binary(_reduce_matrix(shape, kept) @ step.deps[0])
        if nonlinear:
            step.add_hessian(gram(out))
        return out
    return rule


def scatter_matrix(g_shape, index, shape):
    target = np.arange(size(shape)).reshape(shape)[index]
    source = np.broadcast_to(np.arange(size(g_shape)).reshape(g_shape), np.shape(target))
    return sp.csr_matrix((np.ones(np.size(target), np.float32),
                          (np.ravel(target), np.ravel(source))),
                         shape=(size(shape), size(g_shape)))


def _prefix_matrix(step, shape, axis, reverse=False):
    """``L[o, i] = 1`` when ``i`` is at or before ``o`` along ``axis`` (after, if reversed)."""
    ids = np.moveaxis(np.arange(size(shape)).reshape(shape), axis, -1)
    length = shape[axis]
    rows, cols = np.tril_indices(length)
    if reverse:
        rows, cols = cols, rows
    flat = ids.reshape(size(ids.shape[:-1]), length)  # not -1: the scanned axis may be empty
    if step.over(flat.shape[0] * len(rows)):
        raise TooDense
    r, c = flat[:, rows].ravel(), flat[:, cols].ravel()
    return sp.csr_matrix((np.ones(len(r), np.float32), (r, c)), shape=(size(shape),) * 2)


def cumulative(nonlinear):
    """A scan along ``axis`` (cumsum, cumprod): an output depends on the elements up to it."""
    def rule(step):
        shape = step.in_shapes[0]
        axis = int(step.params["axis"]) % len(shape)
        d = union([step.broadcast(k) for k in range(len(step.deps))])
        out = binary(_prefix_matrix(step, shape, axis, step.params.get("reverse", False)) @ d)
        if nonlinear:
            step.add_hessian(gram(out))
        return out
    return rule


# --- products: matmul and einsum, exact for constant operands ---------------------------
def _indicator(v, shape):
    if v is UNKNOWN:
        return np.ones(shape, np.float64)
    return (np.asarray(v) != 0).astype(np.float64)


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


def _broadcast_operand(step, d, shape, full):
    """Dependency rows of an einsum operand with its size-1 axes broadcast to ``full``."""
    if d is None or tuple(shape) == tuple(full):
        return d
    if step.over(d.nnz * (size(full) // max(size(shape), 1))):
        raise TooDense
    return broadcast_rows(d, shape, full)


def contraction(step, spec, deps, values, shapes):
    """The pattern of ``einsum(spec)`` (explicit, no repeated letters) of operands with
    dependency rows ``deps``: exact where an operand is a constant of the trace (its zeros
    cut dependencies)."""
    lhs, out = spec.split("->")
    subs = lhs.split(",")
    if any(len(set(s)) != len(s) for s in subs):  # repeated letters (diagonals): no rule
        return dense(step)
    sizes = _label_sizes(subs, shapes)
    full = [tuple(sizes[c] for c in s) for s in subs]
    # numpy broadcasts an operand's size-1 axes: its rows and indicator are repeated first
    deps = [_broadcast_operand(step, d, shape, f) for d, shape, f in zip(deps, shapes, full)]
    ind = [np.broadcast_to(_indicator(v, shape), f) if d is None else np.ones(f)
           for d, v, shape, f in zip(deps, values, shapes, full)]
    out_size = size([sizes[c] for c in out])
    result = []
    live = [k for k, d in enumerate(deps) if d is not None]
    for k in live:
        labels = out + "".join(c for c in subs[k] if c not in out)
        if step.over(np.prod([sizes[c] for c in labels], dtype=np.float64)):
            return dense(step)
        others = [i for i in range(len(subs)) if i != k]
        mask = _contract([subs[i] for i in others], [ind[i] for i in others], labels, sizes)
        o = _positions(labels, out, sizes, mask)
        i = _positions(labels, subs[k], sizes, mask)
        lin = sp.csr_matrix((np.ones(len(o), np.float32), (o, i)),
                            shape=(out_size, deps[k].shape[0]))
        result.append(binary(lin @ deps[k]))
    for a_pos, k in enumerate(live):          # pairs of live operands interact
        for l in live[a_pos + 1:]:
            labels = subs[k] + "".join(c for c in subs[l] if c not in subs[k])
            if step.over(np.prod([sizes[c] for c in labels], dtype=np.float64)):
                return dense(step)
            others = [i for i in range(len(subs)) if i not in (k, l)]
            mask = _contract([subs[i] for i in others], [ind[i] for i in others], labels,
                             sizes)
            pk = _positions(labels, subs[k], sizes, mask)
            pl = _positions(labels, subs[l], sizes, mask)
            pair = sp.csr_matrix((np.ones(len(pk), np.float32), (pk, pl)),
                                 shape=(deps[k].shape[0], deps[l].shape[0]))
            cross = deps[k].T @ (pair @ deps[l])
            step.add_hessian(binary(cross + cross.T))
    return union(result)
