"""The optimizer's diagonal products (hessgrad.compiler.diagonal): a traced
Jacobian multiplies its identity basis, scaled by a derivative, into constant weights; the
matrix product becomes a row or column scaling with the same numbers."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler.diagonal import diagonal_of

RNG = np.random.default_rng(11)
W = RNG.standard_normal((40, 30)) / 5
X = RNG.standard_normal(30)


def _compiled(f, *args):
    fn = hg.function(f)
    got = fn(*args)
    np.testing.assert_array_equal(got, hg.function(f, optimize=False)(*args))
    return got, fn.get_concrete_function(*args).compiled


def test_diagonal_of():
    eye = np.eye(5)
    for value, offset, values in [
            (eye[:, 1:], -1, [0, 1, 1, 1, 1]), (eye[:, :-1], 0, [1, 1, 1, 1, 0]),
            (2.0 * np.eye(4), 0, [2, 2, 2, 2]), (np.diag([1.0, 2, 3], k=1), 1, [1, 2, 3, 0]),
            (eye[1:], 1, [1, 1, 1, 1])]:
        got = diagonal_of(value)
        assert got[0] == offset and got[1].tolist() == values
    for value in (np.ones((3, 3)), eye + np.eye(5, k=1), eye[0], np.eye(3, dtype=np.float32),
                  np.zeros((3, 3)), eye[:1], np.eye(3).astype(bool), None, 2.0):
        assert diagonal_of(value) is None


def test_reverse_jacobian_of_a_layer_scales_the_weights_rows():
    got, c = _compiled(hg.jacrev(lambda x: hnp.tanh(W @ x)), X)
    assert c.counts_after["matmul"] == 1  # the forward W @ x only
    np.testing.assert_allclose(got, (1 - np.tanh(W @ X) ** 2)[:, None] * W, rtol=1e-14)


def test_forward_jacobian_scales_the_weights_columns():
    V = RNG.standard_normal((20, 40))
    got, c = _compiled(hg.jacfwd(lambda x: V @ hnp.tanh(x)), np.linspace(-1, 1, 40))
    assert "matmul" not in c.counts_after
    np.testing.assert_allclose(got, V * (1 - np.tanh(np.linspace(-1, 1, 40)) ** 2),
                               rtol=1e-14)


@pytest.mark.parametrize("case", ["infinite weight", "weights an argument"])
def test_the_dense_product_stays_when_it_could_differ_or_is_not_constant(case):
    if case == "infinite weight":
        Winf = W.copy()
        Winf[3, 4] = np.inf
        got, c = _compiled(hg.jacrev(lambda x: hnp.tanh(Winf @ x) * 0.0 + Winf @ x), X)
        assert np.isnan(got).any()  # 0 * inf in the dense product, as in numpy
    else:
        got, c = _compiled(hg.jacrev(lambda x, w: hnp.tanh(w @ x)), X, W)
    assert c.counts_after["matmul"] == 2
