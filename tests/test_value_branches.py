"""Python branches on values (issue 40 part 3): ``if s != 0``, Python's ``max`` of tensors,
``int()`` of a tensor. hessgrad.function traces at the call's values; each branch taken is a
guard checked at every run, and a call that branches otherwise gets (or reuses) another trace.
Whatever hg.hessian differentiates eagerly, the traced and cached paths do too."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp


def branchy(x):
    s = hnp.sum(x ** 2)
    t = max(np.sign(x[0]) * 1.0, 0.0)
    return s * t + hnp.sum(hnp.sin(x)) if s != 0 else s


def by_count(x):
    """A loop whose trip count is read off the data (int() of a tensor)."""
    total = hnp.sum(x * 0.0)
    for k in range(int(hnp.sum(x > 0))):
        total = total + hnp.cos(x[k]) * x[-1]
    return total


POINTS = [np.array([0.5, -0.3, 0.2]), np.array([-0.5, 0.3, 0.2]), np.zeros(3),
          np.array([0.7, 0.1, 0.4]), np.array([-0.1, -0.2, 0.3])]


def _eager_hessian(f, x):
    return hg.hessian(f, detect_sparsity=False)(x)


@pytest.mark.parametrize("f", [branchy, by_count])
def test_traced_paths_follow_the_branches_of_each_call(f):
    traced_grad = hg.function(hg.grad(f))
    traced_hessian = hg.function(hg.hessian(f))
    for x in POINTS + POINTS[::-1]:
        np.testing.assert_allclose(traced_grad(x), hg.grad(f)(x), rtol=1e-14, atol=1e-15)
        h = _eager_hessian(f, x)
        np.testing.assert_allclose(traced_hessian(x), h, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(hg.hessian(f)(x), h, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(hg.sparse_hessian(f)(x).toarray(), h, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(hg.make_hvp(f)(x)(np.arange(3.0)), h @ np.arange(3.0),
                                   rtol=1e-14, atol=1e-15)
    # one trace per way the branches go, reused when a call goes a way seen before
    assert traced_grad.experimental_traces <= len(POINTS)


def test_members_that_branch_differently_are_batched_apart():
    xs = np.stack(POINTS)
    expected = np.stack([hg.grad(branchy)(x) for x in xs])
    np.testing.assert_allclose(hg.vmap(hg.grad(branchy))(xs), expected, rtol=1e-14)
    np.testing.assert_allclose(hg.function(hg.grad(branchy)).map(xs), expected, rtol=1e-14)
    np.testing.assert_allclose(hg.jacobian(lambda x: hg.vmap(branchy)(x))(xs[:2]),
                               hg.jacobian(lambda x: hnp.stack([branchy(x[0]),
                                                               branchy(x[1])]))(xs[:2]),
                               rtol=1e-14)


def test_a_run_where_a_guard_fails_never_returns_the_other_branch():
    f = hg.function(lambda x: x * 2.0 if hnp.sum(x) > 0 else x * 3.0)
    concrete = f.get_concrete_function(np.ones(2))
    assert [expected for _, _, expected in concrete.guards] == [True]
    with pytest.raises(hg.ConcretizationError, match="another way"):
        concrete(np.array([[-1.0, -1.0]]), False)
    np.testing.assert_array_equal(f(-np.ones(2)), -3.0 * np.ones(2))


def test_too_many_specializations_warn_and_stay_right():
    f = hg.function(lambda x: x * float(int(hnp.sum(x))))  # int() of a float: one per value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(12):
            np.testing.assert_array_equal(f(np.array([k + 0.25])), [(k + 0.25) * k])
    assert sum("branches on values" in str(w.message) for w in caught) == 1
    assert f.experimental_traces == hg.Function.MAX_SPECIALIZATIONS


def test_values_inside_a_loop_body_still_need_hg_cond():
    def f(x):
        def body(i, s):
            return i + 1, s * 2.0 if s > 1.0 else s + 1.0
        return hg.while_loop(lambda i, s: i < 3, body, (0, hnp.sum(x)))[1]

    with pytest.raises(TypeError, match="hg.cond"):
        hg.function(f)(np.ones(2))


def test_sparse_patterns_under_branches_are_local():
    """The pattern of a function that branches on x is that of x's branch, said in .info."""
    def f(x):
        if x[0] > 0:
            return hnp.sum(x ** 3)
        return hnp.sum(x[:-1] * x[1:]) ** 2

    S, J = hg.sparse_hessian(f), hg.sparse_jacobian(lambda x: x * f(x))
    for x, nnz in ((np.array([1.0, 2, 3, 4]), 4), (np.array([-1.0, 2, 3, 4]), 16)):
        np.testing.assert_allclose(S(x).toarray(), _eager_hessian(f, x), rtol=1e-14)
        assert S.info(x)["nnz"] == nnz and S.info(x)["local"]
        np.testing.assert_allclose(J(x).toarray(), hg.jacobian(lambda x: x * f(x))(x),
                                   rtol=1e-14)
        assert J.info(x)["local"]
    assert not hg.sparse_hessian(lambda x: hnp.sum(x ** 3)).info(np.ones(3))["local"]
