"""numpy's *array-like* arguments, converted in one place for every ``hessgrad.numpy`` entry
point: a tensor stays a tensor; a (nested) list or tuple holding tensors (and numbers or
arrays) is stacked with hessgrad ops, so gradients flow through it as through
``numpy.array``; anything else is left to numpy.

>>> import hessgrad as hg, hessgrad.numpy as hnp
>>> float(hg.grad(lambda x: hnp.mean([x, x + 2.0]))(1.0))
1.0
"""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, shape as _sh

_SEQUENCES = (list, tuple)


def has_tensor(obj):
    """Whether ``obj`` is a tensor or a (nested) list or tuple holding one."""
    if isinstance(obj, _Tensor):
        return True
    return isinstance(obj, _SEQUENCES) and any(has_tensor(o) for o in obj)


def _stack(x, fname, what):
    return _sh.as_array(x, f"hessgrad.numpy.{fname}: argument {what!r}")


def stacked(x, fname, what="a"):
    """``x`` itself, unless it is a (nested) list or tuple holding tensors: then one tensor
    stacked from it (a ragged nesting raises ValueError naming ``fname``, ``what`` and the
    item shapes). For arguments that hessgrad ops take as they are."""
    if isinstance(x, _SEQUENCES) and has_tensor(x):
        return _stack(x, fname, what)
    return x


def stacked_args(args, fname):
    """:func:`stacked` applied to each positional argument (a ufunc's inputs)."""
    if len(args) == 1:
        return (stacked(args[0], fname, "x"),)
    return tuple(stacked(a, fname, f"x{k + 1}") for k, a in enumerate(args))


def asarray(x, fname, what="a"):
    """A tensor as it is, a nested sequence holding tensors stacked into one, anything else
    as a numpy array (numpy's ``asarray``)."""
    if isinstance(x, _Tensor):
        return _core.strong(x)
    if isinstance(x, _SEQUENCES) and has_tensor(x):
        return _stack(x, fname, what)
    return _np.asarray(x)


def constant(x, fname, what):
    """The value of an argument that takes no derivative (indices, positions, counts):
    a concrete tensor, or a nested sequence holding tensors, gives its numpy value; a
    symbolic one raises TypeError naming ``fname`` and ``what`` (the value decides shapes)."""
    x = stacked(x, fname, what)
    if not isinstance(x, _Tensor):
        return x
    if x.is_symbolic:
        raise TypeError(f"hessgrad.numpy.{fname}: argument {what!r} (symbolic, shape "
                        f"{x.shape}) must be known while a function is traced; pass it as a "
                        "number or a numpy array")
    return x.numpy()


def any_sequence(args):
    """Whether some positional argument is a list or tuple (a cheap test for fast paths)."""
    for a in args:
        if isinstance(a, _SEQUENCES):
            return True
    return False
