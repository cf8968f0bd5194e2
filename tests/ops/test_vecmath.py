"""hessgrad.kernels.vecmath: the vectorised tanh against numpy's, value by value."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import vecmath

pytestmark = pytest.mark.skipif(vecmath._kernel() is None,
                                reason="llvmlite cannot compile here: numpy's tanh is used")


def ulps(a, b):
    """Distance in units in the last place between float64 arrays (0 for equal NaNs)."""
    ia, ib = (np.where(v.view(np.int64) < 0, np.int64(-2**63) - v.view(np.int64),
                       v.view(np.int64)) for v in (a, b))
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.abs(ia - ib))


@pytest.mark.parametrize("scale", [1e-300, 1e-12, 1e-4, 0.1, 0.5, 1.0, 3.0, 10.0, 25.0, 1e5])
def test_within_three_ulps_of_numpy(scale):
    x = np.random.default_rng(0).standard_normal(20_001) * scale
    assert ulps(vecmath.tanh(x), np.tanh(x)).max() <= 3


def test_dense_grid_and_special_values():
    x = np.concatenate([np.linspace(-30.0, 30.0, 600_001),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2e-308,
                         18.0, 19.5, 22.0, 22.5, -1e308, 1e308]])
    out = vecmath.tanh(x)
    assert ulps(out, np.tanh(x)).max() <= 3
    special = out[-14:]
    assert np.array_equal(special, np.tanh(x[-14:]), equal_nan=True)
    assert np.signbit(special[1]) and not np.signbit(special[0])  # -0.0 stays -0.0


@pytest.mark.parametrize("n", list(range(65, 83)) + [1000, 1001, 1003])  # x[1:] >= MIN_SIZE
def test_every_tail_length_and_shapes(n):
    x = np.random.default_rng(n).uniform(-4.0, 4.0, n)
    whole = vecmath.tanh(x)
    assert ulps(whole, np.tanh(x)).max() <= 3
    # the same numbers elementwise, whichever block or tail an element falls in
    assert np.array_equal(whole[1:], vecmath.tanh(x[1:]))
    if n % 2 == 0:
        assert np.array_equal(vecmath.tanh(x.reshape(2, -1)), whole.reshape(2, -1))


def test_in_place_and_fallbacks():
    x = np.random.default_rng(1).standard_normal((50, 40))
    expected = vecmath.tanh(x)
    y = x.copy()
    assert vecmath.tanh(y, out=y) is y and np.array_equal(y, expected)
    # numpy's own tanh for what the kernel does not take: exactly numpy's results
    for arg in (x[:, ::2], x.T, x.astype(np.float32), x[:3, :3], np.float64(0.5), 0.5):
        assert np.array_equal(vecmath.tanh(arg), np.tanh(arg))
        assert type(vecmath.tanh(arg)) is type(np.tanh(arg))
    other = np.empty_like(x)
    assert vecmath.tanh(x, out=other) is other and np.array_equal(other, np.tanh(x))


def test_used_by_hessgrad_tanh_in_every_mode():
    x = np.random.default_rng(2).standard_normal(1000)
    expected = vecmath.tanh(x)
    assert np.array_equal(hnp.tanh(x), expected)
    g = hg.grad(lambda x: hnp.sum(hnp.tanh(x)))
    compiled = hg.function(g)
    for grad in (g(x), compiled(x)):
        np.testing.assert_allclose(grad, 1.0 - np.tanh(x) ** 2, rtol=1e-14, atol=1e-15)
    hv = hg.hvp(lambda x: hnp.sum(hnp.tanh(x)))(x, np.ones_like(x))
    t = np.tanh(x)
    np.testing.assert_allclose(hv, -2.0 * t * (1.0 - t * t), rtol=1e-13, atol=1e-15)
