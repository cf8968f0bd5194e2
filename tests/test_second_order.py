"""Hessian-vector products and Hessians against SciPy's analytic Rosenbrock oracles; every
HVP strategy agrees with every other."""

import re

import numpy as np
import pytest
from scipy.optimize import rosen_hess, rosen_hess_prod

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.state import THREAD


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def logistic(w, X, y, lam):
    margins = -y * hnp.matmul(X, w)
    return hnp.mean(hnp.logaddexp(0.0, margins)) + 0.5 * lam * hnp.sum(w * w)


def logistic_hessian(w, X, y, lam):
    p = 1 / (1 + np.exp(-(X @ w)))
    return X.T @ (X * (p * (1 - p))[:, None]) / len(y) + lam * np.eye(len(w))


@pytest.mark.parametrize("mode", hg.second_order.MODES)
@pytest.mark.parametrize("n", [2, 10, 500])
def test_hvp_matches_rosen_hess_prod(mode, n):
    rng = np.random.default_rng(n)
    x, v = rng.standard_normal(n), rng.standard_normal(n)
    hv = hg.hvp(rosenbrock, mode=mode)(x, v)
    np.testing.assert_allclose(hv, rosen_hess_prod(x, v), rtol=1e-10, atol=1e-10)


def test_all_hvp_strategies_agree_on_logistic_regression():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((50, 6)), np.sign(rng.standard_normal(50))
    w, v = rng.standard_normal(6), rng.standard_normal(6)
    exact = logistic_hessian(w, X, y, 0.1) @ v
    results = {mode: hg.hvp(logistic, mode=mode)(w, X, y, 0.1, v) for mode in hg.second_order.MODES}
    results["make_hvp"] = hg.make_hvp(logistic)(w, X, y, 0.1)(v)
    results["operator"] = hg.HessianOperator(logistic, w, args=(X, y, 0.1)).matvec(v)
    results["graph"] = _graph_hvp(w, v, X, y)
    for name, hv in results.items():
        np.testing.assert_allclose(hv, exact, rtol=1e-10, err_msg=name)


def _graph_hvp(w, v, X, y):
    with hg.Graph().as_default() as g:
        wp = hg.placeholder("float64", w.shape)
        (hv,) = hg.hessian_vector_product(logistic(wp, X, y, 0.1), [wp], [hg.constant(v)])
    return g.run(hv, {wp: w})


def test_hessian_vector_product_errors_and_quadratic():
    A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 0.0, 1.0]])
    with hg.Graph().as_default() as g:
        x = hg.placeholder("float64", (3,))
        y = 0.5 * hg.reduce_sum(x * hg.matmul(A, x))
        with pytest.raises(ValueError, match="same length"):
            hg.hessian_vector_product(y, [x], [])
        v = np.array([1.0, -2.0, 0.5])
        (hv,) = hg.hessian_vector_product(y, [x], [hg.constant(v)])
    np.testing.assert_allclose(g.run(hv, {x: np.ones(3)}), (A + A.T) / 2 @ v)


@pytest.mark.parametrize("v_shape", [(2, 3), (1,), (), (4,)])
def test_hessian_vector_product_refuses_a_v_not_shaped_like_x(v_shape):
    # (2, 3), (1,) and () broadcast against x and gave a wrong number, (4,) a multiply error
    with hg.Graph().as_default():
        x = hg.placeholder("float64", (3,))
        y = hg.reduce_sum(x ** 3)
        with pytest.raises(ValueError, match=r"hessian_vector_product: v\[0\] has shape "
                                             + re.escape(f"{v_shape}, expected the shape (3,)")):
            hg.hessian_vector_product(y, [x], [hg.constant(np.ones(v_shape))])
        z = hg.placeholder("float64", (None, 2))  # an unknown dimension matches any length
        (hv,) = hg.hessian_vector_product(hg.reduce_sum(z ** 3), z,
                                          hg.placeholder("float64", (4, 2)))


def test_hvp_modes_with_an_inexact_custom_gradient_are_as_documented():
    @hg.custom_gradient
    def halved(t):
        return hnp.tanh(t), lambda dy: dy * 0.5   # not the derivative of tanh

    f = lambda x: hnp.sum(halved(x * x[::-1]) ** 2)  # noqa: E731
    x = np.array([0.3, -0.5, 0.8])
    H = {mode: np.stack([hg.hvp(f, mode=mode)(x, e) for e in np.eye(3)])
         for mode in hg.second_order.MODES}
    np.testing.assert_allclose(H["fwd-rev"], hg.jacfwd(hg.grad(f))(x), rtol=1e-12)
    np.testing.assert_allclose(H["fwd-rev"], hg.hessian(f)(x), rtol=1e-12)
    np.testing.assert_allclose(H["rev-rev"], hg.jacrev(hg.grad(f))(x), rtol=1e-12)
    assert not np.allclose(H["rev-fwd"], H["fwd-rev"]) and \
        not np.allclose(H["rev-fwd"], H["rev-rev"])
    doc = " ".join(hg.hvp.__doc__.split())
    assert "custom_gradient" in doc and "jacfwd(grad(f))" in doc and "jacrev(grad(f))" in doc


def test_hvp_auto_mode_is_fwd_rev_where_the_modes_differ():
    # Eagerly, "auto" computes fwd-rev's product as rev-fwd, which is only the same product
    # when the reverse rules are derivatives of the forward ones.
    @hg.custom_gradient
    def halved(t):
        return hnp.tanh(t), lambda dy: dy * 0.5   # not the derivative of tanh

    calls = []

    def f(x):
        calls.append(1)
        return hnp.sum(halved(x * x[::-1]) ** 2)

    x, v = np.array([0.3, -0.5, 0.8]), np.array([1.0, -2.0, 0.5])
    expected = hg.hvp(f, mode="fwd-rev")(x, v)
    calls.clear()
    np.testing.assert_allclose(hg.hvp(f)(x, v), expected, rtol=1e-14)
    assert len(calls) == 2      # the rev-fwd attempt saw the custom gradient: f ran again
    np.testing.assert_allclose(hg.function(hg.hvp(f))(x, v), expected, rtol=1e-14)
    np.testing.assert_allclose(hg.make_hvp(f)(x)(v), expected, rtol=1e-14)

    # A user primitive whose reverse rule is not its forward rule's derivative.
    skewed = hg.primitive("test_auto_skewed", np.sin, vjp=[lambda g, ans, t: g * 2.0],
                          jvp=[lambda dt, ans, t: dt * hnp.cos(t)])
    g = lambda x: hnp.sum(skewed(x) ** 2 * x)  # noqa: E731
    np.testing.assert_allclose(hg.hvp(g)(x, v), hg.hvp(g, mode="fwd-rev")(x, v), rtol=1e-14)
    calls.clear()
    plain = lambda x: hnp.sum(hnp.tanh(x * x[::-1]) ** 2)  # noqa: E731
    np.testing.assert_allclose(hg.hvp(plain)(x, v), hg.hessian(plain)(x) @ v, rtol=1e-12)


@pytest.mark.parametrize("n", [2, 30])
def test_hessian_matches_rosen_hess(n):
    x = np.random.default_rng(n).standard_normal(n)
    H = hg.hessian(rosenbrock)(x)
    np.testing.assert_allclose(H, rosen_hess(x), rtol=1e-10, atol=1e-10)


def test_hessian_blocks_and_tensor_inputs():
    def f(a, b):
        return hnp.sum(a * a * b) + hnp.sum(b ** 3)

    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    (Haa, Hab), (Hba, Hbb) = hg.hessian(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(Haa, np.diag(2 * b))
    np.testing.assert_allclose(Hab, np.diag(2 * a))
    np.testing.assert_allclose(Hba, Hab.T)
    np.testing.assert_allclose(Hbb, np.diag(6 * b))
    Ht = hg.hessian(lambda x: hnp.sum(x ** 4))(hg.constant([1.0, 2.0]))
    assert isinstance(Ht, hg.Tensor)
    np.testing.assert_allclose(Ht.numpy(), np.diag([12.0, 48.0]))


def test_hessian_of_matrix_argument_has_doubled_shape():
    W = np.random.default_rng(0).standard_normal((2, 3))
    H = hg.hessian(lambda w: hnp.sum(hnp.tanh(w) ** 2))(W)
    assert H.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(H.reshape(6, 6), H.reshape(6, 6).T, atol=1e-14)


def test_hvp_on_nested_parameters():
    def loss(params):
        return hnp.sum(params["w"] ** 2 * params["b"][0]) + params["b"][0] ** 3

    params = {"w": np.array([1.0, 2.0]), "b": [np.array(3.0)]}
    v = {"w": np.array([1.0, 0.0]), "b": [np.array(1.0)]}
    hv = hg.hvp(loss)(params, v)
    # d2/dw2 = 2b I, d2/dwdb = 2w, d2/db2 = 6b
    np.testing.assert_allclose(hv["w"], [2 * 3.0 * 1.0 + 2 * 1.0, 2 * 2.0])
    np.testing.assert_allclose(hv["b"][0], 2 * 1.0 * 1.0 + 6 * 3.0)


def test_hessian_of_nested_parameters_has_jax_layout():
    # H[a][b] for leaves a, b of a dict argument; H[i][a][j][b] for a tuple argnums. Checked
    # against the Hessian of the same loss of one flat vector.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 3))

    def loss(p, X):
        return hnp.sum(hnp.tanh(hnp.matmul(X, p["W"]) + p["b"]) ** 2) + \
            hnp.sum(X ** 3) * hnp.sum(p["b"] ** 2)

    def flat_loss(z, X):
        return loss({"W": hnp.reshape(z[:6], (3, 2)), "b": z[6:]}, X)

    p = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    z = np.concatenate([p["W"].ravel(), p["b"]])
    H_flat = hg.hessian(flat_loss)(z, X)
    H = hg.hessian(loss)(p, X)
    assert set(H) == {"W", "b"} and set(H["W"]) == {"W", "b"}
    assert H["W"]["b"].shape == (3, 2, 2) and H["b"]["W"].shape == (2, 3, 2)
    np.testing.assert_allclose(H["W"]["W"].reshape(6, 6), H_flat[:6, :6], rtol=1e-12)
    np.testing.assert_allclose(H["W"]["b"].reshape(6, 2), H_flat[:6, 6:], rtol=1e-12)
    np.testing.assert_allclose(H["b"]["W"].reshape(2, 6), H_flat[6:, :6], rtol=1e-12)
    np.testing.assert_allclose(H["b"]["b"], H_flat[6:, 6:], rtol=1e-12)
    # a second call at new values reuses the trace and gives the new Hessian
    p2 = {"W": p["W"] + 1.0, "b": p["b"] - 1.0}
    H2 = hg.hessian(loss)(p2, X)
    z2 = np.concatenate([p2["W"].ravel(), p2["b"]])
    np.testing.assert_allclose(H2["b"]["b"], hg.hessian(flat_loss)(z2, X)[6:, 6:], rtol=1e-12)
    # blocks across arguments, in either order of argnums
    H_zX = hg.hessian(flat_loss, argnums=(0, 1))(z, X)
    for order in ((0, 1), (1, 0)):
        blocks = hg.hessian(loss, argnums=order)(p, X)
        i_p, i_X = order.index(0), order.index(1)
        np.testing.assert_allclose(blocks[i_p]["b"][i_X], H_zX[0][1][6:], rtol=1e-12)
        np.testing.assert_allclose(blocks[i_X][i_p]["W"].reshape(15, 6),
                                   H_zX[1][0][..., :6].reshape(15, 6), rtol=1e-12)
        np.testing.assert_allclose(blocks[i_X][i_X], H_zX[1][1], rtol=1e-12)
    # a list of numbers, and tensors (which stay tensors, so the Hessian can nest)
    H_list = hg.hessian(lambda xs: xs[0] ** 2 * xs[1] ** 3)([1.0, 2.0])
    np.testing.assert_allclose(np.array(H_list, dtype=float), [[16.0, 24.0], [24.0, 12.0]])
    H_t = hg.hessian(loss)({"W": hg.constant(p["W"]), "b": hg.constant(p["b"])}, X)
    assert isinstance(H_t["b"]["W"], hg.Tensor)
    np.testing.assert_allclose(H_t["b"]["W"].numpy(), H["b"]["W"], rtol=1e-12)


def test_hessian_of_non_scalar_function_stacks_the_component_hessians():
    # As JAX's hessian (jacfwd of jacrev): the output's shape first, then the arguments'.
    x, y = np.array([0.3, -0.5, 0.7]), np.array([[1.0, 2.0], [3.0, -4.0]])

    def f(x, y):
        return hnp.sin(x)[:2, None] * y * x[0]
    H = hg.hessian(f)(x, y)
    assert H.shape == (2, 2, 3, 3)
    for i, j in np.ndindex(2, 2):
        np.testing.assert_allclose(H[i, j], hg.hessian(lambda x: f(x, y)[i, j])(x),
                                   rtol=1e-13, atol=1e-15)
    blocks = hg.hessian(f, argnums=(0, 1))(x, y)
    assert [[b.shape for b in row] for row in blocks] == \
        [[(2, 2, 3, 3), (2, 2, 3, 2, 2)], [(2, 2, 2, 2, 3), (2, 2, 2, 2, 2, 2)]]
    xy = np.concatenate([x, y.ravel()])
    for i, j in np.ndindex(2, 2):
        H_flat = hg.hessian(lambda z: f(z[:3], hnp.reshape(z[3:], (2, 2)))[i, j])(xy)
        np.testing.assert_allclose(blocks[0][1][i, j].reshape(3, 4), H_flat[:3, 3:],
                                   atol=1e-15)
        np.testing.assert_allclose(blocks[1][1][i, j].reshape(4, 4), H_flat[3:, 3:],
                                   atol=1e-15)
    # a second call (the non-scalar path is remembered) and a 0-d output stay scalar paths
    np.testing.assert_allclose(hg.hessian(f)(2 * x, y)[1, 0],
                               hg.hessian(lambda x: f(x, y)[1, 0])(2 * x), rtol=1e-13)
    assert hg.hessian(lambda x: hnp.sum(x ** 3))(x).shape == (3, 3)


def test_data_changed_in_place_after_the_trace_is_read_anew():
    # A closure array changed in place after the trace once reached the values but not the
    # cached sparsity pattern (neither the old nor the new Hessian), then neither (the old
    # one): every call now checks what f captured, and the pattern is detected again.
    n = 6
    x = np.linspace(0.3, 1.3, n)
    A = np.diag(np.arange(1.0, n + 1))

    def f(x):
        return hnp.sum(hnp.matmul(A, x) ** 3)
    H, S = hg.hessian(f), hg.sparse_hessian(f)
    before = A.T @ np.diag(6 * (A @ x)) @ A
    np.testing.assert_allclose(H(x), before)
    np.testing.assert_allclose(S(x).toarray(), before)
    A[0, 3] = 2.0
    after = A.T @ np.diag(6 * (A @ x)) @ A
    np.testing.assert_allclose(H(x), after)
    np.testing.assert_allclose(S(x).toarray(), after)
    np.testing.assert_allclose(hg.grad(f)(x), 3 * A.T @ (A @ x) ** 2)


def test_logistic_hessian_exact():
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((40, 5)), np.sign(rng.standard_normal(40))
    w = rng.standard_normal(5)
    H = hg.hessian(logistic)(w, X, y, 0.01)
    np.testing.assert_allclose(H, logistic_hessian(w, X, y, 0.01), rtol=1e-10)


def test_gauss_newton_operator_for_least_squares():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((6, 3))
    model = lambda x: hnp.tanh(hnp.matmul(A, x))  # noqa: E731
    x = rng.standard_normal(3)
    G = hg.GaussNewtonOperator(model, lambda r: 0.5 * hnp.sum(r ** 2), x)
    J = hg.jacrev(model)(x)
    np.testing.assert_allclose(G.to_dense(), J.T @ J, rtol=1e-10)


def _untraceable(f):
    def g(*args):
        if hnp.sum(args[0]) > -1e9:  # value-dependent Python branch: runs eagerly
            return f(*args)
        return hnp.sum(args[0])
    return g


def _skewed(x, c):
    return hnp.sum(hnp.sin(x) * x[::-1] ** 2 * c)


@pytest.mark.parametrize("f", [_skewed, _untraceable(_skewed)], ids=["traced", "eager"])
def test_operators_stay_at_the_point_given_when_the_caller_updates_it_in_place(f):
    x0, c0 = np.array([0.3, -0.8, 1.1, 0.5]), np.array([1.0, 2.0, 0.5, 1.5])
    H0 = hg.hessian(_skewed)(x0, c0)
    x, c = x0.copy(), c0.copy()
    op, product = hg.HessianOperator(f, x, args=(c,)), hg.make_hvp(f)(x, c)
    x -= 0.5        # an optimizer's in-place step, and data changed in place
    c *= 3.0
    np.testing.assert_allclose(op.to_dense(), H0, rtol=1e-12)
    np.testing.assert_allclose(product(np.eye(4)[1]), H0[1], rtol=1e-12)
    np.testing.assert_allclose(product.batched(np.eye(4)), H0, rtol=1e-12)


def test_gauss_newton_operator_stays_at_its_point_and_keeps_float32():
    model = lambda x: hnp.tanh(x[:3] * x[2:])  # noqa: E731
    loss = lambda r: hnp.sum(r ** 2 * hnp.arange(1.0, 4.0)) + hnp.sum(hnp.exp(r))  # noqa: E731
    x0 = np.array([0.3, -0.8, 1.1, 0.5, -0.4])
    J = np.asarray(hg.jacobian(model)(x0))
    expected = J.T @ np.asarray(hg.hessian(loss)(np.asarray(model(x0)))) @ J
    x = x0.copy()
    G = hg.GaussNewtonOperator(model, loss, x)
    x += 0.7        # was: the pullback at the old x, the JVP at the new one (not symmetric)
    np.testing.assert_allclose(G.to_dense(), expected, rtol=1e-12)
    G32 = hg.GaussNewtonOperator(model, loss, x0.astype(np.float32))
    assert G32.dtype == np.float32 and G32.matvec(np.ones(5)).dtype == np.float32
    np.testing.assert_allclose(G32.to_dense(), expected, rtol=1e-4, atol=1e-5)
    assert hg.HessianOperator(lambda x: hnp.sum(x ** 3), x0.astype(np.float32)).dtype == \
        np.float32


def test_functions_with_python_control_flow_fall_back_to_eager():
    def f(x):
        total = hnp.sum(x ** 2)
        if total > 1.0:          # value-dependent Python branch: not traceable
            return total ** 2
        return total

    x = np.array([1.0, 2.0])
    H = hg.hessian(f)(x)
    # f = s^2 with s = |x|^2 here: H = 8 x x^T + 4 s I
    np.testing.assert_allclose(H, 8 * np.outer(x, x) + 4 * 5.0 * np.eye(2), rtol=1e-12)
    op = hg.HessianOperator(f, x)
    np.testing.assert_allclose(op.matmat(np.eye(2)), H, rtol=1e-12)
    np.testing.assert_allclose(op.matvec(np.array([1.0, 0.0])), H[:, 0], rtol=1e-12)


# --- dense Hessians assembled from colored products (detect_sparsity) --------------------------
def _structure(f, *args):
    from hessgrad.sparse import structure_check
    return structure_check(f).info(*args)


@pytest.mark.parametrize("n", [0, 1, 7, 200])
def test_banded_hessian_is_assembled_from_few_products_and_equals_the_dense_path(n):
    x = np.random.default_rng(n).standard_normal(n)
    H = hg.hessian(rosenbrock)(x)
    assert H.shape == (n, n)
    np.testing.assert_allclose(H, rosen_hess(x) if n > 1 else np.zeros((n, n)),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(H, hg.hessian(rosenbrock, detect_sparsity=False)(x))
    if n >= 7:
        assert _structure(rosenbrock, x)["ncolors"] == 3


def test_small_problems_skip_detection_and_large_ones_use_it():
    # below STRUCTURE_MIN_SIZE the n products as one batch cost less than detecting a pattern
    from hessgrad.sparse import STRUCTURE_MIN_SIZE, structure_check
    small = np.linspace(0.1, 1.0, STRUCTURE_MIN_SIZE - 1)
    large = np.linspace(0.1, 1.0, 3 * STRUCTURE_MIN_SIZE)
    check = structure_check(rosenbrock)
    assert check.dense(small) is None
    np.testing.assert_allclose(check.dense(large), rosen_hess(large), rtol=1e-12)
    assert check.nhvp == 3


def test_block_diagonal_hessian_of_a_matrix_argument():
    # rows of W interact only within themselves: a block-diagonal Hessian, 3 colors
    W = np.random.default_rng(1).standard_normal((20, 3))
    f = lambda w: hnp.sum(hnp.log(hnp.sum(hnp.exp(w), axis=1)))  # noqa: E731
    H = hg.hessian(f)(W)
    assert H.shape == (20, 3, 20, 3)
    np.testing.assert_allclose(H, hg.hessian(f, detect_sparsity=False)(W), rtol=1e-12,
                               atol=1e-15)
    assert _structure(f, W)["ncolors"] == 3


def test_dense_problems_give_up_detection_early_and_take_the_dense_path():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((400, 30)), np.sign(rng.standard_normal(400))
    w = rng.standard_normal(30)
    info = _structure(logistic, w, X, y, 0.01)
    assert info["gave_up"] or info["dense"]     # X @ w: 400 x 30 entries > the budget
    np.testing.assert_allclose(hg.hessian(logistic)(w, X, y, 0.01),
                               logistic_hessian(w, X, y, 0.01), rtol=1e-10)


def test_sparsity_detection_failures_fall_back_to_the_dense_path():
    def f(x):
        if hnp.sum(x) > 0:              # value-dependent Python branch: not traceable
            return hnp.sum(x ** 3)
        return hnp.sum(x ** 2)

    x = np.arange(1.0, 41.0)
    np.testing.assert_allclose(hg.hessian(f)(x), np.diag(6 * x))


# --- make_hvp / HessianOperator: one trace per signature, a setup run per point ----------------
def _counting(fn):
    """``fn`` and the list that grows by one at each of its traces (Python calls on symbolic
    tensors; the eager runs that check what ``fn`` captured are not counted)."""
    calls = []

    def f(x):
        if isinstance(x, hg.Tensor) and x.is_symbolic and not THREAD.state.capturing:
            calls.append(1)
        return fn(x)
    return f, calls


def test_make_hvp_traces_once_and_runs_a_setup_per_point():
    f, calls = _counting(rosenbrock)
    at = hg.make_hvp(f)
    rng = np.random.default_rng(4)
    v = rng.standard_normal(30)
    for _ in range(3):
        x = rng.standard_normal(30)
        product = at(x)
        np.testing.assert_allclose(product(v), rosen_hess_prod(x, v), rtol=1e-10)
        V = rng.standard_normal((12, 30))
        np.testing.assert_allclose(product.batched(V), [rosen_hess_prod(x, u) for u in V],
                                   rtol=1e-10)
    assert len(calls) == 1     # traced once, at the first point


def test_hessian_operators_of_one_function_share_the_trace():
    f, calls = _counting(rosenbrock)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.standard_normal(20)
        np.testing.assert_allclose(hg.HessianOperator(f, x).to_dense(), rosen_hess(x),
                                   rtol=1e-10, atol=1e-12)
    assert len(calls) == 1


def test_make_hvp_on_nested_parameters_and_variables():
    def loss(params):
        return hnp.sum(params["w"] ** 2 * params["b"][0]) + params["b"][0] ** 3

    params = {"w": np.array([1.0, 2.0]), "b": [np.array(3.0)]}
    v = {"w": np.array([1.0, 0.0]), "b": [np.array(1.0)]}
    hv = hg.make_hvp(loss)(params)(v)
    np.testing.assert_allclose(hv["w"], [8.0, 4.0])
    np.testing.assert_allclose(hv["b"][0], 20.0)
    # a Variable is read at every product, not frozen at the setup
    scale = hg.Variable(2.0)
    product = hg.make_hvp(lambda x: scale * hnp.sum(x ** 3))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(product(np.ones(2)), [12.0, 24.0])
    scale.assign(1.0)
    np.testing.assert_allclose(product(np.ones(2)), [6.0, 12.0])


def test_make_hvp_of_untraceable_function_runs_eagerly():
    def f(x):
        if hnp.sum(x) > 0:              # value-dependent Python branch
            return hnp.sum(x ** 3)
        return hnp.sum(x ** 2)

    product = hg.make_hvp(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(product(np.ones(2)), [6.0, 12.0])
    np.testing.assert_allclose(product.batched(np.eye(2)), np.diag([6.0, 12.0]))


def test_make_hvp_without_the_compiler_folds_the_point(monkeypatch):
    monkeypatch.setenv("HESSGRAD_COMPILE", "0")
    x, v = np.linspace(-1.0, 2.0, 12), np.linspace(0.5, 1.5, 12)
    product = hg.make_hvp(rosenbrock)(x)
    np.testing.assert_allclose(product(v), rosen_hess_prod(x, v), rtol=1e-10)
    V = np.stack([v, 2 * v, x])
    np.testing.assert_allclose(product.batched(V), [rosen_hess_prod(x, u) for u in V],
                               rtol=1e-10)


@pytest.mark.parametrize("f", [rosenbrock, _untraceable(rosenbrock)], ids=["traced", "eager"])
def test_make_hvp_checks_its_vectors_and_takes_lists(f):
    x = np.array([0.5, -1.0, 2.0])
    product = hg.make_hvp(f)(x)
    np.testing.assert_allclose(product([1.0, 0.0, 0.0]), rosen_hess(x)[0], rtol=1e-12)
    np.testing.assert_allclose(product.batched([[1, 0, 0], [0, 0, 1]]), rosen_hess(x)[[0, 2]],
                               rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape("make_hvp: v has shape (4,), expected (3,)")):
        product(np.ones(4))
    with pytest.raises(ValueError, match=re.escape(
            "make_hvp(...).batched: V has shape (2, 4), expected (k, 3)")):
        product.batched(np.ones((2, 4)))
    with pytest.raises(ValueError, match=re.escape("V has shape (3,), expected (k, 3)")):
        product.batched(np.ones(3))
    with pytest.raises(TypeError, match="make_hvp: v must be a numeric array, got dict"):
        product({"x": np.ones(3)})
    params = {"w": np.array([1.0, 2.0]), "b": [np.array(3.0)]}
    nested = hg.make_hvp(lambda p: hnp.sum(p["w"] ** 2 * p["b"][0]))(params)
    with pytest.raises(TypeError, match=r"make_hvp: v must be a dict with keys \['b', 'w'\]"):
        nested(np.ones(3))
    with pytest.raises(ValueError, match=re.escape("make_hvp: v has shape (3,), expected (2,)")):
        nested({"w": np.ones(3), "b": [np.array(1.0)]})


def test_gauss_newton_operator_checks_its_vectors():
    G = hg.GaussNewtonOperator(lambda x: 2 * x, lambda r: hnp.sum(r ** 2), np.ones(3))
    with pytest.raises(ValueError, match=re.escape(
            "GaussNewtonOperator.matvec: vector v has shape (4,) (4 entries), the operator has "
            "shape (3, 3)")):
        G.matvec(np.ones(4))
    with pytest.raises(ValueError, match=re.escape(
            "GaussNewtonOperator.matmat: matrix V has shape (4, 2), expected (3, k)")):
        G.matmat(np.ones((4, 2)))
    np.testing.assert_allclose(G.matvec([1.0, 0.0, 0.0]), [8.0, 0.0, 0.0])
    np.testing.assert_allclose(G.matvec(np.ones((3, 1))), np.full((3, 1), 8.0))


def test_hessian_written_inline_reuses_the_trace_of_previous_calls():
    f, calls = _counting(rosenbrock)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.standard_normal(40)
        np.testing.assert_allclose(hg.hessian(f)(x), rosen_hess(x), rtol=1e-10, atol=1e-12)
    traces = len(calls)
    x = rng.standard_normal(40)
    hg.hessian(f)(x)
    assert len(calls) == traces      # nothing traced again at a new point
    np.testing.assert_allclose(hg.hessian(f, detect_sparsity=False)(x), rosen_hess(x),
                               rtol=1e-10, atol=1e-12)


def test_make_hvp_written_inline_reuses_the_trace():
    f, calls = _counting(rosenbrock)
    rng = np.random.default_rng(7)
    for _ in range(3):
        x, v = rng.standard_normal(25), rng.standard_normal(25)
        np.testing.assert_allclose(hg.make_hvp(f)(x)(v), rosen_hess_prod(x, v), rtol=1e-10)
    assert len(calls) == 1
    with pytest.raises(ValueError, match="mode"):
        hg.make_hvp(f, mode="sideways")


def test_compiled_hessian_of_an_empty_argument_is_empty():
    # traced, the Hessian stacked no columns for an empty argument and crashed in np.stack
    f = lambda x, y: hnp.sum(x ** 2) * hnp.sum(y ** 3)
    h = hg.function(hg.hessian(f))(np.zeros(0, np.float32))
    assert h.shape == (0, 0) and h.dtype == np.float32
    blocks = hg.function(hg.hessian(f, argnums=(0, 1)))(np.zeros(0), np.ones(2))
    eager = hg.hessian(f, argnums=(0, 1))(np.zeros(0), np.ones(2))
    for row, row_eager in zip(blocks, eager):
        for b, b_eager in zip(row, row_eager):
            assert b.shape == b_eager.shape
            np.testing.assert_array_equal(b, b_eager)
