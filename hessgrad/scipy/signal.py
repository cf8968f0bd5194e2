"""``hessgrad.scipy.signal``: ``convolve``, ``correlate`` and ``fftconvolve`` (modes 'full',
'same', 'valid'; 1-D and n-D), differentiable in both operands to any order (they are bilinear).

>>> import numpy as np
>>> import hessgrad.scipy.signal as hsig
>>> np.asarray(hsig.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])))
array([0. , 1. , 2.5, 4. , 1.5])

``convolve`` and ``correlate`` compute directly (``method='direct'`` or ``'auto'``): 1-D by the
``convolve`` primitive, n-D as a gather of ``in1``'s shifted windows times ``in2`` (memory
``out.size * in2.size``); ``method='fft'`` and ``fftconvolve`` go through ``hessgrad.numpy.fft``
(values within rounding of SciPy's FFT results, about 1e-15 of the largest entry).
"""

import numpy as np

from .. import numpy as hnp


def _arr(x):
    return hnp.asarray(x)


def _check(name, in1, in2):
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 should have the same dimensionality, got "
                         f"shapes {tuple(in1.shape)} and {tuple(in2.shape)}")


def _swap_needed(mode, s1, s2, axes):
    """SciPy's rule: 'valid' needs one operand at least as large as the other along every
    convolved axis (the larger one becomes ``in1``)."""
    if mode != "valid":
        return False
    ge = all(s1[a] >= s2[a] for a in axes)
    le = all(s1[a] <= s2[a] for a in axes)
    if not (ge or le):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    return not ge


def _apply_mode(full, s1, s2, mode, axes):
    if mode == "full":
        return full
    index = [slice(None)] * full.ndim
    for a in axes:
        length = s1[a] if mode == "same" else s1[a] - s2[a] + 1
        start = (full.shape[a] - length) // 2
        index[a] = slice(start, start + length)
    return full[tuple(index)]


def _direct_full(in1, in2):
    if in1.ndim == 1:
        return hnp.convolve(in1, in2, mode="full")
    s1, s2 = tuple(in1.shape), tuple(in2.shape)
    padded = hnp.pad(in1, [(k - 1, k - 1) for k in s2])
    out_shape = tuple(a + b - 1 for a, b in zip(s1, s2))
    o = np.indices(out_shape).reshape(len(s1), -1)
    k = np.indices(s2).reshape(len(s2), -1)
    flat = np.ravel_multi_index(tuple(o[:, :, None] + k[:, None, :]), tuple(padded.shape))
    windows = hnp.take(hnp.ravel(padded), flat)
    kernel = hnp.ravel(hnp.flip(in2))
    return hnp.reshape(windows @ kernel, out_shape)


def _mode_check(mode):
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"acceptable mode flags are 'valid', 'same', or 'full', got {mode!r}")


def convolve(in1, in2, mode="full", method="auto"):
    """The n-dimensional convolution of ``in1`` and ``in2`` (scipy.signal.convolve)."""
    _mode_check(mode)
    in1, in2 = _arr(in1), _arr(in2)
    _check("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"acceptable method flags are 'auto', 'direct', or 'fft', got "
                         f"{method!r}")
    if in1.ndim == 0:
        return in1 * in2
    axes = tuple(range(in1.ndim))
    if _swap_needed(mode, tuple(in1.shape), tuple(in2.shape), axes):
        in1, in2 = in2, in1
    return _apply_mode(_direct_full(in1, in2), tuple(in1.shape), tuple(in2.shape), mode, axes)


def _reverse_conj(x):
    x = hnp.flip(x)
    return hnp.conj(x) if np.dtype(x.dtype).kind == "c" else x


def correlate(in1, in2, mode="full", method="auto"):
    """The n-dimensional cross-correlation of ``in1`` and ``in2`` (scipy.signal.correlate):
    ``convolve(in1, reverse(conj(in2)))``."""
    _mode_check(mode)
    in1, in2 = _arr(in1), _arr(in2)
    _check("correlate", in1, in2)
    if in1.ndim == 0:
        return in1 * (hnp.conj(in2) if np.dtype(in2.dtype).kind == "c" else in2)
    axes = tuple(range(in1.ndim))
    if _swap_needed(mode, tuple(in1.shape), tuple(in2.shape), axes):
        return _reverse_conj(convolve(in2, _reverse_conj(in1), mode, method))
    return convolve(in1, _reverse_conj(in2), mode, method)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution through the FFT (scipy.signal.fftconvolve), over ``axes`` (None: all; the
    other axes broadcast)."""
    _mode_check(mode)
    in1, in2 = _arr(in1), _arr(in2)
    _check("fftconvolve", in1, in2)
    if in1.ndim == 0:
        return in1 * in2
    axes = tuple(range(in1.ndim)) if axes is None else tuple(
        a % in1.ndim for a in np.atleast_1d(axes))
    s1, s2 = tuple(in1.shape), tuple(in2.shape)
    if _swap_needed(mode, s1, s2, axes):
        in1, in2, s1, s2 = in2, in1, s2, s1
    shape = [s1[a] + s2[a] - 1 for a in axes]
    complex_ = np.dtype(in1.dtype).kind == "c" or np.dtype(in2.dtype).kind == "c"
    if complex_:
        full = hnp.fft.ifftn(hnp.fft.fftn(in1, shape, axes=axes) *
                             hnp.fft.fftn(in2, shape, axes=axes), shape, axes=axes)
    else:
        full = hnp.fft.irfftn(hnp.fft.rfftn(in1, shape, axes=axes) *
                              hnp.fft.rfftn(in2, shape, axes=axes), shape, axes=axes)
    return _apply_mode(full, s1, s2, mode, axes)


__all__ = ["convolve", "correlate", "fftconvolve"]
