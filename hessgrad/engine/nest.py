"""Flatten and rebuild nested structures (lists, tuples, dicts) of tensors."""


def flatten(structure):
    """Leaves of a nested list/tuple/dict structure, dicts in sorted-key order."""
    leaves = []
    stack = [structure]
    while stack:
        s = stack.pop()
        if isinstance(s, (list, tuple)):
            stack.extend(reversed(s))
        elif isinstance(s, dict):
            stack.extend(s[k] for k in reversed(sorted(s)))
        else:
            leaves.append(s)
    return leaves


def pack_as(structure, leaves):
    """Rebuild ``structure`` with its leaves replaced, in :func:`flatten` order."""
    it = iter(leaves)

    def build(s):
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(x) for x in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        if isinstance(s, dict):
            rebuilt = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, rebuilt[k]) for k in s)
        return next(it)

    return build(structure)


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))
