"""The op families: constructors that declare a primitive with what its family implies.

Each takes :func:`hessgrad.engine.registry.primitive`'s arguments (name, forward, rules, flags)
and fills in the family's rules where the op gives none: how it batches (:mod:`.batching`),
its sparsity pattern (:mod:`.patterns`, chosen by what the op declares: ``linear``) and its
output shape and dtype (:mod:`.shape_rules`). An op whose rules differ from its family's
passes its own.

* :func:`elementwise`: applied element by element, numpy broadcasting its operands;
* :func:`stacked`: linear algebra on stacks of matrices ``(..., m, n)``;
* :func:`reduction`: reduces over ``axis`` (None: all axes), with ``keepdims``;
* :func:`along_axis`: works along one ``axis`` (cumulative sums, sorting, argmax).
"""

from ..engine.registry import primitive
from . import patterns, shape_rules
from .batching import aligned, along_axis as _along_axis, reduction as _reduction


def _declare(name, forward, vjp, jvp, flags, batch, sparsity, shape_rule):
    flags.setdefault("batch", batch)
    flags.setdefault("sparsity", sparsity)
    flags.setdefault("shape_rule", shape_rule)
    return primitive(name, forward, vjp, jvp, **flags)


def elementwise(name, forward, vjp=None, jvp=None, **flags):
    """An op applied element by element, broadcasting its operands as numpy does. Linear:
    outputs depend on their operands with no interaction; else they interact."""
    rule = patterns.piecewise_linear if flags.get("linear") else patterns.elementwise_nonlinear
    return _declare(name, forward, vjp, jvp, flags, aligned, rule,
                    shape_rules.broadcasting(name, forward))


def stacked(name, forward, vjp=None, jvp=None, **flags):
    """An op on stacks of matrices: leading axes are a stack, the op applies per matrix (its
    pattern: conservatively dense)."""
    return _declare(name, forward, vjp, jvp, flags, aligned, patterns.dense, None)


def reduction(name, forward, vjp=None, jvp=None, **flags):
    """A reduction over ``axis`` (None: every axis), with ``keepdims``."""
    rule = patterns.reduced(nonlinear=not flags.get("linear"))
    return _declare(name, forward, vjp, jvp, flags, _reduction, rule,
                    shape_rules.reducing(forward))


def along_axis(name, forward, vjp=None, jvp=None, *, axis_default=-1, **flags):
    """An op along one integer ``axis`` (``axis_default`` when the call gives none; None
    flattens first); its pattern by default a scan's (cumsum, cumprod)."""
    rule = patterns.cumulative(nonlinear=not flags.get("linear"))
    return _declare(name, forward, vjp, jvp, flags, _along_axis(axis_default), rule,
                    shape_rules.same_shape(forward))
