"""TensorFlow's higher-order functions over the leading axis: ``scan``, ``foldl``, ``foldr``
and ``map_fn``, built from ``while_loop`` and ``TensorArray``.

Eagerly they are Python loops (tapes see every op); in graph mode (``hessgrad.function``, an
explicit ``Graph``) each is one ``while`` node whose body is traced once, so its gradients and
Hessians are loops too (see the package's docstring). The sequence length is static:
the leading dimension of ``elems`` must be known when the graph is built.

>>> import hessgrad as hg, numpy as np
>>> hg.scan(lambda acc, x: acc + x, np.arange(1.0, 5.0)).numpy()       # running sum
array([ 1.,  3.,  6., 10.])
>>> float(hg.foldl(lambda acc, x: acc * x, np.arange(1.0, 5.0)))        # 4!
24.0
>>> hg.grad(lambda a: hg.reduce_sum(hg.map_fn(lambda x: x * x, a)))(np.array([1.0, 2.0]))
array([2., 4.])
"""

import numpy as np

from ...engine.nest import flatten, pack_as, structure_key
from ...engine.tensor import dtype_of, shape_of
from ..core import convert_to_tensor, zeros
from ..elementwise import less, subtract
from .loops import while_loop
from .tensor_array import TensorArray


def _sequences(fname, elems):
    """The leaves of ``elems`` as tensors and their common static length."""
    leaves = [convert_to_tensor(x) for x in flatten(elems)]
    if not leaves:
        raise ValueError(f"{fname}: elems must hold at least one tensor, got {elems!r}")
    lengths = set()
    for k, x in enumerate(leaves):
        shape = shape_of(x)
        if shape is None or len(shape) == 0 or shape[0] is None:
            raise ValueError(f"{fname}: elems leaf {k} has shape {shape}; each leaf needs a "
                             "leading dimension known when the graph is built")
        lengths.add(shape[0])
    if len(lengths) > 1:
        raise ValueError(f"{fname}: the leaves of elems have different lengths along axis 0: "
                         f"{[shape_of(x) for x in leaves]}")
    return leaves, lengths.pop()


def _element_arrays(xs, n):
    """One TensorArray per sequence, holding its elements (read by index in the loop)."""
    return [TensorArray(dtype_of(x), size=n, element_shape=shape_of(x)[1:]).unstack(x)
            for x in xs]


def _output_arrays(leaves, n):
    return [TensorArray(dtype_of(y), size=n, element_shape=shape_of(y)) for y in leaves]


def _check_result(fname, what, out, like):
    leaves = [convert_to_tensor(y) for y in flatten(out)]
    if structure_key(out, leaves) != structure_key(like):
        raise ValueError(f"{fname}: fn must return {what} with the structure "
                         f"{structure_key(like)}, got {structure_key(out, leaves)}")
    for k, (y, ref) in enumerate(zip(leaves, flatten(like))):
        if dtype_of(y) != dtype_of(ref) or tuple(shape_of(y)) != tuple(shape_of(ref)):
            raise ValueError(f"{fname}: fn's result leaf {k} has dtype {dtype_of(y)} and "
                             f"shape {shape_of(y)}, but {what} leaf {k} has dtype "
                             f"{dtype_of(ref)} and shape {shape_of(ref)}")
    return leaves


def _fold(fname, fn, elems, initializer, reverse, keep_all):
    """The loop behind scan (``keep_all``: every accumulator, stacked) and foldl/foldr."""
    xs, n = _sequences(fname, elems)

    def position(i):  # the element of step i
        return subtract(n - 1, i) if reverse else i

    if initializer is None:
        if n == 0:
            raise ValueError(f"{fname}: elems are empty and there is no initializer")
        acc = pack_as(elems, [x[n - 1 if reverse else 0] for x in xs])
        start = 1
    else:
        acc = pack_as(initializer, [convert_to_tensor(a) for a in flatten(initializer)])
        start = 0
    acc_leaves = flatten(acc)
    outs = _output_arrays(acc_leaves, n) if keep_all else []
    if keep_all and start:
        outs = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(outs, acc_leaves)]
    arrays = _element_arrays(xs, n)

    def body(i, leaves, outs):
        k = position(i)
        x = pack_as(elems, [ta.read(k) for ta in arrays])
        new = _check_result(fname, "the accumulator", fn(pack_as(acc, leaves), x), acc)
        return i + 1, new, [ta.write(k, a) for ta, a in zip(outs, new)]

    _, leaves, outs = while_loop(lambda i, *_: less(i, n), body,
                                 (convert_to_tensor(start, dtype=np.int64), acc_leaves, outs))
    return pack_as(acc, [ta.stack() for ta in outs] if keep_all else leaves)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Every accumulator of ``acc = fn(acc, x)`` over the elements ``x`` of ``elems`` along
    axis 0, stacked (TensorFlow's ``tf.scan``).

    Args:
        fn: ``fn(acc, x) -> acc``; ``x`` has the structure of ``elems``, ``acc`` that of
            ``initializer`` (of ``elems`` without one), and the result must match it in
            structure, dtypes and shapes.
        elems: a tensor or a (nested) list/tuple/dict of tensors of one length along axis 0.
        initializer: the first accumulator; None starts from the first element (which is
            then also the first output).
        reverse: run from the last element to the first (outputs stay in elems' order).
        parallel_iterations, back_prop, swap_memory, infer_shape, name: accepted for
            compatibility.
    Returns:
        The accumulators with the structure of ``initializer`` (or ``elems``), each leaf with
        a new leading axis of elems' length.
    Raises:
        ValueError: empty elems without an initializer, leaves of different lengths or of
            unknown length, or fn returning another structure, dtype or shape.

    >>> import hessgrad as hg, numpy as np
    >>> hg.scan(lambda acc, x: acc * x, np.array([1.0, 2.0, 3.0]), reverse=True).numpy()
    array([6., 6., 3.])
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    return _fold("scan", fn, elems, initializer, reverse, keep_all=True)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """The last accumulator of ``acc = fn(acc, x)`` over ``elems`` along axis 0, first to
    last (TensorFlow's ``tf.foldl``); the arguments are :func:`scan`'s.

    >>> import hessgrad as hg, numpy as np
    >>> float(hg.foldl(lambda acc, x: 2.0 * acc + x, np.array([1.0, 0.0, 1.0])))
    5.0
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold("foldl", fn, elems, initializer, False, keep_all=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """:func:`foldl` from the last element to the first (TensorFlow's ``tf.foldr``).

    >>> import hessgrad as hg, numpy as np
    >>> float(hg.foldr(lambda acc, x: 2.0 * acc + x, np.array([1.0, 0.0, 1.0])))
    5.0
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold("foldr", fn, elems, initializer, True, keep_all=False)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` applied to each element of ``elems`` along axis 0, results stacked
    (TensorFlow's ``tf.map_fn``).

    Args:
        fn: ``fn(x) -> y``; ``x`` has the structure of ``elems``; ``y`` may have any
            structure, the same for every element.
        elems: a tensor or a (nested) list/tuple/dict of tensors of one length along axis 0.
        fn_output_signature: optional dtype (or structure of dtypes) of ``fn``'s result,
            checked; ``dtype`` is its deprecated name.
        parallel_iterations, back_prop, swap_memory, infer_shape, name: accepted for
            compatibility.
    Returns:
        ``fn``'s results stacked along a new leading axis, with the structure of ``y``.
    Raises:
        ValueError: leaves of different or unknown lengths; fn's results differing between
            elements in structure, dtype or shape.
        TypeError: ``fn``'s result does not match ``fn_output_signature``.

    >>> import hessgrad as hg, numpy as np
    >>> hg.map_fn(lambda row: hg.reduce_sum(row), np.array([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([3., 7.])
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    xs, n = _sequences("map_fn", elems)
    # fn's result on the first element fixes the output's structure, dtypes and shapes
    # (on zeros when there is none, so that an empty map still has its output's shape)
    first = [x[0] if n else zeros(shape=shape_of(x)[1:], dtype=dtype_of(x)) for x in xs]
    y0 = fn(pack_as(elems, first))
    y0_leaves = [convert_to_tensor(y) for y in flatten(y0)]
    _check_signature(fn_output_signature if fn_output_signature is not None else dtype, y0,
                     y0_leaves)
    outs = _output_arrays(y0_leaves, n)
    if n == 0:
        return pack_as(y0, [ta.stack() for ta in outs])
    outs = [ta.write(0, y) for ta, y in zip(outs, y0_leaves)]
    arrays = _element_arrays(xs, n)

    def body(i, outs):
        y = fn(pack_as(elems, [ta.read(i) for ta in arrays]))
        leaves = _check_result("map_fn", "the first element's result", y, y0)
        return i + 1, [ta.write(i, v) for ta, v in zip(outs, leaves)]

    _, outs = while_loop(lambda i, _: less(i, n), body,
                         (convert_to_tensor(1, dtype=np.int64), outs))
    return pack_as(y0, [ta.stack() for ta in outs])


def _check_signature(signature, y, leaves):
    if signature is None:
        return
    expected = flatten(signature)
    if len(expected) != len(leaves) or (len(expected) > 1 and
                                        structure_key(signature) != structure_key(y, leaves)):
        raise TypeError(f"map_fn: fn_output_signature {signature!r} does not match the "
                        f"structure of fn's result {structure_key(y, leaves)}")
    for k, (spec, leaf) in enumerate(zip(expected, leaves)):
        # a dtype, or anything with one (a TensorSpec-like object)
        dt = np.dtype(spec if isinstance(spec, (type, str, np.dtype)) else spec.dtype)
        if dt != dtype_of(leaf):
            raise TypeError(f"map_fn: fn's result leaf {k} has dtype {dtype_of(leaf)}, but "
                            f"fn_output_signature says {dt}")


__all__ = ["scan", "foldl", "foldr", "map_fn"]
