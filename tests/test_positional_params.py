"""Parameters passed positionally (``hg.reduce_sum(x, 1)``, ``hnp.reshape(x, (3, 2))``) stay
static in every mode: forward mode must not give them tangents (an axis of 1 became 0 in a
forward-over-reverse Hessian-vector product, and a dtype or a shape failed with a TypeError)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

X = np.array([[1.5, 2.5, 0.3], [0.7, -1.2, 2.0]])

CASES = {
    "hg.cast": lambda x: hnp.sum(hg.cast(x, "float32") * x ** 2),
    "hg.cast int": lambda x: hnp.sum(x ** 2 * hg.cast(hnp.floor(x), "int64")),
    "hg.broadcast_to": lambda x: hnp.sum(hg.broadcast_to(x, (3, 2, 3)) * x ** 2),
    "hg.reshape": lambda x: hnp.sum(hg.reshape(x, (3, 2)) @ x),
    "hg.transpose": lambda x: hnp.sum(hg.transpose(x, (1, 0)) @ x),
    "hg.reduce_sum": lambda x: hnp.sum(hg.reduce_sum(x * x, 1) ** 2),
    "hg.reduce_mean": lambda x: hnp.sum(hg.reduce_mean(x * x, 1, True) ** 2),
    "hg.reduce_max": lambda x: hnp.sum(hg.reduce_max(x * x, 1) ** 2),
    "hg.reduce_min": lambda x: hnp.sum(hg.reduce_min(x * x, [1]) ** 2),
    "hg.reduce_logsumexp": lambda x: hnp.sum(hg.reduce_logsumexp(x * x, 1) ** 2),
    "hg.concat": lambda x: hnp.sum(hg.concat([x, x ** 2], 1) ** 2),
    "hnp.sum": lambda x: hnp.sum(hnp.sum(x * x, 1) ** 2),
    "hnp.reshape": lambda x: hnp.sum(hnp.reshape(x, (3, 2)) @ x),
    "hnp.transpose": lambda x: hnp.sum(hnp.transpose(x, (1, 0)) @ x),
    "hnp.broadcast_to": lambda x: hnp.sum(hnp.broadcast_to(x, (3, 2, 3)) * x ** 2),
    "astype": lambda x: hnp.sum(x.astype(np.float32) * x ** 2),
    "hnp.cumsum": lambda x: hnp.sum(hnp.cumsum(x, 1) ** 2),
    "hnp.moveaxis": lambda x: hnp.sum(hnp.moveaxis(x, 0, 1) @ x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_hvp_mode_agrees_with_reverse_over_reverse(name):
    f, v = CASES[name], np.cos(np.arange(6.0)).reshape(2, 3)
    want = hg.hvp(f, mode="rev-rev")(X, v)
    for mode in ("fwd-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.hvp(f, mode=mode)(X, v), want, rtol=1e-6, atol=1e-9,
                                   err_msg=f"{name}, mode={mode}")
    x = hg.constant(X)  # and the JVP of the gradient itself, through ForwardAccumulator
    with hg.ForwardAccumulator(x, hg.constant(v)) as acc:
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), want, rtol=1e-6, atol=1e-9)


def test_tensorflow_signatures_and_name_are_accepted():
    x = hg.constant(X)
    assert hg.reduce_sum(x, axis=1, keepdims=True, name="s").shape == (2, 1)
    # numpy integer axes, as numpy's own functions return them
    np.testing.assert_array_equal(hg.reduce_sum(x, np.int64(1)).numpy(), x.numpy().sum(1))
    assert hg.transpose(x + 1j, conjugate=True).numpy()[0, 1] == X[1, 0] - 1j
    assert hg.reshape(x, [3, -1], name="r").shape == (3, 2)
    assert hg.cast(x, np.float32).dtype == np.float32
    assert hg.broadcast_to(hg.constant(1.0), [2, 2]).shape == (2, 2)
    assert hg.stack([x, x], axis=1).shape == (2, 2, 3)
