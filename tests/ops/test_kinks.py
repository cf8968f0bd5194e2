"""Smooth identities hold at the kinks of piecewise ops (docs/kinks.md): both sides have the
same gradient and Hessian at the kink, in every mode."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp


def relu(x):
    return hnp.maximum(x, 0.0)


IDENTITIES = [  # (name, f, g, point): f == g near the point, the point a kink of f
    ("abs squared", lambda x: hnp.sum(hnp.abs(x) ** 2), lambda x: hnp.sum(x ** 2), [0.0, 1.0]),
    ("abs times log1p abs", lambda x: hnp.sum(hnp.abs(x) * hnp.log1p(hnp.abs(x))),
     lambda x: hnp.sum(x * hnp.log1p(x)), [0.0]),
    ("fabs squared", lambda x: hnp.sum(hnp.fabs(x) ** 2), lambda x: hnp.sum(x ** 2), [0.0, -0.0]),
    ("abs of abs", lambda x: hnp.sum(hnp.abs(hnp.abs(x)) * x), lambda x: hnp.sum(x * x),
     [0.0, 2.0]),
    ("copysign positive", lambda x: hnp.sum(hnp.copysign(x, 1.0) ** 2 + hnp.copysign(x, 1.0)),
     lambda x: hnp.sum(x ** 2 + x), [0.0]),
    ("copysign negative", lambda x: hnp.sum(hnp.copysign(x, -1.0) * 3.0),
     lambda x: hnp.sum(-3.0 * x), [0.0]),
    ("maximum of equals", lambda x: hnp.sum(hnp.maximum(x, x) ** 3),
     lambda x: hnp.sum(x ** 3), [0.5, -1.0]),
    ("maximum plus minimum", lambda x: hnp.sum(hnp.exp(hnp.maximum(x, 0.5) + hnp.minimum(x, 0.5))),
     lambda x: hnp.sum(hnp.exp(x + 0.5)), [0.5, 0.5]),
    ("relu difference", lambda x: hnp.sum(hnp.sin(relu(x) - relu(-x))),
     lambda x: hnp.sum(hnp.sin(x)), [0.0, 0.3]),
    ("clip inside its bounds", lambda x: hnp.sum(hnp.clip(x, -1.0, 1.0) ** 2),
     lambda x: hnp.sum(x ** 2), [-1.0, 1.0, 0.0]),
    ("max of a tie", lambda x: hnp.max(hnp.stack([x[0], x[0]])) ** 2,
     lambda x: x[0] ** 2, [1.5]),
]


def _derivatives(f, x, mode):
    if mode == "compiled":
        return hg.function(hg.grad(f))(x), hg.function(hg.hessian(f))(x)
    hessian = hg.hessian(f) if mode == "eager" else \
        lambda x: np.stack([hg.hvp(f, mode=mode)(x, e) for e in np.eye(x.size)])
    return hg.grad(f)(x), hessian(x)


@pytest.mark.parametrize("mode", ["eager", "compiled", "rev-rev", "rev-fwd"])
@pytest.mark.parametrize("name,f,g,point", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_identity_holds_at_the_kink(name, f, g, point, mode):
    x = np.array(point)
    np.testing.assert_allclose(f(x), g(x), rtol=1e-15)
    for got, want in zip(_derivatives(f, x, mode), _derivatives(g, x, "eager")):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_the_slope_keeps_the_dtype():
    x = np.array([0.0, -1.0, 2.0], dtype=np.float32)
    for f, want in ((hnp.abs, [1.0, -1.0, 1.0]),
                    (lambda x: hnp.copysign(x, -2.0), [-1.0, 1.0, -1.0])):
        grad = hg.grad(lambda x: hnp.sum(f(x)))(x)
        assert grad.dtype == np.float32
        np.testing.assert_array_equal(grad, want)
