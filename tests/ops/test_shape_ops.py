"""Shape and indexing primitives (getitem, scatter_add and their dynamic-index twins,
reshape, transpose, concatenate, stack, broadcast_to) and the compositions in ops.shape:
first and second derivatives, forward and reverse, against finite differences."""

import numpy as np
import pytest

import hessgrad as hg
from hessgrad.ops import core, indexing as ix, shape as S
from hessgrad.testing import check_grads

COVERED = {"getitem", "scatter_add", "getitem_dynamic", "scatter_add_dynamic", "reshape",
           "transpose", "concatenate", "stack", "broadcast_to", "rot90", "setitem"}

rng = np.random.default_rng(42)


def r(*shape):
    return rng.standard_normal(shape)


def T(a):
    return hg.convert_to_tensor(a)


IDX = np.array([2, 0, 2, -1])
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False,
                                                                            False]])

# (name, function of tensors, args): every row checked at order 2 in both modes.
ROWS = [
    ("getitem int", lambda a: T(a)[1], (r(3, 4),)),
    ("getitem negative int", lambda a: T(a)[-1, -2], (r(3, 4),)),
    ("getitem 0-d via ()", lambda a: T(a)[()] * T(a), (r(),)),
    ("getitem slices with steps", lambda a: T(a)[::-2, 1::2], (r(5, 4),)),
    ("getitem None/Ellipsis", lambda a: T(a)[None, ..., 1, None], (r(2, 3, 4),)),
    ("getitem repeated int array", lambda a: T(a)[IDX] * T(a)[IDX], (r(4, 2),)),
    ("getitem int arrays in tuple", lambda a: T(a)[IDX[:3], [0, 1, 1]] ** 2, (r(4, 2),)),
    ("getitem array and slice", lambda a: T(a)[:, [1, 1, 0]] ** 2, (r(3, 2),)),
    ("getitem boolean mask", lambda a: T(a)[MASK] ** 3, (r(3, 4),)),
    ("getitem mask in tuple", lambda a: T(a)[MASK[:, 0], 1:] ** 2, (r(3, 4),)),
    ("getitem list index", lambda a: T(a)[[0, 0, 1]] ** 2, (r(3),)),
    ("getitem empty result", lambda a: T(a)[2:2], (r(4, 3),)),
    ("getitem empty input", lambda a: T(a)[:, 0], (r(0, 3),)),
    ("getitem tensor index", lambda a: T(a)[hg.constant(IDX)] ** 2, (r(4),)),
    ("setitem slice", lambda a, v: ix.setitem(T(a) ** 2, T(v) * a[0], index=slice(1, 3)),
     (r(4), r(2))),
    ("setitem broadcast value", lambda a, v: ix.setitem(T(a), T(v) ** 3, index=(slice(None), 1))
     * a, (r(3, 2), r())),
    ("setitem repeated (last wins)", lambda a, v: ix.setitem(
        T(a), T(v) ** 2, index=(np.array([0, 2, 0]), slice(1, None))) * a, (r(3, 3), r(3, 2))),
    ("setitem 0-d", lambda a, v: ix.setitem(T(a), T(v) * a, index=()) ** 2, (r(), r())),
    ("setitem empty index", lambda a, v: ix.setitem(T(a) ** 2, T(v), index=np.array([], int)),
     (r(3), r(0))),
    ("scatter_add repeated", lambda g: core.scatter_add(T(g) ** 2, index=IDX, shape=(4,)),
     (r(4),)),
    ("scatter_add basic", lambda g: core.scatter_add(T(g) ** 2, index=(slice(1, 3), 0),
                                                     shape=(4, 2)), (r(2),)),
    ("getitem_dynamic", lambda a: ix.getitem_dynamic(T(a), hg.constant(IDX),
                                                     template=(ix._Slot(0), 1)) ** 2,
     (r(4, 2),)),
    ("scatter_add_dynamic", lambda g: ix.scatter_add_dynamic(
        T(g) ** 2, hg.constant(IDX), template=(ix._Slot(0),), shape=(3, 2)), (r(4, 2),)),
    ("reshape -1", lambda a: S.reshape_to(T(a) ** 2, (-1, 2)), (r(3, 4),)),
    ("reshape F order", lambda a: S.reshape_to(T(a) ** 2, (4, 3), order="F"), (r(3, 4),)),
    ("reshape 0-d", lambda a: S.reshape_to(T(a) ** 2, (1, 1)), (r(),)),
    ("reshape empty", lambda a: S.reshape_to(T(a), (3, 0)), (r(0, 3),)),
    ("transpose", lambda a: S.transpose(T(a) ** 2, axes=(2, 0, 1)), (r(2, 3, 4),)),
    ("transpose negative axes", lambda a: S.transpose_axes(T(a) ** 2, (-1, 0, -2)),
     (r(2, 3, 4),)),
    ("concatenate", lambda a, b: S.join([a * b[0], b ** 2, [1.0, 2.0]], axis=-1),
     (r(2), r(3))),
    ("concatenate axis 0 2-d", lambda a, b: S.join([T(a) ** 2, b], 0), (r(2, 3), r(1, 3))),
    ("concatenate axis None", lambda a, b: S.join([T(a) ** 2, b], None), (r(2, 3), r(4))),
    ("concatenate empty", lambda a, b: S.join([T(a), T(b) ** 2], 0), (r(0, 2), r(2, 2))),
    ("stack 0-d", lambda a, b: S.stack_arrays([T(a) * b, b, 3.0]), (r(), r())),
    ("stack negative axis", lambda a, b: S.stack_arrays([T(a) ** 2, b], axis=-1),
     (r(2, 3), r(2, 3))),
    ("broadcast_to", lambda a: S.broadcast_to(T(a) ** 2, (2, 3, 4)), (r(3, 1),)),
    ("broadcast_to 0-d", lambda a: S.broadcast_to(T(a) ** 2, (3,)), (r(),)),
    ("swapaxes/moveaxis", lambda a: S.moveaxis(S.swapaxes(T(a) ** 2, 0, -1), 0, 2),
     (r(2, 3, 4),)),
    ("expand_dims/squeeze", lambda a: S.squeeze(S.expand_dims(T(a) ** 2, (0, -1)), 0),
     (r(3),)),
    ("tile", lambda a: S.tile(T(a) ** 2, (2, 1, 3)), (r(2, 2),)),
    ("repeat scalar", lambda a: S.repeat(T(a) ** 2, 3, axis=-1), (r(2, 2),)),
    ("repeat array", lambda a: S.repeat(T(a) ** 2, [2, 0, 1]), (r(3),)),
    ("roll", lambda a: S.roll(T(a) ** 2, (1, -3), (0, 1)), (r(3, 4),)),
    ("roll flat", lambda a: S.roll(T(a) ** 2, 5), (r(3, 4),)),
    ("flip/rot90", lambda a: S.rot90(S.flip(T(a) ** 2, -1), 3), (r(3, 4),)),
    ("rot90 axes", lambda a: S.rot90(T(a) ** 2, -1, (2, 0)), (r(2, 3, 4),)),
    ("pad constant", lambda a: S.pad(T(a) ** 2, ((1, 0), (2, 1)), constant_values=2.5),
     (r(2, 3),)),
    ("pad constant tensor value", lambda a, c: S.pad(T(a) ** 2, 1, constant_values=T(c) * a[0]),
     (r(2), r())),
    ("pad edge", lambda a: S.pad(T(a) ** 2, (2, 3), mode="edge"), (r(3),)),
    ("pad reflect", lambda a: S.pad(T(a) ** 2, ((1, 2), (2, 2)), mode="reflect"), (r(3, 4),)),
    ("pad wrap", lambda a: S.pad(T(a) ** 2, 2, mode="wrap"), (r(3),)),
    ("diagonal offset", lambda a: S.diagonal(T(a) ** 2, -1, 2, 0), (r(3, 2, 4),)),
    ("trace", lambda a: S.trace(T(a) ** 2, 1), (r(3, 4),)),
    ("diag 1-d", lambda a: S.diag(T(a) ** 2, 1), (r(3),)),
    ("diagflat", lambda a: S.diagflat(T(a) ** 2, -1), (r(2, 2),)),
    ("triu/tril", lambda a: S.triu(T(a) ** 2, 1) + S.tril(T(a), -1), (r(2, 3, 3),)),
    ("diff prepend", lambda a: S.diff(T(a) ** 2, 2, prepend=0.5), (r(2, 4),)),
    ("vander", lambda a: S.vander(a, 4), (r(3),)),
    ("select", lambda a, b: S.select([a > 0, b > 0.5], [a * b, b], 1.5), (r(5), r(5))),
    ("take/take_along_axis", lambda a: ix.take(T(a) ** 2, [1, 1, 0], axis=-1) +
     ix.take_along_axis(T(a), np.array([[1, 1, 0], [0, 0, 0]]), axis=1), (r(2, 3),)),
    ("insert/delete", lambda a: S.delete(S.insert(T(a) ** 2, [1, 3], T(a)[0], axis=0), 0),
     (r(4),)),
    ("meshgrid", lambda a, b: S.meshgrid(T(a) ** 2, b)[0] * S.meshgrid(a, b)[1], (r(3), r(2))),
    ("split", lambda a: S.split(T(a) ** 2, 2, axis=1)[1] * S.split(a, [1], 1, False)[0],
     (r(2, 4),)),
    ("at set repeated", lambda a, v: T(a).at[[0, 2, 0], 1:].set(T(v) ** 2), (r(3, 2), r(3, 1))),
    ("at add repeated", lambda a, v: T(a).at[[0, 2, 0]].add(T(v) ** 2), (r(3, 2), r(2))),
    ("at multiply repeated", lambda a, v: T(a).at[[1, 1, 0, 1]].multiply(v), (r(3), r(4))),
    ("at set mask", lambda a, v: T(a).at[a > 0].set(v), (r(5), r())),
]


@pytest.mark.parametrize("name,f,args", ROWS, ids=[row[0] for row in ROWS])
def test_second_order_both_modes(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


# (name, hessgrad function on one tensor, the same in numpy)
VALUES = [
    ("index mix", lambda a: a[1:, None, [0, 2]], lambda a: a[1:, None, [0, 2]]),
    ("mask", lambda a: a[a > 0], lambda a: a[a > 0]),
    ("at set", lambda a: a.at[[0, 0, 1], 1].set(np.array([5.0, 6.0, 7.0])), None),
    ("at add", lambda a: a.at[[0, 0, 1], 1].add(np.array([5.0, 6.0, 7.0])), None),
    ("at multiply", lambda a: a.at[[0, 0, 1], 1].multiply(np.array([5.0, 6.0, 7.0])), None),
]


def _numpy_at(a, kind):
    a = a.copy()
    if kind == "at set":
        a[[0, 0, 1], 1] = [5.0, 6.0, 7.0]
    elif kind == "at add":
        np.add.at(a, ([0, 0, 1], 1), [5.0, 6.0, 7.0])
    else:
        np.multiply.at(a, ([0, 0, 1], 1), [5.0, 6.0, 7.0])
    return a


@pytest.mark.parametrize("name,f,ref", VALUES, ids=[v[0] for v in VALUES])
def test_values_eager_and_graph(name, f, ref):
    a = r(3, 4)
    expected = ref(a) if ref is not None else _numpy_at(a, name)
    np.testing.assert_allclose(f(hg.constant(a)).numpy(), expected)
    if name != "mask":  # a mask computed from a traced value has a data-dependent shape
        np.testing.assert_allclose(hg.function(f)(a), expected)


def test_graph_mode_constant_mask_and_symbolic_index():
    a = r(3, 4)
    f = hg.function(lambda x: hg.reduce_sum(x[MASK] ** 2))
    np.testing.assert_allclose(f(a), np.sum(a[MASK] ** 2))
    g = hg.function(hg.grad(lambda x, i: hg.reduce_sum(x[i] ** 2)))
    expected = np.zeros_like(a)
    np.add.at(expected, [2, 2, 0], 2 * a[[2, 2, 0]])
    np.testing.assert_allclose(g(a, np.array([2, 2, 0])), expected)
    h = hg.function(lambda x, i: hg.constant(1.0) * x.at[i].add(1.0))
    np.testing.assert_allclose(h(a, np.array([1, 1])), a + np.array([[0], [2], [0]]))


def test_symbolic_mask_is_a_clear_error():
    with pytest.raises(TypeError, match="boolean mask .* symbolic"):
        hg.function(lambda x: x[x > 0])(r(3))


@pytest.mark.parametrize("make,exc,match", [
    (lambda t: t[5], IndexError, r"getitem.*shape \(3, 4\)"),
    (lambda t: t[np.ones(2, bool)], IndexError, r"getitem.*shape \(3, 4\)"),
    (lambda t: t[0.5], IndexError, "getitem"),
    (lambda t: S.reshape_to(t, (5, -1)), ValueError, r"reshape.*\(3, 4\)"),
    (lambda t: S.join([t, np.ones((2, 3))], 0), ValueError, "concatenate.*must match"),
    (lambda t: S.join([t[0, 0], t[0, 1]]), ValueError, "zero-dimensional"),
    (lambda t: S.stack_arrays([t, t[0]]), ValueError, "stack.*same shape"),
    (lambda t: S.broadcast_to(t, (2, 3)), ValueError, r"broadcast_to.*\(3, 4\)"),
    (lambda t: S.swapaxes(t, 0, 2), np.exceptions.AxisError, "swapaxes"),
    (lambda t: S.expand_dims(t, 3), np.exceptions.AxisError, "expand_dims"),
    (lambda t: S.transpose_axes(t, (0, 0)), ValueError, "repeated axis"),
    (lambda t: S.pad(t, 1, mode="median"), ValueError, "pad: mode"),
    (lambda t: S.split(t, 3, axis=1), ValueError, "equal division"),
    (lambda t: t.at[0].set(np.ones(3)), ValueError, r"at\[...\].set.*\(3,\)"),
])
def test_bad_input_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make(hg.constant(r(3, 4)))


def test_augmented_assignment_rebinds_with_correct_derivative():
    def f(x):
        y = x * 1.0
        y += x ** 2
        y *= 3.0
        y -= x
        return hg.reduce_sum(y)
    x = r(4)
    np.testing.assert_allclose(hg.grad(f)(x), 3 * (1 + 2 * x) - 1)
    check_grads(f, (x,), order=2)


def test_occurrence_and_last_writes():
    ids = np.array([3, 1, 3, 3, 1, 0])
    np.testing.assert_array_equal(ix._occurrence(ids), [0, 0, 1, 2, 1, 0])
    np.testing.assert_array_equal(ix._last_writes(ids), [0, 0, 0, 1, 1, 1])


def test_long_fancy_index_chain_is_iterative():
    x = hg.constant(r(50))
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = x
        for k in range(200):
            y = y[np.arange(50)[::-1]] * 1.0
        s = hg.reduce_sum(y * x)
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), 2 * x.numpy())
