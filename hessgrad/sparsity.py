"""Sparsity patterns of Hessians and Jacobians, read off a traced graph.

``f`` is traced once at the input's shape (:class:`hessgrad.function`); the plan's steps are
then walked with, for every tensor, a *dependency matrix*: a boolean ``scipy.sparse`` CSR
matrix with one row per tensor element and one column per input element, ``D[e, i]`` set when
element ``e`` may depend on input ``x.flat[i]``. Linear ops only move dependencies (row
selections and sparse products: ``D_out = L D_in``); a nonlinear op adds its second-order
interactions to the Hessian pattern (``g(u)`` elementwise adds ``D_u^T D_u``, ``u * v`` adds
``D_u^T D_v + D_v^T D_u``, ...). By the chain rule, ``H = sum over ops and elements of
J_in^T (d2 op) J_in``, so the union of those products contains every nonzero of the Hessian at
every point: the pattern is valid for all ``x`` of that shape and dtype.

Each primitive declares how it moves and combines dependencies (its ``sparsity`` rule, in
its family's file; the machinery in :mod:`hessgrad.ops.patterns`). One without a rule is
treated conservatively: every output element depends on every input element, and (unless the
op is linear) all of them interact. Piecewise-linear ops (``abs``, ``maximum``, ``max``,
``clip``, ``sort``, ...) have a zero Hessian almost everywhere, as hessgrad's own derivatives
do, so they only move dependencies; piecewise constant ops (``sign``, ``floor``, comparisons)
and ``stop_gradient`` cut them.
"""

import numpy as np
import scipy.sparse as sp

from .tracing.function import function
from .engine.tensor import Tensor
from .ops.patterns import ENTRY_BUDGET, UNKNOWN, Step, TooDense, dense, size


def _propagate(plan, n, source=0, hessian=True, budget=ENTRY_BUDGET):
    """Dependency matrices of the plan's fetches on feed ``source``, and the Hessian terms;
    raises ``TooDense`` when a matrix would hold more than ``budget`` entries."""
    dynamic = set(plan.feed_slots)
    for *_, out, node in plan.steps:
        dynamic.update(out if type(out) is not int else (out,))
    dynamic.update(s for s, _ in plan.variables)
    uses = {}
    for _, arg_slots, *_ in plan.steps:
        for s in arg_slots:
            uses[s] = uses.get(s, 0) + 1
    keep = set(plan.fetch_slots)
    deps = {plan.feed_slots[source]: sp.identity(n, np.float32, format="csr")}
    hess = []
    for forward, arg_slots, params, out, node in plan.steps:
        outs = out if type(out) is not int else (out,)
        ins = [deps.get(s) for s in arg_slots]
        result = None
        if any(d is not None for d in ins) and not node.prim.nondiff:
            values = [plan.template[s] if s not in dynamic else UNKNOWN for s in arg_slots]
            shapes = [a.shape if isinstance(a, Tensor) else np.shape(a) for a in node.inputs]
            if any(d is not None and (s is None or None in s) for d, s in zip(ins, shapes)):
                raise TooDense
            step = Step(node, forward, ins, values, shapes, hess if hessian else [], budget)
            rule = node.prim.sparsity
            result = dense(step, linear=node.prim.linear) if rule is None else rule(step)
        results = result if node.prim.multiple_results else (result,)
        if result is None:
            results = (None,) * len(outs)
        for s, r in zip(outs, results):
            if r is not None:
                if r.nnz > budget:
                    raise TooDense
                deps[s] = r
        for s in arg_slots:                 # free what no later step reads
            uses[s] -= 1
            if uses[s] == 0 and s not in keep:
                deps.pop(s, None)
    return [deps.get(s) for s in plan.fetch_slots], hess


def plain_function(f):
    """``hessgrad.function(f)`` without graph optimizations where they exist: the analysis and
    the batched products here read and run the plan itself."""
    try:
        return function(f, optimize=False)
    except TypeError:
        return function(f)


def _trace(f, x, args, what):
    x = _check_point(x, what)
    concrete = plain_function(f).get_concrete_function(x, *args)
    if not concrete._fetch_index:
        return x, concrete, None
    return x, concrete, concrete.plan


def _check_point(x, what):
    if isinstance(x, Tensor):
        x = x.numpy()
    x = np.asarray(x)
    if x.dtype.kind not in "f":
        raise TypeError(f"{what}: argument x must be a real floating-point array, got dtype "
                        f"{x.dtype} (shape {x.shape}); cast it to float first")
    return x


def dense_pattern(n, m=None):
    """The all-true ``m x n`` pattern (``n x n`` by default)."""
    m = n if m is None else m
    return sp.csr_matrix(np.ones((m, n), dtype=bool))


def hessian_sparsity(f, x, args=()):
    """The sparsity pattern of the Hessian of scalar ``f`` w.r.t. ``x`` (flattened).

    Exact for common ops, conservative otherwise: it contains every entry that is nonzero at
    any point of that shape and dtype (``args`` may take any value: they are treated as
    unknown data).

    Args:
        f: scalar function ``f(x, *args)`` written with hessgrad ops.
        x: a floating-point array; only its shape and dtype matter.
        args: further arguments of ``f`` (held fixed, values not used).
    Returns:
        A boolean ``scipy.sparse.csr_matrix`` of shape ``(x.size, x.size)``.
    Raises:
        TypeError: ``x`` is not a floating-point array.
        ValueError: ``f`` does not return a scalar.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> f = lambda x: hnp.sum(x[1:] * x[:-1]) + hnp.sum(hnp.exp(x))
    >>> hg.hessian_sparsity(f, np.zeros(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1],
           [0, 0, 1, 1]])
    """
    return _hessian_pattern(f, x, args, "hessian_sparsity")[0]


def _hessian_pattern(f, x, args, what, budget=ENTRY_BUDGET):
    """(pattern, is_dense, local): ``is_dense`` says the walk gave up (pattern all true)
    because some dependency matrix would exceed ``budget`` entries; ``local`` that ``f``
    branched in Python on ``x``'s values (the pattern is that of the branches taken)."""
    x, concrete, plan = _trace(f, x, args, what)
    local = bool(concrete.guards)
    n = x.size
    if plan is None:
        return sp.csr_matrix((n, n), dtype=bool), False, local
    out = concrete.outputs[concrete._fetch_index[0]]
    if len(concrete._fetch_index) != 1 or (out.shape is not None and size(out.shape) != 1):
        raise ValueError(f"{what}: f must return a scalar, got an output of shape "
                         f"{out.shape} for x of shape {x.shape}")
    try:
        _, hess = _propagate(plan, n, budget=budget)
        if not hess:
            return sp.csr_matrix((n, n), dtype=bool), False, local
        total = hess[0]
        for term in hess[1:]:
            total = total + term
            if total.nnz > budget:
                raise TooDense
        pattern = sp.csr_matrix(total, dtype=bool)
        pattern.sort_indices()
        return pattern, False, local
    except TooDense:
        return dense_pattern(n), True, local


def jacobian_sparsity(f, x, args=()):
    """The sparsity pattern of the Jacobian of ``f`` (output flattened) w.r.t. ``x``.

    Args:
        f: function ``f(x, *args)`` returning one array.
        x: a floating-point array; only its shape and dtype matter.
        args: further arguments of ``f`` (held fixed, values not used).
    Returns:
        A boolean ``scipy.sparse.csr_matrix`` of shape ``(f(x).size, x.size)``.
    Raises:
        TypeError: ``x`` is not a floating-point array.
        ValueError: ``f`` does not return exactly one array.

    >>> import hessgrad as hg
    >>> f = lambda x: x[1:] ** 2 - x[:-1]
    >>> hg.jacobian_sparsity(f, np.zeros(3)).toarray().astype(int)
    array([[1, 1, 0],
           [0, 1, 1]])
    """
    return _jacobian_pattern(f, x, args, "jacobian_sparsity")[0]


def _jacobian_pattern(f, x, args, what):
    x, concrete, plan = _trace(f, x, args, what)
    local = bool(concrete.guards)
    n = x.size
    if len(concrete.outputs) != 1:
        raise ValueError(f"{what}: f must return one array, got {len(concrete.outputs)} "
                         "outputs")
    out = concrete.outputs[0]
    shape = out.shape if isinstance(out, Tensor) else np.shape(out)
    if shape is None or None in shape:
        raise ValueError(f"{what}: the output shape of f is not known when traced at x of "
                         f"shape {x.shape}")
    m = size(shape)
    if plan is None:
        return sp.csr_matrix((m, n), dtype=bool), False, shape, local
    try:
        d = _propagate(plan, n, hessian=False)[0][0]  # (then the guards, if any)
    except TooDense:
        return dense_pattern(n, m), True, shape, local
    if d is None:
        return sp.csr_matrix((m, n), dtype=bool), False, shape, local
    pattern = sp.csr_matrix(d, dtype=bool)
    pattern.sort_indices()
    return pattern, False, shape, local
