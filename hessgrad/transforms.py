"""Function transformations in the style of autograd and JAX: grad, value_and_grad, vjp,
jvp, linearize, jacrev, jacfwd, jacobian.

Called with numpy arrays or Python numbers they return numpy results (so they plug into
SciPy); called with Tensors, or inside another transform, a tape or a trace, they return
Tensors (so they nest, e.g. ``grad(grad(f))``, also where ``f`` closes over the outer
argument).
"""

import numpy as np

from .engine.backprop import UnconnectedGradients
from .engine.forward import ForwardAccumulator
from .engine.nest import flatten, pack_as
from .engine.state import THREAD
from .engine.tape import GradientTape
from .engine.tensor import Tensor, owned, shape_of
from .ops.core import constant, convert_to_tensor, identity, reshape
from .ops.shape import transpose
from .engine.batching import stacked_rows


def _argnums(argnums, nargs, fname):
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


_NESTED = (list, tuple, dict)


def _leaves(x):
    return flatten(x) if isinstance(x, _NESTED) else [x]  # the common bare array: no walk


def _pack(structure, leaves):
    return pack_as(structure, leaves) if isinstance(structure, _NESTED) else leaves[0]


# As in JAX, None in an argument or a result is a structure with no leaves: it has no
# derivative (None in gradients and Jacobians) and takes no tangent or cotangent.

def _present(structure):
    """The leaves of ``structure`` that are not None."""
    return [leaf for leaf in _leaves(structure) if leaf is not None]


def _fill(structure, items):
    """``structure`` with its leaves that are not None replaced by ``items``, in order."""
    it = iter(items)
    return _pack(structure, [None if leaf is None else next(it) for leaf in _leaves(structure)])


def _describe(x):
    if isinstance(x, _NESTED):
        return f"a {type(x).__name__} of {len(x)}"
    return "None" if x is None else "an array"


def _check_like(value, like, what, role, path=""):
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
            _check_like(value[k], like[k], what, role, f"{path}[{k!r}]")
    elif isinstance(like, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(like):
            raise ValueError(f"{where} is {_describe(value)}, expected {_describe(like)} like "
                             f"{role}{path}")
        for k, (v, lk) in enumerate(zip(value, like)):
            _check_like(v, lk, what, role, f"{path}[{k}]")
    elif (like is None) != (value is None) or isinstance(value, _NESTED):
        raise ValueError(f"{where} is {_describe(value)}, expected {_describe(like)} like "
                         f"{role}{path}")
    elif like is not None and tuple(shape_of(value)) != tuple(shape_of(like)):
        raise ValueError(f"{where} has shape {tuple(shape_of(value))}, expected "
                         f"{tuple(shape_of(like))}, the shape of {role}{path}")


def _is_plain(args):
    """Whether results go back as numpy: only for numpy arguments and a caller outside any
    tape, accumulator or trace, since inside one ``f`` may close over a tensor being
    differentiated or traced, and its result must keep that dependence (as JAX's do)."""
    state = THREAD.state
    if state.recorders or state.graphs:
        return False
    for a in args:
        if isinstance(a, Tensor) or isinstance(a, _NESTED) and any(
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


def _lift(args, nums, fname):
    """Replace the differentiated arguments by fresh tensors; returns (args, flat sources)."""
    args = list(args)
    sources = []
    for i in nums:
        leaves = [_fresh(leaf, fname, i) for leaf in _present(args[i])]
        args[i] = _fill(args[i], leaves)
        sources.extend(leaves)
    return args, sources


def _out(x, plain):
    """numpy for plain callers, tensors otherwise (structures kept)."""
    if not plain:
        return x
    if type(x) is Tensor:  # the common bare result: no walk
        return owned(x.numpy())
    return _pack(x, [owned(leaf.numpy()) if isinstance(leaf, Tensor) else leaf
                     for leaf in _leaves(x)])


def _group(args, nums, flat, single):
    """Regroup a flat list of per-leaf results like the differentiated arguments."""
    if single and not isinstance(args[nums[0]], _NESTED) and args[nums[0]] is not None:
        return flat[0]  # one bare argument
    out, k = [], 0
    for i in nums:
        n = len(_present(args[i]))
        out.append(_fill(args[i], flat[k:k + n]))
        k += n
    return out[0] if single else tuple(out)


class NonScalarOutput(TypeError):
    """A transform of scalar functions (grad, hvp, ...) met a function with a non-scalar
    result."""


def _check_scalar(y, fname):
    if isinstance(y, _NESTED):  # np.shape would read a tuple of tensors as one array
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


def _check_output_dtype(y, fname, holomorphic=False):
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


def _check_holomorphic(holomorphic, values, fname, what):
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


def _plain_value_and_grad(f, args, kwargs, i):
    """``value_and_grad(f, i)(*args, **kwargs)`` where argument ``i`` is a float ndarray and
    :func:`_is_plain` holds: the general path without its walks over argument structures."""
    source = Tensor(np.array(args[i]))  # a copy, as constant() makes: f cannot change x
    lifted = args[:i] + (source,) + args[i + 1:]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(source)
        value = f(*lifted, **kwargs)
    _check_scalar(value, "grad")
    _check_output_dtype(value, "grad")
    if not isinstance(value, Tensor):
        return _out(value, True), np.zeros_like(source._value)
    g = tape._backprop([value], [None], [source], UnconnectedGradients.ZERO)[0]
    return _out(value, True), owned(g._value)


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
            if type(x) is np.ndarray and x.dtype.kind == "f" and _is_plain(args):
                return _plain_value_and_grad(f, args, kwargs, fast)
        single, nums = _argnums(argnums, len(args), "grad")
        plain = _is_plain(args)
        lifted, sources = _lift(args, nums, "grad")
        _check_holomorphic(holomorphic, sources, "grad", "inputs")
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            value, aux = _split_aux(f(*lifted, **kwargs), has_aux, "grad")
        _check_scalar(value, "grad")
        _check_output_dtype(value, "grad", holomorphic)
        if isinstance(value, Tensor):  # the tape's core directly: the lists are flat already
            grads = tape._backprop([value], [None], sources, UnconnectedGradients.ZERO)
        else:
            grads = [constant(np.zeros(s.shape, s.dtype)) for s in sources]
        result = _out(_group(args, nums, grads, single), plain)
        value = _out(value, plain)
        if has_aux:
            return (value, _out(aux, plain)), result
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


def vjp(f, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns one gradient per primal.

    >>> import hessgrad as hg
    >>> y, pullback = hg.vjp(lambda x: x * x, np.array([1.0, 3.0]))
    >>> pullback(np.array([1.0, 1.0]))
    (array([2., 6.]),)
    """
    plain = _is_plain(primals)
    lifted, sources = _lift(primals, range(len(primals)), "vjp")
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        tape.watch(sources)
        out = f(*lifted)
    out, aux = out if has_aux else (out, None)

    def vjp_fn(cotangent):
        _check_like(cotangent, out, "vjp: cotangent", "the function's output")
        flat_out, flat_ct = _present(out), _present(cotangent)
        grads = tape.gradient(flat_out, sources, output_gradients=flat_ct,
                              unconnected_gradients="zero")
        return _out(_group(primals, range(len(primals)), grads, False), plain)

    if has_aux:
        return _out(out, plain), vjp_fn, _out(aux, plain)
    return _out(out, plain), vjp_fn


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
    _check_like(tangents, primals, "jvp: tangents", "primals")
    plain = _is_plain(primals) and _is_plain(tangents)
    lifted, sources = _lift(primals, range(len(primals)), "jvp")
    flat_t = [t if isinstance(t, Tensor) else constant(np.asarray(t, dtype=s.dtype))
              for t, s in zip(_present(list(tangents)), sources)]
    with ForwardAccumulator(sources, flat_t) as acc:
        out, aux = _split_aux(f(*lifted), has_aux, "jvp")
    tangent_out = _fill(out, [acc.jvp(y, unconnected_gradients="zero") for y in _present(out)])
    if has_aux:
        return _out(out, plain), _out(tangent_out, plain), _out(aux, plain)
    return _out(out, plain), _out(tangent_out, plain)


def linearize(f, *primals, has_aux=False):
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals`` (each
    call one forward-mode pass; primals may be nested structures, tangents shaped alike).
    With ``has_aux``, ``f`` returns ``(out, aux)`` and the result is ``(out, f_jvp, aux)``."""
    lifted, _ = _lift(primals, range(len(primals)), "linearize")
    plain = _is_plain(primals)
    out, aux = _split_aux(f(*lifted), has_aux, "linearize")

    def f_jvp(*tangents):
        return jvp(f, primals, tangents, has_aux=has_aux)[1]
    if has_aux:
        return _out(out, plain), f_jvp, _out(aux, plain)
    return _out(out, plain), f_jvp


def jacrev(f, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by reverse mode: shape ``out.shape + in.shape``, one VJP per output element,
    run as one batch (the backward pass traced once and replayed on all the one-hot
    cotangents, as JAX's ``vmap`` of ``vjp``; see :meth:`GradientTape.jacobian`).

    As in JAX, a structured output (tuple, list, dict) gives the same structure of Jacobians,
    each grouped like the differentiated arguments; with ``has_aux``, ``f`` returns
    ``(out, aux)`` and the Jacobian function returns ``(jacobian, aux)``; ``holomorphic`` as
    in :func:`grad`.

    >>> import hessgrad as hg
    >>> hg.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> hg.jacrev(lambda x: {"sq": x ** 2, "sum": hg.reduce_sum(x)})(np.array([1.0, 2.0]))["sum"]
    array([1., 1.])
    """
    def jac_f(*args, **kwargs):
        single, nums = _argnums(argnums, len(args), "jacrev")
        plain = _is_plain(args)
        lifted, sources = _lift(args, nums, "jacrev")
        _check_holomorphic(holomorphic, sources, "jacrev", "inputs")
        tape = GradientTape(persistent=True, watch_accessed_variables=False)
        with tape:
            tape.watch(sources)
            out, aux = _split_aux(f(*lifted, **kwargs), has_aux, "jacrev")
        _check_holomorphic(holomorphic, _present(out), "jacrev", "outputs")
        jacs = [_group(args, nums, tape.jacobian(convert_to_tensor(y), sources,
                                                 unconnected_gradients="zero"), single)
                for y in _present(out)]
        result = _out(_fill(out, jacs), plain)
        return (result, _out(aux, plain)) if has_aux else result
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
        single, nums = _argnums(argnums, len(args), "jacfwd")
        plain = _is_plain(args)
        lifted, sources = _lift(args, nums, "jacfwd")
        _check_holomorphic(holomorphic, sources, "jacfwd", "inputs")
        for i in nums:
            for s in _present(lifted[i]):
                if s.dtype.kind == "c" and not holomorphic:  # real unit tangents only
                    raise TypeError(f"jacfwd of complex inputs requires holomorphic=True (as "
                                    f"in JAX), but got {s.dtype} for argument {i}; for other "
                                    f"functions of complex inputs use jacrev, jvp or vjp")
        out, aux = _split_aux(f(*lifted, **kwargs), has_aux, "jacfwd")
        _check_holomorphic(holomorphic, _present(out), "jacfwd", "outputs")
        shapes = [tuple(shape_of(convert_to_tensor(y))) for y in _present(out)]
        jacs = [[] for _ in shapes]  # per output leaf, per source
        for s in sources:
            # One JVP per element of s, as one batch: a basis vector per row (JAX's vmap of jvp).
            def tangent_outputs(e, s=s):
                # (the trace's own copies of the sources, which its accumulator watches)
                inner, inner_sources = _lift(lifted, nums, "jacfwd")
                tangents = [reshape(e, shape=s.shape) if t is s else
                            constant(np.zeros(t.shape, t.dtype)) for t in sources]
                with ForwardAccumulator(inner_sources, tangents) as acc:
                    y, _ = _split_aux(f(*inner, **kwargs), has_aux, "jacfwd")
                    leaves = [convert_to_tensor(leaf) for leaf in _present(y)]
                return [acc.jvp(leaf, unconnected_gradients="zero") for leaf in leaves]
            n = max(s.size, 0)
            columns = stacked_rows(tangent_outputs, np.eye(n, dtype=s.dtype))
            for k, y_shape in enumerate(shapes):
                if not n:
                    j = constant(np.zeros(y_shape + (0,)))
                else:  # (n,) + y_shape, the input axis last
                    j = transpose(columns[k], axes=tuple(range(1, len(y_shape) + 1)) + (0,))
                jacs[k].append(reshape(j, shape=y_shape + tuple(s.shape)))
        jacs = [_group(args, nums, per_source, single) for per_source in jacs]
        result = _out(_fill(out, jacs), plain)
        return (result, _out(aux, plain)) if has_aux else result
    return jac_f


def _split_aux(out, has_aux, fname):
    """``(out, aux)`` of a function's result; aux is None without ``has_aux``."""
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{fname}: has_aux=True requires the function to return a pair "
                        f"(output, aux), got {type(out).__name__}")
    return out[0], out[1]
