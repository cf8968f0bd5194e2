"""Flatten and rebuild nested structures (lists, tuples, dicts) of tensors."""

from .tensor import Written, current


def flatten(structure, as_written=True):
    """Leaves of a nested list/tuple/dict structure, dicts in sorted-key order.

    A tensor written in place is taken for its newest value (``tensor.current``): a
    function's results, a loop body's, fetches, targets mean the value they have now. With
    ``as_written=False`` the leaves are the objects themselves (sources of derivatives, which
    mean the value they had when watched).
    """
    leaves = []
    stack = [structure]
    while stack:
        s = stack.pop()
        if isinstance(s, (list, tuple)):
            stack.extend(reversed(s))
        elif isinstance(s, dict):
            stack.extend(s[k] for k in reversed(sorted(s)))
        elif as_written and type(s) is Written:
            leaves.append(current(s))
        else:
            leaves.append(s)
    return leaves


def pack_as(structure, leaves):
    """Rebuild ``structure`` with its leaves replaced, in :func:`flatten` order."""
    return _build(structure, iter(leaves))


def _build(s, it):
    # A module-level function, not a closure that calls itself: such a closure is a
    # reference cycle, which would keep the leaves (often large arrays) alive until the
    # garbage collector runs.
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*[_build(x, it) for x in s])
    if isinstance(s, (list, tuple)):
        return type(s)([_build(x, it) for x in s])
    if isinstance(s, dict):
        rebuilt = {k: _build(s[k], it) for k in sorted(s)}
        return type(s)((k, rebuilt[k]) for k in s)
    return next(it)


def structure_key(structure, leaves=None):
    """A hashable description of a nested structure without its leaves (pass them if they
    were flattened already): structures with the same key flatten and pack alike."""
    n = len(flatten(structure) if leaves is None else leaves)
    return repr(pack_as(structure, [0] * n))


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))
