"""hessgrad.scipy.signal: SciPy's values for every mode, 1-D and n-D, real and complex, swapped
'valid' operands; first and second derivatives in both operands; graph mode."""

import numpy as np
import pytest
import scipy.signal as ssig

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy.signal as hsig
from hessgrad.testing import check_grads

rng = np.random.default_rng(0)
SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 4), (2, 3)), ((2, 3), (5, 4)), ((4, 5, 3), (2, 2, 2))]


@pytest.mark.parametrize("fn", ["convolve", "correlate", "fftconvolve"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("s1,s2", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_values_equal_scipy(fn, mode, s1, s2):
    a, b = rng.normal(size=s1), rng.normal(size=s2)
    want = getattr(ssig, fn)(a, b, mode=mode)
    got = np.asarray(getattr(hsig, fn)(a, b, mode=mode))
    assert got.shape == want.shape
    # direct: rounding of the sums (rtol 1e-12 of the largest entry); FFT: about 1e-15 of it
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())


@pytest.mark.parametrize("fn", ["convolve", "correlate", "fftconvolve"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_complex_values(fn, mode):
    a = rng.normal(size=5) + 1j * rng.normal(size=5)
    b = rng.normal(size=3) + 1j * rng.normal(size=3)
    for x, y in ((a, b), (b, a)):
        want = getattr(ssig, fn)(x, y, mode=mode)
        np.testing.assert_allclose(getattr(hsig, fn)(x, y, mode=mode), want, atol=1e-13)


def test_method_fft_and_axes():
    a, b = rng.normal(size=(3, 8)), rng.normal(size=(1, 4))
    np.testing.assert_allclose(hsig.convolve(a, b, method="fft"), ssig.convolve(a, b),
                               atol=1e-13)
    np.testing.assert_allclose(hsig.fftconvolve(a, b, mode="same", axes=1),
                               ssig.fftconvolve(a, b, mode="same", axes=1), atol=1e-13)


GRADS = [(f"{fn}-{mode}-{len(s1)}d", getattr(hsig, fn), mode, s1, s2)
         for fn in ("convolve", "correlate", "fftconvolve") for mode in ("full", "same", "valid")
         for s1, s2 in (((6,), (3,)), ((3, 4), (2, 2)))]


@pytest.mark.parametrize("name,fn,mode,s1,s2", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, fn, mode, s1, s2):
    a, b = rng.normal(size=s1), rng.normal(size=s2)
    check_grads(lambda a, b: fn(a, b, mode=mode) ** 2, (a, b), order=2, modes=("fwd", "rev"))


def test_graph_mode():
    a, b = rng.normal(size=(4, 5)), rng.normal(size=(2, 3))
    f = lambda a, b: hnp.sum(hsig.correlate(a, b, mode="same") ** 2)  # noqa: E731
    np.testing.assert_allclose(hg.function(f)(a, b), f(a, b), rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.grad(f, argnums=(0, 1)))(a, b)[1],
                               hg.grad(f, argnums=(0, 1))(a, b)[1], rtol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="mode"):
        hsig.convolve([1.0, 2.0], [1.0], mode="wrong")
    with pytest.raises(ValueError, match="at least as large"):
        hsig.convolve(np.ones((2, 5)), np.ones((3, 2)), mode="valid")
    with pytest.raises(ValueError, match="dimensionality"):
        hsig.convolve(np.ones(3), np.ones((2, 2)))
