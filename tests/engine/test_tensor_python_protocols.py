"""An objective called outside any differentiation returns an eager Tensor: it formats,
prints, converts, compares and pickles as the numpy value would (issue 37 part 2). A
symbolic tensor in a trace still has no value to hand out."""

import copy
import json
import math
import pickle

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp


def loss(w):
    return hnp.sum(w ** 2) / 5.0


W = np.array([1.0, 2.0])


@pytest.fixture
def t():
    out = loss(W)
    assert isinstance(out, hg.Tensor)
    return out


@pytest.mark.parametrize("spec", ["", ".3f", ">10", ".2e", "g", "+.1%", "010.4f"])
def test_format_like_a_numpy_scalar(t, spec):
    assert format(t, spec) == format(np.float64(1.0), spec)
    assert f"{t:{spec}}" == f"{np.sum(W ** 2) / 5.0:{spec}}"


def test_str_and_print_like_numpy(t, capsys):
    assert str(t) == "1.0"
    print(t)
    assert capsys.readouterr().out == "1.0\n"
    v = hnp.asarray(np.arange(3.0)) * 1.5
    assert str(v) == str(np.arange(3.0) * 1.5) and f"{v}" == f"{np.arange(3.0) * 1.5}"
    with pytest.raises(TypeError, match="format"):  # numpy arrays take no format spec
        format(v, ".2f")
    assert repr(t) == "hessgrad.Tensor(1., dtype=float64)"  # repr says what it is
    assert "%.2f" % t == "1.00"
    i = hnp.asarray(np.array(7, np.int32)) + 0
    assert f"{i:03d}" == "007" and str(i) == "7"


def test_conversions(t):
    assert json.dumps(float(t)) == "1.0"
    assert float(t) == 1.0 and int(t) == 1 and complex(t) == 1 + 0j
    assert round(t) == 1 and isinstance(round(t), int)
    assert float(round(t * 1.23456, 2)) == 1.23
    assert math.trunc(t * 1.7) == 1 and math.floor(t * 1.7) == 1 and math.ceil(t * 1.7) == 2
    assert [10, 20, 30][hnp.asarray(np.array(2)) + 0] == 30
    assert t.item() == 1.0 and t.tolist() == 1.0


def test_comparisons_and_numpy_functions(t):
    assert t == 1.0 and t < 1.5 and t >= 1.0 and not t > 1.0
    assert bool(np.isclose(t, 1.0)) and np.isclose(t, 1.0)
    assert np.allclose(t, 1.0) and max(t, 0.5) == 1.0 and sorted([t, 0.5])[0] == 0.5
    assert float(np.asarray(t)) == 1.0 and np.float64(t) == 1.0


def test_pickle_and_copy(t):
    back = pickle.loads(pickle.dumps(t))
    assert isinstance(back, hg.Tensor) and float(back) == 1.0 and back.dtype == np.float64
    arr = hnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)) * 2
    back = pickle.loads(pickle.dumps(arr))
    np.testing.assert_array_equal(back.numpy(), np.arange(6.0).reshape(2, 3) * 2)
    assert back.dtype == np.float32 and back.shape == (2, 3)
    assert float(copy.deepcopy(t)) == 1.0
    v = hg.Variable(np.array([1.0, 2.0]), name="w")
    vb = pickle.loads(pickle.dumps(v))
    assert isinstance(vb, hg.Variable) and vb.name == "w" and vb.trainable
    np.testing.assert_array_equal(vb.numpy(), [1.0, 2.0])


def test_written_tensor_prints_its_newest_value():
    a = hnp.zeros(3)
    a[1] = 2.5
    assert str(a) == str(np.array([0.0, 2.5, 0.0]))
    s = hnp.sum(a)
    s += 1.0
    assert f"{s:.2f}" == "3.50"
    assert float(pickle.loads(pickle.dumps(s))) == 3.5


def test_format_while_differentiated_prints_the_value(capsys):
    def f(x):
        y = hnp.sum(x ** 2)
        print(f"{y:.2f}")
        return y

    np.testing.assert_allclose(hg.grad(f)(W), 2 * W)
    assert "5.00" in capsys.readouterr().out


def test_symbolic_tensor_has_no_value():
    seen = {}

    @hg.function
    def f(x):
        y = hnp.sum(x ** 2)
        seen["str"] = str(y)
        with pytest.raises(hg.ConcretizationError):
            float(y)
        with pytest.raises(hg.ConcretizationError):
            format(y, ".3f")
        with pytest.raises(hg.ConcretizationError):
            pickle.dumps(y)
        return y

    assert float(f(W)) == 5.0
    assert seen["str"].startswith("<hessgrad.Tensor")
