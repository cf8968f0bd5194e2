"""A small least-recently-used table of per-function state (traces, compiled programs).

``hessian(f)(x)`` and ``HessianOperator(f, x)`` are often written inline in a loop, building
a new transform of the same ``f`` every time; keyed on ``f`` (and the options), they find the
traces and compiled programs of the previous calls. Bounded, because each entry keeps its
``f`` (and whatever it closes over) alive.
"""

from collections import OrderedDict


class Recent:
    def __init__(self, size=16):
        self.size = size
        self._table = OrderedDict()

    def get(self, key, make):
        """The value stored under ``key``, else ``make()`` (stored); unhashable keys (e.g. a
        callable object that defines ``__eq__`` without ``__hash__``) are not stored."""
        try:
            value = self._table.pop(key, None)
        except TypeError:
            return make()
        if value is None:
            value = make()
        self._table[key] = value
        while len(self._table) > self.size:
            self._table.popitem(last=False)
        return value
