"""Samples that show an open bug: each runs as a strict xfail whose reason names the bug (so
the test starts failing, as a reminder to delete the entry, the day the bug is fixed)."""

_ISSUE_40_1 = ("issue 40 part 1: sort, median or quantile of a 0-d value or along an axis of "
               "length one: shape inference returns an unknown (None) shape, so the graph-mode "
               "HVP and the compiled Hessian fail ('vmap: an operand has a shape known only at "
               "run time (None)')")

KNOWN = {sample_id: _ISSUE_40_1 for sample_id in (
    "sort[0d,axis=None]", "sort[2x1,axis=1]", "sort[1,reshape of a reduction]",
    "median[0d]", "median[2x1,axis=1]", "median[1,axis=None]", "nanmedian[2x1,axis=1]",
    "quantile[0d,0.3]", "quantile[2x1,0.3,axis=1]", "quantile[1,0.3,axis=None]",
    "nanquantile[2x1,0.3,axis=1]", "percentile[0d,50.0]", "percentile[2x1,40.0,axis=1]",
    "nanpercentile[0d,50.0]", "nanpercentile[2x1,40.0,axis=1]",
)}
