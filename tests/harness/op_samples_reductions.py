"""Samples of reductions, scans and statistics: every axis form (None, negative, tuple),
``keepdims``, 0-d, size-0 (where numpy defines a value), size-1 and length-1 axes, ``ddof``,
quantile methods, weights. Extrema and order statistics use inputs without ties (kinks)."""

import numpy as np

from op_arrays import BOOLS, COL, E, INTS, ONE, POS, ROW, S0, X, X3, V4
from op_sample import sample

NANS = np.array([[0.61, np.nan, 0.83], [-0.44, 1.52, np.nan]])

SAMPLES = []


def axes(name, *extra, empty=True, **options):
    """``name`` reduced over every axis form of X and X3, and on 0-d, size-1 and length-1
    operands; ``empty``: also over a size-0 operand (numpy gives a value)."""
    out = [sample(name, X, *extra, **options), sample(name, X, *extra, axis=0, **options),
           sample(name, X, *extra, axis=-1, keepdims=True, **options),
           sample(name, X3, *extra, axis=(0, 2), **options),
           sample(name, X3, *extra, axis=(-1, 0), keepdims=True, **options),
           sample(name, S0, *extra, **options), sample(name, COL, *extra, axis=1, **options),
           sample(name, ONE, *extra, axis=None, **options)]
    if empty:
        out.append(sample(name, E, *extra, axis=0, **options))
    return out


def few_axes(name, *extra, **options):
    """Fewer forms, for the variants of a function sampled with ``axes`` (nan-ignoring ones
    on arrays without NaNs, hessgrad's ``reduce_*`` names): a negative axis with keepdims, a
    tuple axis, a length-1 axis."""
    return [sample(name, X, *extra, **options),
            sample(name, X, *extra, axis=-1, keepdims=True, **options),
            sample(name, X3, *extra, axis=(0, 2), **options),
            sample(name, COL, *extra, axis=1, **options)]


for name in "sum mean prod".split():
    SAMPLES += axes(name, empty=name != "mean")
for name in "max min ptp".split():
    SAMPLES += axes(name, empty=False)
for name in ("nansum nanprod hg.reduce_sum hg.reduce_mean amax amin nanmax nanmin "
             "hg.reduce_max hg.reduce_min hg.reduce_logsumexp nanstd nanvar nanmedian").split():
    SAMPLES += few_axes(name)
for name in "std var".split():
    SAMPLES += axes(name, empty=False)
for name in "std var nanstd nanvar".split():
    SAMPLES += [sample(name, X, ddof=1), sample(name, X, axis=0, ddof=1),
                sample(name, X3, axis=(0, 1), ddof=2, keepdims=True),
                sample(name, COL, axis=0, ddof=1)]
SAMPLES += axes("median", empty=False)
SAMPLES += axes("quantile", 0.3, empty=False) + few_axes("nanquantile", 0.3)
for name in "quantile nanquantile".split():
    SAMPLES += [sample(name, X, [0.2, 0.7], axis=1), sample(name, X3, 0.6, axis=(0, 2))]
for name in "percentile nanpercentile".split():
    SAMPLES += [sample(name, X, 30.0), sample(name, X, 65.0, axis=-1, keepdims=True),
                sample(name, S0, 50.0), sample(name, COL, 40.0, axis=1)]
SAMPLES += [sample("nanmean", X), sample("nanmean", X, axis=-1, keepdims=True),
            sample("nanmean", NANS, axis=1), sample("nansum", NANS, axis=0),
            sample("nanmax", NANS, axis=1), sample("nanvar", NANS, axis=1, ddof=1),
            sample("nanmedian", NANS, axis=1), sample("nanprod", NANS)]
SAMPLES += [sample("average", X), sample("average", X, axis=1, weights=np.array([0.2, 0.5, 0.3])),
            sample("average", X, axis=0, weights=np.array([1.0, 3.0]), returned=True),
            sample("average", X, 1, np.array([0.2, 0.5, 0.3])),  # traced weights
            sample("average", COL, axis=1, keepdims=True)]
for name in "cumsum cumprod nancumsum nancumprod".split():
    SAMPLES += [sample(name, X), sample(name, X, axis=1), sample(name, X3, axis=-2),
                sample(name, S0), sample(name, E, axis=0), sample(name, COL, axis=1)]
for name in "cumulative_sum cumulative_prod".split():
    SAMPLES += [sample(name, V4), sample(name, X, axis=1), sample(name, X, axis=0,
                                                                  include_initial=True),
                sample(name, E, axis=1), sample(name, COL, axis=1)]
for name in "argmax argmin nanargmax nanargmin".split():
    SAMPLES += [sample(name, X), sample(name, X, axis=0), sample(name, X3, axis=-1,
                                                                 keepdims=True),
                sample(name, S0), sample(name, COL, axis=1)]
for name in "all any".split():
    SAMPLES += [sample(name, X > 0), sample(name, X > 0, axis=1),
                sample(name, X3 > 0, axis=(0, 2), keepdims=True), sample(name, E > 0),
                sample(name, X), sample(name, BOOLS, axis=-1)]
SAMPLES += [sample("count_nonzero", X > 0), sample("count_nonzero", INTS, axis=0),
            sample("count_nonzero", BOOLS, axis=(0, 1), keepdims=True),
            sample("count_nonzero", X)]
for name in "diff ediff1d gradient trapezoid".split():
    SAMPLES += [sample(name, X), sample(name, V4)]
SAMPLES += [sample("diff", X, n=2, axis=-1), sample("diff", X, axis=0),
            sample("diff", COL, n=2, axis=1), sample("diff", V4, prepend=0.0, append=1.0),
            sample("ediff1d", X, to_begin=np.array([1.0]), to_end=2.0),
            sample("gradient", X, axis=1), sample("gradient", V4, 0.5),
            sample("gradient", V4, edge_order=2), sample("gradient", X, 2.0, 0.5),
            sample("trapezoid", X, dx=0.5, axis=0),
            sample("trapezoid", X, np.array([0.0, 0.4, 1.1])),
            sample("trapezoid", V4, x=np.array([0.0, 0.3, 0.9, 1.4]))]
SAMPLES += [sample("cov", X), sample("cov", X, rowvar=False), sample("cov", X, ddof=0),
            sample("cov", X3[0], X3[1]), sample("cov", X, aweights=np.array([0.5, 1.0, 2.0])),
            sample("corrcoef", np.vstack([X, POS])), sample("corrcoef", X, rowvar=False),
            sample("corrcoef", X[0], X[1])]
SAMPLES += [sample("trace", X), sample("trace", X3, offset=1, axis1=0, axis2=2),
            sample("trace", X, offset=-1), sample("linalg.trace", X3)]

MASK = np.array([[True, False, True], [True, True, False]])
SAMPLES += [sample("sum", X, axis=1, where=MASK), sample("max", X, axis=0, initial=0.9),
            sample("min", X, initial=-0.1, where=MASK), sample("mean", X, axis=0, where=MASK),
            sample("prod", X, axis=-1, initial=2.0), sample("cumsum", X, axis=None),
            sample("quantile", X, 0.3, axis=1, keepdims=True),
            sample("median", X, axis=(0, 1), keepdims=True), sample("median", E, axis=1),
            sample("cumprod", E, axis=1), sample("diff", E, axis=0),
            sample("var", COL, axis=1, ddof=0, keepdims=True)]
