"""Function transformations in the style of autograd and JAX: grad, value_and_grad, vjp,
jvp, linearize, jacrev, jacfwd, jacobian.

Called with numpy arrays or Python numbers they return numpy results (so they plug into
SciPy); called with Tensors, or inside another transform, a tape or a trace, they return
Tensors (so they nest, e.g. ``grad(grad(f))``, also where ``f`` closes over the outer
argument).
"""

import numpy as np

from .arguments import (check_holomorphic, check_like, check_output_dtype, check_real_inputs,
                        check_scalar, fill, group, is_plain, lift, parse_argnums, present,
                        returned, split_aux)
from .engine.backprop import UnconnectedGradients
from .engine.batching import stacked_rows
from .engine.forward import ForwardAccumulator
from .engine.tape import GradientTape
from .engine.state import THREAD
from .engine.tensor import Tensor, owned, shape_of
from .ops.core import constant, convert_to_tensor, reshape
from .ops.reduction import sum as reduce_sum
from .ops.shape import transpose
from .tracing.reroll import rerolled


def _plain_value_and_grad(f, args, kwargs, i):
    """``value_and_grad(f, i)(*args, **kwargs)`` where argument ``i`` is a float ndarray and
    :func:`is_plain` holds: the general path without its walks over argument structures."""
    source = Tensor(np.array(args[i]))  # a copy, as constant() makes: f cannot change x
    lifted = args[:i] + (source,) + args[i + 1:]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(source)
        value = f(*lifted, **kwargs)
    check_scalar(value, "grad")
    check_output_dtype(value, "grad")
    if not isinstance(value, Tensor):
        return returned(value, True), np.zeros_like(source._value)
    g = tape._backprop([value], [None], [source], UnconnectedGradients.ZERO)[0]
    return returned(value, True), owned(g._value)


def value_and_grad(f, argnums=0, has_aux=False, holomorphic=False):
    """``f(*args) -> (value, gradient)`` of a scalar function, w.r.t. ``argnums``.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> hg.value_and_grad(lambda x: hnp.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    """
    # the commonest call, grad(f)(x) with a float array x, takes a shorter path
    fast = argnums if type(argnums) is int and argnums >= 0 and not has_aux and \
        not holomorphic else None

    def value_and_grad_f(*args, **kwargs):
        if fast is not None and fast < len(args):
            x = args[fast]
            if type(x) is np.ndarray and x.dtype.kind == "f" and is_plain(args):
                return _plain_value_and_grad(f, args, kwargs, fast)
        single, nums = parse_argnums(argnums, len(args), "grad")
        plain = is_plain(args)
        lifted, sources = lift(args, nums, "grad")
        check_holomorphic(holomorphic, sources, "grad", "inputs")
        g = f
        if THREAD.state.graphs and fast == 0 and len(args) == 1 and not kwargs:
            # traced once, run many times: a loop of scalar ops is worth packing first
            g = rerolled(f, args) or f
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            value, aux = split_aux(g(*lifted, **kwargs), has_aux, "grad")
        check_scalar(value, "grad")
        check_output_dtype(value, "grad", holomorphic)
        if isinstance(value, Tensor):  # the tape's core directly: the lists are flat already
            grads = tape._backprop([value], [None], sources, UnconnectedGradients.ZERO)
        else:
            grads = [constant(np.zeros(s.shape, s.dtype)) for s in sources]
        result = returned(group(args, nums, grads, single), plain)
        value = returned(value, plain)
        if has_aux:
            return (value, returned(aux, plain)), result
        return value, result
    return value_and_grad_f


def grad(f, argnums=0, has_aux=False, holomorphic=False):
    """The gradient function of a scalar function ``f`` w.r.t. argument(s) ``argnums``.

    Args:
        f: a function of arrays returning a scalar (and auxiliary data if ``has_aux``).
        argnums: an int or tuple of ints: which positional arguments to differentiate.
        has_aux: ``f`` returns ``(value, aux)``; the gradient function returns ``(g, aux)``.
        holomorphic: as in JAX, ``f`` is a holomorphic function of complex inputs with a
            complex output (checked); the result is its complex derivative. Without it a
            complex output raises TypeError (it would differentiate only the real part).
    Returns:
        A function with ``f``'s signature returning gradients shaped like those arguments.
    Raises:
        TypeError: the output is not a scalar, is complex (without ``holomorphic``), integer
            or boolean (no derivative), or an argument is not floating point.

    >>> import hessgrad as hg
    >>> float(hg.grad(lambda x: x ** 3)(2.0))
    12.0
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return grad_f


def elementwise_grad(f, argnums=0):
    """autograd's ``elementwise_grad``: the gradient of the sum of ``f``'s outputs, i.e. the
    column sums of its Jacobian in one reverse pass (its diagonal when ``f`` acts element by
    element).

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> hg.elementwise_grad(hnp.sin)(np.array([0.0, np.pi]))
    array([ 1., -1.])
    """
    return grad(lambda *args, **kwargs: reduce_sum(f(*args, **kwargs)), argnums)


def vjp(f, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns one gradient per primal.

    >>> import hessgrad as hg
    >>> y, pullback = hg.vjp(lambda x: x * x, np.array([1.0, 3.0]))
    >>> pullback(np.array([1.0, 1.0]))
    (array([2., 6.]),)
    """
    plain = is_plain(primals)
    lifted, sources = lift(primals, range(len(primals)), "vjp")
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        tape.watch(sources)
        out = f(*lifted)
    out, aux = out if has_aux else (out, None)

    def vjp_fn(cotangent):
        check_like(cotangent, out, "vjp: cotangent", "the function's output")
        flat_out, flat_ct = present(out), present(cotangent)
        grads = tape.gradient(flat_out, sources, output_gradients=flat_ct,
                              unconnected_gradients="zero")
        return returned(group(primals, range(len(primals)), grads, False), plain)

    if has_aux:
        return returned(out, plain), vjp_fn, returned(aux, plain)
    return returned(out, plain), vjp_fn


def jvp(f, primals, tangents, has_aux=False):
    """``(f(*primals), J @ tangents)`` by forward mode (JAX's signature); with ``has_aux``,
    ``f`` returns ``(out, aux)`` and the result is ``(out, J @ tangents, aux)``.

    >>> import hessgrad as hg
    >>> hg.jvp(lambda x: x ** 2, (np.array([3.0]),), (np.array([1.0]),))
    (array([9.]), array([6.]))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists, one entry per "
                        "argument of f, as in jvp(f, (x,), (v,)); got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    check_like(tangents, primals, "jvp: tangents", "primals")
    plain = is_plain(primals) and is_plain(tangents)
    lifted, sources = lift(primals, range(len(primals)), "jvp")
    flat_t = [t if isinstance(t, Tensor) else constant(np.asarray(t, dtype=s.dtype))
              for t, s in zip(present(list(tangents)), sources)]
    with ForwardAccumulator(sources, flat_t) as acc:
        out, aux = split_aux(f(*lifted), has_aux, "jvp")
    tangent_out = fill(out, [acc.jvp(y, unconnected_gradients="zero") for y in present(out)])
    if has_aux:
        return returned(out, plain), returned(tangent_out, plain), returned(aux, plain)
    return returned(out, plain), returned(tangent_out, plain)


def linearize(f, *primals, has_aux=False):
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals`` (each
    call one forward-mode pass; primals may be nested structures, tangents shaped alike).
    With ``has_aux``, ``f`` returns ``(out, aux)`` and the result is ``(out, f_jvp, aux)``."""
    lifted, _ = lift(primals, range(len(primals)), "linearize")
    plain = is_plain(primals)
    out, aux = split_aux(f(*lifted), has_aux, "linearize")

    def f_jvp(*tangents):
        return jvp(f, primals, tangents, has_aux=has_aux)[1]
    if has_aux:
        return returned(out, plain), f_jvp, returned(aux, plain)
    return returned(out, plain), f_jvp


def jacrev(f, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by reverse mode: shape ``out.shape + in.shape``, one VJP per output element,
    run as one batch (the backward pass traced once and replayed on all the one-hot
    cotangents, as JAX's ``vmap`` of ``vjp``; see :meth:`GradientTape.jacobian`).

    As in JAX, a structured output (tuple, list, dict) gives the same structure of Jacobians,
    each grouped like the differentiated arguments; with ``has_aux``, ``f`` returns
    ``(out, aux)`` and the Jacobian function returns ``(jacobian, aux)``; ``holomorphic`` as
    in :func:`grad`: as in JAX, complex outputs need it and integer or boolean outputs raise
    (``TypeError``); :func:`jacfwd` takes complex outputs of real inputs, :func:`vjp` and
    :func:`jvp` any function.

    >>> import hessgrad as hg
    >>> hg.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> hg.jacrev(lambda x: {"sq": x ** 2, "sum": hg.reduce_sum(x)})(np.array([1.0, 2.0]))["sum"]
    array([1., 1.])
    """
    def jac_f(*args, **kwargs):
        single, nums = parse_argnums(argnums, len(args), "jacrev")
        plain = is_plain(args)
        lifted, sources = lift(args, nums, "jacrev")
        check_holomorphic(holomorphic, sources, "jacrev", "inputs")
        tape = GradientTape(persistent=True, watch_accessed_variables=False)
        with tape:
            tape.watch(sources)
            out, aux = split_aux(f(*lifted, **kwargs), has_aux, "jacrev")
        for y in present(out):  # as JAX: no silent real part of a complex output, no zeros
            check_output_dtype(y, "jacrev", holomorphic)  # for an integer or boolean one
        jacs = [group(args, nums, tape.jacobian(convert_to_tensor(y), sources,
                                                 unconnected_gradients="zero"), single)
                for y in present(out)]
        result = returned(fill(out, jacs), plain)
        return (result, returned(aux, plain)) if has_aux else result
    return jac_f


jacobian = jacrev


def jacfwd(f, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: shape ``out.shape + in.shape``, one JVP per input element,
    run as one batch (``f`` with its tangents traced once and replayed on all the basis
    vectors, as JAX's ``vmap`` of ``jvp``; one at a time for fewer than
    ``hessgrad.engine.batching.VECTORIZE_MIN``, or when ``f`` cannot be traced or replayed).

    Structured outputs, ``has_aux`` and ``holomorphic`` as in :func:`jacrev`.
    """
    def jac_f(*args, **kwargs):
        single, nums = parse_argnums(argnums, len(args), "jacfwd")
        plain = is_plain(args)
        lifted, sources = lift(args, nums, "jacfwd")
        check_holomorphic(holomorphic, sources, "jacfwd", "inputs")
        check_real_inputs(holomorphic, lifted, nums, "jacfwd", "jacrev, jvp or vjp")
        out, aux = split_aux(f(*lifted, **kwargs), has_aux, "jacfwd")
        check_holomorphic(holomorphic, present(out), "jacfwd", "outputs")
        shapes = [tuple(shape_of(convert_to_tensor(y))) for y in present(out)]
        jacs = [[] for _ in shapes]  # per output leaf, per source
        for s in sources:
            # One JVP per element of s, as one batch: a basis vector per row (JAX's vmap of jvp).
            def tangent_outputs(e, s=s):
                # (the trace's own copies of the sources, which its accumulator watches)
                inner, inner_sources = lift(lifted, nums, "jacfwd")
                tangents = [reshape(e, shape=s.shape) if t is s else
                            constant(np.zeros(t.shape, t.dtype)) for t in sources]
                with ForwardAccumulator(inner_sources, tangents) as acc:
                    y, _ = split_aux(f(*inner, **kwargs), has_aux, "jacfwd")
                    leaves = [convert_to_tensor(leaf) for leaf in present(y)]
                return [acc.jvp(leaf, unconnected_gradients="zero") for leaf in leaves]
            n = max(s.size, 0)
            columns = stacked_rows(tangent_outputs, np.eye(n, dtype=s.dtype))
            for k, y_shape in enumerate(shapes):
                if not n:
                    j = constant(np.zeros(y_shape + (0,)))
                else:  # (n,) + y_shape, the input axis last
                    j = transpose(columns[k], axes=tuple(range(1, len(y_shape) + 1)) + (0,))
                jacs[k].append(reshape(j, shape=y_shape + tuple(s.shape)))
        jacs = [group(args, nums, per_source, single) for per_source in jacs]
        result = returned(fill(out, jacs), plain)
        return (result, returned(aux, plain)) if has_aux else result
    return jac_f
