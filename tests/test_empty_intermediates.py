"""Size-0 intermediates in every mode (issue 40 part 2): an empty slice meets a product, a
difference of order 2 along an axis of length 1; and a function using tensor methods
(``x.at``) is never called with plain numpy arrays by a transform."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

# a compiler that fails on a size-0 value falls back with a warning: here that is a failure
pytestmark = pytest.mark.filterwarnings("error:hessgrad.function. graph compilation failed")


def empty_product(x):            # x of shape (4, 3)
    v = x.at[4:2, ..., :].get()  # shape (0, 3)
    return hnp.sum(hnp.divide(v, np.zeros((1, 0)) @ v)) + hnp.sum(x ** 2)


def empty_difference(x):         # x of shape (1, 1)
    return hnp.sum(hnp.tanh(hnp.diff(x, n=2, axis=1)).T) + hnp.sum(hnp.sin(hnp.fabs(x)[1:1, :1])) \
        + hnp.sum(hnp.cos(x))


MODES = {
    "hessian": lambda f, x: hg.hessian(f)(x),
    "hessian without detection": lambda f, x: hg.hessian(f, detect_sparsity=False)(x),
    "compiled hessian": lambda f, x: hg.function(hg.hessian(f))(x),
    "sparse hessian": lambda f, x: hg.sparse_hessian(f)(x).toarray().reshape(x.shape * 2),
    "vmapped hessian": lambda f, x: hg.vmap(hg.hessian(f))(np.stack([x, x]))[1],
    "hessian of vmapped sum": lambda f, x: hg.hessian(
        lambda y: hnp.sum(hg.vmap(f)(hnp.stack([y, y]))) / 2)(x),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f,shape", [(empty_product, (4, 3)), (empty_difference, (1, 1))])
def test_empty_intermediates_in_every_mode(f, shape, mode):
    x = np.linspace(0.2, 1.3, int(np.prod(shape))).reshape(shape)
    expected = hg.hessian(lambda y: hnp.sum(y ** 2) if f is empty_product
                          else hnp.sum(hnp.cos(y)), detect_sparsity=False)(x)
    np.testing.assert_allclose(MODES[mode](f, x), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-15)
