"""Discrete Fourier transforms: three primitives, from which ``hessgrad.numpy.fft`` composes
numpy's fourteen transforms, and ``resize`` (zero-padding or truncation along an axis).

- ``fft(x, axes, inverse, norm)``: the complex transform over distinct ``axes``.
- ``rfft(x, axis, norm)``: the real-to-complex transform along one axis, its first
  ``n // 2 + 1`` bins (the Hermitian half-spectrum).
- ``irfft(c, n, axis, norm)``: its inverse, ``n // 2 + 1`` bins to ``n`` reals. It reads the
  half-spectrum as Hermitian: the imaginary parts of the DC bin and (even ``n``) of the
  Nyquist bin are ignored, and every other bin stands for itself and its mirror image.

``norm`` is numpy's (``"backward"``, ``"ortho"``, ``"forward"``). Derivatives follow JAX's
convention for complex values (see ``hessgrad.ops.decompositions``): a JVP is the R-linear
map itself, a VJP its transpose under the pairing ``Re(sum(g * t))``, no conjugation.

- The DFT matrix is symmetric, so ``fft`` is its own transpose (same axes, direction, norm).
- The transpose of ``rfft`` (restriction of the full transform to the half-spectrum, real
  input) is ``Re(F^T pad(g))``; written with ``irfft`` it is ``irfft(conj(g) * h)`` with
  ``h`` = 1/2 on the bins that ``irfft`` doubles (all but DC and Nyquist) and the scale
  factor moved to the other direction (``"backward"`` <-> ``"forward"``).
- The transpose of ``irfft`` is ``conj(rfft(g)) * d`` with ``d`` = 2 on those bins (their
  mirror images count too) and 1 on DC and Nyquist, the scale again moved across.

Every rule is made of these primitives, ``conjugate`` and products, so derivatives of every
order follow.
"""

import numpy as np

from ..engine.dispatch import bind
from ..engine.registry import primitive
from ..engine.tensor import dtype_of, shape_of
from .core import getitem, scatter_add
from .elementwise import conjugate, real
from .patterns import within_lines

_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _index_along(axis, part):
    return (slice(None),) * axis + (part,)


def _bin_weights(n, axis, ndim, inner, outer, dtype):
    """``outer`` on the DC bin and (even ``n``) on the Nyquist bin, ``inner`` on the others
    of the ``n // 2 + 1`` bins along ``axis``, shaped to broadcast against the spectrum."""
    m, axis = n // 2 + 1, axis % ndim
    w = np.full(m, inner, dtype=dtype)
    w[0] = outer
    if n % 2 == 0:
        w[-1] = outer
    return w.reshape((m,) + (1,) * (ndim - axis - 1))


def _real_dtype(dtype):
    """The real dtype paired with ``dtype`` (float32 for complex64)."""
    return np.empty(0, dtype=dtype).real.dtype


def _known_length(name, x, axis):
    n = shape_of(x)[axis]
    if n is None:
        raise ValueError(f"{name}: the length of axis {axis} of the input (shape "
                         f"{shape_of(x)}) must be known to transform it")
    return n


def _with_length(shape, axis, n):
    return tuple(shape[:axis]) + (n,) + tuple(shape[axis + 1:])


def _fourier_batch(prim, args, flags, params, k):
    """One operand, non-negative axes: the transformed axes move behind the batch axis."""
    if "axes" in params:
        return bind(prim, tuple(args), dict(params, axes=tuple(a + 1 for a in params["axes"])))
    return bind(prim, tuple(args), dict(params, axis=params["axis"] + 1))


# --- complex transform -----------------------------------------------------------------------
def _fft_forward(x, axes, inverse, norm):
    transform = np.fft.ifftn if inverse else np.fft.fftn
    return transform(x, axes=axes, norm=norm)


def _fft_vjp(g, ans, x, axes, inverse, norm):
    return fft(g, axes=axes, inverse=inverse, norm=norm)


# an output mixes its whole line along the transformed axes, nothing across the others
_fourier_pattern = within_lines(
    lambda params, ndim: tuple(a % ndim for a in params.get("axes", (params.get("axis"),))))


fft = primitive(
    "fft", _fft_forward, vjp=[_fft_vjp], linear=True, batch=_fourier_batch,
    sparsity=_fourier_pattern,
    shape_rule=lambda x, axes, inverse, norm: (shape_of(x), np.result_type(dtype_of(x), 1j)))
fft.__doc__ = """The discrete Fourier transform of ``x`` over the distinct non-negative
``axes`` (``numpy.fft.fftn``, or ``ifftn`` when ``inverse``), no padding, numpy's ``norm``."""


# --- real transform and its inverse ----------------------------------------------------------
def _rfft_vjp(g, ans, x, axis, norm):
    n = _known_length("rfft", x, axis)
    half = _bin_weights(n, axis, len(shape_of(x)), 0.5, 1.0, _real_dtype(dtype_of(ans)))
    return irfft(conjugate(g) * half, n=n, axis=axis, norm=_SWAPPED[norm])


def _rfft_shape(x, axis, norm):
    n = _known_length("rfft", x, axis)
    return _with_length(shape_of(x), axis, n // 2 + 1), np.result_type(dtype_of(x), 1j)


rfft = primitive("rfft", lambda x, axis, norm: np.fft.rfft(x, axis=axis, norm=norm),
                 vjp=[_rfft_vjp], linear=True, shape_rule=_rfft_shape, batch=_fourier_batch,
                 sparsity=_fourier_pattern)
rfft.__doc__ = """The first ``n // 2 + 1`` bins of the discrete Fourier transform of the
real ``x`` along the non-negative ``axis`` (``numpy.fft.rfft``, no padding)."""


def _check_half_spectrum(c_shape, n, axis):
    if c_shape[axis] is not None and c_shape[axis] != n // 2 + 1:
        raise ValueError(f"irfft: c has shape {tuple(c_shape)} but an output of length {n} "
                         f"needs {n // 2 + 1} bins along axis {axis}")


def _irfft_forward(c, n, axis, norm):
    _check_half_spectrum(np.shape(c), n, axis)
    return np.fft.irfft(c, n=n, axis=axis, norm=norm)


def _irfft_vjp(g, ans, c, n, axis, norm):
    if dtype_of(g).kind == "c":  # the output is real: only Re(g) pairs with it
        g = real(g)
    double = _bin_weights(n, axis, len(shape_of(c)), 2.0, 1.0, _real_dtype(dtype_of(ans)))
    return conjugate(rfft(g, axis=axis, norm=_SWAPPED[norm])) * double


def _irfft_shape(c, n, axis, norm):
    _check_half_spectrum(shape_of(c), n, axis)
    dtype = np.result_type(_real_dtype(dtype_of(c)), 1.0)
    return _with_length(shape_of(c), axis, n), dtype


irfft = primitive("irfft", _irfft_forward, vjp=[_irfft_vjp], linear=True,
                  shape_rule=_irfft_shape, batch=_fourier_batch,
                  sparsity=_fourier_pattern)
irfft.__doc__ = """The ``n`` real values whose ``rfft`` is the Hermitian half-spectrum ``c``
(``n // 2 + 1`` bins along the non-negative ``axis``; ``numpy.fft.irfft``, no padding)."""


# --- padding and truncation ------------------------------------------------------------------
def resize(x, axis, n):
    """``x`` truncated to, or zero-padded at the end up to, length ``n`` along the
    non-negative ``axis`` (numpy.fft's ``n``). The two are each other's transposes."""
    shape = shape_of(x)
    length, axis = _known_length("resize", x, axis), axis % len(shape)
    if length == n:
        return x
    if None in shape:
        raise ValueError(f"resize: the shape of the input ({shape}) must be known to pad or "
                         f"truncate axis {axis} to length {n}")
    if length > n:
        return getitem(x, index=_index_along(axis, slice(0, n)))
    return scatter_add(x, index=_index_along(axis, slice(0, length)),
                       shape=_with_length(shape, axis, n))
