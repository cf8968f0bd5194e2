"""The typed loop representation of a whole-graph kernel, and its Python text for Numba.

A :class:`Kernel` takes C-contiguous arrays (:class:`~.scalar.Array`; a 0-d one stands for a
scalar and is read once), runs statements and returns arrays and scalars. Statements are loop
nests over static ranges (:class:`For`), scalar assignments and accumulations, stores into
arrays at affine indices, allocations of zeroed or uninitialized buffers, and reshapes of a
buffer (the same memory). Expressions are :mod:`.scalar`'s typed trees. Two back ends consume
it: :func:`python_source` (Numba compiles the text; it is also the kernel's cache key) and
:mod:`.native` (LLVM IR through llvmlite); they compute the same IEEE operations in the same
order, so their results have the same bits.
"""

from .scalar import BOOL


class Assign:
    """``var = value`` (a :class:`~.scalar.Var`)."""

    __slots__ = ("var", "value")

    def __init__(self, var, value):
        self.var, self.value = var, value

    def lines(self):
        return [f"{self.var.name} = {self.value.py()}"]


class AddTo:
    """``target += value``: a scalar :class:`~.scalar.Var` or an array element
    (:class:`~.scalar.Load`)."""

    __slots__ = ("target", "value")

    def __init__(self, target, value):
        self.target, self.value = target, value

    def lines(self):
        return [f"{self.target.py()} += {self.value.py()}"]


class Store:
    """``target = value`` into an array element (a :class:`~.scalar.Load` as the place)."""

    __slots__ = ("target", "value")

    def __init__(self, target, value):
        self.target, self.value = target, value

    def lines(self):
        return [f"{self.target.py()} = {self.value.py()}"]


class For:
    """``for var in range(n): body``."""

    __slots__ = ("var", "n", "body")

    def __init__(self, var, n, body):
        self.var, self.n, self.body = var, int(n), list(body)

    def lines(self):
        return [f"for {self.var} in range({self.n}):"] + \
            ["    " + line for s in self.body for line in s.lines()]


class Alloc:
    """A new buffer for ``array``, zero-filled or not."""

    __slots__ = ("array", "zero")

    def __init__(self, array, zero):
        self.array, self.zero = array, zero

    def lines(self):
        dtype = "np.bool_" if self.array.dtype == BOOL else "np.float64"
        return [f"{self.array.name} = {'np.zeros' if self.zero else 'np.empty'}"
                f"({self.array.shape!r}, {dtype})"]


class Reshape:
    """``array`` is the (C-contiguous) buffer ``base`` seen with another shape."""

    __slots__ = ("array", "base")

    def __init__(self, array, base):
        self.array, self.base = array, base

    def lines(self):
        return [f"{self.array.name} = {self.base.name}.reshape({self.array.shape!r})"]


def nest(shape, index, body):
    """``body`` inside loops over ``shape`` with the variables ``index``."""
    for var, n in reversed(list(zip(index, shape))):
        body = [For(var, n, body)]
    return body


class Kernel:
    """``kernel(*params) -> results``: ``params`` arrays, ``body`` statements, ``results``
    arrays or scalar variables."""

    def __init__(self, params, body, results):
        self.params, self.body, self.results = list(params), list(body), list(results)


def python_source(kernel):
    """The kernel as a Numba module (the text Numba compiles and the back ends' cache key)."""
    lines = ["import math", "import numpy as np", "from numba import njit",
             "from hessgrad.kernels import scalar as _k", "", "",
             '@njit(cache=True, error_model="numpy")',
             f"def kernel({', '.join(p.name for p in kernel.params)}):"]
    lines += ["    " + line for s in kernel.body for line in s.lines()]
    lines.append("    return (" + "".join(f"{r.name}, " for r in kernel.results) + ")")
    return "\n".join(lines) + "\n"
