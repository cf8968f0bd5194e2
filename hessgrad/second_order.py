"""Second order: Hessian-vector products and Hessians.

``hvp`` is forward-over-reverse by default (the JVP of the gradient: Pearlmutter's trick, a
small constant times one gradient); reverse-over-reverse and reverse-over-forward are
selectable, and the test suite checks all of them against each other.
"""

import numpy as np

from .arguments import (NonScalarOutput, as_tensors, check_holomorphic, check_like,
                        check_output_dtype, check_real_inputs, check_scalar, fill, group,
                        is_plain, lift, parse_argnums, present, returned, split_aux)
from .recent import Recent
from .custom import CUSTOM
from .tracing.capture import CapturedTraces
from .tracing.reroll import rerolled
from .engine.forward import ForwardAccumulator
from .engine.gradients import gradients
from .engine.state import THREAD
from .engine.nest import flatten, is_nested, pack_as, structure_key
from .tracing.function import ConcreteFunction
from .engine.tape import GradientTape
from .engine.tensor import Tensor, shape_of, shapes_compatible
from .ops.core import constant, reshape, stop_gradient
from .ops.reduction import sum as reduce_sum
from .ops.shape import transpose
from .transforms import jacfwd, jacrev
from .engine.batching import members_per_chunk, stacked_rows

MODES = ("auto", "fwd-rev", "rev-rev", "rev-fwd")


def hessian_vector_product(ys, xs, v):
    """Graph API (TensorFlow's): the product of the Hessian of ``sum(ys)`` with ``v``.

    Built as the gradient of ``<gradient(ys, xs), stop_gradient(v)>`` (reverse-over-reverse).

    Args:
        ys: a tensor or list of tensors.
        xs: a tensor or list of tensors.
        v: a tensor or list of tensors, one per x, shaped like it.
    Returns:
        A list with one tensor per x: ``H v``.
    Raises:
        ValueError: ``xs`` and ``v`` differ in length, or a v is not shaped like its x.

    >>> import hessgrad as hg
    >>> A = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> with hg.Graph().as_default() as g:
    ...     x = hg.placeholder("float64", (2,))
    ...     y = 0.5 * hg.reduce_sum(x * hg.matmul(A, x))
    ...     (hv,) = hg.hessian_vector_product(y, [x], [hg.constant([1.0, 1.0])])
    >>> g.run(hv, {x: [0.5, -1.0]})  # the Hessian of x^T A x / 2 is (A + A^T) / 2
    array([2., 4.])
    """
    xs = flatten(xs)
    v = flatten(v)
    if len(xs) != len(v):
        raise ValueError(f"xs and v must have the same length: got {len(xs)} xs and "
                         f"{len(v)} vectors")
    for i, (x, u) in enumerate(zip(xs, v)):
        _check_static_shape(u, x, i)
    grads = gradients(ys, xs)
    products = [reduce_sum(g * stop_gradient(u)) for g, u in zip(grads, v) if g is not None]
    return gradients(products, xs)


def _check_static_shape(u, x, i):
    """A v shaped otherwise than its x would broadcast into a wrong product: refuse it where
    both shapes are known at graph-building time (a None dimension matches anything)."""
    vs, xs = shape_of(u), shape_of(x)
    if not shapes_compatible(vs, xs):
        raise ValueError(f"hessian_vector_product: v[{i}] has shape {tuple(vs)}, expected "
                         f"the shape {tuple(xs)} of xs[{i}]")


def _check_output(y, fname, holomorphic):
    check_scalar(y, fname)
    check_output_dtype(y, fname, holomorphic)


def _hvp_at(f, args, kwargs, nums, v_leaves, mode, holomorphic=False, fname="hvp"):
    """H v w.r.t. the arguments ``nums`` as a flat list of tensors."""
    lifted, sources = lift(args, nums, "hvp")
    tangents = [t if isinstance(t, Tensor) else constant(np.asarray(t, dtype=s.dtype))
                for t, s in zip(v_leaves, sources)]
    for s, t in zip(sources, tangents):
        if tuple(t.shape) != tuple(s.shape):
            raise ValueError(f"hvp: vector shape {tuple(t.shape)} does not match argument "
                             f"shape {tuple(s.shape)}")
    if mode == "rev-fwd" or mode == "auto" and not THREAD.state.graphs:
        hv = _rev_fwd(f, lifted, kwargs, sources, tangents, equivalent_only=mode == "auto",
                      holomorphic=holomorphic, fname=fname)
        if hv is not None:
            return hv
    if mode in ("auto", "fwd-rev"):
        with ForwardAccumulator(sources, tangents) as acc:
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(sources)
                y = f(*lifted, **kwargs)
            _check_output(y, fname, holomorphic)
            g = tape.gradient(y, sources, unconnected_gradients="zero")
        return acc.jvp(g, unconnected_gradients="zero")
    if mode == "rev-rev":
        with GradientTape(watch_accessed_variables=False) as outer:
            outer.watch(sources)
            with GradientTape(watch_accessed_variables=False) as inner:
                inner.watch(sources)
                y = f(*lifted, **kwargs)
            _check_output(y, fname, holomorphic)
            g = inner.gradient(y, sources, unconnected_gradients="zero")
            inner_product = sum(reduce_sum(gi * stop_gradient(ti)) for gi, ti in zip(g, tangents))
        return outer.gradient(inner_product, sources, unconnected_gradients="zero")
    raise ValueError(f"hvp: mode must be one of {MODES}, got {mode!r}")


def _rev_fwd(f, lifted, kwargs, sources, tangents, equivalent_only, holomorphic=False,
             fname="hvp"):
    """``H v`` as the gradient of the directional derivative (rev-fwd). With
    ``equivalent_only`` (mode "auto", eager), None where fwd-rev's product may differ: ``f``
    used a custom gradient (whose reverse rule need not be the derivative its forward pass
    has) or a user's primitive. Eagerly, rev-fwd costs less than fwd-rev: its reverse pass
    runs on plain arrays, with nothing recording it, and it never computes the gradient that
    fwd-rev computes and then drops (for a data matrix ``X``: three passes over ``X``, not
    four)."""
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(sources)
        with ForwardAccumulator(sources, tangents) as acc:
            y = f(*lifted, **kwargs)
        _check_output(y, fname, holomorphic)
        directional = acc.jvp(y, unconnected_gradients="zero")
    if equivalent_only and any(p is CUSTOM or not p.builtin
                               for p in tape.recorded_primitives()):
        return None
    return tape.gradient(directional, sources, unconnected_gradients="zero")


def hvp(f, argnums=0, mode="auto", holomorphic=False):
    """``hvp(f)(*args, v)``: the Hessian of scalar ``f`` w.r.t. ``args[argnums]`` times ``v``.

    The vector comes last (as autograd's ``hessian_tensor_product``) and is shaped like the
    argument (for a tuple ``argnums``: a tuple of such vectors). Arguments may be nested
    structures (lists, dicts) of arrays; ``v`` then has the same structure.

    With a :func:`custom_gradient` whose ``grad_fn`` is not the derivative of its function,
    the modes disagree: reverse passes call ``grad_fn``, forward passes differentiate the
    function's own ops. "fwd-rev" (and :func:`hessian`) differentiates the ``grad_fn``
    gradient forward (``jacfwd(grad(f))``), "rev-rev" uses ``grad_fn`` in both passes
    (``jacrev(grad(f))``), "rev-fwd" only in its outer pass. The default, "auto", is
    "fwd-rev"'s product; an eager call computes it as "rev-fwd" (which costs less here) when
    the two are the same, i.e. when ``f`` used no custom gradient and no user primitive: if
    it did, ``f`` runs a second time, as "fwd-rev". A traced call (``hg.function``) is
    "fwd-rev", whose discarded gradient the compiler removes. A primitive declared with a
    VJP only (``vjp=``, or ``hg.defvjp`` alone) works in every mode: forward mode transposes
    its VJP (which must then be written with hessgrad ops, as any rule that is
    differentiated again).

    Args:
        f: scalar function of arrays.
        argnums: int or tuple of ints.
        mode: "auto" (default), "fwd-rev" (JVP of the gradient), "rev-rev" or "rev-fwd".
        holomorphic: ``f`` is a holomorphic function with a complex output (as in
            :func:`hessgrad.grad`); without it a complex, integer or boolean output raises
            TypeError.
    Returns:
        A function ``(*args, v) -> H v`` (numpy in, numpy out; tensors in, tensors out).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> f = lambda x: hnp.sum(x ** 3)
    >>> hg.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    return _hvp(f, argnums, mode, holomorphic, "hvp")


def _rerolled_hvp(f, argnums, mode, holomorphic, fname):
    """For :class:`CapturedTraces`: at ``(x, v)``, the HVP of ``f`` re-rolled (a long loop of
    scalar operations packed into vector operations, see tracing.reroll), or None."""
    def substitute(args_and_v, kwargs, ops):
        args = args_and_v[:-1]
        if kwargs or len(args) != 1 or argnums not in (0, -1) or holomorphic:
            return None
        g = rerolled(f, args, ops)
        return None if g is None else _hvp(g, argnums, mode, holomorphic, fname)
    return substitute


def _hvp(f, argnums, mode, holomorphic, fname):
    """:func:`hvp`, its errors about ``f``'s output naming ``fname`` (hessian's too)."""
    if mode not in MODES:
        raise ValueError(f"hvp: mode must be one of {MODES}, got {mode!r}")

    def hvp_f(*args_and_v, **kwargs):
        if len(args_and_v) < 2:
            raise TypeError(f"hvp: call as hvp(f)(*args, v), the vector last; got "
                            f"{len(args_and_v)} argument(s)")
        *args, v = args_and_v
        single, nums = parse_argnums(argnums, len(args), "hvp")
        plain = is_plain(args_and_v)
        v_struct = [v] if single else list(v)
        if len(v_struct) != len(nums):
            raise ValueError(f"hvp: expected {len(nums)} vectors for argnums={argnums}")
        for k, i in enumerate(nums):
            check_like(v_struct[k], args[i], "hvp: v" if single else f"hvp: v[{k}]",
                        f"args[{i}]")
        v_leaves = present(v_struct)  # None has no leaves (as in JAX): no vector either
        hv = _hvp_at(f, args, kwargs, nums, v_leaves, mode, holomorphic, fname)
        return returned(group(args, nums, hv, single), plain)
    return hvp_f


# make_hvp(f) and hessian(f) written inline in a loop (or HessianOperator(f, x) built at each
# iterate) find the traces, structure and compiled programs of the previous calls, reused
# while what f reads from outside its arguments is unchanged (see tracing.capture).
_RECENT = Recent()


def make_hvp(f, argnums=0, mode="auto"):
    """``make_hvp(f)(*args)`` -> ``(v -> H v)`` at fixed ``args``, for Krylov loops.

    The HVP is traced once per argument signature with both ``args`` and ``v`` as inputs and
    compiled; at each new point the part that does not depend on ``v`` (the forward pass and
    the gradient) runs once, and each product re-runs only the tangent part. In the default
    lazy compile mode (``hessgrad.tracing.tiers``) the first products run the traced plan
    uncompiled (with the point folded in) and the compiled program takes over once it is
    compiled, in the background, when the products are hot: no product waits for it. The returned
    function has a ``batched(V)`` method taking vectors stacked along a leading axis and
    computing the products in blocks of one compiled size, whatever their number
    (matrix-matrix products where the HVP has matrix-vector ones; see
    ``hessgrad.tracing.blocks``). ``make_hvp(f)`` of the same ``f`` (one of the 16 most recent) reuses
    the trace while what ``f`` reads from outside its arguments (globals, closures, random
    draws) is what it was: ``f`` runs once eagerly at each point to check that (see
    ``hessgrad.tracing.capture``); pass a ``hessgrad.function`` to skip the check. The
    returned product is the Hessian at the point as ``f`` was when it was made.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> hv = hg.make_hvp(lambda x: hnp.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> hv(np.array([1.0, 0.0]))
    array([6., 0.])
    >>> hv.batched(np.eye(2))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    key = ("make_hvp", f, argnums if isinstance(argnums, int) else tuple(argnums), mode)
    return _RECENT.get(key, lambda: _make_hvp(f, argnums, mode))


def _make_hvp(f, argnums, mode):
    product = hvp(f, argnums, mode)
    # one trace per signature and capture, every point
    traced = CapturedTraces(product, f, _rerolled_hvp(f, argnums, mode, False, "hvp"))

    def at(*args, **kwargs):
        single, nums = parse_argnums(argnums, len(args), "make_hvp")
        if any(a is None for i in nums for a in flatten(args[i])):
            raise TypeError(f"make_hvp: argument(s) {list(nums)} hold None leaves, which "
                            "make_hvp (and HessianOperator) do not support; use hvp, or leave "
                            "them out of the differentiated arguments")
        args, kwargs = _snapshot(args), _snapshot(kwargs)
        v_example = [pack_as(args[i], [np.zeros(np.shape(a), _dtype_of(a))
                                        for a in flatten(args[i])]) for i in nums]
        v_example = v_example[0] if single else tuple(v_example)
        return _HvpAt(product, args, kwargs, _specialize(traced, args, v_example, kwargs),
                      v_example)
    return at


def _snapshot(structure):
    """``structure`` with its numpy arrays copied: the products are at the point given, even
    when the caller then updates its arrays in place (compiled setups keep views of them,
    eager products re-read them)."""
    return pack_as(structure, [np.array(a) if isinstance(a, np.ndarray) else a
                               for a in flatten(structure)])


class _HvpAt:
    """``v -> H v`` at fixed arguments (what ``make_hvp(f)(*args)`` returns): the traced
    product specialized at the point, or the eager product when ``f`` cannot be traced.
    A class rather than closures that refer to each other, so that an operator dropped by
    an optimizer loop frees its arrays at once instead of at the next garbage collection."""

    def __init__(self, product, args, kwargs, linear, example):
        self.product, self.args, self.kwargs, self.linear = product, args, kwargs, linear
        self.example = example  # zeros structured and shaped like v
        self.plain = is_plain(args)

    def __call__(self, v):
        leaves = _vector_leaves(v, self.example, "make_hvp: v")
        if self.linear is not None:
            out = self.linear(leaves)
        else:
            out = self.product(*self.args, pack_as(self.example, leaves), **self.kwargs)
        return returned(out, self.plain) if self.plain else out

    def batched(self, V):
        """The products with each of ``V``'s rows (vectors stacked along a leading axis)."""
        leaves = _vector_leaves(V, self.example, "make_hvp(...).batched: V", batch=True)
        if self.linear is not None:
            return self.linear.run_batched(leaves, [True] * len(leaves))
        k = len(leaves[0])
        cols = [flatten(self(pack_as(self.example, [leaf[j] for leaf in leaves])))
                for j in range(k)]
        return pack_as(self.example, [
            np.stack([np.asarray(c[i]) for c in cols]) if k else np.zeros((0,) + e.shape, e.dtype)
            for i, e in enumerate(flatten(self.example))])

    def largest_intermediate(self, v):
        """Elements in the largest array one product computes (what a batch member costs)."""
        if self.linear is not None:
            return self.linear.largest_intermediate
        return sum(np.size(a) for a in flatten(v))


def _vector_leaves(v, example, what, batch=False):
    """The leaves of ``v``, structured like ``example`` (a Python list where the example has
    an array is one vector), as arrays of the example's shapes (behind one common leading
    batch axis with ``batch``); ``what`` names the argument in errors."""
    leaves = []
    _collect(v, example, what, leaves)
    k = None
    for leaf, e in zip(leaves, flatten(example)):
        shape = tuple(leaf.shape)
        if not batch and shape != e.shape:
            raise ValueError(f"{what} has shape {shape}, expected {e.shape}, the argument's")
        if batch and (not shape or shape[1:] != e.shape or k is not None and shape[0] != k):
            expected = "(" + ", ".join(map(str, ("k" if k is None else k,) + e.shape)) + ")"
            raise ValueError(f"{what} has shape {shape}, expected {expected} (vectors shaped "
                             "like the argument, stacked along a leading axis)")
        k = shape[0] if batch else None
    return leaves


def _collect(v, example, what, leaves):
    """Append ``v``'s parts at ``example``'s leaves to ``leaves``, as arrays or tensors."""
    if isinstance(example, dict):
        if not isinstance(v, dict) or sorted(v) != sorted(example):
            raise TypeError(f"{what} must be a dict with keys {sorted(example)}, like the "
                            f"argument, got {_describe(v)}")
        for key in sorted(example):
            _collect(v[key], example[key], what, leaves)
    elif isinstance(example, (list, tuple)):
        if not isinstance(v, (list, tuple)) or len(v) != len(example):
            raise TypeError(f"{what} must be a list or tuple of {len(example)} vectors, like "
                            f"the argument, got {_describe(v)}")
        for part, e in zip(v, example):
            _collect(part, e, what, leaves)
    elif isinstance(v, Tensor):
        leaves.append(v)
    else:
        try:
            leaves.append(np.asarray(v))
        except (TypeError, ValueError) as exc:  # ragged lists, objects
            raise TypeError(f"{what} must be an array, got {_describe(v)}") from exc
        if leaves[-1].dtype.kind not in "biufc":
            raise TypeError(f"{what} must be a numeric array, got {_describe(v)}")


def _describe(v):
    return f"{type(v).__name__} of {len(v)}" if isinstance(v, (list, tuple, dict)) else \
        type(v).__name__


def _dtype_of(a):
    dtype = a.dtype if isinstance(a, (Tensor, np.ndarray, np.generic)) else np.result_type(a)
    return dtype if np.dtype(dtype).kind in "fc" else np.float64


def _specialize(traced, args, v_example, kwargs):
    """The traced HVP at ``args`` as a function of ``v``'s leaves (setup run once), or None
    when ``f`` cannot be traced (Python control flow on values) or runs uncompiled."""
    if not is_plain((args, kwargs)):
        return None
    cap = traced.check(args, kwargs)
    concrete = traced.concrete(cap, (*args, v_example), kwargs)
    if concrete is None:
        return None
    n_args, n_v = len(flatten(list(args))), len(flatten(v_example))
    leaves = flatten(((*args, v_example), kwargs))
    static = [True] * n_args + [False] * n_v + [True] * (len(leaves) - n_args - n_v)
    linear = concrete.specialize(leaves, static, cap.feeds(concrete))
    return linear if linear is not None else _Folded(traced.fn, args, kwargs, v_example)


class _Folded:
    """Without the compiler (``HESSGRAD_COMPILE=0``): the HVP traced at each point with the
    point as constants, which the plan folds (one trace per point)."""

    def __init__(self, product, args, kwargs, v_example):
        self.concrete = ConcreteFunction(lambda v: product(*args, v, **kwargs), (v_example,), {})
        self.largest_intermediate = self.concrete.plan.largest_dynamic_size

    def __call__(self, leaves):
        return self.concrete(leaves, False)

    def run_batched(self, leaves, batched):
        return self.concrete.run_batched(leaves, batched)


def dense_hessian(f, argnums=0, *, has_aux=False, holomorphic=False, structure=None):
    """:func:`hessgrad.hessian`'s dense path (see there). ``structure(f)``, when given, makes
    the checker of the Hessian's sparsity consulted once per signature (a
    :class:`hessgrad.SparseHessian`: its ``dense`` assembles the array from colored products
    when they are few enough)."""
    key = ("hessian", f, argnums if isinstance(argnums, int) else tuple(argnums),
           structure, bool(has_aux), bool(holomorphic))
    return _RECENT.get(key, lambda: _dense_hessian(f, argnums, structure, has_aux,
                                                   holomorphic))


def _dense_hessian(f, argnums, structure, has_aux=False, holomorphic=False):
    if has_aux:  # the Hessian of the value, then f once more for aux
        of_value = _dense_hessian(lambda *a, **k: split_aux(f(*a, **k), True, "hessian")[0],
                                  argnums, structure, False, holomorphic)

        def with_aux(*args, **kwargs):
            h = of_value(*args, **kwargs)
            aux = split_aux(f(*as_tensors(args), **kwargs), True, "hessian")[1]
            return h, returned(aux, is_plain(args))
        return with_aux
    # one trace per argument signature and capture key, reused at every x
    traced = CapturedTraces(_hvp(f, argnums, "auto", holomorphic, "hessian"), f,
                            _rerolled_hvp(f, argnums, "auto", holomorphic, "hessian"))
    checker = [structure(f) if structure else None]

    def structured(args, kwargs, cap):
        """The Hessian from colored products, or None (dense problem, or not applicable)."""
        check = checker[0]
        if check is None or kwargs or argnums not in (0, -len(args)) or not args or \
                type(args[0]) is not np.ndarray or args[0].dtype.kind != "f":
            return None
        try:
            h = check.dense(*args, capture=cap)
        except Exception:  # noqa: BLE001 - untraceable f etc.: the dense path reports errors
            checker[0] = None
            return None
        if h is not None and not h.any():  # maybe no product ran (an empty pattern): check
            _check_output(f(*as_tensors(args)), "hessian", False)  # as the products would
        return h

    def structured_tensor(args, kwargs):
        """Like ``structured``, for one tensor argument (in a trace, or under a tape): the
        assembly from colored products built from differentiable ops, or None."""
        check, x = checker[0], args[0] if len(args) == 1 else None
        if check is None or kwargs or argnums not in (0, -1) or not isinstance(x, Tensor) or \
                x.shape is None or None in x.shape or x.dtype.kind != "f":
            return None
        try:
            return check.dense_tensor(x)
        except Exception:  # noqa: BLE001 - f closes over a traced tensor etc.: dense path
            return None

    def batched_products(args, kwargs, single, shapes, dtypes, cap):
        """``(batched(V), largest)`` at ``args``: the traced HVP with ``args`` as inputs and
        only ``V`` batched, so the forward pass and the gradient run once per call."""
        example = [np.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]
        v_example = example[0] if single else tuple(example)
        concrete = traced.concrete(cap, (*args, v_example), kwargs)
        if concrete is None:  # Python control flow on values: eager products
            product = make_hvp(f, argnums)(*args, **kwargs)
            return product.batched, product.largest_intermediate(v_example)
        n_args, n_v = len(flatten(list(args))), len(example)
        n_kw = len(flatten(kwargs))
        flags = [False] * n_args + [True] * n_v + [False] * n_kw
        captures = cap.feeds(concrete)

        def batched(V):
            return concrete.run_batched(flatten(((*args, V), kwargs)), flags, captures)
        return batched, concrete.plan.largest_batched_size(concrete.feed_flags(flags))

    by_structure = {}  # the Hessian over leaves, per structure of the nested arguments

    of_vector = []  # jacfwd(jacrev(f)), once f is known to have a non-scalar result

    def hessian_f(*args, **kwargs):
        _, nums = parse_argnums(argnums, len(args), "hessian")
        check_holomorphic(holomorphic, [a for i in nums for a in present(args[i])], "hessian",
                          "inputs")
        check_real_inputs(holomorphic, args, nums, "hessian", "hvp, grad, jvp or vjp")
        if of_vector:
            return of_vector[0](*args, **kwargs)
        try:
            return scalar_hessian(args, kwargs)
        except NonScalarOutput:
            of_vector.append(jacfwd(jacrev(f, argnums, holomorphic=holomorphic), argnums,
                                    holomorphic=holomorphic))
            return of_vector[0](*args, **kwargs)

    def scalar_hessian(args, kwargs):
        single, nums = parse_argnums(argnums, len(args), "hessian")
        if any(is_nested(args[i]) for i in nums):
            key = (len(args), tuple(structure_key(args[i]) for i in nums))
            if key not in by_structure:
                by_structure[key] = _LeafHessian(f, args, nums, single, structure)
            return by_structure[key](args, kwargs)
        shapes = [tuple(np.shape(args[i]) if not isinstance(args[i], Tensor) else args[i].shape)
                  for i in nums]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        if not is_plain(args):
            h = structured_tensor(args, kwargs)
            if h is not None:
                return h
            return _hessian_tensors(f, args, kwargs, nums, single, shapes, sizes, holomorphic)
        cap = traced.check(args, kwargs)  # what f reads now selects the cached programs
        h = structured(args, kwargs, cap)
        if h is not None:
            return h
        # as in JAX, the row block H[i][.] has the dtype of gradient i, that of argument i
        dtypes = [np.result_type(np.asarray(args[i]).dtype, np.float32) for i in nums]
        batched, largest = batched_products(args, kwargs, single, shapes, dtypes, cap)
        chunk = members_per_chunk(largest)
        blocks = [[np.empty(si + sj, dtype=d) for sj in shapes] for si, d in zip(shapes, dtypes)]
        for j, n_j in enumerate(sizes):
            for start in range(0, n_j, chunk):
                stop = min(start + chunk, n_j)
                basis = [np.zeros((stop - start,) + s, dtype=d) for s, d in zip(shapes, dtypes)]
                basis[j].reshape(stop - start, n_j)[:, start:stop] = np.eye(stop - start)
                cols = batched(basis[0] if single else tuple(basis))
                cols = [cols] if single else list(cols)
                for i in range(len(shapes)):
                    block = blocks[i][j].reshape(sizes[i], n_j)
                    block[:, start:stop] = np.asarray(cols[i]).reshape(stop - start, -1).T
        if single:
            return blocks[0][0]
        return tuple(tuple(row) for row in blocks)
    return hessian_f


class _LeafHessian:
    """The Hessian w.r.t. nested arguments (dicts, lists, tuples of arrays) in JAX's layout,
    ``jacfwd(jacrev(f))``: the argument's structure holding, at each leaf ``a``, the
    argument's structure of blocks ``a.shape + b.shape`` (for a tuple ``argnums``,
    ``H[i][a][j][b]``). Computed as the block Hessian of a function of the leaves, traced
    once per structure."""

    def __init__(self, f, args, nums, single, structure):
        self.nums, self.single = nums, single
        self.templates = [pack_as(args[i], [None if a is None else 0 for a in flatten(args[i])])
                          for i in nums]  # None leaves have no blocks (as in JAX)
        self.counts = [len(present(t)) for t in self.templates]
        total, templates, counts = sum(self.counts), self.templates, self.counts
        n_args = len(args)

        def of_leaves(*flat, **kwargs):
            leaves, rest = iter(flat[:total]), iter(flat[total:])
            rebuilt = dict(zip(nums, [fill(t, [next(leaves) for _ in range(c)])
                                      for t, c in zip(templates, counts)]))
            return f(*[rebuilt[i] if i in rebuilt else next(rest) for i in range(n_args)],
                     **kwargs)
        self.blocks = dense_hessian(of_leaves, tuple(range(total)),
                                    structure=structure) if total else None

    def __call__(self, args, kwargs):
        leaves = [leaf for i in self.nums for leaf in present(args[i])]
        rest = [a for i, a in enumerate(args) if i not in self.nums]
        blocks = self.blocks(*leaves, *rest, **kwargs) if self.blocks else ()
        spans = list(zip(self.templates, np.cumsum([0] + self.counts)[:-1], self.counts))

        def row(a):  # the second derivatives of leaf a, grouped like the arguments
            per_arg = tuple(fill(t, [blocks[a][b] for b in range(s, s + c)])
                            for t, s, c in spans)
            return per_arg[0] if self.single else per_arg
        per_arg = tuple(fill(t, [row(a) for a in range(s, s + c)]) for t, s, c in spans)
        return per_arg[0] if self.single else per_arg


def _hessian_tensors(f, args, kwargs, nums, single, shapes, sizes, holomorphic=False):
    """Differentiable Hessian (tensor inputs, or inside a trace): per argument ``j``, the HVPs
    of all its basis vectors as one batch (one HVP traced and replayed on them, as JAX's
    ``vmap`` of ``jvp`` of ``grad`` does), so it can nest and a trace stays one HVP big."""
    if single and len(args) == 1 and not kwargs and not holomorphic:
        f = rerolled(f, args) or f  # a loop of scalar ops packed: a smaller trace
    product = _hvp(f, nums[0] if single else nums, "auto", holomorphic, "hessian")
    blocks = [[None] * len(shapes) for _ in shapes]
    for j, n_j in enumerate(sizes):
        def columns(e, j=j):
            v = [reshape(e, shape=s) if k == j else np.zeros(s) for k, s in enumerate(shapes)]
            out = product(*args, v[0] if single else tuple(v), **kwargs)
            return [out] if single else list(out)
        stacked = stacked_rows(columns, np.eye(n_j))
        for i in range(len(shapes)):
            if not n_j:  # an empty argument j: no column, the block is empty
                dtype = np.dtype(getattr(args[nums[i]], "dtype", np.float64))
                blocks[i][j] = constant(np.zeros(shapes[i] + shapes[j], dtype))
                continue
            cols = reshape(stacked[i], shape=(n_j, sizes[i]))
            blocks[i][j] = reshape(transpose(cols), shape=shapes[i] + shapes[j])
    if single:
        return blocks[0][0]
    return tuple(tuple(row) for row in blocks)


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """The Hessian of ``sum(ys)`` w.r.t. each of ``xs`` in graph mode (``tf.hessians``).

    For each ``x``, one ``while_loop`` iteration per element ``j`` of ``x`` differentiates the
    ``j``-th entry of the flattened gradient again and writes that row into a ``TensorArray``,
    whose buffer (``size(x)**2`` numbers, allocated once and written in place) is reshaped to
    ``x.shape + x.shape``.

    Args:
        ys: a tensor or list of tensors to differentiate.
        xs: a tensor or list of tensors with fully known shapes.
        name, colocate_gradients_with_ops, gate_gradients: accepted for compatibility.
        aggregation_method: see ``gradients``.
    Returns:
        A list with one Hessian per x; ``None`` for an x that ``ys`` does not depend on (as
        ``gradients`` returns None for it). A Hessian is zero where the gradient does not
        depend on x (a linear function).
    Raises:
        RuntimeError: called in eager mode.
        LookupError: an op between xs and ys has no gradient.
        ValueError: an x has an unknown shape.

    >>> import hessgrad as hg
    >>> with hg.Graph().as_default() as g:
    ...     x = hg.placeholder("float64", shape=(2,))
    ...     (h,) = hg.hessians(hg.reduce_sum(x ** 3), x)
    >>> g.run(h, {x: [1.0, 2.0]})
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    from .ops.control_flow import TensorArray, tensor_array_read, while_loop

    del name
    xs = flatten(xs)
    kwargs = dict(colocate_gradients_with_ops=colocate_gradients_with_ops,
                  gate_gradients=gate_gradients, aggregation_method=aggregation_method)
    for x in xs:
        if isinstance(x, Tensor) and (x.shape is None or None in x.shape):
            raise ValueError(f"hessians: x {x.name} must have a fully known shape, got "
                             f"{x.shape}")
    result = []
    for gradient, x in zip(gradients(ys, xs, **kwargs), xs):
        if gradient is None:
            result.append(None)
            continue
        n = x.size
        flat = reshape(gradient, shape=(n,))
        rows = TensorArray(x.dtype, size=n, element_shape=(n,))

        def body(j, rows, flat=flat, x=x, n=n):
            (row,) = gradients(tensor_array_read(flat, j), [x], unconnected_gradients="zero",
                               **kwargs)
            return j + 1, rows.write(j, reshape(row, shape=(n,)))

        _, rows = while_loop(lambda j, rows, n=n: j < n, body, (constant(0, dtype="int64"), rows))
        # The loop's buffer is exactly the (n, n) Hessian: reshape it without a copy.
        result.append(reshape(rows._buf, shape=tuple(x.shape) * 2))
    return result
