"""``hessgrad.numpy.fft``: numpy.fft with derivatives of every order.

Same names, signatures, results and dtypes as numpy 2's ``numpy.fft`` (float32 and complex64
input stay single precision). The fourteen transforms compose three primitives of
``hessgrad.ops.fft`` (the complex transform, the real one and its inverse) with zero-padding
and truncation for ``n`` / ``s``, so every argument is handled as numpy handles it: negative
and repeated ``axes``, ``norm`` in ``None`` / ``"backward"`` / ``"ortho"`` / ``"forward"``.
``fftshift`` and ``ifftshift`` are rolls (differentiable); ``fftfreq`` and ``rfftfreq`` are
constants unless the spacing ``d`` is a tensor.

Complex derivatives follow JAX's convention (a VJP is the transpose of the R-linear JVP, no
conjugation): the gradient of a real loss with respect to a complex ``z`` is
``dL/dRe(z) - i dL/dIm(z)``. ``irfft`` and ``hfft`` ignore the imaginary parts of the DC and
(even ``n``) Nyquist bins, so those parts get zero gradient.

>>> import numpy as np, hessgrad as hg, hessgrad.numpy as hnp
>>> x = np.array([1.0, 2.0, 0.5, -1.0])
>>> hnp.fft.rfft(x).numpy()
array([2.5+0.j, 0.5-3.j, 0.5+0.j])
>>> power = lambda x: hnp.sum(hnp.abs(hnp.fft.fft(x)) ** 2)   # Parseval: n * sum(x ** 2)
>>> hg.grad(power)(x)
array([ 8., 16.,  4., -8.])
"""

import operator as _operator
import warnings as _warnings

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, dtype_of as _dtype_of, shape_of as _shape_of
from ..ops import core as _core, elementwise as _ew, fft as _ops, shape as _sh
from ._math import _reject_out

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# --- arguments -------------------------------------------------------------------------------
def _where(name):
    return f"hessgrad.numpy.fft.{name}"


def _array(name, a, out):
    _reject_out(f"fft.{name}", out)
    a = _sh.as_array(a, _where(name))
    shape = _shape_of(a)
    if shape is None:
        raise ValueError(f"{_where(name)}: the rank of a must be known, got shape {shape}")
    return a, tuple(shape)


def _length(name, shape, ax):
    """The length of axis ``ax`` of a (in a graph, known when the transform needs it)."""
    if shape[ax] is None:
        raise ValueError(f"{_where(name)}: the length of axis {ax} of a (shape {shape}) must "
                         "be known to transform it")
    return shape[ax]


def _fit(name, a, shape, ax, n):
    """``a`` truncated or zero-padded to ``n`` along ``ax`` (numpy.fft's ``n`` and ``s``)."""
    if n != shape[ax] and None in shape:
        raise ValueError(f"{_where(name)}: the shape of a ({shape}) must be known to pad or "
                         f"truncate axis {ax} to length {n}")
    return _ops.resize(a, ax, n)


def _norm(name, norm):
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise ValueError(f'{_where(name)}: invalid norm value {norm!r}; should be None, '
                         f'"backward", "ortho" or "forward"') from None


def _axis(name, axis, shape, arg="axis", array="a"):
    try:
        index = _operator.index(axis)
    except TypeError:
        raise TypeError(f"{_where(name)}: {arg} must be an integer, got {axis!r}") from None
    if not -len(shape) <= index < len(shape):
        # an AxisError is both the IndexError numpy.fft raises here and a ValueError
        raise _np.exceptions.AxisError(
            f"{_where(name)}: {arg} {index} is out of bounds for {array} of shape {shape} "
            f"(dimension {len(shape)})")
    return index % len(shape)


def _points(name, n, shape, axis, arg="n"):
    """A transform length: an integer of at least 1."""
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"{_where(name)}: {arg} must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{_where(name)}: invalid number of FFT data points ({n}) along "
                         f"axis {axis} of a with shape {shape}; {arg} must be at least 1")
    return n


def _axes_list(name, axes, shape):
    try:
        return list(axes)
    except TypeError:
        if isinstance(axes, (int, _np.integer)):
            _axis(name, axes, shape, "axes")  # numpy reads shape[axes] first
        raise TypeError(f"{_where(name)}: axes must be a sequence of integers, got "
                        f"{axes!r}") from None


def _cook_nd_args(name, shape, s, axes, invreal=False):
    """numpy's ``s`` and ``axes`` of an n-D transform: lengths (None: the 1-D default) and
    normalized axes, in numpy's order, with numpy's deprecation warnings."""
    shapeless = s is None
    if not shapeless:
        try:
            s = list(s)
        except TypeError:
            raise TypeError(f"{_where(name)}: s must be a sequence of integers, got "
                            f"{s!r}") from None
    if axes is not None:
        axes = [_axis(name, ax, shape, "axes entry") for ax in _axes_list(name, axes, shape)]
    if shapeless:
        s = [_length(name, shape, ax) for ax in (range(len(shape)) if axes is None else axes)]
    if axes is None:
        if not shapeless:
            _warnings.warn(
                f"{_where(name)}: `axes` should not be `None` if `s` is not `None` "
                "(deprecated in NumPy 2.0; `s` then applies to the last len(s) axes). Pass "
                "`axes` explicitly.", DeprecationWarning, stacklevel=4)
        axes = [_axis(name, ax, shape, "axes entry") for ax in range(-len(s), 0)]
    if len(s) != len(axes):
        raise ValueError(f"{_where(name)}: s (length {len(s)}) and axes (length "
                         f"{len(axes)}) have different lengths")
    if invreal and shapeless and axes:
        s[-1] = (_length(name, shape, axes[-1]) - 1) * 2
    if any(v is None for v in s):
        _warnings.warn(
            f"{_where(name)}: None in `s` is deprecated in NumPy 2.0; pass the default "
            "length of the 1-D transform instead, or omit `s`.", DeprecationWarning,
            stacklevel=4)
    s = [_length(name, shape, ax) if v is not None and _is_minus_one(v) else v
         for v, ax in zip(s, axes)]
    return s, axes


def _is_minus_one(v):
    try:
        return _operator.index(v) == -1
    except TypeError:
        return False  # _points names the bad entry


# --- one axis at a time ----------------------------------------------------------------------
def _complex_steps(name, a, steps, inverse, norm):
    """numpy's 1-D complex transforms ``(axis, n)`` one after another: one primitive over
    all the axes when they are distinct (padding commutes with the other axes' transforms),
    else one per step as numpy does."""
    if not steps:
        return a
    if len({ax for ax, _ in steps}) < len(steps):
        for ax, n in steps:
            a = _complex_steps(name, a, [(ax, n)], inverse, norm)
        return a
    shape = tuple(_shape_of(a))
    for ax, n in steps:
        n = _points(name, _length(name, shape, ax) if n is None else n, shape, ax)
        a = _fit(name, a, shape, ax, n)
    return _ops.fft(a, axes=tuple(sorted(ax for ax, _ in steps)), inverse=inverse, norm=norm)


def _real_forward(name, a, n, ax, norm):
    shape = tuple(_shape_of(a))
    n = _points(name, _length(name, shape, ax) if n is None else n, shape, ax)
    if _dtype_of(a).kind == "c":
        raise TypeError(f"{_where(name)}: a must be real, got dtype {_dtype_of(a)} (shape "
                        f"{shape}); use fft for complex input")
    return _ops.rfft(_fit(name, a, shape, ax, n), axis=ax, norm=norm)


def _real_inverse(name, a, n, ax, norm):
    shape = tuple(_shape_of(a))
    n = _points(name, (_length(name, shape, ax) - 1) * 2 if n is None else n, shape, ax)
    return _ops.irfft(_fit(name, a, shape, ax, n // 2 + 1), n=n, axis=ax, norm=norm)


# --- 1-D transforms --------------------------------------------------------------------------
def fft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.fft: the 1-D discrete Fourier transform along ``axis``, ``a`` truncated or
    zero-padded to ``n`` points."""
    a, shape = _array("fft", a, out)
    ax = _axis("fft", axis, shape)
    return _complex_steps("fft", a, [(ax, n)], False, _norm("fft", norm))


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ifft: the inverse of :func:`fft`."""
    a, shape = _array("ifft", a, out)
    ax = _axis("ifft", axis, shape)
    return _complex_steps("ifft", a, [(ax, n)], True, _norm("ifft", norm))


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.rfft: the ``n // 2 + 1`` non-negative frequency bins of the transform of the
    real ``a``."""
    a, shape = _array("rfft", a, out)
    return _real_forward("rfft", a, n, _axis("rfft", axis, shape), _norm("rfft", norm))


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.irfft: the ``n`` (default ``2 * (m - 1)``) real values whose half-spectrum
    is ``a`` (truncated or zero-padded to ``n // 2 + 1`` bins)."""
    a, shape = _array("irfft", a, out)
    return _real_inverse("irfft", a, n, _axis("irfft", axis, shape), _norm("irfft", norm))


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.hfft: the real transform of a signal with Hermitian symmetry, given by its
    first half ``a`` (``irfft`` of ``conj(a)`` with the scaling of a forward transform)."""
    a, shape = _array("hfft", a, out)
    ax, norm = _axis("hfft", axis, shape), _SWAPPED[_norm("hfft", norm)]
    return _real_inverse("hfft", _ew.conjugate(a) if _dtype_of(a).kind == "c" else a,
                         n, ax, norm)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ihfft: the inverse of :func:`hfft` (``conj(rfft(a))``, inverse scaling)."""
    a, shape = _array("ihfft", a, out)
    ax, norm = _axis("ihfft", axis, shape), _SWAPPED[_norm("ihfft", norm)]
    return _ew.conjugate(_real_forward("ihfft", a, n, ax, norm))


# --- n-D transforms --------------------------------------------------------------------------
def _complex_nd(name, a, s, axes, norm, out, inverse):
    a, shape = _array(name, a, out)
    norm = _norm(name, norm)
    s, axes = _cook_nd_args(name, shape, s, axes)
    if not axes:
        return _core.convert_to_tensor(a)  # numpy returns the input untransformed
    # numpy transforms the last listed axis first
    return _complex_steps(name, a, list(zip(axes, s))[::-1], inverse, norm)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.fftn: the n-D transform over ``axes`` (default all, or the last ``len(s)``),
    each truncated or zero-padded to ``s``."""
    return _complex_nd("fftn", a, s, axes, norm, out, False)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.ifftn: the inverse of :func:`fftn`."""
    return _complex_nd("ifftn", a, s, axes, norm, out, True)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.fft2: :func:`fftn` over the last two axes by default."""
    return _complex_nd("fft2", a, s, axes, norm, out, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.ifft2: :func:`ifftn` over the last two axes by default."""
    return _complex_nd("ifft2", a, s, axes, norm, out, True)


def _no_axes(name):
    return _np.exceptions.AxisError(f"{_where(name)}: axes must name at least one axis (the "
                                    f"real transform runs along the last of them)")


def _rfftn(name, a, s, axes, norm, out):
    a, shape = _array(name, a, out)
    norm = _norm(name, norm)
    s, axes = _cook_nd_args(name, shape, s, axes)
    if not axes:
        raise _no_axes(name)
    a = _real_forward(name, a, s[-1], axes[-1], norm)
    return _complex_steps(name, a, list(zip(axes[:-1], s[:-1]))[::-1], False, norm)


def _irfftn(name, a, s, axes, norm, out):
    a, shape = _array(name, a, out)
    norm = _norm(name, norm)
    s, axes = _cook_nd_args(name, shape, s, axes, invreal=True)
    if not axes:
        raise _no_axes(name)
    a = _complex_steps(name, a, list(zip(axes[:-1], s[:-1])), True, norm)
    return _real_inverse(name, a, s[-1], axes[-1], norm)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.rfftn: :func:`rfft` along the last of ``axes``, then :func:`fft` along the
    others."""
    return _rfftn("rfftn", a, s, axes, norm, out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.irfftn: the inverse of :func:`rfftn` (``s[-1]`` defaults to
    ``2 * (m - 1)``)."""
    return _irfftn("irfftn", a, s, axes, norm, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.rfft2: :func:`rfftn` over the last two axes by default."""
    return _rfftn("rfft2", a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.irfft2: :func:`irfftn` over the last two axes by default."""
    return _irfftn("irfft2", a, s, axes, norm, out)


# --- helpers ---------------------------------------------------------------------------------
def _frequencies(name, n, d, bins):
    if not isinstance(n, (int, _np.integer)) or isinstance(n, bool):
        raise ValueError(f"{_where(name)}: n should be an integer, got {n!r}")
    if n == 0:  # numpy divides by n * d
        raise ZeroDivisionError(f"{_where(name)}: n is 0: a transform of no points has no "
                                "frequencies")
    if not isinstance(d, _Tensor):
        return _core.constant(getattr(_np.fft, name)(n, d))
    return _np.asarray(bins, dtype=int) * (1.0 / (n * d))  # numpy's arithmetic, d a tensor


def fftfreq(n, d=1.0, device=None):
    """numpy.fft.fftfreq: the sample frequencies of an ``n``-point transform, sample spacing
    ``d`` (differentiable in ``d`` when it is a tensor)."""
    bins = list(range((n - 1) // 2 + 1)) + list(range(-(n // 2), 0)) \
        if isinstance(n, (int, _np.integer)) else []
    return _frequencies("fftfreq", n, d, bins)


def rfftfreq(n, d=1.0, device=None):
    """numpy.fft.rfftfreq: the non-negative sample frequencies of :func:`rfft`."""
    bins = list(range(n // 2 + 1)) if isinstance(n, (int, _np.integer)) else []
    return _frequencies("rfftfreq", n, d, bins)


def _shift(name, x, axes, sign):
    x = _sh.as_array(x, _where(name))
    shape = _shape_of(x)
    if shape is None or None in shape:
        raise ValueError(f"{_where(name)}: the shape of x must be known, got {shape}")
    if axes is None:
        axes = tuple(range(len(shape)))
    single = not isinstance(axes, (tuple, list))
    axes = [_axis(name, ax, tuple(shape), "axes", "x") for ax in ((axes,) if single else axes)]
    shift = [sign * (shape[ax] // 2) for ax in axes]
    # roll returns numpy input unchanged when every shift is a whole turn
    return _core.convert_to_tensor(_sh.roll(x, shift, axes) if axes else x)


def fftshift(x, axes=None):
    """numpy.fft.fftshift: the zero-frequency bin moved to the centre (a roll along
    ``axes``, default all)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """numpy.fft.ifftshift: the inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes, -1)
