"""Samples of the remaining families: Fourier transforms (every norm, axes, lengths), signal
and polynomial functions, constructors (differentiable in their endpoints or fill values),
windows, functional helpers and control flow."""

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp

from op_arrays import A2, COL, E, ONE, POS, S0, X, X3, V4, Y
from op_sample import sample

F = "fft."
SAMPLES = []
for name in "fft ifft rfft ihfft".split():
    SAMPLES += [sample(F + name, V4), sample(F + name, X, axis=0), sample(F + name, X, n=5),
                sample(F + name, X, norm="ortho"), sample(F + name, X, n=2, norm="forward"),
                sample(F + name, ONE)]
for name in "irfft hfft".split():
    SAMPLES += [sample(F + name, V4), sample(F + name, X, axis=0), sample(F + name, X, n=6),
                sample(F + name, X, norm="ortho")]
for name in "fft2 ifft2 rfft2 fftn ifftn rfftn".split():
    SAMPLES += [sample(F + name, X), sample(F + name, X3, axes=(0, -1)),
                sample(F + name, X, s=(3, 2), norm="ortho")]
SAMPLES += [sample(F + "irfft2", X), sample(F + "irfftn", X3, axes=(0, 2)),
            sample(F + "irfft2", X, s=(2, 4), norm="forward"),
            sample(F + "fftshift", X), sample(F + "fftshift", X3, axes=(1,)),
            sample(F + "ifftshift", V4), sample(F + "ifftshift", X, axes=-1),
            sample(F + "fftfreq", 5), sample(F + "fftfreq", 4, 0.5), sample(F + "rfftfreq", 6),
            sample(F + "rfftfreq", 5, d=2.0)]
SAMPLES += [
    sample("convolve", V4, Y), sample("convolve", Y, V4, mode="same"),
    sample("convolve", V4, Y, mode="valid"), sample("convolve", ONE, V4),
    sample("correlate", V4, Y), sample("correlate", V4, Y, mode="full"),
    sample("correlate", Y, V4, mode="same"),
    sample("unwrap", np.array([0.1, 3.5, 6.9, 1.2])), sample("unwrap", X * 3, axis=0),
    sample("unwrap", np.array([0.1, 2.0, 4.0]), discont=4.0, period=5.0),
    sample("vander", Y), sample("vander", Y, 4, increasing=True),
    sample("poly", Y), sample("poly", A2), sample("polyval", Y, V4), sample("polyval", Y, S0),
    sample("polyadd", Y, V4[:2]), sample("polysub", Y, V4),
    # numpy strips leading zeros (a value-dependent length): traced with the stripping off
    sample("polymul", Y, V4, traceable=False), sample("polydiv", V4, Y, traceable=False),
    sample("polymul", Y, V4, trim_leading_zeros=False, numpy=False),
    sample("polydiv", V4, Y, trim_leading_zeros=False, numpy=False),
    sample("polyder", V4), sample("polyder", V4, 2),
    sample("polyint", Y), sample("polyint", Y, 2, k=[0.5, 1.0]),
    sample("polyfit", V4, V4 ** 3 - V4, 2), sample("polyfit", V4, X.T[:, 0].repeat(2)[:4], 1,
                                                 w=np.array([1.0, 2.0, 1.0, 0.5])),
    sample("roots", np.array([1.0, -3.0, 2.0]), traceable=False),
    sample("roots", np.array([1.0, -3.0, 2.0]), strip_zeros=False, numpy=False),
    sample("roots", np.array([1.0, 0.5, -1.1, 0.2]), strip_zeros=False, numpy=False),
    sample("linspace", S0, POS[0, 0], 5), sample("linspace", Y, Y * 2 + 1, 3, axis=-1),
    sample("linspace", 0.0, 1.0, 4, endpoint=False, retstep=True),
    sample("logspace", S0, np.array(1.2), 4), sample("logspace", Y, Y + 1, 3, base=2.0),
    sample("geomspace", np.array(0.5), np.array(8.0), 5), sample("geomspace", 1.0, 1000.0, 4),
    sample("arange", 5), sample("arange", 1.0, 2.0, 0.25), sample("arange", 4, 0, -1),
    sample("zeros", (2, 3)), sample("ones", 3), sample("empty", (0, 2), numpy=False),
    sample("full", (2, 2), 0.7), sample("full", (2, 3), Y), sample("full", (), S0),
    sample("zeros_like", X), sample("ones_like", X), sample("empty_like", E, numpy=False),
    sample("full_like", X, 0.3), sample("full_like", X, S0, label="2x3,traced fill"),
    sample("eye", 3), sample("eye", 2, 4, k=1), sample("identity", 3), sample("tri", 3, 4, -1),
    sample("meshgrid", Y, V4), sample("meshgrid", Y, V4, indexing="ij"),
    sample("meshgrid", Y, V4, sparse=True),
    sample("fromfunction", lambda i, j: i + 2 * j, (2, 3), label="i+2j,(2, 3)"),
    sample("bartlett", 5), sample("blackman", 5), sample("hamming", 4), sample("hanning", 6),
    sample("kaiser", 5, 2.5), sample("bartlett", 1), sample("hamming", 0),
    sample("fill_diagonal", X, 0.5, inplace=False, numpy=False),
    sample("fill_diagonal", X, S0, inplace=False, numpy=False, label="2x3,traced value"),
    sample("apply_along_axis", hnp.cumsum, 1, X, numpy=False, label="cumsum,1,2x3"),
    sample("apply_along_axis", lambda r: r * r[0], 0, X, numpy=False, label="r*r[0],0,2x3"),
    sample("apply_over_axes", hnp.sum, X3, (0, 2), numpy=False, label="sum,2x2x2,(0, 2)"),
    sample("hg.map_fn", hnp.sin, X, label="sin,2x3"),
    sample("hg.map_fn", lambda r: hnp.sum(r * r), X, label="sum r*r,2x3"),
    sample("hg.scan", lambda a, x: a * 0.5 + x * x, V4, label="a/2+x^2,4"),
    sample("hg.scan", lambda a, x: a * x, X, np.ones(3), label="a*x,2x3,ones"),
    sample("hg.foldl", lambda a, x: a + hnp.sin(x) * a, X, Y, label="a+sin(x)a,2x3,3"),
    sample("hg.foldr", lambda a, x: a * x - x, V4, S0, label="a*x-x,4,0d"),
    sample("hg.while_loop", lambda i, x: i < 3, lambda i, x: (i + 1, x * 0.9 + hnp.sin(x)),
           (0, X), label="3 steps of x*0.9+sin(x)"),
]
