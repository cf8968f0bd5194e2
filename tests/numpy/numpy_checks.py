"""Shared checks for tests/numpy, imported as ``numpy_checks`` (rootdir-relative discovery
puts this folder on sys.path; there is deliberately no ``__init__.py``)."""

import numpy as np


def assert_same_as_numpy(want, got):
    """``got`` equals numpy's ``want`` exactly: values, dtypes and shapes (each element of a
    tuple result)."""
    wants, gots = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    assert len(wants) == len(gots)
    for w, g in zip(wants, gots):
        w, g = np.asarray(w), np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)
