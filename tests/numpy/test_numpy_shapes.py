"""hessgrad.numpy shape functions and constructors: values equal numpy's on several shapes,
derivatives (order 2, fwd and rev) against finite differences, and the same inside
``hessgrad.function`` (values and gradients)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(7)


def r(*shape):
    return rng.standard_normal(shape)


# name -> (call with the numpy module `m` and arguments, list of argument tuples)
# The same lambda runs with m=numpy (reference) and m=hessgrad.numpy.
CASES = {
    "reshape": (lambda m, a: m.reshape(a, (-1, 2)), [(r(2, 3),), (r(4),), (r(0, 2),)]),
    "reshape_F": (lambda m, a: m.reshape(a, (3, -1), order="F"), [(r(2, 3),), (r(6, 1),)]),
    "ravel": (lambda m, a: m.ravel(a), [(r(2, 3),), (r(),)]),
    "transpose": (lambda m, a: m.transpose(a), [(r(2, 3, 4),), (r(3),), (r(),)]),
    "transpose_axes": (lambda m, a: m.transpose(a, (1, -1, 0)), [(r(2, 3, 4),)]),
    "swapaxes": (lambda m, a: m.swapaxes(a, 0, -1), [(r(2, 3, 4),), (r(2, 3),)]),
    "moveaxis": (lambda m, a: m.moveaxis(a, [0, 1], [-1, 0]), [(r(2, 3, 4),)]),
    "expand_dims": (lambda m, a: m.expand_dims(a, (0, -1)), [(r(2),), (r(),)]),
    "squeeze": (lambda m, a: m.squeeze(a), [(r(1, 3, 1),), (r(1),)]),
    "squeeze_axis": (lambda m, a: m.squeeze(a, -1), [(r(1, 3, 1),)]),
    "broadcast_to": (lambda m, a: m.broadcast_to(a, (2, 3, 4)), [(r(3, 1),), (r(),)]),
    "broadcast_arrays": (lambda m, a, b: m.broadcast_arrays(a, b)[0] * m.broadcast_arrays(
        a, b)[1], [(r(3, 1), r(4)), (r(), r(2))]),
    "atleast_1d": (lambda m, a: m.atleast_1d(a), [(r(),), (r(2, 2),)]),
    "atleast_2d": (lambda m, a: m.atleast_2d(a), [(r(),), (r(3),)]),
    "atleast_3d": (lambda m, a: m.atleast_3d(a), [(r(),), (r(3),), (r(2, 3),)]),
    "concatenate": (lambda m, a, b: m.concatenate([a, b], axis=-1), [(r(2, 3), r(2, 1)),
                                                                     (r(0), r(2))]),
    "concatenate_lists": (lambda m, a, b: m.concatenate([[0.0], a, b, [1.0, 2.0]]),
                          [(r(3), r(2))]),
    "concatenate_none": (lambda m, a, b: m.concatenate((a, b), axis=None), [(r(2, 2), r(3))]),
    "stack": (lambda m, a, b: m.stack([a, b], axis=-1), [(r(2, 3), r(2, 3)), (r(), r())]),
    "hstack": (lambda m, a, b: m.hstack([a, b]), [(r(2), r(3)), (r(2, 1), r(2, 2))]),
    "vstack": (lambda m, a, b: m.vstack([a, b]), [(r(3), r(3)), (r(1, 2), r(2, 2))]),
    "dstack": (lambda m, a, b: m.dstack([a, b]), [(r(3), r(3)), (r(2, 2), r(2, 2))]),
    "column_stack": (lambda m, a, b: m.column_stack([a, b]), [(r(3), r(3, 2))]),
    "split": (lambda m, a: m.split(a, 2, axis=-1)[1], [(r(3, 4),)]),
    "split_indices": (lambda m, a: m.split(a, [1, 3])[1], [(r(5),)]),
    "array_split": (lambda m, a: m.array_split(a, 3)[0], [(r(7, 2),), (r(2),)]),
    "hsplit": (lambda m, a: m.hsplit(a, 2)[0], [(r(2, 4),)]),
    "vsplit": (lambda m, a: m.vsplit(a, 2)[1], [(r(4, 2),)]),
    "dsplit": (lambda m, a: m.dsplit(a, 2)[1], [(r(1, 2, 4),)]),
    "tile": (lambda m, a: m.tile(a, (2, 3)), [(r(2),), (r(2, 2),), (r(),)]),
    "tile_int": (lambda m, a: m.tile(a, 2), [(r(2, 3),)]),
    "repeat": (lambda m, a: m.repeat(a, 2), [(r(2, 3),), (r(),)]),
    "repeat_axis": (lambda m, a: m.repeat(a, [1, 0, 2], axis=-1), [(r(2, 3),)]),
    "roll": (lambda m, a: m.roll(a, -1, axis=0), [(r(3, 2),), (r(0),)]),
    "roll_flat": (lambda m, a: m.roll(a, 4), [(r(3, 2),)]),
    "flip": (lambda m, a: m.flip(a), [(r(2, 3),), (r(),)]),
    "flip_axis": (lambda m, a: m.flip(a, -1), [(r(2, 3),)]),
    "fliplr": (lambda m, a: m.fliplr(a), [(r(2, 3),)]),
    "flipud": (lambda m, a: m.flipud(a), [(r(2, 3),), (r(4),)]),
    "rot90": (lambda m, a: m.rot90(a), [(r(2, 3),), (r(2, 3, 2),)]),
    "rot90_k": (lambda m, a: m.rot90(a, -1, axes=(1, 2)), [(r(2, 3, 2),)]),
    "rot90_2": (lambda m, a: m.rot90(a, 2), [(r(2, 3),)]),
    "pad_constant": (lambda m, a: m.pad(a, ((1, 2), (0, 1)), constant_values=((1.0, 2.0),
                                                                                (3.0, 4.0))),
                     [(r(2, 3),)]),
    "pad_int": (lambda m, a: m.pad(a, 2), [(r(3),), (r(0),)]),
    "pad_edge": (lambda m, a: m.pad(a, (1, 2), mode="edge"), [(r(3, 2),)]),
    "pad_reflect": (lambda m, a: m.pad(a, 3, mode="reflect"), [(r(3),)]),
    "pad_symmetric": (lambda m, a: m.pad(a, ((1, 0), (2, 2)), mode="symmetric"),
                      [(r(2, 3),)]),
    "pad_wrap": (lambda m, a: m.pad(a, (4, 1), mode="wrap"), [(r(3),)]),
    "pad_maximum": (lambda m, a: m.pad(a, ((1, 2), (2, 1)), mode="maximum"), [(r(3, 4),)]),
    "pad_maximum_1d": (lambda m, a: m.pad(a, (1, 2), mode="maximum"), [(r(5),)]),
    "pad_minimum": (lambda m, a: m.pad(a, 2, mode="minimum", stat_length=2), [(r(3, 4),)]),
    "pad_mean": (lambda m, a: m.pad(a, ((0, 2), (1, 1)), mode="mean",
                                    stat_length=((1, 3), (2, 9))), [(r(3, 4),)]),
    "pad_median": (lambda m, a: m.pad(a, (1, 3), mode="median"), [(r(4, 3),), (r(5),)]),
    "pad_linear_ramp": (lambda m, a: m.pad(a, ((2, 0), (1, 3)), mode="linear_ramp",
                                           end_values=((1.0, 2.0), (-3.0, 4.0))),
                        [(r(2, 3),)]),
    "pad_linear_ramp_0": (lambda m, a: m.pad(a, 3, mode="linear_ramp"), [(r(4),)]),
    "diag": (lambda m, a: m.diag(a), [(r(3),), (r(3, 4),), (r(0),)]),
    "diag_k": (lambda m, a: m.diag(a, -2), [(r(3),), (r(3, 4),)]),
    "diagflat": (lambda m, a: m.diagflat(a, 1), [(r(2, 2),)]),
    "diagonal": (lambda m, a: m.diagonal(a, 1, -1, 0), [(r(3, 4),), (r(2, 3, 4),)]),
    "trace": (lambda m, a: m.trace(a), [(r(3, 4),), (r(2, 2, 3),)]),
    "triu": (lambda m, a: m.triu(a, -1), [(r(3, 4),), (r(2, 3, 3),), (r(3),)]),
    "tril": (lambda m, a: m.tril(a, 1), [(r(3, 4),), (r(4),)]),
    "take": (lambda m, a: m.take(a, [0, 2, 2, -1]), [(r(2, 3),)]),
    "take_axis": (lambda m, a: m.take(a, [[0, 1], [1, 1]], axis=-1), [(r(2, 3),)]),
    "take_wrap": (lambda m, a: m.take(a, [5, -7], mode="wrap"), [(r(3),)]),
    "take_along_axis": (lambda m, a: m.take_along_axis(a, np.array([[2, 0], [1, 1]]), axis=1),
                        [(r(2, 3),)]),
    "take_along_axis_bcast": (lambda m, a: m.take_along_axis(a, np.array([[0, 0, 1]]), axis=0),
                              [(r(2, 3),)]),
    "where": (lambda m, a, b: m.where(a > b, a, b * 2.0), [(r(3), r(2, 3)), (r(), r())]),
    "select": (lambda m, a, b: m.select([a > 0, b > 0], [a, b * a], 0.5), [(r(4), r(4))]),
    "choose": (lambda m, a, b: m.choose(np.array([0, 1, 1, 0]), [a, b]), [(r(4), r(4))]),
    "diff": (lambda m, a: m.diff(a), [(r(5),), (r(2, 3),)]),
    "diff_n": (lambda m, a: m.diff(a, 2, axis=0, append=0.0), [(r(4, 2),)]),
    "diff_prepend": (lambda m, a: m.diff(a, prepend=a[:1]), [(r(4),)]),
    "meshgrid": (lambda m, a, b: m.meshgrid(a, b)[0] * m.meshgrid(a, b)[1], [(r(3), r(2))]),
    "meshgrid_ij": (lambda m, a, b: m.meshgrid(a, b, indexing="ij")[1] + m.meshgrid(
        a, b, sparse=True)[0], [(r(3), r(3))]),
    "vander": (lambda m, a: m.vander(a), [(r(3),)]),
    "vander_inc": (lambda m, a: m.vander(a, 4, increasing=True), [(r(3),)]),
    "append": (lambda m, a, b: m.append(a, b), [(r(2, 2), r(3))]),
    "append_axis": (lambda m, a, b: m.append(a, b, axis=0), [(r(2, 2), r(1, 2))]),
    "delete": (lambda m, a: m.delete(a, [0, 2]), [(r(4),)]),
    "delete_axis": (lambda m, a: m.delete(a, 1, axis=-1), [(r(2, 3),)]),
    "insert": (lambda m, a, b: m.insert(a, 1, b), [(r(3), r(2))]),
    "insert_axis": (lambda m, a, b: m.insert(a, [0, 2], b, axis=1), [(r(2, 3), r())]),
    "array_of_tensors": (lambda m, a, b: m.array([[a[0], b], [1.0, a[1] * b]]),
                         [(r(2), r())]),
    "asarray_list": (lambda m, a: m.asarray([a, a * 2.0]), [(r(3),)]),
    "full_like": (lambda m, a: m.full_like(a, 2.5) * a, [(r(2, 3),)]),
    "zeros_ones": (lambda m, a: m.zeros(a.shape) + m.ones_like(a) * a + m.zeros_like(a),
                   [(r(2, 3),)]),
    "eye": (lambda m, a: m.eye(3, 4, 1) * a, [(r(3, 4),)]),
    "identity": (lambda m, a: m.identity(3) @ a, [(r(3, 2),)]),
    "arange": (lambda m, a: m.arange(1, 4) * a + m.arange(3.0), [(r(3),)]),
    "linspace": (lambda m, a: m.linspace(-1.0, 2.0, 4) * a, [(r(4),)]),
    "logspace": (lambda m, a: m.logspace(0.0, 1.0, 3) * a, [(r(3),)]),
    "copy": (lambda m, a: m.copy(a) * a, [(r(3),)]),
}

FLAT = [(name, f, args) for name, (f, arg_list) in CASES.items() for args in arg_list]
IDS = [f"{name}-{'x'.join(str(np.shape(a)) for a in args)}" for name, _, args in FLAT]


def _value(x):
    return x.numpy() if isinstance(x, hg.Tensor) else np.asarray(x)


@pytest.mark.parametrize("name,f,args", FLAT, ids=IDS)
def test_value_matches_numpy(name, f, args):
    expected = f(np, *args)
    got = f(hnp, *[hg.constant(a) for a in args])
    assert isinstance(got, hg.Tensor)
    np.testing.assert_allclose(_value(got), expected, rtol=1e-13, atol=1e-13)
    assert _value(got).shape == np.shape(expected)
    assert _value(got).dtype == np.asarray(expected).dtype


@pytest.mark.parametrize("name,f,args", FLAT, ids=IDS)
def test_second_order_both_modes(name, f, args):
    if all(np.size(a) == 0 for a in args):
        pytest.skip("no derivative to check for empty inputs")
    check_grads(lambda *xs: f(hnp, *xs), args, order=2, modes=("fwd", "rev"))


GRAPH = [(name, CASES[name][0], CASES[name][1][0]) for name in CASES]


@pytest.mark.parametrize("name,f,args", GRAPH, ids=[g[0] for g in GRAPH])
def test_graph_mode_value_and_gradient(name, f, args):
    expected = f(np, *args)
    np.testing.assert_allclose(hg.function(lambda *xs: f(hnp, *xs))(*args), expected,
                               rtol=1e-13, atol=1e-13)
    loss = hg.grad(lambda *xs: hnp.sum(f(hnp, *xs) ** 2))
    np.testing.assert_allclose(hg.function(loss)(*args), loss(*args), rtol=1e-12, atol=1e-13)


def test_pad_statistics_and_ramps_keep_integer_dtypes_and_empty_pads_with_zeros():
    a = np.arange(12).reshape(3, 4) * 3
    for mode, options in [("mean", {}), ("median", {"stat_length": 2}), ("maximum", {}),
                          ("linear_ramp", {"end_values": (1, 20)})]:
        got = hnp.pad(a, (2, 1), mode=mode, **options)
        want = np.pad(a, (2, 1), mode=mode, **options)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    x = hg.constant(r(2, 3))
    np.testing.assert_array_equal(hnp.pad(x, 1, mode="empty").numpy(),
                                  np.pad(x.numpy(), 1))


def test_split_returns_pieces_like_numpy():
    a = r(7, 2)
    for ours, theirs in zip(hnp.array_split(hg.constant(a), 3), np.array_split(a, 3)):
        np.testing.assert_array_equal(ours.numpy(), theirs)
    assert len(hnp.split(hg.constant(a), [2, 5])) == 3


def test_meshgrid_and_broadcast_arrays_return_tuples():
    a, b = hg.constant(r(3)), hg.constant(r(2))
    assert isinstance(hnp.meshgrid(a, b), tuple) and len(hnp.meshgrid(a, b)) == 2
    assert isinstance(hnp.broadcast_arrays(a, 1.0), tuple)
    assert isinstance(hnp.atleast_1d(a, 1.0), tuple)


def test_constructors_values_and_dtypes():
    cases = [
        (hnp.zeros((2, 3)), np.zeros((2, 3))), (hnp.ones(3, dtype=np.int32), np.ones(3, np.int32)),
        (hnp.empty(2), np.zeros(2)), (hnp.full((2,), 7), np.full((2,), 7)),
        (hnp.zeros_like(np.ones((2,), np.float32)), np.zeros(2, np.float32)),
        (hnp.ones_like(hg.constant([1, 2])), np.ones(2, np.int64)),
        (hnp.empty_like(hg.constant(r(2))), np.zeros(2)),
        (hnp.full_like(hg.constant([1.0, 2.0]), 3), np.full(2, 3.0)),
        (hnp.eye(2, dtype=int), np.eye(2, dtype=int)), (hnp.identity(2), np.identity(2)),
        (hnp.arange(5), np.arange(5)), (hnp.arange(0.5, 2.0, 0.5), np.arange(0.5, 2.0, 0.5)),
        (hnp.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False)),
        (hnp.logspace(0, 2, 3, base=2.0), np.logspace(0, 2, 3, base=2.0)),
        (hnp.geomspace(1, 100, 3), np.geomspace(1, 100, 3)),
        (hnp.array([[1, 2], [3, 4]], dtype=float), np.array([[1, 2], [3, 4]], dtype=float)),
        (hnp.array(3.0, ndmin=2), np.array(3.0, ndmin=2)),
        (hnp.asarray([1, 2], dtype=np.float32), np.asarray([1, 2], dtype=np.float32)),
    ]
    for got, expected in cases:
        assert isinstance(got, hg.Tensor)
        np.testing.assert_array_equal(got.numpy(), expected)
        assert got.dtype == expected.dtype


def test_differentiable_constructors():
    check_grads(lambda s: hnp.full((2, 3), s * s), (r(),), order=2)
    check_grads(lambda s: hnp.full_like(np.ones(4), s) * s, (r(),), order=2)
    check_grads(lambda a, b: hnp.linspace(a, b, 5), (r(), r()), order=2)
    check_grads(lambda a, b: hnp.linspace(a, b, 4, endpoint=False, axis=-1), (r(2), r(2)),
                order=2)
    check_grads(lambda a: hnp.logspace(a, 1.0, 3), (r(),), order=2)
    np.testing.assert_allclose(hnp.linspace(hg.constant(1.0), 3.0, 5).numpy(),
                               np.linspace(1.0, 3.0, 5))
    _, step = hnp.linspace(hg.constant(0.0), 1.0, 5, retstep=True)
    assert float(step) == 0.25


def test_arange_differentiates_in_tensor_start_and_step():
    # a tensor start/step was read as a constant: eager gradients were silently 0
    check_grads(lambda s: hnp.arange(s, 4.0), (0.5,), order=2)
    check_grads(lambda s: hnp.arange(s, 5.0, s) ** 2, (1.5,), order=2)
    np.testing.assert_allclose(hg.grad(lambda s: hnp.sum(hnp.arange(0.0, 5.0, s)))(2.0), 3.0)
    np.testing.assert_allclose(hg.grad(lambda s: hnp.sum(hnp.arange(s)))(2.5), 0.0)
    for args in [(5,), (1.5, 4.0), (0.1, 1.0, 0.1), (2, 9, 3)]:
        got = hnp.arange(*[hg.constant(a) for a in args])
        np.testing.assert_array_equal(got.numpy(), np.arange(*args))
        assert got.dtype == np.arange(*args).dtype


def test_geomspace_differentiates_in_tensor_bounds():
    # it was a constant: eager gradients were silently 0, traced calls raised
    pos = np.array([1.5, 4.0])
    for args in [{}, {"endpoint": False}, {"num": 1}]:
        kw = {"num": 4, **args}
        check_grads(lambda s: hnp.geomspace(s[0], s[1], **kw), (pos,), order=2)
        check_grads(lambda s: hnp.geomspace(-s[0], -s[1], **kw), (pos,), order=2)
    check_grads(lambda s: hnp.geomspace(s[:1], s, 3, axis=1), (pos,), order=2)
    np.testing.assert_allclose(hg.grad(lambda s: hnp.geomspace(s, 8.0, 4)[1])(1.0), 4 / 3)
    for bounds in [(1.5, 4.0), (-2.0, -0.5), (np.array([1.0, 2.0]), np.array([4.0, 9.0]))]:
        expected = np.geomspace(*bounds, 5, axis=-1)
        got = hnp.geomspace(hg.constant(bounds[0]), bounds[1], 5, axis=-1)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-14)
        traced = hg.function(lambda a, b: hnp.geomspace(a, b, 5, axis=-1))(*bounds)
        np.testing.assert_allclose(traced, expected, rtol=1e-14)
    with pytest.raises(ValueError, match="geomspace: Geometric sequence cannot include zero"):
        hnp.geomspace(hg.constant(0.0), 1.0, 3)


def test_asarray_of_a_tensor_is_the_tensor():
    t = hg.constant([1.0, 2.0])
    assert hnp.asarray(t) is t
    assert hnp.array(t) is not t
    np.testing.assert_array_equal(hnp.asarray(t, dtype=np.float32).numpy(),
                                  np.array([1, 2], np.float32))


def test_constructors_in_graph_mode():
    f = hg.function(lambda x: hnp.concatenate((hnp.zeros(1), x, hnp.ones(1))) * hnp.arange(4))
    np.testing.assert_allclose(f(np.array([2.0, 3.0])), [0.0, 2.0, 6.0, 3.0])


def test_nonzero_family_and_where_one_argument():
    a = np.array([[0.0, 1.0], [2.0, 0.0]])
    t = hg.constant(a)
    for ours, theirs in zip(hnp.nonzero(t), np.nonzero(a)):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(hnp.flatnonzero(t), np.flatnonzero(a))
    np.testing.assert_array_equal(hnp.argwhere(t), np.argwhere(a))
    for ours, theirs in zip(hnp.where(t > 0), np.where(a > 0)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    assert hnp.shape(t) == (2, 2) and hnp.ndim(t) == 2 and hnp.size(t) == 4 \
        and hnp.size(t, -1) == 2


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.reshape(hg.constant(r(2, 3)), (4, 2)), ValueError, r"reshape.*\(2, 3\)"),
    (lambda: hnp.concatenate([hg.constant(r(2)), np.ones((2, 2))]), ValueError,
     "concatenate"),
    (lambda: hnp.stack([]), ValueError, "stack: need at least one"),
    (lambda: hnp.moveaxis(hg.constant(r(2, 3)), 0, 5), np.exceptions.AxisError, "moveaxis"),
    (lambda: hnp.diag(hg.constant(r(2, 2, 2))), ValueError, "diag: input must be 1-d or 2-d"),
    (lambda: hnp.diagonal(hg.constant(r(3))), ValueError, "diagonal.*at least 2-d"),
    (lambda: hnp.take(hg.constant(r(3)), [0.5]), IndexError, "take: indices must be integers"),
    (lambda: hnp.take_along_axis(hg.constant(r(2, 3)), np.array([0]), 1), ValueError,
     "take_along_axis"),
    (lambda: hnp.select([np.array([1, 0])], [hg.constant(r(2))]), TypeError, "select"),
    (lambda: hnp.choose(np.array([0, 3]), [r(2), r(2)]), ValueError, "choose"),
    (lambda: hnp.fliplr(hg.constant(r(3))), ValueError, "fliplr"),
    (lambda: hnp.array([[hg.constant(1.0)], [1.0, 2.0]]), ValueError, "ragged"),
    (lambda: hnp.tile(hg.constant(r(2)), (-1,)), ValueError, "tile"),
    (lambda: hnp.pad(hg.constant(r(2)), -1), ValueError, "pad"),
    (lambda: hnp.pad(hg.constant(r(0, 2)), 1, mode="mean"), ValueError, "pad.*empty axis 0"),
    (lambda: hnp.pad(hg.constant(r(3)), 1, mode="maximum", stat_length=0), ValueError,
     "pad: stat_length 0"),
    (lambda: hnp.pad(r(3), 1, mode="linear_ramp", end_values=hg.constant(1.0)), TypeError,
     "pad: end_values"),
    (lambda: hnp.pad(r(3), 1, mode="median", end_values=1.0), TypeError, "pad.*end_values"),
    (lambda: hnp.pad(r(3), (1, 2, 3), mode="mean"), ValueError, "pad: pad_width"),
])
def test_errors_name_function_and_shapes(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- property-based: random shapes and indices agree with numpy ---------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnps  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(hnps.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), st.data())
def test_random_basic_and_advanced_indexing(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=float).reshape(shape)
    index = data.draw(hnps.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    np.testing.assert_array_equal(hg.constant(a)[index].numpy(), a[index])
    if shape and shape[0]:
        ints = data.draw(hnps.arrays(np.int64, st.integers(1, 5),
                                     elements=st.integers(-shape[0], shape[0] - 1)))
        np.testing.assert_array_equal(hg.constant(a)[ints].numpy(), a[ints])
        g = hg.grad(lambda x: hnp.sum(x[ints] * 1.0))(a)
        expected = np.zeros_like(a)
        np.add.at(expected, ints, 1.0)
        np.testing.assert_array_equal(g, expected)


@settings(max_examples=40, deadline=None)
@given(hnps.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4), st.data())
def test_random_rearrangements(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=float).reshape(shape)
    t = hg.constant(a)
    perm = data.draw(st.permutations(range(len(shape))))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    shift = data.draw(st.integers(-6, 6))
    np.testing.assert_array_equal(hnp.transpose(t, perm).numpy(), np.transpose(a, perm))
    np.testing.assert_array_equal(hnp.roll(t, shift, axis).numpy(), np.roll(a, shift, axis))
    np.testing.assert_array_equal(hnp.flip(t, axis).numpy(), np.flip(a, axis))
    np.testing.assert_array_equal(hnp.concatenate([t, a], axis).numpy(),
                                  np.concatenate([a, a], axis))
    np.testing.assert_array_equal(hnp.reshape(t, (-1,)).numpy(), a.reshape(-1))
    reps = data.draw(st.tuples(*[st.integers(0, 2)] * len(shape)))
    np.testing.assert_array_equal(hnp.tile(t, reps).numpy(), np.tile(a, reps))


def test_dtypes_and_errors_follow_numpy():
    x32 = np.array([1.0, 2.0, 3.0], np.float32)
    # insert casts the values to the array's dtype
    assert hnp.insert(x32, 1, 5.0).dtype == np.float32
    np.testing.assert_array_equal(hnp.insert(np.arange(3), 1, 5.7).numpy(),
                                  np.insert(np.arange(3), 1, 5.7))
    assert hg.grad(lambda x: hnp.sum(hnp.insert(x, 1, 5.0) ** 2))(x32).dtype == np.float32
    assert float(hg.grad(lambda v: hnp.sum(hnp.insert(np.ones(3), 1, v) ** 2))(2.0)) == 4.0
    # a Python default does not promote float32 choices
    assert hnp.select([x32 > 1], [x32]).dtype == np.float32
    assert hnp.choose([0, 1, 1], [x32, 2 * x32]).dtype == np.float32
    np.testing.assert_array_equal(hnp.choose([0, 1, 1], [x32, 2 * x32]).numpy(), [1, 4, 6])
    # joining float32 with float64 data: a float64 result, a float32 gradient (as in JAX)
    for f in (lambda x: hnp.sum(hnp.concatenate([x, np.ones(2)]) ** 2),
              lambda x: hnp.sum(hnp.kron(x, np.ones(2)) ** 2),
              lambda x: hnp.sum(hnp.diff(x, prepend=np.ones(1)) ** 2)):
        assert f(x32).dtype == np.float64
        assert hg.grad(f)(x32).dtype == np.float32
        assert hg.hvp(f)(x32, np.ones(3, np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more"):
        hnp.vsplit(np.ones(4), 2)
    with pytest.raises(IndexError, match=r"delete: obj 5 is out of bounds for axis 1 .*\(2, 3\)"):
        hnp.delete(np.ones((2, 3)), 5, axis=1)
    with pytest.raises(IndexError, match="insert: obj 9 is out of bounds for axis 1"):
        hnp.insert(np.ones((2, 3)), 9, 1.0, axis=1)


def test_shape_ndim_size_of_symbolic_tensors():
    g = hg.Graph()
    with g.as_default():
        unknown_rank = hg.placeholder("float64", shape=None)
        partly = hg.placeholder("float64", shape=(None, 3))
        assert hnp.shape(partly) == (None, 3) and hnp.ndim(partly) == 2
        assert hnp.size(partly, axis=-1) == 3
        for fn in (hnp.shape, hnp.ndim, hnp.size):
            with pytest.raises(ValueError, match=rf"{fn.__name__}: the rank of symbolic tensor "
                                                 "Placeholder:0 is unknown"):
                fn(unknown_rank)
        for axis in (None, 0):
            with pytest.raises(ValueError, match=r"size: symbolic tensor .* shape \(None, 3\)"):
                hnp.size(partly, axis=axis)
    assert hnp.size(np.ones((2, 3)), 1) == 3 and hnp.ndim(3.0) == 0
    assert hnp.size(hg.constant(np.ones((2, 0)))) == 0


def test_diff_of_booleans_is_not_equal():
    # numpy differences booleans with not_equal; hnp.diff subtracted them (TypeError)
    b = np.array([[True, False, True, True], [False, False, True, False]])
    for kw in ({}, {"n": 2}, {"axis": 0}, {"prepend": False}, {"append": b[:, :1]}):
        expected = np.diff(b, **kw)
        for got in (hnp.diff(b, **kw), hg.function(lambda b: hnp.diff(b, **kw))(b)):
            assert np.asarray(got).dtype == np.bool_
            np.testing.assert_array_equal(got, expected)
