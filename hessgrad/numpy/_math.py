"""Elementwise math with numpy's names and signatures (ufuncs and a few functions).

Each ufunc here takes its inputs positionally like numpy's and accepts numpy's keywords:
``dtype=`` casts the inputs (checked with ``casting``, ``"same_kind"`` by default) as numpy
does; ``out=`` writes the result into an existing array, in place (``hessgrad.numpy._out``),
and ``where=`` then leaves ``out`` as it was where the mask is False (without ``out`` the
masked result would be partly uninitialised: refused, use ``hessgrad.numpy.where``).
``ufunc.at(a, indices, b)`` updates ``a`` in place, unbuffered, as numpy's.
Broadcasting and dtype promotion are numpy's own: the primitives run numpy on the values.
"""

import functools as _functools
import inspect as _inspect

import numpy as _np

from ..engine.dispatch import bind_eager as _bind_eager
from ..engine.tensor import Tensor as _Tensor, current as _current, dtype_of as _dtype_of
from ..ops import core as _core, elementwise as _ew, inplace as _ip
from ._out import single_out as _single_out, write_out as _write_out
from ._arraylike import any_sequence as _any_sequence, asarray as _asarray, \
    has_tensor as _has_tensor, stacked as _stacked, stacked_args as _stacked_args



class _NoValueType:
    def __repr__(self):
        return "<no value>"


_NoValue = _NoValueType()  # "not given" (None means "no bound" in clip)


def _reject_out(name, out):
    """For the few functions that take no ``out=`` (frexp, modf, the Fourier transforms)."""
    if out is not None:
        raise TypeError(
            f"hessgrad.numpy.{name}: out= is not supported here; use the return value, e.g. "
            f"`y = hnp.{name}(...)` (or write it into an array: `out[...] = y`)")


def _reject_where(name, where, out=None):
    if where is not True and out is None:
        raise TypeError(
            f"hessgrad.numpy.{name}: where= without out= is not supported (it leaves the "
            f"masked entries of the result uninitialised). Pass out=, or compute everywhere "
            f"and select with `hnp.where(mask, hnp.{name}(...), other)`.")


def _cast_inputs(name, args, dtype, casting):
    """numpy's ``dtype=``: every input cast to ``dtype``, allowed by the ``casting`` rule."""
    dtype = _np.dtype(dtype)
    out = []
    for k, a in enumerate(args):
        source = _dtype_of(a)
        if not _np.can_cast(source, dtype, casting):
            raise TypeError(
                f"hessgrad.numpy.{name}: cannot cast input {k} from {source} to {dtype} "
                f"with casting rule {casting!r}")
        if isinstance(a, _Tensor):
            out.append(a if a.dtype == dtype else _core.cast(a, dtype=dtype))
        else:
            out.append(_np.asarray(a).astype(dtype))
    return out


def _ufunc(name, op, nin, summary, example):
    """A numpy-compatible ufunc wrapper named ``name`` around the hessgrad op ``op``."""
    prim = getattr(op, "primitive", None)
    boolean = prim is not None and prim.nondiff
    # The common call, inputs and no option, binds the primitive itself (a call layer less).
    common = _functools.partial(_bind_eager, prim) if prim is not None and nin <= 2 else op

    def ufunc(*args, **options):
        if _any_sequence(args):  # array-likes: nested lists holding tensors are stacked
            args = _stacked_args(args, name)
        if not options and len(args) == nin:
            return common(*args)
        return with_options(*args, **options)

    def with_options(*args, out=None, where=True, casting="same_kind", order="K", dtype=None,
                     subok=True, signature=None, **unknown):
        if unknown:
            raise TypeError(f"hessgrad.numpy.{name}() got an unexpected keyword argument "
                            f"{next(iter(unknown))!r}")
        if len(args) == nin + 1:  # numpy accepts ``out`` positionally too
            args, out = args[:nin], args[nin]
        if len(args) != nin:
            raise TypeError(f"hessgrad.numpy.{name}() takes {nin} positional input"
                            f"{'s' if nin > 1 else ''} but {len(args)} were given")
        out = _single_out(name, out)
        _reject_where(name, where, out)
        if signature is not None:
            raise TypeError(f"hessgrad.numpy.{name}: signature= is not supported; use dtype=")
        if dtype is not None:
            if not boolean:
                args = _cast_inputs(name, args, dtype, casting)
            elif _np.dtype(dtype) != _np.bool_:
                raise TypeError(f"hessgrad.numpy.{name}: the result is boolean; dtype= can "
                                f"only be bool, not {_np.dtype(dtype)}")
        if out is None:
            return op(*args)
        return _write_out(name, out, op(*args), casting, where=where)

    inputs = ["x"] if nin == 1 else [f"x{k + 1}" for k in range(nin)]
    params = [_inspect.Parameter(p, _inspect.Parameter.POSITIONAL_ONLY) for p in inputs]
    params.append(_inspect.Parameter("out", _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     default=None))
    params += [_inspect.Parameter(k, _inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in
               (("where", True), ("casting", "same_kind"), ("order", "K"), ("dtype", None),
                ("subok", True), ("signature", None))]
    ufunc.__signature__ = _inspect.Signature(params)
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.nin, ufunc.nout = nin, 1
    ufunc.at = _at(name, op, nin)
    ufunc.__doc__ = _doc(name, summary, example, ", ".join(inputs))
    return ufunc


def _at(name, op, nin):
    def at(a, indices, b=None):
        """numpy's ``ufunc.at``: ``a`` updated in place at ``indices``, unbuffered (a
        position indexed k times is updated k times); returns None."""
        if not isinstance(a, _Tensor):
            if not isinstance(a, _np.ndarray):
                raise TypeError(f"{name}.at: the array written into must be an array, got "
                                f"{type(a).__name__}")
            # numpy's own, given values: refused for a tensor being differentiated
            b = b if b is None or not _has_tensor(b) else _np.asarray(_stacked(b, name))
            if _has_tensor(indices):
                indices = _np.asarray(_stacked(indices, name))
            return getattr(_np, name).at(a, indices, *(() if b is None else (b,)))
        _ip.check_writable(a, f"{name}.at")
        if (b is None) != (nin == 1):
            raise TypeError(f"{name}.at: {'a second operand is' if nin == 2 else 'no second '}"
                            f"{' needed' if nin == 2 else 'operand is taken'} "
                            f"(a {nin}-input ufunc)")
        x = _current(a)
        if name in ("add", "subtract"):
            b = _stacked(b, f"{name}.at", "b")
            new = _ip.added_at(x, indices, b if name == "add" else _ew.negative(b),
                               f"{name}.at")
        else:
            new = _ip.applied_at(x, indices, op, b, f"{name}.at")
        _ip.in_place(a, new, name)
    at.__name__ = at.__qualname__ = "at"
    return at


def _doc(name, summary, example, inputs):
    call, result = example
    return f"""{summary}, elementwise with broadcasting (numpy's ``{name}``).

    Args:
        {inputs}: array-likes or tensors.
        dtype: cast the inputs to this dtype first (as numpy's ufuncs do).
        out: an array to write the result into (in place; returned).
        where: with ``out``, the elements to write (the others keep their values).
    Returns:
        A Tensor with numpy's result shape and dtype.
    Raises:
        ValueError: the inputs cannot be broadcast together.
        TypeError: ``where`` without ``out``, or a ``dtype`` the inputs (or the result, into
            ``out``) cannot be cast to.

    >>> import hessgrad.numpy as hnp
    >>> hnp.{call}.tolist()
    {result}
    """


# name: (op, number of inputs, summary, (example call, its printed result))
_UFUNCS = {
    "add": (_ew.add, 2, "Sum x1 + x2", ("add([1.0, 2.0], 3.0)", "[4.0, 5.0]")),
    "subtract": (_ew.subtract, 2, "Difference x1 - x2",
                 ("subtract([1.0, 2.0], 3.0)", "[-2.0, -1.0]")),
    "multiply": (_ew.multiply, 2, "Product x1 * x2", ("multiply([1.0, 2.0], 3.0)",
                                                      "[3.0, 6.0]")),
    "divide": (_ew.divide, 2, "True division x1 / x2", ("divide([1, 3], 2)", "[0.5, 1.5]")),
    "floor_divide": (_ew.floor_divide, 2, "Floor division x1 // x2 (zero derivative)",
                     ("floor_divide([7.0, -7.0], 2.0)", "[3.0, -4.0]")),
    "negative": (_ew.negative, 1, "Negation -x", ("negative([1.0, -2.0])", "[-1.0, 2.0]")),
    "positive": (_ew.positive, 1, "Identity +x", ("positive([1.0, -2.0])", "[1.0, -2.0]")),
    "power": (_ew.power, 2, "Power x1 ** x2", ("power([2.0, 3.0], 2)", "[4.0, 9.0]")),
    "float_power": (_ew.float_power, 2, "Power x1 ** x2 computed in float64",
                    ("float_power([2, 4], -1)", "[0.5, 0.25]")),
    "square": (_ew.square, 1, "Square x * x", ("square([2.0, -3.0])", "[4.0, 9.0]")),
    "sqrt": (_ew.sqrt, 1, "Square root", ("sqrt([4.0, 9.0])", "[2.0, 3.0]")),
    "cbrt": (_ew.cbrt, 1, "Cube root", ("cbrt([8.0, -27.0]).round(12)", "[2.0, -3.0]")),
    "reciprocal": (_ew.reciprocal, 1, "Reciprocal 1 / x", ("reciprocal([2.0, 4.0])",
                                                            "[0.5, 0.25]")),
    "exp": (_ew.exp, 1, "Exponential e**x", ("exp([0.0])", "[1.0]")),
    "exp2": (_ew.exp2, 1, "Power of two 2**x", ("exp2([3.0, -1.0])", "[8.0, 0.5]")),
    "expm1": (_ew.expm1, 1, "exp(x) - 1, accurate for small x", ("expm1([0.0])", "[0.0]")),
    "log": (_ew.log, 1, "Natural logarithm", ("log([1.0])", "[0.0]")),
    "log2": (_ew.log2, 1, "Base-2 logarithm", ("log2([8.0, 0.5])", "[3.0, -1.0]")),
    "log10": (_ew.log10, 1, "Base-10 logarithm", ("log10([1000.0])", "[3.0]")),
    "log1p": (_ew.log1p, 1, "log(1 + x), accurate for small x", ("log1p([0.0])", "[0.0]")),
    "logaddexp": (_ew.logaddexp, 2, "log(exp(x1) + exp(x2)) without overflow",
                  ("logaddexp([1000.0], [-1000.0])", "[1000.0]")),
    "logaddexp2": (_ew.logaddexp2, 2, "log2(2**x1 + 2**x2) without overflow",
                   ("logaddexp2([1.0], [1.0])", "[2.0]")),
    "sin": (_ew.sin, 1, "Sine", ("sin([0.0])", "[0.0]")),
    "cos": (_ew.cos, 1, "Cosine", ("cos([0.0])", "[1.0]")),
    "tan": (_ew.tan, 1, "Tangent", ("tan([0.0])", "[0.0]")),
    "arcsin": (_ew.arcsin, 1, "Inverse sine", ("arcsin([0.0])", "[0.0]")),
    "arccos": (_ew.arccos, 1, "Inverse cosine", ("arccos([1.0])", "[0.0]")),
    "arctan": (_ew.arctan, 1, "Inverse tangent", ("arctan([0.0])", "[0.0]")),
    "arctan2": (_ew.arctan2, 2, "Angle of the point (x2, x1), quadrant-aware",
                ("arctan2([0.0, 0.0], [1.0, -1.0])", "[0.0, 3.141592653589793]")),
    "sinh": (_ew.sinh, 1, "Hyperbolic sine", ("sinh([0.0])", "[0.0]")),
    "cosh": (_ew.cosh, 1, "Hyperbolic cosine", ("cosh([0.0])", "[1.0]")),
    "tanh": (_ew.tanh, 1, "Hyperbolic tangent", ("tanh([0.0])", "[0.0]")),
    "arcsinh": (_ew.arcsinh, 1, "Inverse hyperbolic sine", ("arcsinh([0.0])", "[0.0]")),
    "arccosh": (_ew.arccosh, 1, "Inverse hyperbolic cosine", ("arccosh([1.0])", "[0.0]")),
    "arctanh": (_ew.arctanh, 1, "Inverse hyperbolic tangent", ("arctanh([0.0])", "[0.0]")),
    "hypot": (_ew.hypot, 2, "Hypotenuse sqrt(x1**2 + x2**2) without overflow",
              ("hypot([3.0], [4.0])", "[5.0]")),
    "deg2rad": (_ew.deg2rad, 1, "Degrees to radians",
                ("deg2rad([180.0])", "[3.141592653589793]")),
    "rad2deg": (_ew.rad2deg, 1, "Radians to degrees", ("rad2deg([3.141592653589793])",
                                                       "[180.0]")),
    "absolute": (_ew.absolute, 1, "Absolute value", ("absolute([-1.5, 2.0])", "[1.5, 2.0]")),
    "fabs": (_ew.fabs, 1, "Absolute value as a float", ("fabs([-1, 2])", "[1.0, 2.0]")),
    "sign": (_ew.sign, 1, "Sign -1, 0 or 1 (zero derivative)",
             ("sign([-2.0, 0.0, 3.0])", "[-1.0, 0.0, 1.0]")),
    "copysign": (_ew.copysign, 2, "Magnitude of x1 with the sign of x2",
                 ("copysign([1.0, 2.0], -1.0)", "[-1.0, -2.0]")),
    "heaviside": (_ew.heaviside, 2, "Step function: 0 below 0, x2 at 0, 1 above",
                  ("heaviside([-1.0, 0.0, 2.0], 0.5)", "[0.0, 0.5, 1.0]")),
    "maximum": (_ew.maximum, 2, "Larger of x1 and x2 (NaN propagates; ties share the "
                                "gradient)", ("maximum([1.0, 5.0], 3.0)", "[3.0, 5.0]")),
    "minimum": (_ew.minimum, 2, "Smaller of x1 and x2 (NaN propagates; ties share the "
                                "gradient)", ("minimum([1.0, 5.0], 3.0)", "[1.0, 3.0]")),
    "fmax": (_ew.fmax, 2, "Larger of x1 and x2, ignoring NaN",
             ("fmax([1.0, float('nan')], 3.0)", "[3.0, 3.0]")),
    "fmin": (_ew.fmin, 2, "Smaller of x1 and x2, ignoring NaN",
             ("fmin([1.0, float('nan')], 3.0)", "[1.0, 3.0]")),
    "remainder": (_ew.remainder, 2, "Remainder with the sign of the divisor (Python's %)",
                  ("remainder([7.0, -7.0], 3.0)", "[1.0, 2.0]")),
    "fmod": (_ew.fmod, 2, "Remainder with the sign of the dividend (C's fmod)",
             ("fmod([7.0, -7.0], 3.0)", "[1.0, -1.0]")),
    "floor": (_ew.floor, 1, "Round down (zero derivative)", ("floor([-1.5, 1.5])",
                                                             "[-2.0, 1.0]")),
    "ceil": (_ew.ceil, 1, "Round up (zero derivative)", ("ceil([-1.5, 1.5])", "[-1.0, 2.0]")),
    "rint": (_ew.rint, 1, "Round to the nearest integer, halves to even (zero derivative)",
             ("rint([0.5, 1.5])", "[0.0, 2.0]")),
    "trunc": (_ew.trunc, 1, "Round towards zero (zero derivative)",
              ("trunc([-1.5, 1.5])", "[-1.0, 1.0]")),
    "sinc": (_ew.sinc, 1, "Normalised sinc sin(pi x) / (pi x), 1 at 0",
             ("sinc([0.0, 0.5])", "[1.0, 0.6366197723675814]")),
    "conjugate": (_ew.conjugate, 1, "Complex conjugate (the identity on real input)",
                  ("conjugate([1.0])", "[1.0]")),
    "isfinite": (_ew.isfinite, 1, "Whether finite (a constant for differentiation)",
                 ("isfinite([1.0, float('inf')])", "[True, False]")),
    "isnan": (_ew.isnan, 1, "Whether NaN (a constant for differentiation)",
              ("isnan([1.0, float('nan')])", "[False, True]")),
    "isinf": (_ew.isinf, 1, "Whether infinite (a constant for differentiation)",
              ("isinf([1.0, float('-inf')])", "[False, True]")),
    "signbit": (_ew.signbit, 1, "Whether the sign bit is set (a constant for "
                                "differentiation)", ("signbit([-0.0, 1.0])", "[True, False]")),
    "logical_and": (_ew.logical_and, 2, "Logical and", ("logical_and([True, False], True)",
                                                        "[True, False]")),
    "logical_or": (_ew.logical_or, 2, "Logical or", ("logical_or([True, False], False)",
                                                     "[True, False]")),
    "logical_xor": (_ew.logical_xor, 2, "Logical exclusive or",
                    ("logical_xor([True, False], True)", "[False, True]")),
    "logical_not": (_ew.logical_not, 1, "Logical not", ("logical_not([True, False])",
                                                        "[False, True]")),
    "less": (_ew.less, 2, "Comparison x1 < x2", ("less([1.0, 2.0], 2.0)", "[True, False]")),
    "less_equal": (_ew.less_equal, 2, "Comparison x1 <= x2",
                   ("less_equal([1.0, 2.0], 2.0)", "[True, True]")),
    "greater": (_ew.greater, 2, "Comparison x1 > x2",
                ("greater([1.0, 3.0], 2.0)", "[False, True]")),
    "greater_equal": (_ew.greater_equal, 2, "Comparison x1 >= x2",
                      ("greater_equal([1.0, 2.0], 2.0)", "[False, True]")),
    "equal": (_ew.equal, 2, "Comparison x1 == x2", ("equal([1.0, 2.0], 2.0)",
                                                    "[False, True]")),
    "not_equal": (_ew.not_equal, 2, "Comparison x1 != x2",
                  ("not_equal([1.0, 2.0], 2.0)", "[True, False]")),
}

for _name, (_op, _nin, _summary, _example) in _UFUNCS.items():
    globals()[_name] = _ufunc(_name, _op, _nin, _summary, _example)
del _name, _op, _nin, _summary, _example


def _divmod_op(x1, x2):
    return _ew.floor_divide(x1, x2), _ew.remainder(x1, x2)


def divmod(x1, x2, out=(None, None), *, where=True, dtype=None,  # noqa: A001 - numpy's name
           casting="same_kind", **kwargs):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` as numpy's ``divmod`` ufunc.

    Args:
        x1, x2: array-likes or tensors (broadcast together).
        dtype: cast the inputs first. ``out``: a pair of arrays to write the results into.
    Returns:
        A pair of Tensors: the floored quotient and the remainder (``out`` if given).
    Raises:
        ValueError: the inputs cannot be broadcast together.

    >>> import hessgrad.numpy as hnp
    >>> [t.tolist() for t in hnp.divmod([7.0, -7.0], 3.0)]
    [[2.0, -3.0], [1.0, 2.0]]
    """
    outs = out if isinstance(out, tuple) else (out, None)
    if len(outs) != 2:
        raise ValueError(f"divmod: out= must hold two arrays, got {len(outs)}")
    _reject_where("divmod", where, None if all(o is None for o in outs) else outs)
    x1, x2 = _stacked_args((x1, x2), "divmod")
    if dtype is not None:
        x1, x2 = _cast_inputs("divmod", (x1, x2), dtype, casting)
    results = _divmod_op(x1, x2)
    if all(o is None for o in outs):
        return results
    return tuple(r if o is None else _write_out("divmod", o, r, casting, where=where)
                 for r, o in zip(results, outs))


divmod.nin, divmod.nout = 2, 2

# numpy's aliases (the array API names of numpy 2 included)
true_divide, mod, abs, conj = divide, remainder, absolute, conjugate  # noqa: F821, A001
degrees, radians = rad2deg, deg2rad  # noqa: F821
acos, asin, atan, atan2 = arccos, arcsin, arctan, arctan2  # noqa: F821
acosh, asinh, atanh, pow = arccosh, arcsinh, arctanh, power  # noqa: F821, A001


def round(a, decimals=0, out=None):  # noqa: A001 - numpy's name
    """Round to ``decimals`` decimal places, halves to even (numpy's ``round``); the
    derivative is zero.

    Args:
        a: array-like or tensor.
        decimals: number of decimal places (negative: to the left of the point).
        out: an array to write the result into (in place; returned).
    Returns:
        A Tensor of ``a``'s shape and dtype.

    >>> import hessgrad.numpy as hnp
    >>> hnp.round([1.25, 2.5, 3.5], 1).tolist()
    [1.2, 2.5, 3.5]
    """
    result = _ew.round(_stacked(a, "round"), decimals=int(decimals))
    return result if out is None else _write_out("round", out, result, "unsafe")


around = round


def fix(x, out=None):
    """Round towards zero (numpy's ``fix``, the same values as ``trunc``); zero derivative.

    >>> import hessgrad.numpy as hnp
    >>> hnp.fix([-2.5, 2.5]).tolist()
    [-2.0, 2.0]
    """
    result = _ew.trunc(_stacked(x, "fix", "x"))
    return result if out is None else _write_out("fix", out, result, "unsafe")


def clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue,  # noqa: A002
         max=_NoValue, dtype=None, where=True, casting="same_kind", **kwargs):  # noqa: A002
    """Limit the values of ``a`` to ``[a_min, a_max]`` (numpy's ``clip``).

    The derivative is 1 with respect to ``a`` where ``a_min <= a <= a_max`` (bounds included)
    and 0 outside; a bound receives the gradient where it is the result.

    Args:
        a: array-like or tensor.
        a_min, a_max: lower and upper bounds (arrays broadcast); None for no bound. ``min``
            and ``max`` are numpy 2's keyword spellings.
        dtype: cast the inputs first. ``out``: an array to write the result into (in place;
            returned), ``where`` (with ``out``) the elements written.
    Returns:
        A Tensor of the broadcast shape.
    Raises:
        ValueError: the bounds are given twice, or the shapes cannot be broadcast together.
        TypeError: ``where`` without ``out``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.clip([-2.0, 0.5, 3.0], -1.0, 1.0).tolist()
    [-1.0, 0.5, 1.0]
    """
    out = _single_out("clip", out)
    _reject_where("clip", where, out)
    a, a_min, a_max, min, max = (_stacked(v, "clip", k) for k, v in (  # noqa: A001
        ("a", a), ("a_min", a_min), ("a_max", a_max), ("min", min), ("max", max)))
    for spelled, alias, label in ((a_min, min, "a_min"), (a_max, max, "a_max")):
        if spelled is not _NoValue and alias is not _NoValue:
            raise ValueError(f"hessgrad.numpy.clip: {label} is given twice (positionally or as "
                             f"{label}= and as {label[2:]}=)")
    lo = a_min if a_min is not _NoValue else (None if min is _NoValue else min)
    hi = a_max if a_max is not _NoValue else (None if max is _NoValue else max)
    if kwargs:
        raise TypeError(f"hessgrad.numpy.clip: unexpected keyword arguments {sorted(kwargs)}")
    if dtype is not None:
        a = _cast_inputs("clip", (a,), dtype, casting)[0]
        lo, hi = [None if b is None else _cast_inputs("clip", (b,), dtype, "unsafe")[0]
                  for b in (lo, hi)]
    result = _ew.clip(a, lo, hi)
    return result if out is None else _write_out("clip", out, result, casting, where=where)


def where(condition, x=_NoValue, y=_NoValue):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (numpy's ``where``).

    The gradient flows to ``x`` where the condition holds and to ``y`` elsewhere; the
    condition is a constant. With only a condition, the indices where it holds (numpy's
    ``nonzero``), as constants (eager mode only).

    Args:
        condition: boolean array-like or tensor (other dtypes: compared with 0).
        x, y: values to choose from; all three broadcast together.
    Returns:
        A Tensor of the broadcast shape, or a tuple of index arrays.
    Raises:
        ValueError: only one of x and y is given, or the shapes cannot be broadcast.

    >>> import hessgrad.numpy as hnp
    >>> hnp.where([True, False], [1.0, 2.0], 0.0).tolist()
    [1.0, 0.0]
    """
    if (x is _NoValue) != (y is _NoValue):
        raise ValueError("hessgrad.numpy.where: either both or neither of x and y should be "
                         "given")
    condition, x, y = (_stacked(v, "where", k) for k, v in (
        ("condition", condition), ("x", x), ("y", y)))
    if x is _NoValue:
        value = condition._concrete("where(condition) with no x and y") \
            if isinstance(condition, _Tensor) else condition
        return tuple(_core.constant(i) for i in _np.nonzero(_np.asarray(value)))
    if _dtype_of(condition) != _np.bool_:
        condition = _ew.not_equal(condition, 0)
    return _ew.where(condition, x, y)


def real(val):
    """The real part (the identity on real input); numpy's ``real``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.real([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    return _ew.real(_stacked(val, "real", "val"))


def angle(z, deg=False):
    """The argument of complex ``z``, ``arctan2(imag(z), real(z))``, in radians (degrees with
    ``deg``); 0 or pi for real input. numpy's ``angle``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.angle(1j, deg=True))
    90.0
    """
    z = _asarray(z, "angle", "z")
    if not isinstance(z, _Tensor):
        z = _core.constant(z)
    kind = _dtype_of(z).kind
    if kind not in "fc":  # numpy: booleans as float64, integers as arctan2 promotes them
        # (int8 -> float16, int16 -> float32: always float64 mismatched numpy's dtype)
        z = _core.cast(z, dtype=_np.float64 if kind == "b"
                       else _np.promote_types(_dtype_of(z), _np.float16))
    a = _ew.arctan2(_ew.imag(z), _ew.real(z))
    return _ew.multiply(a, 180.0 / _np.pi) if deg else a


def imag(val):
    """The imaginary part (zeros on real input, with a zero derivative); numpy's ``imag``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.imag([1.0, 2.0]).tolist()
    [0.0, 0.0]
    """
    return _ew.imag(_stacked(val, "imag", "val"))


def isneginf(x, out=None):
    """Whether ``x`` is -inf (a constant for differentiation).

    >>> import hessgrad.numpy as hnp
    >>> hnp.isneginf([float('-inf'), float('inf')]).tolist()
    [True, False]
    """
    x = _stacked(x, "isneginf", "x")
    result = _ew.logical_and(_ew.isinf(x), _ew.signbit(x))
    return result if out is None else _write_out("isneginf", out, result, "unsafe")


def isposinf(x, out=None):
    """Whether ``x`` is +inf (a constant for differentiation).

    >>> import hessgrad.numpy as hnp
    >>> hnp.isposinf([float('-inf'), float('inf')]).tolist()
    [False, True]
    """
    x = _stacked(x, "isposinf", "x")
    result = _ew.logical_and(_ew.isinf(x), _ew.logical_not(_ew.signbit(x)))
    return result if out is None else _write_out("isposinf", out, result, "unsafe")


__all__ = sorted(list(_UFUNCS) + [
    "divmod", "true_divide", "mod", "abs", "conj", "degrees", "radians", "acos", "asin",
    "atan", "atan2", "acosh", "asinh", "atanh", "pow", "round", "around", "fix", "clip",
    "where", "real", "imag", "angle", "isneginf", "isposinf"])
