"""hessgrad.numpy.fft against numpy.fft (values, dtypes, shapes, errors, warnings), its
derivatives against finite differences (first and second order, forward and reverse) and
against JAX, inside ``hessgrad.function`` (compiled and not) and batched; hessgrad.numpy.random
is numpy.random."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

COVERED = {"fft", "rfft", "irfft"}

rng = np.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
REAL_ONLY = {"rfft", "ihfft", "rfftn", "rfft2"}  # these reject complex input
DTYPES = [np.float64, np.float32, np.complex128, np.complex64, np.int64]


def crandn(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _sample(shape, dtype):
    a = 3 * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 3j * rng.standard_normal(shape)
    return a.astype(dtype)


def _run(fn, *args, **kwargs):
    """``fn``'s result (as numpy) or the exception it raised, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - compared with numpy's below
            out = exc
    if isinstance(out, hg.Tensor):
        out = out.numpy()
    return out, [w.category for w in caught]


def _same_as_numpy(name, a, **kwargs):
    want, want_warnings = _run(getattr(np.fft, name), a, **kwargs)
    got, got_warnings = _run(getattr(hnp.fft, name), a, **kwargs)
    where = f"{name}({a.dtype}{a.shape}, {kwargs})"
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), f"{where}: numpy raised {want!r}, we {got!r}"
        return
    assert not isinstance(got, Exception), f"{where}: numpy gave a result, we raised {got!r}"
    assert got_warnings == want_warnings, where
    assert got.shape == want.shape and got.dtype == want.dtype, where
    single = want.dtype in (np.complex64, np.float32)
    scale = 1.0 + (np.max(np.abs(want)) if want.size else 0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=(1e-5 if single else 1e-12) * scale,
                               err_msg=where)


# --- values, dtypes, shapes, errors and warnings as numpy's -----------------------------------
SHAPES = [(5,), (8,), (1,), (3, 4), (2, 3, 5), (4, 0), (0,), ()]


def _cases(names):
    """(name, dtype) pairs; complex input to a real transform is an error case of its own."""
    return [pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}") for name in names
            for dtype in DTYPES if not (name in REAL_ONLY and np.dtype(dtype).kind == "c")]


@pytest.mark.parametrize("name, dtype", _cases(ONE_D))
def test_one_dimensional_transforms_match_numpy(name, dtype):
    for shape in SHAPES:
        a = _sample(shape, dtype)
        for n in (None, 1, 2, 3, 6, 9):
            for axis in (-1, 0, 1, -2):
                for norm in NORMS:
                    if a.size == 0 and name in ("irfft", "hfft") and n is not None:
                        continue  # numpy reads uninitialised memory there (next test)
                    _same_as_numpy(name, a, n=n, axis=axis, norm=norm)


def test_padding_an_empty_input_gives_zeros():
    # numpy.fft.irfft / hfft return uninitialised memory for an empty input padded by n
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        out = getattr(hnp.fft, name)(np.zeros((2, 0)), n=5).numpy()
        assert out.shape == (2, 5 if name in ("irfft", "hfft") else
                             3 if name in ("rfft", "ihfft") else 5)
        np.testing.assert_array_equal(out, 0.0)


ND_ARGS = [  # (s, axes): defaults, negative, repeated, padding, truncation, -1, None, none
    (None, None), (None, (0,)), (None, (-1, 0)), (None, (0, 0)), (None, (-1, -1)),
    (None, (0, 1, 0)), ((4, 3), (0, 1)), ((2, -1), (1, 0)), ((6,), (-1,)), ((3, 5, 2), (1, 0, 1)),
    ((3,), None), ((2, 2), None), ((2, None), (0, 1)), (None, ()), (None, (5,)), ((1, 2), (0,)),
    (3, None), (None, 0), ((2.0,), (0,)), ((0,), (0,))]


@pytest.mark.parametrize("name, dtype", _cases(N_D))
def test_n_dimensional_transforms_match_numpy(name, dtype):
    for shape in [(5,), (3, 4), (2, 3, 5), (4, 1), ()]:
        a = _sample(shape, dtype)
        for s, axes in ND_ARGS:
            for norm in (None, "ortho", "forward"):
                kwargs = dict(norm=norm) if s is None and axes is None else \
                    dict(s=s, axes=axes, norm=norm) if name[-1] != "2" or axes is not None \
                    else dict(s=s, norm=norm)
                _same_as_numpy(name, a, **kwargs)


def test_single_precision_stays_single():
    x32, z64 = _sample((6,), np.float32), _sample((6,), np.complex64)
    for fn, arg, dtype in [("fft", x32, np.complex64), ("ifft", z64, np.complex64),
                           ("rfft", x32, np.complex64), ("irfft", z64, np.float32),
                           ("hfft", z64, np.float32), ("ihfft", x32, np.complex64),
                           ("fftn", x32, np.complex64), ("irfftn", z64, np.float32)]:
        assert getattr(hnp.fft, fn)(arg).dtype == dtype == getattr(np.fft, fn)(arg).dtype
    # gradients keep the argument's precision
    assert hg.grad(lambda x: hnp.sum(hnp.abs(hnp.fft.rfft(x)) ** 2))(x32).dtype == np.float32
    assert hg.grad(lambda z: hnp.sum(hnp.fft.irfft(z) ** 2))(z64).dtype == np.complex64


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_match_numpy(name):
    for shape in [(5,), (4,), (3, 4), (2, 3, 5), (0,)]:
        a = _sample(shape, np.float64)
        for axes in (None, 0, -1, (0,), (0, 0), (-1, 0), 3):
            _same_as_numpy(name, a, axes=axes)


def test_frequencies_match_numpy():
    for n in (1, 2, 5, 8):
        for d in (1.0, 0.1, 3):
            for name in ("fftfreq", "rfftfreq"):
                np.testing.assert_array_equal(getattr(hnp.fft, name)(n, d).numpy(),
                                              getattr(np.fft, name)(n, d))
                got = getattr(hnp.fft, name)(n, hg.constant(float(d))).numpy()
                np.testing.assert_allclose(got, getattr(np.fft, name)(n, d), rtol=1e-15)
    # differentiable in a tensor spacing: d/dd sum(k / (n d)) = -sum(k) / (n d^2)
    k = np.fft.fftfreq(6)
    np.testing.assert_allclose(hg.grad(lambda d: hnp.sum(hnp.fft.fftfreq(6, d) * k))(0.5),
                               -np.sum(k * k) / 0.25)


def test_numpy_functions_on_tensors_dispatch_here():
    x = rng.standard_normal(8)
    grad = hg.grad(lambda x: hnp.sum(hnp.abs(np.fft.fft(x)) ** 2))(x)
    np.testing.assert_allclose(grad, 2 * 8 * x, rtol=1e-12)  # Parseval
    y = np.fft.irfft(hnp.fft.rfft(hg.constant(x)))
    assert isinstance(y, hg.Tensor)
    np.testing.assert_allclose(y.numpy(), x, atol=1e-14)


# --- errors: numpy's exception types, messages naming the function, argument and shape -------
ERRORS = [
    (lambda m: m.fft(np.float64(1.0)), IndexError, r"fft\.fft: axis -1 is out of bounds for a "
     r"of shape \(\)"),
    (lambda m: m.fft(np.zeros(3), axis=1), IndexError, r"fft: axis 1 .* shape \(3,\)"),
    (lambda m: m.rfft(np.zeros((2, 3)), axis=-3), IndexError, r"rfft: axis -3 .* \(2, 3\)"),
    (lambda m: m.fft(np.zeros(0)), ValueError, r"fft\.fft: invalid number of FFT data points "
     r"\(0\) along axis 0 of a with shape \(0,\)"),
    (lambda m: m.ifft(np.zeros((2, 0))), ValueError, r"ifft: .*points \(0\).*\(2, 0\)"),
    (lambda m: m.fft(np.zeros(3), n=0), ValueError, r"fft: .*\(0\).*n must be at least 1"),
    (lambda m: m.fft(np.zeros(3), n=-1), ValueError, r"fft: .*\(-1\)"),
    (lambda m: m.fft(np.zeros(3), n=2.0), TypeError, r"fft\.fft: n must be an integer, got 2\.0"),
    (lambda m: m.fft(np.zeros(3), axis=0.5), TypeError, r"fft: axis must be an integer"),
    (lambda m: m.fft(np.zeros(3), norm="bad"), ValueError, r"fft\.fft: invalid norm value 'bad'"),
    (lambda m: m.rfftn(np.zeros(3), norm="Ortho"), ValueError, r"rfftn: invalid norm"),
    (lambda m: m.irfft(np.zeros(1)), ValueError, r"irfft: .*points \(0\).*shape \(1,\)"),
    (lambda m: m.irfft(np.zeros(0)), ValueError, r"irfft: .*points \(-2\)"),
    (lambda m: m.hfft(np.zeros((3, 1))), ValueError, r"hfft: .*points \(0\).*\(3, 1\)"),
    (lambda m: m.rfft(np.zeros(3) + 1j), TypeError, r"rfft: a must be real, got dtype "
     r"complex128 \(shape \(3,\)\)"),
    (lambda m: m.ihfft(np.zeros(4, np.complex64)), TypeError, r"ihfft: a must be real"),
    (lambda m: m.rfft2(np.zeros((2, 2)) + 1j), TypeError, r"rfft2: a must be real"),
    (lambda m: m.fftn(np.zeros((3, 4)), s=(2,), axes=(0, 1)), ValueError,
     r"fftn: s \(length 1\) and axes \(length 2\) have different lengths"),
    (lambda m: m.fftn(np.zeros((3, 4)), axes=(3,)), IndexError,
     r"fftn: axes entry 3 is out of bounds for a of shape \(3, 4\)"),
    (lambda m: m.fft2(np.zeros(3)), IndexError, r"fft2: axes entry -2 .* shape \(3,\)"),
    (lambda m: m.irfft2(np.zeros(3)), IndexError, r"irfft2: axes entry -2"),
    (lambda m: m.fftn(np.zeros(3), axes=0), TypeError, r"fftn: axes must be a sequence"),
    (lambda m: m.fftn(np.zeros(3), s=3, axes=(0,)), TypeError, r"fftn: s must be a sequence"),
    (lambda m: m.ifftn(np.zeros(3), s=(0,), axes=(0,)), ValueError, r"ifftn: .*points \(0\)"),
    (lambda m: m.rfftn(np.zeros(3), s=(2.5,), axes=(0,)), TypeError, r"rfftn: n must be an "
     r"integer, got 2\.5"),
    (lambda m: m.rfftn(np.zeros((3, 4)), axes=()), IndexError, r"rfftn: axes must name at "
     r"least one axis"),
    (lambda m: m.irfftn(np.zeros((3, 4)), axes=()), IndexError, r"irfftn: axes must name"),
    (lambda m: m.fftshift(np.zeros((3, 4)), axes=2), IndexError,
     r"fftshift: axes 2 is out of bounds for x of shape \(3, 4\)"),
    (lambda m: m.ifftshift(np.zeros(3), axes=(0, -2)), IndexError, r"ifftshift: axes -2"),
    (lambda m: m.fftfreq(5.0), ValueError, r"fftfreq: n should be an integer, got 5\.0"),
    (lambda m: m.rfftfreq(0), ZeroDivisionError, r"rfftfreq: n is 0"),
]


@pytest.mark.parametrize("call, exc, match", ERRORS, ids=[m[1] for m in ERRORS])
def test_errors_are_numpys_and_named(call, exc, match):
    with pytest.raises(exc, match=match):
        call(hnp.fft)
    with pytest.raises(exc):  # numpy raises the same type (AxisError is an IndexError)
        call(np.fft)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_out_is_rejected(name):
    with pytest.raises(TypeError, match=rf"hessgrad\.numpy\.fft\.{name}: out= is not "
                                        "supported"):
        getattr(hnp.fft, name)(np.ones((2, 4)), out=np.empty((2, 4), complex))


def test_deprecated_s_forms_warn_as_numpy():
    a = rng.standard_normal((3, 4))
    with pytest.warns(DeprecationWarning, match=r"fftn: `axes` should not be `None`"):
        out = hnp.fft.fftn(a, s=(2, 6))
    np.testing.assert_allclose(out.numpy(), np.fft.fftn(a, s=(2, 6), axes=(0, 1)))
    with pytest.warns(DeprecationWarning, match=r"irfftn: None in `s`"):
        out = hnp.fft.irfftn(a, s=(2, None), axes=(0, 1))
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(out.numpy(), np.fft.irfftn(a, s=(2, None), axes=(0, 1)))


def test_graph_inputs_of_unknown_length():
    with hg.Graph().as_default():
        batch = hg.placeholder("float64", (None, 4))
        spectrum = hnp.fft.rfft(batch)  # a batch of unknown size: only axis -1 matters
        assert spectrum.shape == (None, 3) and spectrum.dtype == np.complex128
        with pytest.raises(ValueError, match=r"fft\.fft: the length of axis 0 of a \(shape "
                                             r"\(None, 4\)\) must be known"):
            hnp.fft.fft(batch, axis=0)
        with pytest.raises(ValueError, match=r"fft\.irfft: the shape of a \(\(None, 4\)\) "
                                             r"must be known to pad or truncate axis 1"):
            hnp.fft.irfft(batch, n=10)
        with pytest.raises(ValueError, match=r"fft\.fft2: the length of axis 0"):
            hnp.fft.fft2(batch)


# --- derivatives: finite differences, first and second order, forward and reverse -----------
def _real_loss(module, y, w, c):
    """A nonlinear real function of a complex or real transform result: |y|^2 w + Re(y c)."""
    return module.abs(y) ** 2 * w + module.real(y * c)


def _weights(out):
    return rng.standard_normal(out.shape), rng.standard_normal(out.shape) + \
        1j * rng.standard_normal(out.shape)


def _row(label, transform, shape, complex_input=False, **kwargs):
    """A check_grads row: the elementwise loss of ``transform(x, **kwargs)``; complex input
    is taken apart as real and imaginary parts so that finite differences see every
    direction."""
    fn = getattr(hnp.fft, transform)
    if complex_input:
        args = (rng.standard_normal(shape), rng.standard_normal(shape))
        out = fn(args[0] + 1j * args[1], **kwargs)
        w, c = _weights(out)
        f = lambda re, im: _real_loss(hnp, fn(re + 1j * im, **kwargs), w, c)  # noqa: E731
    else:
        args = (rng.standard_normal(shape),)
        out = fn(args[0], **kwargs)
        w, c = _weights(out)
        f = lambda x: _real_loss(hnp, fn(x, **kwargs), w, c)  # noqa: E731
    return pytest.param(f, args, id=label)


GRAD_ROWS = [
    _row("fft-even", "fft", (6,)),
    _row("fft-odd-complex", "fft", (5,), True),
    _row("fft-pad-axis0-ortho", "fft", (3, 2), True, n=5, axis=0, norm="ortho"),
    _row("fft-truncate-forward", "fft", (2, 6), True, n=4, norm="forward"),
    _row("ifft-pad-odd", "ifft", (2, 4), True, n=7, axis=-1),
    _row("ifft-ortho-real", "ifft", (5,), False, norm="ortho"),
    _row("fft2-s-pad-truncate", "fft2", (3, 4), True, s=(4, 3)),
    _row("fftn-3d-negative-axes", "fftn", (2, 3, 4), True, axes=(-1, -3), norm="ortho"),
    _row("fftn-repeated-axes", "fftn", (3, 2), True, s=(4, 2), axes=(0, 0)),
    _row("ifftn-all-forward", "ifftn", (2, 3, 2), True, norm="forward"),
    _row("ifft2-batch", "ifft2", (2, 3, 3), True),
    _row("rfft-even", "rfft", (6,)),
    _row("rfft-odd", "rfft", (7,)),
    _row("rfft-pad-to-odd-axis0", "rfft", (4, 2), n=7, axis=0),
    _row("rfft-truncate-ortho", "rfft", (2, 9), n=6, norm="ortho"),
    _row("rfft-forward-batch", "rfft", (3, 5), norm="forward"),
    _row("irfft-default-even", "irfft", (5,), True),
    _row("irfft-odd-n", "irfft", (2, 4), True, n=7),
    _row("irfft-pad-bins", "irfft", (3,), True, n=10, norm="ortho"),
    _row("irfft-truncate-bins-axis0", "irfft", (6, 2), True, n=5, axis=0, norm="forward"),
    _row("irfft-real-input", "irfft", (4,), False, n=6),
    _row("rfft2-odd-even", "rfft2", (3, 4)),
    _row("rfftn-3d-s", "rfftn", (2, 3, 4), s=(3, 5), axes=(0, -1), norm="ortho"),
    _row("rfftn-repeated-axes", "rfftn", (3, 4), axes=(1, 1)),
    _row("irfft2-default", "irfft2", (3, 3), True),
    _row("irfftn-s-odd", "irfftn", (2, 3, 3), True, s=(2, 5), axes=(1, 2), norm="forward"),
    _row("irfftn-repeated-axes", "irfftn", (3, 4), True, axes=(0, 0)),
    _row("hfft-even", "hfft", (4,), True),
    _row("hfft-odd-n-ortho", "hfft", (2, 4), True, n=5, norm="ortho"),
    _row("hfft-real-input", "hfft", (3,), False, n=4, norm="forward"),
    _row("ihfft-odd", "ihfft", (5,)),
    _row("ihfft-pad-axis0", "ihfft", (4, 2), n=6, axis=0, norm="forward"),
    _row("fftshift", "fftshift", (3, 4), True),
    _row("ifftshift-axis", "ifftshift", (5, 2), axes=0),
]


@pytest.mark.parametrize("f, args", GRAD_ROWS)
def test_derivatives_order_two_forward_and_reverse(f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)


def test_third_order_through_rfft_and_irfft():
    # the rules are written in the primitives themselves, so every order follows
    w = rng.standard_normal(3)
    f = lambda a, b: hnp.fft.irfft(  # noqa: E731
        hnp.abs(hnp.fft.rfft(a, n=5)) ** 2 * w + hnp.fft.rfft(b) ** 2, n=6)
    check_grads(f, (rng.standard_normal(4), rng.standard_normal(4)), order=3, rtol=1e-5)


def test_transposes_of_the_real_transforms_exactly():
    """<u, T x> = <T' u, x> under Re(sum(u * t)) for the R-linear maps, every parity."""
    for n in (1, 2, 5, 6):
        m = n // 2 + 1
        for norm in ("backward", "ortho", "forward"):
            x, u = rng.standard_normal(n), crandn(m)
            pull = hg.vjp(lambda x: hnp.fft.rfft(x, norm=norm), x)[1](u)[0]
            assert np.isclose(np.real(np.sum(u * np.fft.rfft(x, norm=norm))), np.sum(pull * x))
            c, g = crandn(m), rng.standard_normal(n)
            pull = hg.vjp(lambda c: hnp.fft.irfft(c, n=n, norm=norm), c)[1](g)[0]
            assert np.isclose(np.sum(g * np.fft.irfft(c, n=n, norm=norm)),
                              np.real(np.sum(pull * c)))
            # the parts irfft ignores get no gradient
            assert pull[0].imag == 0 and (n % 2 or pull[-1].imag == 0)


# --- against JAX (x64): gradients and Hessian-vector products of real losses ------------------
JAX_CASES = [
    ("fft", (6,), True, dict()), ("fft", (3, 5), True, dict(n=4, axis=0, norm="ortho")),
    ("ifft", (2, 5), True, dict(n=7, norm="forward")), ("fft", (5,), False, dict(n=8)),
    ("fft2", (3, 4), True, dict(s=(4, 2))), ("fftn", (2, 3, 4), True, dict(axes=(-1, 0))),
    ("ifftn", (2, 3, 2), True, dict(norm="ortho")),
    ("rfft", (7,), False, dict()), ("rfft", (4, 6), False, dict(n=5, axis=0, norm="ortho")),
    ("rfft", (2, 6), False, dict(n=8, norm="forward")),
    ("irfft", (5,), True, dict()), ("irfft", (2, 4), True, dict(n=7, norm="ortho")),
    ("irfft", (4, 3), True, dict(n=10, axis=0, norm="forward")),
    ("rfft2", (3, 5), False, dict()), ("rfftn", (2, 3, 4), False, dict(s=(3, 6), axes=(0, 2))),
    ("irfft2", (3, 4), True, dict()), ("irfftn", (2, 3, 3), True, dict(s=(2, 5), axes=(1, 2))),
    ("hfft", (4,), True, dict()), ("hfft", (2, 4), True, dict(n=5, norm="ortho")),
    ("ihfft", (5,), False, dict()), ("ihfft", (6,), False, dict(n=5, norm="forward")),
    ("fftshift", (3, 4), True, dict()), ("ifftshift", (5,), False, dict()),
]


def _loss(module, name, kwargs, w, c):
    fn = getattr(module.fft, name)
    return lambda x: module.sum(_real_loss(module, fn(x, **kwargs), w, c))


@pytest.mark.parametrize("name, shape, complex_input, kwargs", JAX_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in JAX_CASES])
def test_gradients_and_hvps_match_jax(name, shape, complex_input, kwargs):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = crandn(*shape) if complex_input else rng.standard_normal(shape)
    v = crandn(*shape) if complex_input else rng.standard_normal(shape)
    w, c = _weights(getattr(np.fft, name)(x, **kwargs))
    ours = _loss(hnp, name, kwargs, w, c)
    with jax.enable_x64(True):
        theirs = _loss(jnp, name, kwargs, jnp.asarray(w), jnp.asarray(c))
        # one compiled program (op-by-op dispatch compiles every op: seconds per case)
        want_value, want_grad, want_hvp = (np.asarray(r) for r in jax.jit(lambda x, v: (
            theirs(x), jax.grad(theirs)(x), jax.jvp(jax.grad(theirs), (x,), (v,))[1]))(x, v))
    np.testing.assert_allclose(float(ours(x)), want_value, rtol=1e-12)
    np.testing.assert_allclose(hg.grad(ours)(x), want_grad, rtol=1e-10, atol=1e-10)
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.hvp(ours, mode=mode)(x, v), want_hvp, rtol=1e-10,
                                   atol=1e-10, err_msg=mode)


# --- graph mode, compiled and not, equal to eager; batched execution -------------------------
GRAPH_CASES = [
    ("fft-pad", lambda x: hnp.fft.fft(x, n=7, axis=0), (5, 2)),
    ("rfftn-irfftn", lambda x: hnp.fft.irfftn(hnp.fft.rfftn(x, (4, 5), (0, 1)) * (1 + 0.5j),
                                              (3, 6), (0, 1)), (3, 4)),
    ("hfft-ihfft", lambda x: hnp.fft.hfft(hnp.fft.ihfft(x, norm="ortho") ** 2, n=6), (2, 7)),
    ("spectral-regulariser", lambda x: hnp.fft.fftshift(
        hnp.abs(hnp.fft.fft2(x, norm="ortho")) ** 2 * np.arange(12.0).reshape(3, 4)), (3, 4)),
]


@pytest.mark.parametrize("name, f, shape", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_traced_equals_eager(name, f, shape):
    x, v = rng.standard_normal(shape), rng.standard_normal(shape)
    w = rng.standard_normal(np.shape(f(x)))
    loss = lambda x: hnp.sum(hnp.real(f(x)) ** 2 * w)  # noqa: E731
    eager = (f(x).numpy(), hg.grad(loss)(x), hg.hvp(loss)(x, v))
    for flags in (dict(), dict(optimize=False)):
        traced = (hg.function(f, **flags)(x), hg.function(hg.grad(loss), **flags)(x),
                  hg.function(hg.hvp(loss), **flags)(x, v))
        for got, want in zip(traced, eager):
            assert np.asarray(got).dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, shape", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_batched_hvps_equal_one_at_a_time(name, f, shape):
    x = rng.standard_normal(shape)
    w = rng.standard_normal(np.shape(f(x)))
    loss = lambda x: hnp.sum(hnp.real(f(x)) ** 2 * w)  # noqa: E731
    V = rng.standard_normal((4,) + shape)
    want = np.stack([hg.hvp(loss)(x, V[j]) for j in range(len(V))])
    for flags in (dict(), dict(optimize=False)):
        concrete = hg.function(hg.hvp(loss), **flags).get_concrete_function(x, V[0])
        got = concrete.run_batched([x, V], [False, True])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.function(f).map(V), np.stack([f(v).numpy() for v in V]),
                               rtol=1e-12, atol=1e-12)


def test_hessian_of_a_spectral_loss_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = rng.standard_normal(6)
    k = np.abs(np.fft.rfftfreq(6))

    def loss(m):
        return lambda x: m.sum(k * m.abs(m.fft.rfft(m.tanh(x))) ** 2)

    with jax.enable_x64(True):
        want = np.asarray(jax.jit(jax.hessian(loss(jnp)))(x))
    np.testing.assert_allclose(hg.hessian(loss(hnp))(x), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.function(hg.hessian(loss(hnp)))(x), want, rtol=1e-10,
                               atol=1e-12)


# --- random --------------------------------------------------------------------------------
def test_random_is_numpy_random():
    np.testing.assert_array_equal(hnp.random.default_rng(0).normal(size=3),
                                  np.random.default_rng(0).normal(size=3))
    assert hnp.random.randn is np.random.randn
    import hessgrad.numpy.random as npr
    assert npr is np.random
