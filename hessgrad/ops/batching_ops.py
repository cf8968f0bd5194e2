"""Batching rules built from hessgrad ops: a primitive applied to arguments that carry a
leading batch axis, for ``vmap`` under tapes, accumulators and traces.

:mod:`.batching` runs forwards on numpy values (fast, not differentiable). Here each rule
*binds* ops (the primitive itself with shifted axes, reshapes, transposes), so that tapes and
accumulators record them and graphs gain them as nodes: the batched result has derivatives of
every order, given by the ops' own rules. A primitive without a rule here runs once per batch
member (``unstack``, the op, ``stack``), which is always correct.
"""

import numpy as np

from ..engine.dispatch import bind
from ..engine.tensor import shape_of
from .batching import ALONG_AXIS, AXIS_DEFAULTS, ELEMENTWISE, REDUCTIONS, STACKED, \
    _batched_index, shift_axis
from .core import broadcast_to, reshape, stack, unstack
from .reduction import sum as reduce_sum
from .shape import transpose


def _shape(a):
    shape = shape_of(a)
    if shape is None or None in shape:
        raise ValueError(f"vmap: an operand has a shape known only at run time ({shape}); "
                         "batching needs static shapes")
    return tuple(shape)


def _core_ndim(a, flag):
    return len(_shape(a)) - 1 if flag else len(_shape(a))


def _apply(prim, args, params):
    return bind(prim, tuple(args), params)


def per_member(prim, args, flags, params, k):
    """The op once per batch member, the results stacked: correct for any op."""
    parts = [unstack(a, axis=0) if f else None for a, f in zip(args, flags)]
    outs = [_apply(prim, [p[j] if f else a for a, p, f in zip(args, parts, flags)], params)
            for j in range(k)]
    if prim.multiple_results:
        return tuple(stack(*column, axis=0) for column in zip(*outs))
    return stack(*outs, axis=0)


def _aligned(args, flags):
    """Batched operands of lower core rank get unit axes behind the batch axis, so that
    broadcasting lines the core axes up as it would without the batch."""
    rank = max(_core_ndim(a, f) for a, f in zip(args, flags))
    out = []
    for a, f in zip(args, flags):
        shape = _shape(a) if f else None
        if f and len(shape) - 1 < rank:
            a = reshape(a, shape=shape[:1] + (1,) * (rank - len(shape) + 1) + shape[1:])
        out.append(a)
    return out


def _elementwise(prim, args, flags, params, k):
    return _apply(prim, _aligned(args, flags), params)


def _reduction(prim, args, flags, params, k):
    (x,) = args
    return _apply(prim, [x], dict(params, axis=shift_axis(params.get("axis"), len(_shape(x)) - 1)))


def _along_axis(prim, args, flags, params, k):
    axis = params.get("axis", AXIS_DEFAULTS.get(prim.name, -1))
    if axis is None:
        return per_member(prim, args, flags, params, k)
    (x,) = args
    return _apply(prim, [x], dict(params, axis=axis % (len(_shape(x)) - 1) + 1))


def _reshape(prim, args, flags, params, k):
    (x,) = args
    shape = params["shape"]
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return reshape(x, shape=(k,) + shape)


def _transpose(prim, args, flags, params, k):
    (x,) = args
    nd = len(_shape(x)) - 1
    axes = params.get("axes")
    core = reversed(range(nd)) if axes is None else (a % nd for a in axes)
    return transpose(x, axes=(0,) + tuple(a + 1 for a in core))


def _getitem(prim, args, flags, params, k):
    index = _batched_index(params["index"])
    if index is None:  # separated advanced indices move their axes to the front
        return per_member(prim, args, flags, params, k)
    return _apply(prim, args, dict(params, index=index))


def _scatter_add(prim, args, flags, params, k):
    index = _batched_index(params["index"])
    if index is None:
        return per_member(prim, args, flags, params, k)
    return _apply(prim, args, dict(params, index=index, shape=(k,) + tuple(params["shape"])))


def _broadcast_to(prim, args, flags, params, k):
    shape = tuple(params["shape"])
    (x,) = args
    sx = _shape(x)
    if len(sx) - 1 < len(shape):
        x = reshape(x, shape=sx[:1] + (1,) * (len(shape) - len(sx) + 1) + sx[1:])
    return broadcast_to(x, shape=(k,) + shape)


def _sum_to(prim, args, flags, params, k):
    (x,) = args
    shape = tuple(params["shape"])
    core = _shape(x)[1:]
    lead = len(core) - len(shape)
    axes = tuple(range(1, 1 + lead)) + tuple(
        1 + lead + i for i, d in enumerate(shape) if d == 1 and core[lead + i] != 1)
    if axes:
        x = reduce_sum(x, axis=axes, keepdims=True)
    return reshape(x, shape=(k,) + shape)


def _matmul(prim, args, flags, params, k):
    a, b = args
    fa, fb = flags
    na, nb = _core_ndim(a, fa), _core_ndim(b, fb)
    if fa and not fb and nb <= 2:
        return _apply(prim, [a, b], params)  # (k, ..., n, p) @ (p, m) or (p,): one product
    if fb and not fa and na <= 2 and nb == 1:
        # a @ v for k vectors: the rows of V a^T (a vector a: V a)
        return _apply(prim, [b, transpose(a) if na == 2 else a], params)
    if fa and fb and na == nb == 1:
        return reduce_sum(a * b, axis=1)
    # Vectors become matrices (a row on the left, a column on the right), the batched
    # operands' core axes line up behind the batch axis, one broadcast matmul, and the unit
    # axes of the vectors are dropped again.
    if na == 1:
        sa = _shape(a)
        a = reshape(a, shape=sa[:-1] + (1, sa[-1]))
    if nb == 1:
        sb = _shape(b)
        b = reshape(b, shape=sb + (1,))
    a, b = _aligned([a, b], [fa, fb])
    out = _apply(prim, [a, b], params)
    if na == 1 or nb == 1:
        so = _shape(out)
        keep = so[:-2] + ((so[-2],) if na > 1 else ()) + ((so[-1],) if nb > 1 else ())
        out = reshape(out, shape=keep)
    return out


def _einsum(prim, args, flags, params, k):
    spec = params["spec"]
    inputs, out = spec.split("->")
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                  if c not in spec)
    terms = [letter + t if f else t for t, f in zip(inputs.split(","), flags)]
    return _apply(prim, args, dict(params, spec=",".join(terms) + "->" + letter + out))


def _joined(is_concat):
    """concatenate / stack: unbatched members broadcast over the batch; the axis moves."""
    def rule(prim, args, flags, params, k):
        full = [a if f else broadcast_to(a, shape=(k,) + _shape(a)) for a, f in zip(args, flags)]
        out_core_ndim = len(_shape(full[0])) - 1 + (0 if is_concat else 1)
        return _apply(prim, full, dict(params, axis=params.get("axis", 0) % out_core_ndim + 1))
    return rule


def _solve(prim, args, flags, params, k):
    """One matrix and a batch of right-hand sides: more columns of one solve."""
    a, b = args
    if flags[1] and not flags[0] and len(_shape(a)) == 2 and len(_shape(b)) == 3:
        _, n, m = _shape(b)
        columns = reshape(transpose(b, axes=(1, 0, 2)), shape=(n, k * m))
        x = _apply(prim, [a, columns], params)
        return transpose(reshape(x, shape=(n, k, m)), axes=(1, 0, 2))
    return _elementwise(prim, args, flags, params, k)


RULES = {"reshape": _reshape, "transpose": _transpose, "getitem": _getitem,
         "scatter_add": _scatter_add, "broadcast_to": _broadcast_to, "sum_to": _sum_to,
         "matmul": _matmul, "einsum": _einsum, "concatenate": _joined(True),
         "stack": _joined(False), "solve": _solve, "solve_triangular": _solve}
RULES.update((name, _elementwise) for name in ELEMENTWISE | STACKED if name not in RULES)
RULES.update((name, _reduction) for name in REDUCTIONS)
RULES.update((name, _along_axis) for name in ALONG_AXIS)


def has_rule(prim):
    """Whether ``prim`` has a rule here (without one it runs once per batch member)."""
    return prim.builtin and prim.name in RULES


def apply_batched(prim, args, flags, params, k):
    """``prim(*args, **params)`` for a batch of ``k`` members: arguments flagged in ``flags``
    carry a leading batch axis, and so does every result (a tuple for multiple results)."""
    rule = RULES[prim.name] if has_rule(prim) else per_member
    out = rule(prim, args, flags, params, k)
    return out if prim.multiple_results else (out,)
