"""Batching rules shared by the op families (see :mod:`hessgrad.engine.batching`).

A rule ``rule(prim, args, flags, params, k)`` computes ``prim`` on arguments of which those
flagged in ``flags`` carry a leading batch axis of length ``k``, by binding ops, so the result
has the batch axis and derivatives of every order. An op declares its rule with it
(``primitive(..., batch=rule)``); the families' rules are here: ops that broadcast their
operands or treat leading axes as a stack (:func:`aligned`), reductions over an ``axis``
(:func:`reduction`), ops along one axis (:func:`along_axis`) and joins (:func:`joined`). Ops
with a rule of their own (reshape, getitem, matmul, ...) declare it in their file.
"""

import numpy as np

from ..engine.batching import broadcast, per_member
from ..engine.dispatch import bind
from ..engine.registry import CONCATENATE, RESHAPE
from ..engine.state import THREAD
from ..engine.tensor import shape_of


def static_shape(a):
    """``a``'s shape, which batching needs to know."""
    shape = shape_of(a)
    if shape is None or None in shape:
        raise ValueError(f"vmap: an operand has a shape known only at run time ({shape}); "
                         "batching needs static shapes")
    return tuple(shape)


def core_ndim(a, flag):
    """The rank of ``a`` without its batch axis (when ``flag``)."""
    return len(static_shape(a)) - 1 if flag else len(static_shape(a))


def align(args, flags):
    """Batched operands of lower core rank get unit axes behind the batch axis, so that
    broadcasting lines the core axes up as it would without the batch."""
    rank = max(core_ndim(a, f) for a, f in zip(args, flags))
    out = []
    for a, f in zip(args, flags):
        shape = static_shape(a) if f else None
        if f and len(shape) - 1 < rank:
            a = bind(RESHAPE.prim, (a,),
                     {"shape": shape[:1] + (1,) * (rank - len(shape) + 1) + shape[1:]})
        out.append(a)
    return out


def aligned(prim, args, flags, params, k):
    """Elementwise ops (numpy broadcasting), and ops that treat leading axes as a stack
    (linear algebra on ``(..., m, n)``): the batch axis is one more leading axis, in front of
    the aligned core axes."""
    if THREAD.state.plain_values:
        return _aligned_values(prim, args, flags, params)
    return bind(prim, tuple(align(args, flags)), params)


def _aligned_values(prim, args, flags, params):
    """:func:`aligned` on numpy values (a plan's batched run): the forward called directly,
    without a dispatch per operand -- a batched run of many small ops is made of these."""
    rank = max(np.ndim(a) - f for a, f in zip(args, flags))
    values = [a.reshape(a.shape[:1] + (1,) * (rank - a.ndim + 1) + a.shape[1:])
              if f and a.ndim - 1 < rank else a for a, f in zip(args, flags)]
    try:
        return prim.eager_forward(*values, **params)
    except Exception:  # noqa: BLE001 - again through the checked forward, naming the op
        return prim.forward(*values, **params)


def shift_axis(axis, ndim):
    """Axes of a batched array for core ``axis`` (None means all core axes; a 0-d core has
    none, though numpy accepts ``axis=0`` or ``-1`` for it)."""
    return tuple(a + 1 for a in _axes(axis, ndim)) if ndim else ()


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def reduction(prim, args, flags, params, k):
    """Reductions over ``axis`` (None: all): the core axes move behind the batch axis."""
    (x,) = args
    return bind(prim, (x,), dict(params, axis=shift_axis(params.get("axis"),
                                                        len(static_shape(x)) - 1)))


def along_axis(default=-1):
    """The rule of ops along one integer ``axis`` (cumsum, sort, argmax; ``default`` when the
    node has none) of operands of one shape (a recurrence's, a permutation's): that axis
    moves behind the batch axis, unbatched operands are broadcast over the batch.
    ``axis=None`` (flatten first) runs once per member."""
    def rule(prim, args, flags, params, k):
        axis = params.get("axis", default)
        if axis is None:
            return per_member(prim, args, flags, params, k)
        ndim = core_ndim(args[0], flags[0])
        full = [a if f else broadcast(a, k) for a, f in zip(args, flags)]
        return bind(prim, tuple(full), dict(params, axis=axis % ndim + 1))
    return rule


def joined(prim, args, flags, params, k):
    """concatenate / stack: unbatched members are broadcast over the batch; the axis moves
    behind the batch axis."""
    full = [a if f else broadcast(a, k) for a, f in zip(args, flags)]
    out_core_ndim = len(static_shape(full[0])) - 1 + (0 if prim is CONCATENATE.prim else 1)
    return bind(prim, tuple(full), dict(params, axis=params.get("axis", 0) % out_core_ndim + 1))


def new_letter(spec):
    """A subscript letter that ``spec`` (an einsum spec) does not use, for the batch axis."""
    return next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                if c not in spec)


def batched_index(index):
    """``index`` applied behind a batch axis, or None where numpy would move the advanced
    axes to the front (separated advanced indices): the op then runs per member."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [isinstance(p, (np.ndarray, list)) and np.ndim(p) > 0 for p in parts]
    # beside an array index numpy counts an integer as advanced too (x[1, :, idx] has its
    # advanced axes separated, so they move to the front)
    advanced = [i for i, p in enumerate(parts) if arrays[i] or any(arrays) and isinstance(
        p, (int, np.integer, np.ndarray)) and not isinstance(p, (bool, np.bool_))]
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return None
    return (slice(None),) + parts
