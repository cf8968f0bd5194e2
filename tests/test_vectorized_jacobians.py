"""Jacobians and Hessians computed as one batch of VJPs/JVPs/HVPs (vmap's replay of one
trace), as JAX's jacrev/jacfwd/hessian and TensorFlow's pfor do: the same numbers as one
product per row, derivatives of every order, and a traced Jacobian whose graph does not
grow with the number of rows."""

import numpy as np
import pytest
from scipy.optimize import rosen_der, rosen_hess

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine import batching
from hessgrad.engine.batching import VECTORIZE_MIN, map_rows



def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def tape_for(x, f):
    """A persistent tape holding the gradient of ``f`` at the constant ``x``."""
    with hg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with hg.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return outer, g


@pytest.mark.parametrize("n", [1, VECTORIZE_MIN - 1, VECTORIZE_MIN, 40])
def test_tape_jacobian_batched_equals_row_by_row_and_rosen_hess(n):
    x0 = np.linspace(-1.0, 1.2, n)
    x = hg.constant(x0)
    tape, g = tape_for(x, rosenbrock)
    batched = tape.jacobian(g, x)
    rows = tape.jacobian(g, x, experimental_use_pfor=False)
    assert isinstance(batched, hg.Tensor) and batched.shape == (n, n)
    np.testing.assert_array_equal(batched.numpy(), rows.numpy())
    if n >= 2:
        np.testing.assert_allclose(batched.numpy(), rosen_hess(x0), rtol=1e-13, atol=1e-12)


def test_tape_jacobian_of_an_empty_target():
    x = hg.constant(np.arange(3.0))
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x[:0] * 2.0
    assert tape.jacobian(y, x) is None  # no row reaches x
    assert tape.jacobian(y, x, unconnected_gradients="zero").shape == (0, 3)


def test_tape_jacobian_structures_shapes_and_unconnected_sources():
    rng = np.random.default_rng(0)
    a = hg.constant(rng.standard_normal((3, 4)))
    b = hg.constant(rng.standard_normal(4))
    c = hg.constant(rng.standard_normal(2))  # watched, but the target does not use it
    with hg.GradientTape(persistent=True) as tape:
        tape.watch([a, b, c])
        y = hnp.sin(a) * b + a ** 2  # (3, 4): 12 rows, batched
    for pfor in (True, False):
        got = tape.jacobian(y, {"a": a, "bc": (b, c)}, experimental_use_pfor=pfor)
        assert got["bc"][1] is None
        assert got["a"].shape == (3, 4, 3, 4) and got["bc"][0].shape == (3, 4, 4)
        ja = np.einsum("ij,ik,jl->ijkl", np.cos(a.numpy()) * b.numpy() + 2 * a.numpy(),
                       np.eye(3), np.eye(4))
        np.testing.assert_allclose(got["a"].numpy(), ja, rtol=1e-14)
        jb = np.einsum("ij,jl->ijl", np.sin(a.numpy()), np.eye(4))
        np.testing.assert_allclose(got["bc"][0].numpy(), jb, rtol=1e-14)
        zero = tape.jacobian(y, c, unconnected_gradients="zero", experimental_use_pfor=pfor)
        assert zero.shape == (3, 4, 2) and not zero.numpy().any()


def test_tape_jacobian_of_complex_and_float32_targets():
    z = hg.constant(np.linspace(0.1, 1.0, 9) + 0.5j)
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = z * z
    np.testing.assert_array_equal(tape.jacobian(y, z).numpy(),
                                  tape.jacobian(y, z, experimental_use_pfor=False).numpy())
    x = hg.constant(np.linspace(0.1, 1.0, 9).astype(np.float32))
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = hnp.exp(x)
    jac = tape.jacobian(y, x)
    assert jac.dtype == np.float32
    np.testing.assert_allclose(jac.numpy(), np.diag(np.exp(x.numpy())), rtol=1e-6)


def test_non_persistent_tape_gives_one_jacobian():
    x = hg.constant(np.arange(10.0))
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = x ** 3
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag(3 * np.arange(10.0) ** 2))
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)


@pytest.mark.parametrize("pfor", [True, False])
def test_batch_jacobian_matches_per_example_jacobians(pfor):
    rng = np.random.default_rng(1)
    xb = hg.constant(rng.standard_normal((5, 4)))
    W = rng.standard_normal((4, 3, 3))
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(xb)
        yb = hnp.tanh(hnp.einsum("bi,ijk->bjk", xb, W))  # (5, 3, 3): 9 rows per example
    jac = tape.batch_jacobian(yb, xb, experimental_use_pfor=pfor)
    assert jac.shape == (5, 3, 3, 4)
    for i in range(5):
        expected = hg.jacrev(lambda x: hnp.tanh(hnp.einsum("i,ijk->jk", x, W)))(xb.numpy()[i])
        np.testing.assert_allclose(jac.numpy()[i], expected, rtol=1e-13, atol=1e-15)


def test_batch_jacobian_with_no_rows():
    xb = hg.constant(np.ones((3, 2)))
    with hg.GradientTape() as tape:
        tape.watch(xb)
        yb = hnp.reshape(xb, (3, 2, 1))[:, :, :0]
    assert tape.batch_jacobian(yb, xb).shape == (3, 2, 0, 2)


@pytest.mark.parametrize("jac", [hg.jacrev, hg.jacfwd])
def test_functional_jacobians_of_the_gradient_match_rosen_hess(jac):
    x = np.linspace(-1.0, 1.2, 30)
    H = jac(hg.grad(rosenbrock))(x)
    assert isinstance(H, np.ndarray)
    np.testing.assert_allclose(H, rosen_hess(x), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("jac", [hg.jacrev, hg.jacfwd])
def test_functional_jacobians_of_several_arguments_and_outputs(jac):
    rng = np.random.default_rng(3)
    W, x = rng.standard_normal((6, 5)), rng.standard_normal(5)

    def f(W, x):
        h = hnp.tanh(W @ x)
        return {"h": h, "n": hnp.sum(h ** 2)}

    J = jac(f, argnums=(0, 1))(W, x)
    h = np.tanh(W @ x)
    d = 1 - h ** 2
    np.testing.assert_allclose(J["h"][1], d[:, None] * W, rtol=1e-13)
    np.testing.assert_allclose(J["h"][0], np.einsum("i,ij,k->ijk", d, np.eye(6), x), rtol=1e-13,
                               atol=1e-15)
    np.testing.assert_allclose(J["n"][1], 2 * (h * d) @ W, rtol=1e-13)


@pytest.mark.parametrize("jac", [hg.jacrev, hg.jacfwd])
def test_jacobians_of_untraceable_functions_run_row_by_row(jac):
    def f(x):  # Python control flow on a value: cannot be traced, so one product per row
        return hnp.sin(x) * 2.0 if hnp.sum(x) > 0 else hnp.cos(x)

    x = np.linspace(0.1, 1.0, 12)
    np.testing.assert_allclose(jac(f)(x), np.diag(2 * np.cos(x)), rtol=1e-14)


@pytest.mark.parametrize("jac", [hg.jacrev, hg.jacfwd])
def test_jacobians_through_a_loop_fall_back_to_rows(jac):
    def f(x):  # a while loop cannot take batched operands: one product per row
        _, y = hg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, hnp.sin(y)),
                             (hg.constant(0), x))
        return y

    x = np.linspace(0.1, 1.0, 10)
    s1 = np.sin(x)
    s2 = np.sin(s1)
    expected = np.diag(np.cos(s2) * np.cos(s1) * np.cos(x))
    np.testing.assert_allclose(jac(f)(x), expected, rtol=1e-13)


def test_batched_jacobians_have_higher_derivatives():
    # The sum of the Hessian's entries, differentiated once more, through each vectorized way
    # of building the Hessian.
    x0 = np.linspace(-1.0, 1.2, 12)
    expected = hg.grad(lambda x: hnp.sum(hg.hessian(rosenbrock)(x)))(x0)
    ways = {
        "jacrev": lambda x: hg.jacrev(hg.grad(rosenbrock))(x),
        "jacfwd": lambda x: hg.jacfwd(hg.grad(rosenbrock))(x),
        "tape": lambda x: (lambda t, g: t.jacobian(g, x))(*tape_for(x, rosenbrock)),
    }
    for name, hessian in ways.items():
        got = hg.grad(lambda x: hnp.sum(hessian(x)))(x0)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9, err_msg=name)
    # the analytic value: d/dx_k sum_ij H_ij, H tridiagonal with H_ii = 1200 x_i^2 - 400 x_{i+1}
    # + 2 (+ 200 for i > 0), H_{i,i+1} = H_{i+1,i} = -400 x_i
    a = np.zeros(12)
    a[:-1] += 2400 * x0[:-1] - 800
    a[1:] += -400
    np.testing.assert_allclose(expected, a, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda f: hg.jacrev(hg.grad(f)), lambda f: hg.jacfwd(hg.grad(f)), lambda f: hg.hessian(f),
    lambda f: hg.jacobian(lambda x: hnp.sin(x) * f(x))])
def test_traced_jacobians_do_not_grow_with_the_number_of_rows(make):
    # JAX's jit(jacrev(f)) is one batched product; so is hg.function's graph of it, at any n
    # (a graph with one product per row took seconds to build at n = 400).
    sizes = {}
    for n in (20, 60):
        x = np.linspace(-1.0, 1.2, n)
        traced = hg.function(make(rosenbrock))
        np.testing.assert_allclose(traced(x), make(rosenbrock)(x), rtol=1e-12, atol=1e-10)
        sizes[n] = traced.get_concrete_function(x).compiled.ops_before
    assert sizes[20] == sizes[60]
    x = np.linspace(-1.0, 1.2, 30)
    np.testing.assert_allclose(hg.function(hg.hessian(rosenbrock))(x), rosen_hess(x),
                               rtol=1e-13, atol=1e-12)


def test_hessian_of_tensor_arguments_is_one_batch_of_products():
    x0 = np.linspace(-1.0, 1.2, 25)
    x = hg.constant(x0)
    H = hg.hessian(rosenbrock)(x)
    assert isinstance(H, hg.Tensor)
    np.testing.assert_allclose(H.numpy(), rosen_hess(x0), rtol=1e-13, atol=1e-12)
    # two arguments: the block layout, with the cross blocks
    f = lambda a, b: hnp.sum(hnp.sin(a)[:, None] * b[None, :] ** 2)  # noqa: E731
    a, b = np.linspace(0.1, 1.0, 9), np.linspace(-1.0, 1.0, 10)
    blocks = hg.hessian(f, argnums=(0, 1))(hg.constant(a), hg.constant(b))
    np.testing.assert_allclose(blocks[0][0].numpy(), np.diag(-np.sin(a) * np.sum(b ** 2)),
                               atol=1e-13)
    np.testing.assert_allclose(blocks[0][1].numpy(), 2 * np.cos(a)[:, None] * b[None, :],
                               rtol=1e-13)
    np.testing.assert_allclose(blocks[1][0].numpy(), blocks[0][1].numpy().T, rtol=1e-13)
    np.testing.assert_allclose(blocks[1][1].numpy(), np.diag(2 * np.sin(a).sum() * np.ones(10)),
                               rtol=1e-13)
    np.testing.assert_allclose(hg.grad(rosenbrock)(x0), rosen_der(x0), rtol=1e-13)


def test_rows_run_in_chunks_within_the_memory_budget(monkeypatch):
    x0 = np.linspace(-1.0, 1.2, 50)
    x = hg.constant(x0)
    tape, g = tape_for(x, rosenbrock)
    whole = tape.jacobian(g, x).numpy()
    calls = []
    replay = batching.Trace.replay

    def counted(self, moved, k):
        calls.append(k)
        return replay(self, moved, k)

    monkeypatch.setattr(batching, "BATCH_BYTES", 8 * 50 * 7)  # 7 rows per chunk
    monkeypatch.setattr(batching.Trace, "replay", counted)
    chunked = tape.jacobian(g, x).numpy()
    assert calls == [7] * 7 + [1]
    np.testing.assert_array_equal(chunked, whole)


def test_map_rows_reports_which_outputs_depend_on_the_row():
    c = hg.constant(np.arange(3.0))
    rows = np.arange(24.0).reshape(8, 3)
    for vectorize in (True, False):
        (values, batched) = map_rows(lambda r: [r * c, c + 1.0, None], rows, vectorize)
        assert batched[:2] == [True, False] and values[2] is None
        np.testing.assert_array_equal(np.asarray(values[0]), rows * np.arange(3.0))
        np.testing.assert_array_equal(np.asarray(values[1]), np.arange(3.0) + 1)
    assert map_rows(lambda r: [r], np.zeros((0, 3))) == ([], [])


def test_traced_hessian_of_a_sparse_problem_assembles_colored_products():
    # hg.function(hg.hessian(f)) (JAX's jit(hessian(f))) uses the structure eager hessian
    # finds: three colored products for a tridiagonal Hessian, whatever n is.
    sizes = {}
    for n in (100, 300):
        x = np.linspace(-1.0, 1.2, n)
        traced = hg.function(hg.hessian(rosenbrock))
        np.testing.assert_allclose(traced(x), rosen_hess(x), rtol=1e-13, atol=1e-12)
        concrete = traced.get_concrete_function(x)
        assert any(node.prim.name == "scatter_add" and node.params["shape"] == (n * n,)
                   for node in concrete.graph.nodes)  # the entries placed in the dense array
        sizes[n] = concrete.compiled.ops_before
    assert sizes[100] == sizes[300]
    # differentiable like the dense one: d/dx_k of the sum of the Hessian's entries
    x0 = np.linspace(-1.0, 1.2, 80)
    got = hg.grad(lambda x: hnp.sum(hg.hessian(rosenbrock)(x)))(x0)
    a = np.zeros(80)
    a[:-1] += 2400 * x0[:-1] - 800
    a[1:] += -400
    np.testing.assert_allclose(got, a, rtol=1e-12, atol=1e-9)


def test_traced_hessian_of_a_dense_problem_or_closure_takes_the_dense_path():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((70, 70))

    def dense(x):
        return hnp.sum(hnp.tanh(A @ x) ** 2)

    x = rng.standard_normal(70)
    np.testing.assert_allclose(hg.function(hg.hessian(dense))(x), hg.hessian(dense)(x),
                               rtol=1e-12, atol=1e-12)

    def scaled(x, c):  # the Hessian's f closes over a traced tensor
        return hg.hessian(lambda y: c * rosenbrock(y))(x)

    x = np.linspace(-1.0, 1.2, 70)
    np.testing.assert_allclose(hg.function(scaled)(x, 2.0), 2.0 * rosen_hess(x), rtol=1e-13,
                               atol=1e-12)
