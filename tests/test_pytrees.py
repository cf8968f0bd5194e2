"""Pytree utilities named as JAX names them, and pytrees of parameters in the operators and
the SciPy adapter (issue 37 part 2)."""

import collections

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.sparse.linalg import cg

import hessgrad as hg
import hessgrad.numpy as hnp

Point = collections.namedtuple("Point", "x y")


def tree():
    return {"b": [np.array(1.0), (np.arange(3.0), None)], "a": Point(2.0, np.ones((2, 2))),
            "c": None}


def test_tree_leaves_sorted_keys_and_none_is_empty():
    leaves = hg.tree_leaves(tree())
    assert len(leaves) == 4
    assert leaves[0] == 2.0 and leaves[1].shape == (2, 2)   # "a" first (sorted keys)
    assert leaves[2] == 1.0 and leaves[3].shape == (3,)
    assert hg.tree_leaves(None) == [] and hg.tree_leaves({"x": None}) == []
    assert hg.tree_leaves(3.0) == [3.0]
    assert hg.tree_leaves({"z": 1, "y": 2, "x": 3}) == [3, 2, 1]


def test_flatten_unflatten_round_trip():
    t = tree()
    leaves, treedef = hg.tree_flatten(t)
    assert treedef.num_leaves == 4
    back = hg.tree_unflatten(treedef, [np.asarray(x) * 2 for x in leaves])
    assert isinstance(back["a"], Point) and back["c"] is None and back["b"][1][1] is None
    assert isinstance(back["b"], list) and isinstance(back["b"][1], tuple)
    np.testing.assert_array_equal(back["b"][1][0], 2 * np.arange(3.0))
    assert back["a"].x == 4.0
    assert treedef == hg.tree_structure(back) and hash(treedef) == hash(hg.tree_structure(t))
    assert treedef != hg.tree_structure({"a": 1})
    with pytest.raises(ValueError, match="4 leaves"):
        hg.tree_unflatten(treedef, [1, 2])
    assert "PyTreeDef" in repr(treedef)


def test_tree_map_over_several_trees_and_is_leaf():
    t = {"w": np.ones(2), "b": (1.0, 2.0)}
    u = {"w": np.full(2, 3.0), "b": (10.0, 20.0)}
    out = hg.tree_map(lambda a, b: a + b, t, u)
    np.testing.assert_array_equal(out["w"], [4.0, 4.0])
    assert out["b"] == (11.0, 22.0)
    with pytest.raises(ValueError, match="structure"):
        hg.tree_map(lambda a, b: a, t, {"w": 1.0})
    pairs = hg.tree_map(lambda p: p[0] * p[1], {"a": (2.0, 3.0), "b": [(1.0, 4.0)]},
                        is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == {"a": 6.0, "b": [4.0]}
    assert hg.tree_map(lambda x: x, None) is None


def test_ravel_pytree_round_trip_and_dtypes():
    t = {"w": np.arange(6.0).reshape(2, 3), "b": np.array([7.0, 8.0]), "s": 3.0,
         "i": np.array([1, 2], np.int32), "n": None}
    flat, unravel = hg.ravel_pytree(t)
    assert flat.shape == (11,) and flat.dtype == np.float64
    np.testing.assert_array_equal(flat, [7.0, 8.0, 1, 2, 3.0, 0, 1, 2, 3, 4, 5])
    back = unravel(flat + 0.5)
    assert back["n"] is None and back["i"].dtype == np.int32 and back["w"].shape == (2, 3)
    np.testing.assert_array_equal(back["w"], t["w"] + 0.5)
    with pytest.raises(ValueError, match="11 entries"):
        unravel(np.zeros(3))
    f32, un32 = hg.ravel_pytree([np.ones(2, np.float32), np.zeros(1, np.float32)])
    assert f32.dtype == np.float32 and un32(f32)[0].dtype == np.float32
    empty, unravel_empty = hg.ravel_pytree({})
    assert empty.shape == (0,) and unravel_empty(empty) == {}


def test_ravel_pytree_is_differentiable():
    t = {"w": np.arange(1.0, 5.0).reshape(2, 2), "b": np.array([0.5, -1.0])}
    g = hg.grad(lambda p: hnp.sum(hg.ravel_pytree(p)[0] ** 3))(t)
    np.testing.assert_allclose(g["w"], 3 * t["w"] ** 2)
    np.testing.assert_allclose(g["b"], 3 * t["b"] ** 2)
    flat, unravel = hg.ravel_pytree(t)
    f = lambda v: hnp.sum(unravel(v)["w"] ** 2) * hnp.sum(unravel(v)["b"])  # noqa: E731
    expected = np.concatenate([np.full(2, np.sum(t["w"] ** 2)),  # "b" first: sorted keys
                               (2 * t["w"] * np.sum(t["b"])).ravel()])
    np.testing.assert_allclose(hg.grad(f)(flat), expected)


X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
Y = np.array([0.5, -0.2, 0.1, 0.9])


def mlp(p):
    h = hnp.tanh(hnp.matmul(X, p["W"]) + p["b"])
    return hnp.matmul(h, p["v"]) + p["c"]


def mlp_loss(p):
    return 0.5 * hnp.sum((mlp(p) - Y) ** 2) + 0.05 * hnp.sum(p["W"] ** 2)


PARAMS = {"W": np.linspace(-0.5, 0.5, 6).reshape(3, 2), "b": np.array([0.1, -0.1]),
          "v": np.array([0.3, -0.7]), "c": 0.2}


def dense_on_flat(f, params):
    flat, unravel = hg.ravel_pytree(params)
    return flat, np.asarray(hg.hessian(lambda v: f(unravel(v)))(flat))


def test_grad_hessian_hvp_accept_pytrees():
    flat, D = dense_on_flat(mlp_loss, PARAMS)
    _, unravel = hg.ravel_pytree(PARAMS)
    g = hg.grad(mlp_loss)(PARAMS)
    assert set(g) == set(PARAMS) and np.shape(g["c"]) == ()
    g_flat = hg.grad(lambda v: mlp_loss(unravel(v)))(flat)
    np.testing.assert_allclose(hg.ravel_pytree(g)[0], g_flat, rtol=1e-12)
    H = hg.hessian(mlp_loss)(PARAMS)
    assert H["W"]["b"].shape == (3, 2, 2)
    # flat order: sorted keys W, b, c, v
    np.testing.assert_allclose(H["W"]["b"].reshape(6, 2), D[0:6, 6:8], rtol=1e-10)
    v = unravel(np.arange(11.0))
    hv = hg.hvp(mlp_loss)(PARAMS, v)
    np.testing.assert_allclose(hg.ravel_pytree(hv)[0], D @ np.arange(11.0), rtol=1e-10)


@pytest.mark.parametrize("params", [PARAMS, [PARAMS["W"], (PARAMS["b"], PARAMS["v"]),
                                             PARAMS["c"]]], ids=["dict", "list"])
def test_hessian_operator_of_a_pytree(params):
    f = mlp_loss if isinstance(params, dict) else \
        (lambda p: mlp_loss({"W": p[0], "b": p[1][0], "v": p[1][1], "c": p[2]}))
    flat, D = dense_on_flat(f, params)
    H = hg.HessianOperator(f, params)
    assert H.shape == (11, 11) and H.dtype == np.float64
    np.testing.assert_array_equal(H.x, flat)
    back = H.unravel(H.x)
    assert hg.tree_structure(back) == hg.tree_structure(params)
    v = np.random.default_rng(0).standard_normal(11)
    np.testing.assert_allclose(H.matvec(v), D @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H @ v, D @ v, rtol=1e-10, atol=1e-12)
    for k in (0, 1, 5, 12):
        V = np.random.default_rng(k).standard_normal((11, k))
        np.testing.assert_allclose(H.matmat(V), D @ V, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H.to_dense(), D, rtol=1e-10, atol=1e-12)
    # a solver takes it as it is
    shifted = hg.HessianOperator(lambda p: f(p) + 10.0 * hg.ravel_pytree(p)[0] @
                                 hg.ravel_pytree(p)[0], params)
    sol, info = cg(shifted.aslinearoperator(), v, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(D @ sol + 20.0 * sol, v, atol=1e-7)


def test_hessian_operator_copies_the_point():
    params = {"W": PARAMS["W"].copy(), "b": PARAMS["b"].copy()}
    H = hg.HessianOperator(lambda p: hnp.sum(p["W"] ** 3) + hnp.sum(p["b"] ** 4), params)
    before = H.to_dense()
    params["W"] += 1.0
    np.testing.assert_array_equal(H.to_dense(), before)
    assert H.params["W"] is not params["W"]


def test_hessian_operator_rejects_none_leaves():
    with pytest.raises(TypeError, match="None"):
        hg.HessianOperator(lambda p: hnp.sum(p["w"] ** 2), {"w": np.ones(2), "x": None})


def test_gauss_newton_operator_of_a_pytree():
    flat, unravel = hg.ravel_pytree(PARAMS)
    G = hg.GaussNewtonOperator(mlp, lambda r: 0.5 * hnp.sum((r - Y) ** 2), PARAMS)
    J = np.asarray(hg.jacobian(lambda v: mlp(unravel(v)))(flat))
    assert G.shape == (11, 11)
    np.testing.assert_allclose(G.to_dense(), J.T @ J, rtol=1e-10, atol=1e-12)
    V = np.random.default_rng(1).standard_normal((11, 3))
    np.testing.assert_allclose(G @ V, J.T @ J @ V, rtol=1e-10, atol=1e-12)


def test_scipy_objective_of_a_pytree():
    obj = hg.scipy.objective(mlp_loss, params=PARAMS)
    flat, D = dense_on_flat(mlp_loss, PARAMS)
    np.testing.assert_array_equal(obj.x0, flat)
    assert obj.fun(obj.x0) == pytest.approx(float(mlp_loss(PARAMS)))
    np.testing.assert_allclose(obj.jac(obj.x0), hg.ravel_pytree(hg.grad(mlp_loss)(PARAMS))[0])
    np.testing.assert_allclose(obj.hess(obj.x0), D, rtol=1e-10, atol=1e-12)
    p = np.linspace(-1.0, 1.0, 11)
    for _ in range(4):  # past fold_after: the HessianOperator path
        np.testing.assert_allclose(obj.hessp(obj.x0, p), D @ p, rtol=1e-10, atol=1e-12)


def test_scipy_minimize_over_a_pytree():
    A = np.linspace(-1.0, 1.0, 30).reshape(10, 3) ** np.array([1, 2, 3])
    y = A @ np.array([1.0, -2.0, 0.5]) + 0.3

    def ridge(p):
        return 0.5 * hnp.mean((hnp.matmul(A, p["w"]) + p["b"] - y) ** 2) + \
            1e-6 * hnp.sum(p["w"] ** 2)

    obj = hg.scipy.objective(ridge, params={"w": np.zeros(3), "b": 0.0})
    res = minimize(obj.fun, obj.x0, jac=obj.jac, hessp=obj.hessp, method="trust-ncg",
                   options={"gtol": 1e-10})
    assert res.success
    best = obj.unravel(res.x)
    assert set(best) == {"w", "b"} and np.shape(best["b"]) == ()
    np.testing.assert_allclose(best["w"], [1.0, -2.0, 0.5], atol=1e-4)
    assert float(best["b"]) == pytest.approx(0.3, abs=1e-4)
