"""Issue 40: gradients of order statistics over a length-one axis (or a 0-d value) in graph
mode. The inverse permutation of sort's VJP had no shape rule, and running its forward on
stand-in arrays of ones fails on a length-one axis (index 1 out of bounds), so its shape, and
every gradient shape after it, was unknown; the backprop core then left the gradient of a
broadcast operand (the mean inside std and var) unsummed: the compiled gradient came out
(n - 1) / n of the eager one, in every mode (the plan interpreter too)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

MODES = {"plan": dict(optimize=False), "nokernels": dict(jit_kernels=False),
         "kernels": dict(jit_kernels=True)}
X = np.array([1., 1., 1., 1., -1., -1., -1., 1., -1., 1., -1.])


def _agree(f, x, rtol=1e-12):
    """Compiled gradients and HVPs equal the eager ones (which finite differences check)."""
    want = hg.grad(f)(x)
    v = np.random.default_rng(0).standard_normal(x.shape)
    hv = hg.hvp(f)(x, v)
    for flags in MODES.values():
        np.testing.assert_allclose(hg.function(hg.grad(f), **flags)(x), want, rtol=rtol,
                                   atol=1e-15)
        np.testing.assert_allclose(hg.function(hg.hvp(f), **flags)(x, v), hv, rtol=rtol,
                                   atol=1e-14)
    return want


def test_issue_40_reproducers():
    def f(x):
        return hnp.sum(hnp.sin(hnp.sort(hnp.reshape(hnp.std(x, ddof=1), (1,)))))

    def g(x):
        return hnp.median(hnp.var(x, axis=0, ddof=1), axis=None)

    e = 1e-6
    for fn, reference in ((f, lambda x: np.sin(np.std(x, ddof=1))),
                          (g, lambda x: np.var(x, ddof=1))):
        want = _agree(fn, X)
        fd = [(reference(X + e * u) - reference(X - e * u)) / (2 * e) for u in np.eye(X.size)]
        np.testing.assert_allclose(want, fd, rtol=1e-7)


STATISTICS = {
    "std": lambda x, ddof: hnp.std(x, ddof=ddof),
    "var": lambda x, ddof: hnp.var(x, ddof=ddof),
    "var axis=0": lambda x, ddof: hnp.var(x, axis=0, ddof=ddof),
    "std keepdims": lambda x, ddof: hnp.std(x, ddof=ddof, keepdims=True),
}
ORDER = {
    "sort (1,)": lambda s: hnp.sum(hnp.sin(hnp.sort(hnp.reshape(s, (1,))))),
    "sort (1, 1) axis 0": lambda s: hnp.sum(hnp.sort(hnp.reshape(s, (1, 1)), axis=0) ** 2),
    "median 0-d": lambda s: hnp.median(hnp.reshape(s, ()), axis=None) * 3.0,
    "median (1,)": lambda s: hnp.median(hnp.reshape(s, (1,))) ** 2,
    "median (1, 2) axis 0": lambda s: hnp.sum(hnp.median(
        hnp.stack([hnp.reshape(s, ()), hnp.reshape(s, ()) * 2.0])[None, :], axis=0)),
    "quantile 0-d": lambda s: hnp.quantile(hnp.reshape(s, ()), 0.3) + 1.0,
    "quantile (1,)": lambda s: hnp.sin(hnp.quantile(hnp.reshape(s, (1,)), 0.7)),
    "percentile (1, 1)": lambda s: hnp.sum(hnp.percentile(hnp.reshape(s, (1, 1)), 40.0,
                                                          axis=1)),
}


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("stat", sorted(STATISTICS))
@pytest.mark.parametrize("order", sorted(ORDER))
def test_statistics_with_ddof_through_length_one_order_statistics(stat, order, ddof):
    x = np.random.default_rng(ddof).uniform(-1, 1, 7)
    _agree(lambda x: ORDER[order](STATISTICS[stat](x, ddof)), x)


def test_gradient_shapes_after_a_length_one_sort_are_static():
    f = hg.function(hg.grad(lambda x: hnp.sum(hnp.sort(hnp.reshape(hnp.std(x), (1,))))))
    f(X)
    unknown = [n.name for n in f.graph.nodes for t in n.outputs
               if t.shape is None or None in t.shape]
    assert not unknown


def test_an_unknown_gradient_shape_is_still_summed_to_its_operand():
    """A gradient whose shape graph mode cannot know (a user's op without a shape rule whose
    forward fails on stand-ins), flowing into a broadcast operand, is summed at run time."""
    def copy(x):
        if not x.flags.writeable:  # graph mode's stand-in: this op's shape stays unknown
            raise ValueError("not on stand-ins")
        return x.copy()

    blind = hg.primitive("test_blind_copy", copy, vjp=[lambda g, ans, x: blind(g)])
    seen = hg.primitive("test_seen_copy", copy, vjp=[lambda g, ans, x: blind(g)],
                        shape_rule=lambda x: (x.shape, x.dtype))

    def f(x):
        return hnp.sum(hnp.sin(seen(x - hnp.mean(x, keepdims=True))))

    x = np.linspace(-1, 1, 5) ** 3
    want = hg.grad(f)(x)
    for flags in MODES.values():
        np.testing.assert_allclose(hg.function(hg.grad(f), **flags)(x), want, rtol=1e-13)
