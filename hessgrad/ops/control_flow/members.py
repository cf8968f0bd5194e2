"""Which members of a batch a batched loop or branch still runs, and the helpers its batching
rules share (see :mod:`.loops`'s and :mod:`.branches`'s rules): a loop whose predicate is
batched runs its body on the whole batch while any member's predicate holds; members whose
predicate is false keep their state and are *inactive* while the body runs -- the TensorArray
writes of the body skip them (they write in place), reads do not check their indices.
"""

import threading

import numpy as np

_LOCAL = threading.local()


def active_members():
    """The (k,) boolean mask of the batch members an enclosing batched loop or branch still
    runs, or None when all do."""
    return getattr(_LOCAL, "mask", None)


class Masked:
    """Context in which only the members flagged in ``mask`` are active (None: all)."""

    __slots__ = ("mask", "saved")

    def __init__(self, mask):
        self.mask = mask

    def __enter__(self):
        self.saved = getattr(_LOCAL, "mask", None)
        _LOCAL.mask = self.mask

    def __exit__(self, *exc):
        _LOCAL.mask = self.saved


class Unbatchable(Exception):
    """Batched values that cannot be combined (members' shapes differ): run per member."""


def batch_size(args, flags):
    return next(len(a) for a, f in zip(args, flags) if f)


def batched(value, k, copy=False):
    """``value`` with a leading batch axis of length ``k`` (a read-only view unless ``copy``:
    a TensorArray buffer is written in place)."""
    value = np.asarray(value)
    out = np.broadcast_to(value, (k,) + value.shape)
    return np.array(out) if copy else out


def _pad_rows(a, rows):
    """``a`` (batched) with zero rows appended along axis 1 up to ``rows`` (a grown buffer)."""
    if a.shape[1] == rows:
        return a
    return np.concatenate([a, np.zeros((a.shape[0], rows - a.shape[1]) + a.shape[2:],
                                       a.dtype)], axis=1)


def select(mask, new, old):
    """Per member: ``new`` where ``mask``, else ``old`` (both batched). Buffers that grew in
    one of them are padded; other shapes must agree."""
    if new is old:
        return new
    if new.shape != old.shape:
        if new.ndim != old.ndim or new.ndim < 2 or new.shape[2:] != old.shape[2:]:
            raise Unbatchable(f"shapes {new.shape[1:]} and {old.shape[1:]} per member")
        rows = max(new.shape[1], old.shape[1])
        new, old = _pad_rows(new, rows), _pad_rows(old, rows)
    return np.where(mask.reshape(mask.shape + (1,) * (new.ndim - 1)), new, old)
