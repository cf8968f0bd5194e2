"""Basic numpy indices (integers, slices, None, Ellipsis) as loop index maps, for the kernel
generators and the rewrites that read ``getitem`` and ``scatter_add`` params."""

import numpy as np

from .scalar import Affine


def is_basic(index):
    """Integers, slices, None and Ellipsis only (no arrays, no booleans)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, slice) or
               (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))
               for p in parts)


def slice_ranges(index, shape):
    """``(start, stop, step)`` per axis of ``shape`` for a basic index made of slices only;
    None for another index."""
    parts = list(index) if isinstance(index, tuple) else [index]
    if len(parts) > len(shape) or not all(isinstance(p, slice) for p in parts):
        return None
    parts += [slice(None)] * (len(shape) - len(parts))
    return tuple(p.indices(n) for p, n in zip(parts, shape))


class OutOfRange(Exception):
    """An integer of a basic index is out of range for its axis."""


def basic_index(index, shape):
    """(shape of ``x[index]``, map from its element index (:class:`~.scalar.Affine`, one per
    axis) to the element of ``x``) for a basic index; raises :class:`OutOfRange`."""
    parts = list(index) if isinstance(index, tuple) else [index]
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        fill = len(shape) - sum(p is not None for p in parts if p is not Ellipsis)
        parts[at:at + 1] = [slice(None)] * fill
    parts += [slice(None)] * (len(shape) - sum(p is not None for p in parts))
    result, plan, d = [], [], 0
    for p in parts:
        if p is None:
            result.append(1)
            plan.append(None)
            continue
        n = shape[d]
        if isinstance(p, slice):
            start, stop, step = p.indices(n)
            result.append(len(range(start, stop, step)))
            plan.append((start, step))
        else:
            if not -n <= p < n:
                raise OutOfRange(f"index {p} out of range for size {n}")
            plan.append(int(p) % n)
        d += 1

    def imap(idx):
        base, out = [], iter(idx)
        for step in plan:
            if step is None:
                next(out)
            elif isinstance(step, int):
                base.append(Affine.of(step))
            else:
                start, stride = step
                base.append(Affine.of(next(out)) * stride + start)
        return base
    return tuple(result), imap
