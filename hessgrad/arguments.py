"""What the functional transforms (grad, jacobian, hvp, hessian, ...) share about their
arguments and results: ``argnums``, nested structures of arrays (None a structure with no
leaves, as in JAX), fresh sources for the differentiated arguments, numpy or tensors back, and
the checks that name the transform and the argument."""

import numpy as np

from .engine.nest import flatten, pack_as
from .engine.state import THREAD
from .engine.tensor import Tensor, owned, shape_of
from .ops.core import constant, identity


def parse_argnums(argnums, nargs, fname):
    single = isinstance(argnums, (int, np.integer))
    nums = (argnums,) if single else tuple(argnums) if isinstance(argnums, (tuple, list)) else ()
    if not nums or not all(isinstance(i, (int, np.integer)) for i in nums):
        raise TypeError(f"{fname}: argnums must be an int or a non-empty tuple of ints, got "
                        f"{argnums!r}")
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"{fname}: argnums={argnums} but the function was called with "
                             f"{nargs} positional arguments")
    nums = tuple(i % nargs for i in nums)
    if len(set(nums)) != len(nums):  # a second lift would cut the first from f's result
        raise ValueError(f"{fname}: argnums={argnums} names an argument twice")
    return single, nums


NESTED = (list, tuple, dict)


def leaves_of(x):
    return flatten(x) if isinstance(x, NESTED) else [x]  # the common bare array: no walk


def pack_like(structure, leaves):
    return pack_as(structure, leaves) if isinstance(structure, NESTED) else leaves[0]


# As in JAX, None in an argument or a result is a structure with no leaves: it has no
# derivative (None in gradients and Jacobians) and takes no tangent or cotangent.

def present(structure):
    """The leaves of ``structure`` that are not None."""
    return [leaf for leaf in leaves_of(structure) if leaf is not None]


def fill(structure, items):
    """``structure`` with its leaves that are not None replaced by ``items``, in order."""
    it = iter(items)
    return pack_like(structure, [None if leaf is None else next(it) for leaf in leaves_of(structure)])


def _describe(x):
    if isinstance(x, NESTED):
        return f"a {type(x).__name__} of {len(x)}"
    return "None" if x is None else "an array"


def check_like(value, like, what, role, path=""):
    """Raise ValueError unless ``value`` has the structure and leaf shapes of ``like`` (a list
    may stand for a tuple), e.g. a tangent for its primal: leaves paired by position in
    another structure would silently meet the wrong ones."""
    where = f"{what}{path}"
    if isinstance(like, dict):
        if not isinstance(value, dict) or set(value) != set(like):
            keys = f" with keys {sorted(value)}" if isinstance(value, dict) else ""
            raise ValueError(f"{where} is {_describe(value)}{keys}, expected a dict with keys "
                             f"{sorted(like)} like {role}{path}")
        for k in like:
            check_like(value[k], like[k], what, role, f"{path}[{k!r}]")
    elif isinstance(like, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(like):
            raise ValueError(f"{where} is {_describe(value)}, expected {_describe(like)} like "
                             f"{role}{path}")
        for k, (v, lk) in enumerate(zip(value, like)):
            check_like(v, lk, what, role, f"{path}[{k}]")
    elif (like is None) != (value is None) or isinstance(value, NESTED):
        raise ValueError(f"{where} is {_describe(value)}, expected {_describe(like)} like "
                         f"{role}{path}")
    elif like is not None and tuple(shape_of(value)) != tuple(shape_of(like)):
        raise ValueError(f"{where} has shape {tuple(shape_of(value))}, expected "
                         f"{tuple(shape_of(like))}, the shape of {role}{path}")


def as_tensors(structure):
    """``structure`` with its numpy arrays as (eager) tensors: what ``f`` is called with when
    a transform runs it for a value, so that tensor methods (``x.at[...]``) work as they do
    while it is differentiated."""
    return pack_like(structure, [constant(leaf) if isinstance(leaf, np.ndarray) else leaf
                                 for leaf in leaves_of(structure)])


def is_plain(args):
    """Whether results go back as numpy: only for numpy arguments and a caller outside any
    tape, accumulator or trace, since inside one ``f`` may close over a tensor being
    differentiated or traced, and its result must keep that dependence (as JAX's do)."""
    state = THREAD.state
    if state.recorders or state.graphs:
        return False
    for a in args:
        if isinstance(a, Tensor) or isinstance(a, NESTED) and any(
                isinstance(leaf, Tensor) for leaf in flatten(a)):
            return False
    return True


def _fresh(leaf, fname, argnum):
    """A new tensor for a differentiated argument, so that each argument is its own source."""
    if isinstance(leaf, Tensor):
        if leaf.dtype.kind not in "fc":
            raise TypeError(f"{fname} requires real- or complex-valued inputs (input dtype that "
                            f"is a sub-dtype of np.inexact), but got {leaf.dtype} for argument "
                            f"{argnum}. Cast it to float first.")
        return identity(leaf)
    array = np.asarray(leaf)
    if array.dtype.kind not in "fc":
        if array.dtype.kind in "iub" and not isinstance(leaf, np.ndarray):
            array = array.astype(np.float64)  # a Python int: the user means a number
        else:
            raise TypeError(f"{fname} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {array.dtype} for "
                            f"argument {argnum}. Cast it to float first.")
    return constant(array)


def lift(args, nums, fname):
    """Replace the differentiated arguments by fresh tensors; returns (args, flat sources)."""
    args = list(args)
    sources = []
    for i in nums:
        leaves = [_fresh(leaf, fname, i) for leaf in present(args[i])]
        args[i] = fill(args[i], leaves)
        sources.extend(leaves)
    return args, sources


def returned(x, plain):
    """numpy for plain callers, tensors otherwise (structures kept)."""
    if not plain:
        return x
    if type(x) is Tensor:  # the common bare result: no walk
        return owned(x.numpy())
    return pack_like(x, [owned(leaf.numpy()) if isinstance(leaf, Tensor) else leaf
                     for leaf in leaves_of(x)])


def group(args, nums, flat, single):
    """Regroup a flat list of per-leaf results like the differentiated arguments."""
    if single and not isinstance(args[nums[0]], NESTED) and args[nums[0]] is not None:
        return flat[0]  # one bare argument
    out, k = [], 0
    for i in nums:
        n = len(present(args[i]))
        out.append(fill(args[i], flat[k:k + n]))
        k += n
    return out[0] if single else tuple(out)


class NonScalarOutput(TypeError):
    """A transform of scalar functions (grad, hvp, ...) met a function with a non-scalar
    result."""


def check_scalar(y, fname):
    if isinstance(y, NESTED):  # np.shape would read a tuple of tensors as one array
        hint = "; if it returns (value, aux), pass has_aux=True" \
            if isinstance(y, (tuple, list)) and len(y) == 2 else ""
        raise NonScalarOutput(f"{fname} requires a scalar-output function (use jacobian or vjp "
                              f"for others), but the function returned a {type(y).__name__} "
                              f"of {len(y)}{hint}")
    if not isinstance(y, Tensor) and np.asarray(y).dtype.kind not in "biufc":
        raise TypeError(f"{fname} requires a function returning a number, but it returned "
                        f"{type(y).__name__}")
    shape = shape_of(y)
    if shape != ():
        raise NonScalarOutput(f"{fname} requires a scalar-output function (use jacobian or vjp "
                              f"for others), but the function returned shape {tuple(shape)}")


def check_output_dtype(y, fname, holomorphic=False):
    """As in JAX, a transform of a scalar function (grad, value_and_grad, hvp, hessian) needs
    a real floating-point output, or with ``holomorphic`` a complex one: of a complex output
    it would silently differentiate the real part, and an integer or boolean one has no
    derivative (it would silently give zeros)."""
    dtype = np.dtype(y.dtype if isinstance(y, Tensor) else np.asarray(y).dtype)
    if holomorphic:
        if dtype.kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype}.")
    elif dtype.kind == "c":
        raise TypeError(f"{fname} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtype}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use "
                        "hessgrad.vjp directly (or differentiate the real and imaginary "
                        "parts).")
    elif dtype.kind != "f":
        raise TypeError(f"{fname} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtype}. For differentiation "
                        "of functions with integer outputs, use hessgrad.vjp directly.")


def check_holomorphic(holomorphic, values, fname, what):
    """With ``holomorphic`` (JAX's flag), inputs and outputs must be complex. The derivative
    computed is the same either way (for complex outputs, JAX's: the VJP of cotangent 1, the
    complex derivative of a holomorphic ``f``); the flag only states the intent."""
    if not holomorphic:
        return
    for v in values:
        dtype = v.dtype if isinstance(v, Tensor) else np.asarray(v).dtype
        if dtype.kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires {what} with complex "
                            f"dtype, but got {dtype}")


def check_real_inputs(holomorphic, args, nums, fname, others):
    """As in JAX, a transform that perturbs its inputs along real unit vectors (jacfwd,
    hessian) needs real inputs unless ``holomorphic``: for a complex input it would see only
    the derivative along the real axis. ``others``: the transforms to use instead."""
    if holomorphic:
        return
    for i in nums:
        for a in present(args[i]):
            dtype = a.dtype if isinstance(a, Tensor) else np.asarray(a).dtype
            if dtype.kind == "c":
                raise TypeError(f"{fname} of complex inputs requires holomorphic=True (as in "
                                f"JAX), but got {dtype} for argument {i}; for other "
                                f"functions of complex inputs use {others}, or take the real "
                                "and imaginary parts as real arguments")


def split_aux(out, has_aux, fname):
    """``(out, aux)`` of a function's result; aux is None without ``has_aux``."""
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{fname}: has_aux=True requires the function to return a pair "
                        f"(output, aux), got {type(out).__name__}")
    return out[0], out[1]
