"""Typed scalar expressions: what a generated loop computes per element.

A primitive's scalar form (``prim.lowering.scalar``, see :mod:`hessgrad.engine.facts`) is
called with these expressions as its operands and builds one with Python's operators and the
facts module's helpers. Kernel generators (fused loops, row kernels, whole-graph kernels) read
operands as :class:`Const`, :class:`Var` or :class:`Load` (an array element at an affine
index) and write the result's Python text (``py()``); the whole-graph kernel's LLVM back end
(:mod:`.native`) lowers the same trees.

Types follow Numba's: float64, bool, and the integer that Python's arithmetic makes of two
booleans (which only the Python back end computes).
"""

import math

import numpy as np

from ..kernels import scalar as helpers
from .ir import known

F64, BOOL, INT = np.dtype(np.float64), np.dtype(np.bool_), "int"
# calls whose result is a boolean
PREDICATES = (math.isnan, math.isinf, math.isfinite)


class Expr:
    """A typed scalar expression; Python's operators build larger ones (the methods below
    are the protocol of :mod:`hessgrad.engine.facts`' helpers)."""

    __slots__ = ("type",)
    __hash__ = object.__hash__

    def __neg__(self):
        return Unary("-", self)

    def __pos__(self):
        return Unary("+", self)

    def compare(self, op, other):
        return Binary(op, self, other)

    def select(self, yes, no):
        return Select(self, yes, no)

    def apply(self, fn, args):
        return Call(fn, args)

    def logical_not(self):
        return Unary("not ", self)


def _operator(op, reflected):
    if reflected:
        return lambda self, other: Binary(op, other, self)
    return lambda self, other: Binary(op, self, other)


for _op, _method, _reflected in (("+", "__add__", "__radd__"), ("-", "__sub__", "__rsub__"),
                                 ("*", "__mul__", "__rmul__"), ("/", "__truediv__",
                                 "__rtruediv__"), ("**", "__pow__", "__rpow__"),
                                 ("<", "__lt__", None), ("<=", "__le__", None),
                                 (">", "__gt__", None), (">=", "__ge__", None)):
    setattr(Expr, _method, _operator(_op, False))
    if _reflected:
        setattr(Expr, _reflected, _operator(_op, True))


def wrap(x):
    return x if isinstance(x, Expr) else Const(x)


def literal(value):
    """A :class:`Const` for a plain scalar constant (a Python or numpy number, a 0-d array of
    an integer, boolean or float64 dtype), or None."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biu":
        value = value.item()  # a 0-d integer or boolean array (``1 - x`` traces one)
    if isinstance(value, (bool, np.bool_)):
        return Const(bool(value))
    if isinstance(value, (int, np.integer)) and abs(int(value)) < 2**53:
        return Const(int(value))
    if isinstance(value, (float, np.float64)) or (
            isinstance(value, np.ndarray) and value.shape == () and value.dtype == F64):
        return Const(float(value))
    return None


class Const(Expr):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value
        self.type = BOOL if isinstance(value, bool) else F64

    def py(self):
        x = self.value
        if isinstance(x, (bool, int)) or math.isfinite(x):
            return repr(x)
        return "math.nan" if x != x else ("math.inf" if x > 0 else "-math.inf")

    def as_float(self):
        return Const(float(self.value)) if type(self.value) is int else self


class Var(Expr):
    """A named scalar (a local of the kernel, a 0-d operand passed as a number) or, in the
    kernels only Numba compiles (fused loops, row kernels), any operand's text."""

    __slots__ = ("name",)

    def __init__(self, name, type=F64):
        self.name, self.type = name, type

    def py(self):
        return self.name


class Affine:
    """An integer index ``offset + sum(coef * var)`` over loop variables (by name)."""

    __slots__ = ("terms", "offset")

    def __init__(self, terms=(), offset=0):
        self.terms, self.offset = tuple(terms), int(offset)

    @staticmethod
    def of(x):
        return x if isinstance(x, Affine) else Affine((), x) if isinstance(x, int) else \
            Affine(((x, 1),))

    def __add__(self, other):
        other = Affine.of(other)
        return Affine(self.terms + other.terms, self.offset + other.offset)

    __radd__ = __add__

    def __mul__(self, k):
        return Affine(tuple((v, c * k) for v, c in self.terms), self.offset * k)

    __rmul__ = __mul__

    def key(self):
        return self.terms, self.offset

    def py(self):
        parts = [v if c == 1 else f"{c} * {v}" for v, c in self.terms]
        if self.offset or not parts:
            parts.insert(0, str(self.offset))
        return " + ".join(parts)


class Array:
    """A C-contiguous array a kernel reads or writes: its name, shape and dtype."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), np.dtype(dtype)

    def strides(self):
        out, step = [], 1
        for n in reversed(self.shape):
            out.append(step)
            step *= n
        return tuple(reversed(out))


class Load(Expr):
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, tuple(Affine.of(i) for i in index)
        self.type = array.dtype

    def py(self):
        return f"{self.array.name}[{', '.join(i.py() for i in self.index) or '()'}]"


COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


class Unary(Expr):
    """``-x``, ``+x`` or ``not x``."""

    __slots__ = ("op", "x")

    def __init__(self, op, x):
        self.op, self.x = op, wrap(x)
        self.type = BOOL if op == "not " else INT if self.x.type == BOOL else F64

    def py(self):
        return f"({self.op}{self.x.py()})"


class Binary(Expr):
    """Arithmetic (``**`` is C's pow() of two floats, as numpy's power) or a comparison."""

    __slots__ = ("op", "x", "y")

    def __init__(self, op, x, y):
        x, y = wrap(x), wrap(y)
        if op == "**":
            x, y = (e.as_float() if isinstance(e, Const) else e for e in (x, y))
        self.op, self.x, self.y = op, x, y
        self.type = BOOL if op in COMPARISONS else \
            INT if x.type == BOOL and y.type == BOOL else F64

    def py(self):
        return f"({self.x.py()} {self.op} {self.y.py()})"


class Select(Expr):
    __slots__ = ("test", "yes", "no")

    def __init__(self, test, yes, no):
        self.test, self.yes, self.no = wrap(test), wrap(yes), wrap(no)
        self.type = self.yes.type if self.yes.type == self.no.type else F64

    def py(self):
        return f"({self.yes.py()} if {self.test.py()} else {self.no.py()})"


class Call(Expr):
    """``fn(*args)``: a ``math`` function, ``abs``, or a helper of
    :mod:`hessgrad.kernels.scalar` (``_k`` in kernel text)."""

    __slots__ = ("fn", "args")

    def __init__(self, fn, args):
        self.fn, self.args = fn, tuple(wrap(a) for a in args)
        self.type = BOOL if fn in PREDICATES else F64

    def py(self):
        module = getattr(self.fn, "__module__", None)
        prefix = "math." if module == "math" else "_k." if module == helpers.__name__ else ""
        return f"{prefix}{self.fn.__name__}({', '.join(a.py() for a in self.args)})"


def scalar_form(prim, operands):
    """The expression of ``prim`` applied to ``operands`` (expressions), from its declared
    scalar form; None when it has none for so many operands."""
    low = prim.lowering
    if low.scalar is None or (low.arity is not None and low.arity != len(operands)):
        return None
    return low.scalar(*operands)


def scalar_op(prog, op):
    """True when ``op`` has a scalar form for its operands, over float64/bool values (and
    scalar or float64/bool constants; literal ones where the form says so), that a
    generated loop can compute one element at a time."""
    low = op.prim.lowering
    if low.scalar is None or op.multi or op.params or \
            (low.arity is not None and len(op.args) != low.arity):
        return False
    out = op.outs[0]
    if not known(prog.shape(out)) or prog.dtype(out) not in (F64, BOOL):
        return False
    for j, a in enumerate(op.args):
        if a in prog.consts:
            value = prog.consts[a]
            if literal(value) is None and (j in low.literal or not (
                    isinstance(value, np.ndarray) and value.dtype in (F64, BOOL))):
                return False
        elif j in low.literal or not known(prog.shape(a)) or \
                prog.dtype(a) not in (F64, BOOL):
            return False
    return True


# Python operators that numpy scalars compute with the ufunc's own loop: on 0-d integers (a
# loop's counter and its condition) generated code uses them, ten times faster than a call.
INTEGER_OPERATORS = {"+": "iu", "-": "iu", "*": "iu", "<": "iub", "<=": "iub", ">": "iub",
                     ">=": "iub", "==": "iub", "!=": "iub"}


def python_operator(prim):
    """``(operator, dtype kinds it applies to)`` when ``prim``'s scalar form on two operands
    is one Python operator of :data:`INTEGER_OPERATORS` applied to them in order, else None."""
    x, y = Var("x"), Var("y")
    e = scalar_form(prim, (x, y))
    if isinstance(e, Binary) and e.x is x and e.y is y and e.op in INTEGER_OPERATORS:
        return e.op, INTEGER_OPERATORS[e.op]
    return None
