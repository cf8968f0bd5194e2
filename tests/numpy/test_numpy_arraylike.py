"""numpy's array-likes in hessgrad.numpy: nested lists and tuples holding tensors (and
numbers) are stacked with hessgrad ops wherever numpy accepts an array-like, so gradients flow
through them (they raised 'a tensor that is being differentiated was converted to a numpy
array'); numpy's scalar types cast tensors; every pad-width form; r_, c_, s_, index_exp."""

import inspect

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

X0 = np.array([[0.3, 0.5, 0.7], [0.2, 0.4, 0.9], [0.1, 0.6, 0.8]])


# the calls: a list against the same values stacked by hand -------------------------
_S = hnp.stack


@pytest.mark.parametrize("f,stacked", [
    (lambda x: hnp.mean([x, x + 2]), lambda x: hnp.mean(_S([x, x + 2]))),
    (lambda x: hnp.std([x, x + 2], axis=0), lambda x: hnp.std(_S([x, x + 2]), axis=0)),
    (lambda x: hnp.var([x, x + 2]), lambda x: hnp.var(_S([x, x + 2]))),
    (lambda x: hnp.sum([x, x + 2], axis=1), lambda x: hnp.sum(_S([x, x + 2]), axis=1)),
    (lambda x: hnp.linalg.norm([x, x + 2]), lambda x: hnp.linalg.norm(_S([x, x + 2]))),
    (lambda x: hnp.sin((x, [1.0, 2.0, 3.0])), lambda x: hnp.sin(_S([x, [1.0, 2.0, 3.0]]))),
    (lambda x: hnp.mean([[x[0], 1.0], (2.0, x[1] * x[2])]),
     lambda x: hnp.mean(_S([_S([x[0], 1.0]), _S([2.0, x[1] * x[2]])]))),
    # functions with non-array parameters, which the sweep below cannot call with arrays
    (lambda x: hnp.linalg.matrix_power([[x[0], 1.0], [x[1], x[2]]], 3),
     lambda x: hnp.linalg.matrix_power(_S([_S([x[0], 1.0]), _S([x[1], x[2]])]), 3)),
    (lambda x: hnp.vectorize(lambda a, b: a * b ** 2)([x[0], x[1]], (x[2], 2.0)),
     lambda x: hnp.vectorize(lambda a, b: a * b ** 2)(_S([x[0], x[1]]), _S([x[2], 2.0]))),
], ids=["mean", "std", "var", "sum", "norm", "sin_tuple", "nested_scalars", "matrix_power",
        "vectorize"])
def test_lists_of_tensors_are_stacked(f, stacked):
    x = np.array([0.5, 1.5, -0.3])
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(stacked(x)), rtol=1e-15)
    np.testing.assert_allclose(hg.jacrev(f)(x), hg.jacrev(stacked)(x), rtol=1e-15)
    check_grads(f, (x,), order=2)


# every function, every array-like position: a nested list holding tensors behaves like the
# stacked tensor (same value, same gradient) wherever the stacked tensor is accepted ----------
def _functions():
    out = []
    for ns, prefix in ((hnp, ""), (hnp.linalg, "linalg."), (hnp.fft, "fft.")):
        for name in sorted(dir(ns)):
            f = getattr(ns, name)
            if name.startswith("_") or not callable(f) or inspect.isclass(f) or \
                    inspect.ismodule(f) or isinstance(f, type) or name in (
                        "vectorize", "frompyfunc", "piecewise", "apply_along_axis",
                        "apply_over_axes", "fromfunction", "seterr", "errstate",
                        "set_printoptions", "printoptions"):
                continue
            out.append((prefix + name, f))
    return out


CALLS = [(pos, nargs) for nargs in (1, 2, 3) for pos in range(nargs)]
# parameters that are no array-likes (a tensor passes there by its .dtype, or as a number;
# out= must be an array, written in place)
NOT_ARRAY_LIKE = {"dtype", "nan", "posinf", "neginf", "typechars", "to", "out"}
# where numpy itself reads a list differently from an array (a sequence of blocks, of sample
# coordinates), or takes no lists at all (ndarray methods, dtype rules)
SEQUENCE_SEMANTICS = {"block", "bmat", "histogramdd"}
NUMPY_REJECTS_LISTS = {"array2string", "array_repr", "array_str", "common_type",
                       "result_type", "can_cast", "mintypecode"}
# the array that numpy's in-place writers write into must be an array (numpy rejects lists)
WRITES_INTO = {"copyto": 0, "put": 0, "putmask": 0, "place": 0, "fill_diagonal": 0,
               "put_along_axis": 0}


def _array_like_position(f, pos):
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return True
    if pos < len(params) and params[pos].kind in (params[pos].POSITIONAL_ONLY,
                                                  params[pos].POSITIONAL_OR_KEYWORD):
        return params[pos].name not in NOT_ARRAY_LIKE
    return True


def _leaves(y):
    if isinstance(y, (tuple, list)):
        return [leaf for item in y for leaf in _leaves(item)]
    return [y]


def _run(f, pos, nargs, as_list):
    """``f``'s float results and their gradient w.r.t. x, with argument ``pos`` made from x
    (a list of three rows, or the stacked tensor) and the others numpy arrays."""
    with hg.GradientTape() as tape:
        x = hg.constant(X0)
        tape.watch(x)
        rows = [x[0], x[1] + 2.0, x[2] * 0.5]
        args = [X0.copy() for _ in range(nargs)]
        args[pos] = rows if as_list else hnp.stack(rows)
        y = f(*args)
        leaves = [leaf for leaf in _leaves(y) if isinstance(leaf, hg.Tensor)]
        floats = [leaf for leaf in leaves if leaf.dtype.kind == "f" and leaf.size]
        loss = sum(hg.reduce_sum(leaf) for leaf in floats) if floats else None
    values = [np.asarray(leaf.numpy() if isinstance(leaf, hg.Tensor) else leaf)
              for leaf in _leaves(y)]
    grad = None if loss is None else tape.gradient(loss, x)
    return values, None if grad is None else np.asarray(grad)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name,f", _functions(), ids=[n for n, _ in _functions()])
def test_every_array_like_argument(name, f):
    if name in SEQUENCE_SEMANTICS | NUMPY_REJECTS_LISTS:
        pytest.skip("numpy reads a list here differently from an array, or rejects lists")
    for pos, nargs in CALLS:
        if not _array_like_position(f, pos) or WRITES_INTO.get(name) == pos:
            continue
        try:
            with np.errstate(all="ignore"):
                expected = _run(f, pos, nargs, as_list=False)
        except Exception:  # noqa: BLE001 - not a valid call with a tensor there
            continue
        with np.errstate(all="ignore"):
            got = _run(f, pos, nargs, as_list=True)
        for mine, theirs in zip(got[0], expected[0]):
            np.testing.assert_array_equal(mine, theirs, err_msg=f"{name} {pos}/{nargs}")
        if expected[1] is not None:
            np.testing.assert_allclose(got[1], expected[1], err_msg=f"{name} {pos}/{nargs}")


def test_a_ragged_list_names_the_function_and_the_shapes():
    x = hg.constant(np.ones(3))
    with pytest.raises(ValueError, match=r"hessgrad.numpy.mean: argument 'a'.*ragged.*"
                                         r"\(2,\).*\(3,\)"):
        hnp.mean([x, x[:2]])


# numpy's scalar types cast arrays ------------------------------------------------------------
def test_scalar_types_cast_tensors():
    w = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0]])
    g = hg.grad(lambda w: hnp.sum(w[hnp.int64(w[:, -1])] ** 2))(w)
    np.testing.assert_allclose(g, 2 * w)  # rows 0 and 1, each once
    for t in (hnp.int64, hnp.intp, hnp.int32, hnp.uint8, hnp.bool_):  # constants
        np.testing.assert_array_equal(hg.grad(lambda x: hnp.sum(t(x) * x))(np.array([1.7, 2.2])),
                                      t(np.array([1.7, 2.2])))
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.float32(x) ** 2))(
        np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.float64([x, 2 * x])))(
        np.array([1.0, 2.0])), [3.0, 3.0])
    y = hnp.complex128(hg.constant(np.array([1.0, 2.0])))
    assert y.dtype == np.complex128
    np.testing.assert_array_equal(hg.function(lambda x: hnp.int64(x))(np.array([1.5, -1.5])),
                                  np.int64(np.array([1.5, -1.5])))


def test_scalar_types_stand_for_numpys():
    assert hnp.double is hnp.float64 and hnp.bool is hnp.bool_ and hnp.int_ is hnp.int64
    assert hnp.float64 == np.float64 and np.dtype(hnp.float32) == np.float32
    assert hnp.issubdtype(hnp.float64, hnp.floating) and issubclass(hnp.float64, np.floating)
    assert isinstance(np.float64(1.0), hnp.float64) and not isinstance(1, hnp.float64)
    assert type(hnp.float64(2)) is np.float64 and hnp.int64("3") == 3
    assert hnp.zeros(2, dtype=hnp.float32).dtype == np.float32
    assert hnp.ones(2).astype(hnp.int32).dtype == np.int32
    assert np.arange(3).astype(hnp.complex64).dtype == np.complex64
    assert hnp.finfo(hnp.float32).eps == np.finfo(np.float32).eps
    assert {np.float64: 1}[hnp.float64] == 1


# pad: every broadcast form of pad_width (and of the per-side options) ------------------------
@pytest.mark.parametrize("shape,pad_width", [
    ((3,), (3,)), ((3,), 3), ((3,), ((1, 2),)), ((3,), (1, 2)), ((3,), [[2]]),
    ((2, 3), (2,)), ((2, 3), ((1,), (2,))), ((2, 3), ((1, 2), (3, 0))), ((2, 3), [[1], [2]]),
    ((2, 3), (1, 2)), ((2, 3), np.array([[1, 0], [0, 2]])),
    ((2, 3), {1: (1, 2)}), ((2, 3), {0: 2}), ((2, 3), {-1: 1, 0: (0, 2)}), ((3,), {}),
])
@pytest.mark.parametrize("mode,kwargs", [
    ("constant", {}), ("constant", {"constant_values": (5,)}),
    ("constant", {"constant_values": ((1, 2),)}), ("edge", {}), ("reflect", {}), ("wrap", {}),
    ("mean", {"stat_length": (1,)}), ("linear_ramp", {"end_values": (4,)}), ("maximum", {}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
])
def test_pad_accepts_numpys_pad_width_forms(shape, pad_width, mode, kwargs):
    x = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    np.testing.assert_allclose(hnp.pad(x, pad_width, mode, **kwargs).numpy(),
                               np.pad(x, pad_width, mode, **kwargs))


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("pad_width", [1, ((2, 7), (5, 0)), {1: (9, 4)}])
def test_pad_odd_reflection(mode, pad_width):
    # 2 * edge - x, in chunks with moving edges when the pad is wider than the array
    x = np.arange(1.0, 7.0).reshape(2, 3) ** 1.5
    np.testing.assert_allclose(hnp.pad(x, pad_width, mode, reflect_type="odd").numpy(),
                               np.pad(x, pad_width, mode, reflect_type="odd"))
    n = np.arange(6).reshape(2, 3)  # integer arrays keep their dtype
    got = hnp.pad(n, pad_width, mode, reflect_type="odd")
    assert got.dtype == n.dtype
    np.testing.assert_array_equal(got.numpy(), np.pad(n, pad_width, mode, reflect_type="odd"))
    check_grads(lambda y: hnp.pad(y, pad_width, mode, reflect_type="odd") ** 2, (x,))
    np.testing.assert_allclose(
        hg.function(lambda y: hnp.pad(y, pad_width, mode, reflect_type="odd"))(x),
        np.pad(x, pad_width, mode, reflect_type="odd"))


def _pad_with(vector, pad_width, iaxis, kwargs):  # numpy's docstring example
    vector[:pad_width[0]] = kwargs.get("padder", 10)
    vector[-pad_width[1]:] = kwargs.get("padder", 10)


def _pad_from_values(vector, pad_width, iaxis, kwargs):  # padding computed from the line
    before, after = pad_width
    if before:
        vector[:before] = vector[before] * 2
    if after:
        vector[-after:] = vector[-after - 1] ** 2


@pytest.mark.parametrize("function,kwargs", [(_pad_with, {}), (_pad_with, {"padder": 3.0}),
                                             (_pad_from_values, {})])
@pytest.mark.parametrize("pad_width", [2, ((1, 2), (2, 1)), {1: (0, 2)}])
def test_pad_callable_mode(function, kwargs, pad_width):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    expected = np.pad(x, pad_width, function, **kwargs)
    np.testing.assert_allclose(hnp.pad(x, pad_width, function, **kwargs), expected)
    np.testing.assert_allclose(hnp.pad(hnp.asarray(x), pad_width, function, **kwargs).numpy(),
                               expected)
    np.testing.assert_allclose(
        hg.function(lambda y: hnp.pad(y, pad_width, function, **kwargs))(x), expected)
    check_grads(lambda y: hnp.pad(y, pad_width, function, **kwargs), (x,), order=2)


def test_pad_gradient_and_bad_width():
    g = hg.grad(lambda x: hnp.sum(hnp.pad(x, (3,), "constant") ** 2))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [2.0, 4.0])
    with pytest.raises(ValueError, match=r"pad: pad_width .*\(1, 3\).* \(2, 2\)"):
        hnp.pad(np.ones((2, 3)), ((1, 2, 3),))
    with pytest.raises(ValueError, match=r"pad: pad_width names axis 2, but the array has 2"):
        hnp.pad(np.ones((2, 3)), {2: 1})
    with pytest.raises(TypeError, match=r"pad: pad_width for axis 0 must be an int or a pair"):
        hnp.pad(np.ones((2, 3)), {0: (1, 2, 3)})
    a = np.ones(3)  # a new array, as numpy's, also when nothing is padded
    for mode in ("constant", "edge", "mean"):
        assert hnp.pad(a, {}, mode) is not a and hnp.pad(a, 0, mode) is not a
    g = hg.grad(lambda x: hnp.sum(hnp.pad(x, {0: (1, 2)}, "edge") ** 2))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [4.0, 12.0])


# index tricks ------------------------------------------------------------------------------
_V, _M = np.array([1.0, 2.0]), np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("build", [
    lambda m: m.r_[_V, 0.0, 1:4, _V], lambda m: m.r_[1:2:5j, _V], lambda m: m.r_["0,2", _V, _V],
    lambda m: m.r_["0,2,0", _V, _V], lambda m: m.r_["-1", _M, _M],
    lambda m: m.r_["1,2,0", [1, 2, 3], [4, 5, 6]], lambda m: m.c_[_V, _V],
    lambda m: m.c_[_M, _M], lambda m: m.c_[_V, _V, 1:3],
    lambda m: m.r_[_V.astype(np.float32), 1.0],
    lambda m: m.r_[np.int8(1), _V], lambda m: m.c_[0, _V[:1], _V[:1]], lambda m: m.r_[3],
    lambda m: m.r_[[1, 2], 3],
])
def test_r_and_c_match_numpy(build):
    got, expected = build(hnp), build(np)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected)


def test_r_and_c_differentiate_and_trace():
    g = hg.grad(lambda v: hnp.sum(hnp.r_[v, 0.0, v * 2] ** 2))(_V)
    np.testing.assert_allclose(g, 10 * _V)
    np.testing.assert_allclose(hg.grad(lambda v: hnp.sum(hnp.c_[v, 3 * v]))(_V), [4.0, 4.0])
    np.testing.assert_allclose(hg.function(lambda v: hnp.r_[v, 1.0])(_V), [1.0, 2.0, 1.0])
    assert hnp.s_[1:3] == np.s_[1:3] and hnp.index_exp[::2] == np.index_exp[::2]
    np.testing.assert_array_equal(hnp.mgrid[0:2, 1:4], np.mgrid[0:2, 1:4])
    np.testing.assert_array_equal(hnp.mgrid[0:1:5j], np.mgrid[0:1:5j])
    for got, expected in zip(hnp.ogrid[0:2, 0:3], np.ogrid[0:2, 0:3]):
        np.testing.assert_array_equal(got, expected)
    assert list(hnp.ndindex(2, 2)) == list(np.ndindex(2, 2))
    y = hnp.arange(6.0).reshape(2, 3)  # a grid indexes a hessgrad array as numpy's
    np.testing.assert_array_equal(y[tuple(hnp.mgrid[0:2, 0:2])].numpy(),
                                  np.arange(6.0).reshape(2, 3)[tuple(np.mgrid[0:2, 0:2])])
    with pytest.raises(NotImplementedError, match="r_: numpy.matrix"):
        hnp.r_["r", _V]


def test_versions():
    import pathlib
    import tomllib

    # from pyproject.toml (the installed metadata when not run from a checkout), not a copy
    pyproject = pathlib.Path(hg.__file__).parent.parent / "pyproject.toml"
    with open(pyproject, "rb") as f:
        assert hg.__version__ == tomllib.load(f)["project"]["version"]
    assert hnp.__version__ == np.__version__
