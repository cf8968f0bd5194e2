"""The op families: constructors that declare a primitive with what its family implies.

Each takes :func:`hessgrad.engine.registry.primitive`'s arguments (name, forward, rules, flags)
and fills in the family's rules where the op gives none: how it batches (see
:mod:`.batching`) and, for elementwise ops, what the compiler may assume (applied per element;
a numpy ufunc forward is called with ``out=``). An op whose rules differ from its family's
passes its own.

* :func:`elementwise`: applied element by element, numpy broadcasting its operands;
* :func:`stacked`: linear algebra on stacks of matrices ``(..., m, n)``;
* :func:`reduction`: reduces over ``axis`` (None: all axes), with ``keepdims``;
* :func:`along_axis`: works along one ``axis`` (cumulative sums, sorting, argmax).
"""

import numpy as np

from ..engine.facts import NO_ALGEBRA, NO_LOWERING
from ..engine.registry import primitive
from .batching import aligned, along_axis as _along_axis, reduction as _reduction


def _declare(name, forward, vjp, jvp, family_batch, flags):
    flags.setdefault("batch", family_batch)
    return primitive(name, forward, vjp, jvp, **flags)


def elementwise(name, forward, vjp=None, jvp=None, **flags):
    """An op applied element by element, broadcasting its operands as numpy does."""
    ufunc = getattr(forward, "unchecked", forward)
    flags["lowering"] = (flags.get("lowering") or NO_LOWERING).with_call(
        ufunc if isinstance(ufunc, np.ufunc) else None)
    flags["algebra"] = (flags.get("algebra") or NO_ALGEBRA).with_elementwise()
    return _declare(name, forward, vjp, jvp, aligned, flags)


def stacked(name, forward, vjp=None, jvp=None, **flags):
    """An op on stacks of matrices: leading axes are a stack, the op applies per matrix."""
    return _declare(name, forward, vjp, jvp, aligned, flags)


def reduction(name, forward, vjp=None, jvp=None, **flags):
    """A reduction over ``axis`` (None: every axis), with ``keepdims``."""
    return _declare(name, forward, vjp, jvp, _reduction, flags)


def along_axis(name, forward, vjp=None, jvp=None, *, axis_default=-1, **flags):
    """An op along one integer ``axis`` (``axis_default`` when the call gives none; None
    flattens first)."""
    return _declare(name, forward, vjp, jvp, _along_axis(axis_default), flags)
