"""What the compiler knows about a primitive, declared with it: how to lower it
(:class:`Lowering`) and the algebra its rewrites may use (:class:`Algebra`).

The compiler (:mod:`hessgrad.compiler`) reads ``prim.lowering`` and ``prim.algebra`` and names
no op. A *scalar form* is a function of operand expressions that returns the result's
expression, written with Python's arithmetic and comparison operators and the helpers below
(``lambda x, y: x + y``, ``lambda x: call(math.sin, x)``); the compiler calls it with its own
typed expressions, so an op file needs nothing from the compiler.
"""

import inspect


def call(fn, *args):
    """``fn`` applied to the operand expressions ``args``: a ``math`` function, ``abs``, or a
    helper of :mod:`hessgrad.kernels.scalar` (the back ends know how to emit each)."""
    return args[0].apply(fn, args)


def select(cond, yes, no):
    """``yes`` where ``cond`` holds, else ``no``."""
    return cond.select(yes, no)


def eq(a, b):
    """``a == b`` (an expression; ``==`` itself stays Python's identity test)."""
    return a.compare("==", b)


def ne(a, b):
    """``a != b``, true for NaN."""
    return a.compare("!=", b)


def logical_not(x):
    return x.logical_not()


class Lowering:
    """How the compiler emits a primitive.

    Attributes:
        scalar: the scalar form (see the module): what a generated loop computes per element;
            None when the op is not elementwise.
        arity: operands the scalar form takes (None: any number), from its signature.
        literal: positions of operands that must be literal constants for the scalar form.
        call: the function generated code calls with ``out=`` (a numpy ufunc, or a stand-in
            that takes ``out``): its array results are fresh buffers.
        simd: numpy's loop (SIMD transcendentals) beats a scalar loop's libm calls, so fused
            loops leave the op to numpy and whole-graph kernels stay small around it.
        fresh: array results are buffers this op makes (generated code may write into them
            once nothing else reads them).
        no_alias: results never share memory with an operand.
        array_0d: a 0-d result is a 0-d array (numpy's ufuncs give numpy scalars).
        specialize: ``specialize(*shapes, *dtypes)``: the plain function to call when every
            operand's shape and dtype are known at trace time (checked there).
    """

    __slots__ = ("scalar", "arity", "literal", "call", "simd", "fresh", "no_alias", "array_0d",
                 "specialize")

    def __init__(self, scalar=None, *, literal=(), call=None, simd=False, fresh=False,
                 no_alias=False, array_0d=False, specialize=None):
        self.scalar = scalar
        self.arity = None if scalar is None else _arity(scalar)
        self.literal = tuple(literal)
        self.call = call
        self.simd = simd
        self.fresh = fresh or call is not None
        self.no_alias = no_alias or self.fresh
        self.array_0d = array_0d
        self.specialize = specialize

    def with_call(self, call):
        """This lowering with ``call`` where it has none (a family's default)."""
        if self.call is not None or call is None:
            return self
        out = Lowering.__new__(Lowering)
        for name in Lowering.__slots__:
            setattr(out, name, getattr(self, name))
        out.call, out.fresh, out.no_alias = call, True, True
        return out

    def __repr__(self):
        facts = [n for n in ("simd", "fresh", "no_alias", "array_0d") if getattr(self, n)]
        return f"<Lowering scalar={self.scalar is not None} {' '.join(facts)}>"


def _arity(fn):
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return len(params)


class Algebra:
    """Facts the optimizer's generic rewrites use (each one exact).

    Attributes:
        elementwise: applied element by element (a constant operand holding one value may
            become a scalar).
        unit: the identity element: an operand equal to it everywhere is dropped (``x * 1``,
            ``x + 0``, zeros in a sum), at the positions ``unit_at`` (None: any).
        involution: the op applied to its own result gives the operand back (``-(-x)``).
        compose: ``compose(inner_params, outer_params, operand_shape)``: the params of one op
            equal to this op applied to its own result (transpose of transpose), or None.
        noop: the op returns its operand when the result has the operand's type; a function
            ``noop(params, operand_shape)`` says for which params (a transpose by the identity
            permutation).
        fill_value: the result is this value everywhere, of the result's type (``ones_like``).
        forwards: the result is the first operand (``identity``, ``stop_gradient``).
    """

    __slots__ = ("elementwise", "unit", "unit_at", "involution", "compose", "noop", "fill_value",
                 "forwards")

    def __init__(self, *, elementwise=False, unit=None, unit_at=None, involution=False,
                 compose=None, noop=False, fill_value=None, forwards=False):
        self.elementwise = elementwise
        self.unit = unit
        self.unit_at = None if unit_at is None else tuple(unit_at)
        self.involution = involution
        self.compose = compose
        self.noop = noop
        self.fill_value = fill_value
        self.forwards = forwards

    def with_elementwise(self):
        out = Algebra.__new__(Algebra)
        for name in Algebra.__slots__:
            setattr(out, name, getattr(self, name))
        out.elementwise = True
        return out


NO_LOWERING = Lowering()
NO_ALGEBRA = Algebra()
