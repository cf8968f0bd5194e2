"""Reductions as sums accumulated in their operand's loop, registered per primitive: for each
axis of the result, the loop axis it comes from (None: a unit axis), and whether the sum is
then divided by the count (a mean). Fused kernels and whole-graph kernels both read them."""

import numpy as np

from ..engine.registry import SUM_TO
from ..ops import reduction
from .ir import known

_F64 = np.dtype(np.float64)
_KEPT = {}  # primitive -> (kept(shape, out_shape, params) -> list, divides)


def _over_axes(shape, out_shape, params):
    if set(params) - {"axis", "keepdims"}:
        return None
    nd = len(shape)
    axis = params.get("axis")
    axes = range(nd) if axis is None or not nd else \
        [a % nd for a in (axis if isinstance(axis, tuple) else (axis,))]  # 0-d: axis 0 is ()
    keep = params.get("keepdims", False)
    return [None if d in axes else d for d in range(nd) if keep or d not in axes]


def _summed_to(shape, out_shape, params):
    lead = len(shape) - len(out_shape)
    return [None if d == 1 and shape[lead + j] != 1 else lead + j
            for j, d in enumerate(out_shape)]


_KEPT[reduction.sum.primitive] = (_over_axes, False)
_KEPT[reduction.mean.primitive] = (_over_axes, True)
_KEPT[SUM_TO.prim] = (_summed_to, False)


def reduced(prog, op):
    """``(kept, divides)`` for a float64 reduction of a known float64 operand: the loop axis
    (or None) behind each axis of the result, and whether the sum is divided by the count;
    None for another op."""
    entry = _KEPT.get(op.prim)
    if entry is None or op.multi or len(op.args) != 1:
        return None
    x, out = op.args[0], op.outs[0]
    shape, out_shape = prog.shape(x), prog.shape(out)
    if not (known(shape) and known(out_shape)) or prog.dtype(x) != _F64 or \
            prog.dtype(out) != _F64:
        return None
    kept = entry[0](shape, out_shape, op.params)
    return None if kept is None else (kept, entry[1])
