"""hessgrad.vmap: results against explicit Python loops (always) and JAX (x64, when installed)
on a corpus of functions, in each of its ways to run (the traced batch outside any transform,
the differentiable replay under a tape and inside a trace); derivatives of every composition
against JAX and finite differences at first and second order; the errors of JAX's vmap."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.state import THREAD
from hessgrad.tracing.function import ConcreteFunction
from hessgrad.testing import check_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
S = rng.standard_normal((3, 3))
S = S @ S.T + 3 * np.eye(3)


def r(*shape):
    return rng.standard_normal(shape)


# --- the corpus: each function written once against a numpy-like namespace ------------------
class Case:
    def __init__(self, name, make, args, in_axes=0, out_axes=0, make_jax=None, jax=True,
                 rtol=1e-12):
        self.name, self.make, self.args = name, make, args
        self.in_axes, self.out_axes = in_axes, out_axes
        self.make_jax = make_jax or make
        self.jax, self.rtol = jax, rtol


def _while(x):
    return hg.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * hnp.sin(x) + x), (0, x))[1]


def _while_jax(x):
    import jax
    import jax.numpy as jnp
    return jax.lax.fori_loop(0, 3, lambda i, s: s * jnp.sin(x) + x, x)


def _cond(x):
    return hg.cond(hnp.sum(x) > 0, lambda: x ** 2, lambda: -x)


def _cond_jax(x):
    import jax
    import jax.numpy as jnp
    return jax.lax.cond(jnp.sum(x) > 0, lambda: x ** 2, lambda: -x)


def _python_branch(x):  # needs concrete values: not traceable, runs once per member
    return x ** 2 if hnp.sum(x) > 0 else -x


@hg.custom_gradient
def _scaled_gradient(x):
    return x * 1.0, lambda g: 0.5 * g


CORPUS = [
    Case("elementwise", lambda xp: lambda x: xp.sin(x) * xp.exp(-x ** 2) + 1.5, [r(5, 4)]),
    Case("broadcast-unmapped", lambda xp: lambda x, y: xp.tanh(x[:, None] * y) - y,
         [r(5, 3), r(2)], in_axes=(0, None)),
    Case("reductions", lambda xp: lambda x: xp.sum(x ** 2, axis=0)
         + xp.max(x, axis=-1, keepdims=True).sum() + xp.mean(x, axis=(0, 1)), [r(5, 3, 4)]),
    Case("keepdims-logsumexp", lambda xp: lambda x: x - xp.log(
        xp.sum(xp.exp(x), axis=1, keepdims=True)), [r(4, 3, 2)]),
    Case("matmul-matrix-vector", lambda xp: lambda x: A @ xp.tanh(x), [r(5, 4)]),
    Case("matmul-vector-matrix", lambda xp: lambda x: x @ A, [r(5, 3)]),
    Case("matmul-both-mapped", lambda xp: lambda x, y: x @ y + y @ x.T @ y,
         [r(5, 3, 3), r(5, 3)]),
    Case("matmul-stacked", lambda xp: lambda x: xp.matmul(x, A) @ A.T, [r(5, 2, 2, 3)]),
    Case("einsum", lambda xp: lambda x, y: xp.einsum("ij,j->i", A, x) * xp.einsum("i,i", y, y),
         [r(5, 4), r(5, 3)]),
    Case("indexing", lambda xp: lambda x: x[1:, ::2] * x[np.array([0, 2])][:, :2]
         + x[np.array([1, 0]), np.array([0, 3])][:, None], [r(5, 3, 4)]),
    Case("separated-advanced-index", lambda xp: lambda x: x[np.array([0, 1]), :, np.array([1, 0])],
         [r(4, 2, 3, 2)]),
    Case("reshape-transpose-concat", lambda xp: lambda x: xp.concatenate(
        [xp.reshape(x, (4, 3)).T, xp.ones((3, 1))], axis=1), [r(5, 2, 6)]),
    Case("sort-cumsum", lambda xp: lambda x: xp.sort(x) * xp.cumsum(x), [r(5, 4)]),
    Case("linalg", lambda xp: lambda m, b: (
        xp.linalg.solve(m @ m.T + 3 * np.eye(3), b), xp.linalg.inv(m @ m.T + np.eye(3)),
        xp.linalg.slogdet(m @ m.T + np.eye(3))[1]), [r(5, 3, 3), r(5, 3)], rtol=1e-10),
    Case("solve-shared-matrix", lambda xp: lambda b: xp.linalg.solve(S, b), [r(5, 3)],
         rtol=1e-10),
    Case("eigh", lambda xp: lambda x: xp.linalg.eigh(x @ x.T + np.eye(3))[0], [r(5, 3, 2)],
         rtol=1e-10),
    # an index computed per member: getitem_dynamic runs once per member
    Case("dynamic-index", lambda xp: lambda x, i: xp.asarray(x)[i] * 2.0,
         [r(4, 3), np.array([0, 3, 1, 1, 2])], in_axes=(None, 0)),
    Case("newaxis-ellipsis", lambda xp: lambda x: x[None, ..., 1:] * x[..., None, 0],
         [r(5, 3, 4)]),
    Case("where-maximum", lambda xp: lambda x: xp.where(x > 0, x ** 3, -x) + xp.maximum(x, 0.2),
         [r(6, 3)]),
    Case("0d-members", lambda xp: lambda x, y: x * y + xp.exp(x) * 2.0, [r(6), r(6)]),
    Case("in_axes-1-and-negative", lambda xp: lambda x, y: xp.tanh(x) @ A + y,
         [r(3, 5), r(5, 4)], in_axes=(1, -2)),
    Case("out_axes", lambda xp: lambda x: (x, xp.sum(x), x[None] * 2.0), [r(5, 3)],
         out_axes=(1, 0, -1)),
    Case("out_axes-None", lambda xp: lambda x, y: (x * y, y + 1.0), [r(5, 3), r(3)],
         in_axes=(0, None), out_axes=(-1, None)),
    Case("pytrees", lambda xp: lambda d, t: {"s": xp.sum(d["a"] * t[0]), "p": (d["a"] ** 2, t[1])},
         [{"a": r(5, 3), "b": r(2)}, (r(3), r(5))],
         in_axes=({"a": 0, "b": None}, (None, 0)), out_axes={"s": 0, "p": (1, 0)}),
    Case("float32", lambda xp: lambda x: xp.sum(xp.exp(x) * x, axis=-1),
         [r(5, 3).astype(np.float32)], rtol=1e-5),
    Case("batch-of-one", lambda xp: lambda x: xp.tanh(A @ x), [r(1, 4)]),
    Case("batch-of-zero", lambda xp: lambda x, y: (xp.tanh(A @ x), y * 2.0), [r(0, 4), r(3)],
         in_axes=(0, None), out_axes=(0, None)),
    Case("while_loop", lambda xp: _while, [r(5, 3)], make_jax=lambda xp: _while_jax),
    Case("cond", lambda xp: _cond, [r(5, 3)], make_jax=lambda xp: _cond_jax),
    Case("python-control-flow", lambda xp: _python_branch, [r(5, 3)], jax=False),
    Case("custom_gradient", lambda xp: lambda x: hnp.sin(_scaled_gradient(x)), [r(5, 3)],
         make_jax=lambda xp: lambda x: xp.sin(x)),
]
IDS = [c.name for c in CORPUS]


def _leaves(x):
    return [np.asarray(v.numpy() if isinstance(v, hg.Tensor) else v)
            for v in hg.engine.nest.flatten(x)]


def _per_member_axes(case):
    """One axis (or None) per leaf of the case's positional arguments."""
    from hessgrad.vmap import _in_axes_per_leaf
    return _in_axes_per_leaf(case.in_axes, tuple(case.args), {})


def _loop(case):
    """The explicit Python loop: ``f`` on each member's slices, the results stacked."""
    f = case.make(hnp)
    leaves = hg.engine.nest.flatten(tuple(case.args))
    axes = _per_member_axes(case)
    k = next(np.shape(a)[ax] for a, ax in zip(leaves, axes) if ax is not None)
    members = []
    for j in range(k):
        sliced = [a if ax is None else np.take(a, j, axis=ax) for a, ax in zip(leaves, axes)]
        members.append(f(*hg.engine.nest.pack_as(tuple(case.args), sliced)))
    return members


def _check_against_loop(case, got):
    members = _loop(case)
    from hessgrad.vmap import _spread
    got_leaves = _leaves(got)
    if not members:  # a batch of size 0: shapes only
        return
    out_axes = _spread(case.out_axes, members[0], "out_axes", "output", "out_axes")
    columns = list(zip(*[_leaves(m) for m in members]))
    assert len(columns) == len(got_leaves)
    for column, value, axis in zip(columns, got_leaves, out_axes):
        want = column[0] if axis is None else np.stack(column, axis=axis)
        assert value.shape == want.shape and value.dtype == want.dtype
        np.testing.assert_allclose(value, want, rtol=case.rtol, atol=case.rtol)


def _mapped(case):
    return hg.vmap(case.make(hnp), in_axes=case.in_axes, out_axes=case.out_axes)


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_traced_batch_equals_loop(case):
    mapped = _mapped(case)
    for _ in range(2):  # compiled without kernels for a new batch size, then with them
        got = mapped(*case.args)
        assert all(isinstance(v, np.ndarray) for v in hg.engine.nest.flatten(got))
        _check_against_loop(case, got)


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_replay_under_a_tape_equals_loop(case):
    with hg.GradientTape():
        got = _mapped(case)(*case.args)
    assert all(isinstance(v, hg.Tensor) for v in hg.engine.nest.flatten(got))
    _check_against_loop(case, got)


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_replay_inside_function_equals_loop(case):
    if case.name == "python-control-flow":
        pytest.skip("needs concrete values: cannot be traced by hg.function either")
    got = hg.function(lambda *args: _mapped(case)(*args))(*case.args)
    _check_against_loop(case, got)


@pytest.mark.parametrize("case", [c for c in CORPUS if c.jax], ids=[c.name for c in CORPUS
                                                                    if c.jax])
def test_against_jax(case):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    want = jax.jit(jax.vmap(case.make_jax(jnp), in_axes=case.in_axes,
                            out_axes=case.out_axes))(*case.args)
    got = _mapped(case)(*case.args)
    want_leaves = [np.asarray(w) for w in jax.tree_util.tree_leaves(want)]
    got_leaves = _leaves(got)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=max(case.rtol, 1e-10), atol=max(case.rtol, 1e-12))


# --- derivatives through vmap, checked against finite differences ---------------------------
DIFFERENTIABLE = [c for c in CORPUS if c.name not in (
    "python-control-flow",  # piecewise: finite differences are fine, but slow per member
    "custom_gradient",      # its gradient is deliberately not the derivative
    "float32", "batch-of-zero", "out_axes-None", "pytrees",
    "dynamic-index")]  # an integer argument


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_derivatives_against_finite_differences(case):
    mapped = _mapped(case)
    check_grads(lambda *args: mapped(*args), tuple(case.args), order=2, modes=("fwd", "rev"),
                atol=1e-5, rtol=1e-5)


# --- compositions, against JAX at first and second order ------------------------------------
X = r(5, 4)
x0 = r(4)
V = r(6, 4)


def f_of(xp):
    return lambda x: xp.sum(xp.tanh(A @ x) ** 2) + 0.1 * xp.sum(x ** 3)


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, jnp


def _close(got, want, rtol=1e-10):
    import jax
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(want)]
    got = _leaves(got)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-11)


def _sum_vmap(hg_or_jax, xp, f):
    return lambda x: xp.sum(hg_or_jax.vmap(f)(x))


def test_grad_and_hessian_of_vmap():
    jax, jnp = _jax()
    fh, fj = f_of(hnp), f_of(jnp)
    _close(hg.grad(_sum_vmap(hg, hnp, fh))(X), jax.jit(jax.grad(_sum_vmap(jax, jnp, fj)))(X))
    _close(hg.hessian(_sum_vmap(hg, hnp, fh))(X), jax.jit(jax.hessian(_sum_vmap(jax, jnp, fj)))(X))


def test_jacobians_of_vmap():
    jax, jnp = _jax()
    fh, fj = f_of(hnp), f_of(jnp)
    _close(hg.jacfwd(hg.vmap(fh))(X), jax.jit(jax.jacfwd(jax.vmap(fj)))(X))
    _close(hg.jacrev(hg.vmap(fh))(X), jax.jit(jax.jacrev(jax.vmap(fj)))(X))
    # second order: the Jacobian of the Jacobian
    _close(hg.jacfwd(hg.jacrev(hg.vmap(fh)))(X[:2]),
           jax.jit(jax.jacfwd(jax.jacrev(jax.vmap(fj))))(X[:2]))


def test_vmap_inside_function():
    jax, jnp = _jax()
    fh, fj = f_of(hnp), f_of(jnp)
    traced = hg.function(hg.vmap(fh))
    _close(traced(X), jax.jit(jax.vmap(fj))(X))
    _close(hg.function(hg.grad(_sum_vmap(hg, hnp, fh)))(X),
           jax.jit(jax.grad(_sum_vmap(jax, jnp, fj)))(X))
    _close(hg.function(hg.hessian(_sum_vmap(hg, hnp, fh)))(X[:2]),
           jax.jit(jax.hessian(_sum_vmap(jax, jnp, fj)))(X[:2]))


def test_nested_vmap():
    jax, jnp = _jax()

    def g_of(xp):
        return lambda a, b: xp.sin(a) * b + a ** 2

    inner_h = hg.vmap(hg.vmap(g_of(hnp)), in_axes=(0, None))
    inner_j = jax.vmap(jax.vmap(g_of(jnp)), in_axes=(0, None))
    _close(inner_h(X, x0), inner_j(X, x0))
    _close(hg.vmap(hg.vmap(g_of(hnp), in_axes=(None, 0)), in_axes=(0, None), out_axes=1)(X[0], X),
           jax.jit(jax.vmap(jax.vmap(g_of(jnp), in_axes=(None, 0)), in_axes=(0, None),
                            out_axes=1))(X[0], X))
    loss_h = lambda x: hnp.sum(inner_h(X, x) ** 2)  # noqa: E731
    loss_j = lambda x: jnp.sum(inner_j(X, x) ** 2)  # noqa: E731
    _close(hg.grad(loss_h)(x0), jax.jit(jax.grad(loss_j))(x0))
    _close(hg.hessian(loss_h)(x0), jax.jit(jax.hessian(loss_j))(x0))


def test_vmap_of_grad_and_its_derivatives():
    jax, jnp = _jax()
    fh, fj = f_of(hnp), f_of(jnp)
    _close(hg.vmap(hg.grad(fh))(X), jax.jit(jax.vmap(jax.grad(fj)))(X))
    # second order: the per-example gradients differentiated again
    _close(hg.grad(lambda X: hnp.sum(hg.vmap(hg.grad(fh))(X) ** 2))(X),
           jax.jit(jax.grad(lambda X: jnp.sum(jax.vmap(jax.grad(fj))(X) ** 2)))(X))
    _close(hg.hessian(lambda x: hnp.sum(hg.vmap(hg.grad(fh))(x * X) ** 2))(x0),
           jax.jit(jax.hessian(lambda x: jnp.sum(jax.vmap(jax.grad(fj))(x * X) ** 2)))(x0))
    _close(hg.vmap(hg.hessian(fh))(X), jax.jit(jax.vmap(jax.hessian(fj)))(X))


def test_vmap_of_hvp_and_jvp():
    jax, jnp = _jax()
    fh, fj = f_of(hnp), f_of(jnp)

    def hvps_h(x):
        return hg.vmap(lambda v: hg.hvp(fh)(x, v))(V)

    def hvps_j(x):
        return jax.vmap(lambda v: jax.jvp(jax.grad(fj), (x,), (v,))[1])(V)
    _close(hvps_h(x0), jax.jit(hvps_j)(x0))
    _close(hg.grad(lambda x: hnp.sum(hvps_h(x) ** 2))(x0),
           jax.jit(jax.grad(lambda x: jnp.sum(hvps_j(x) ** 2)))(x0))
    _close(hg.vmap(lambda x, v: hg.jvp(fh, (x,), (v,)))(X, V[:5]),
           jax.jit(jax.vmap(lambda x, v: jax.jvp(fj, (x,), (v,))))(X, V[:5]))
    _close(hg.grad(lambda x: hnp.sum(hg.vmap(lambda v: hg.jvp(fh, (x,), (v,))[1])(V)))(x0),
           jax.jit(jax.grad(lambda x: jnp.sum(
               jax.vmap(lambda v: jax.jvp(fj, (x,), (v,))[1])(V))))(x0))


def test_closure_over_a_differentiated_argument():
    jax, jnp = _jax()
    loss_h = lambda w: hnp.sum(hg.vmap(lambda x: hnp.tanh(x @ w) ** 2)(X))  # noqa: E731
    loss_j = lambda w: jnp.sum(jax.vmap(lambda x: jnp.tanh(x @ w) ** 2)(X))  # noqa: E731
    _close(hg.grad(loss_h)(x0), jax.jit(jax.grad(loss_j))(x0))
    _close(hg.hessian(loss_h)(x0), jax.jit(jax.hessian(loss_j))(x0))
    _close(hg.jacfwd(hg.grad(loss_h))(x0), jax.jit(jax.hessian(loss_j))(x0))


@pytest.mark.parametrize("name", ["while_loop", "cond", "custom_gradient",
                                  "python-control-flow"])
def test_gradients_through_per_member_fallbacks(name):
    case = next(c for c in CORPUS if c.name == name)
    f = case.make(hnp)
    (x,) = case.args
    grad = hg.grad(lambda x: hnp.sum(hg.vmap(f)(x) ** 2))(x)
    loop = np.stack([hg.grad(lambda m: hnp.sum(f(m) ** 2))(m) for m in x])
    np.testing.assert_allclose(grad, loop, rtol=1e-12)
    hess = hg.hessian(lambda m: hnp.sum(hg.vmap(f)(m * x) ** 2))(x[0])
    loop = sum(hg.hessian(lambda m, j=j: hnp.sum(f(m * x[j]) ** 2))(x[0]) for j in range(len(x)))
    np.testing.assert_allclose(hess, loop, rtol=1e-10, atol=1e-12)


def test_variable_read_inside():
    v = hg.Variable(x0)
    with hg.GradientTape() as tape:
        y = hnp.sum(hg.vmap(lambda x: hnp.sin(x * v))(X))
    np.testing.assert_allclose(tape.gradient(y, v), np.sum(X * np.cos(X * x0), axis=0),
                               rtol=1e-12)
    np.testing.assert_allclose(hg.vmap(lambda x: x * v)(X), X * x0)


# --- behaviour ---------------------------------------------------------------------------------
def test_outputs_follow_the_inputs_kind():
    f = hg.vmap(lambda x: x * 2.0)
    assert type(f(X)) is np.ndarray
    assert isinstance(f(hg.constant(X)), hg.Tensor)
    out = hg.vmap(lambda x: x)(X)
    assert type(out) is np.ndarray and not np.shares_memory(out, X)
    np.testing.assert_array_equal(out, X)


def test_traced_once_per_signature(monkeypatch):
    calls = []

    def f(x, w):
        if isinstance(x, hg.Tensor) and x.is_symbolic and not THREAD.state.capturing:
            calls.append(np.shape(x))
        return hnp.sum(x * w)
    mapped = hg.vmap(f, in_axes=(0, None))
    fed = []
    original = ConcreteFunction.run_batched_outputs

    def spy(self, leaves, batched, **options):
        fed.append([(np.shape(a), flag) for a, flag in zip(leaves, batched)])
        return original(self, leaves, batched, **options)
    monkeypatch.setattr(ConcreteFunction, "run_batched_outputs", spy)
    w = r(3)
    for k in (5, 7, 5):
        np.testing.assert_allclose(mapped(r(k, 3), w).shape, (k,))
    assert calls == [(3,)]  # one trace for per-example shape (3,), whatever the batch size
    mapped(r(4, 2), w[:2])
    assert calls == [(3,), (2,)]
    # the unmapped argument is fed once, unbatched, not broadcast over the batch
    assert fed[0] == [((5, 3), True), ((3,), False)]


def test_keyword_arguments_are_mapped_over_axis_0():
    got = hg.vmap(lambda x, scale=None: x * scale)(X, scale=X[:, :1])
    np.testing.assert_allclose(got, X * X[:, :1])


def test_axis_size_without_mapped_arguments():
    got = hg.vmap(lambda x: x * 2.0, in_axes=None, axis_size=3, out_axes=1)(x0)
    np.testing.assert_array_equal(got, np.stack([2 * x0] * 3, axis=1))
    assert hg.vmap(lambda: 1.0, axis_size=2)().tolist() == [1.0, 1.0]


def test_none_leaves_and_constant_outputs():
    got = hg.vmap(lambda d: {"a": d["a"] * 2, "n": None, "c": 3.0})({"a": X, "b": None})
    assert got["n"] is None
    np.testing.assert_array_equal(got["c"], np.full(5, 3.0))
    np.testing.assert_array_equal(got["a"], 2 * X)


def test_method_decoration():
    class Model:
        scale = 2.0

        @hg.vmap
        def apply(self, x):
            return hnp.sum(x) * self.scale
    with pytest.raises(ValueError, match="rank"):
        Model().apply(X)  # self is mapped too, as with jax.vmap on a method
    np.testing.assert_allclose(hg.vmap(Model.apply.fun, in_axes=(None, 0))(Model(), X),
                               2 * X.sum(1))


# --- errors -----------------------------------------------------------------------------------
def test_inconsistent_sizes_list_every_argument():
    with pytest.raises(ValueError) as info:
        hg.vmap(lambda x, y: x + y)(np.ones((3, 2)), {"a": np.ones((4, 2))})
    message = str(info.value)
    assert "vmap got inconsistent sizes" in message
    assert "size 3: axis 0 of args[0] of shape (3, 2)" in message
    assert "size 4: axis 0 of args[1]['a'] of shape (4, 2)" in message
    with pytest.raises(ValueError, match=r"axis_size argument was 4.*\n.*size 3"):
        hg.vmap(lambda x: x, axis_size=4)(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"kwargs\['y'\]"):
        hg.vmap(lambda x, y: x)(np.ones((3, 2)), y=np.ones(4))


@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range(axis):
    with pytest.raises(ValueError, match=rf"vmap was requested to map args\[0\] along axis "
                                         rf"{axis}.*rank should be at least 3.*only 2.*\(3, 2\)"):
        hg.vmap(lambda x: x, in_axes=axis)(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"args\[0\] along axis 0.*only 0"):
        hg.vmap(lambda x: x)(2.0)


def test_in_axes_structure_errors():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=1, len\(args\)=2"):
        hg.vmap(lambda x, y: x, in_axes=(0,))(X, X)
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a dict with keys \['a'\] but "
                                         r"args\[0\] is a dict with keys \['a', 'b'\]"):
        hg.vmap(lambda d: d["a"], in_axes=({"a": 0},))({"a": X, "b": X})
    with pytest.raises(ValueError, match=r"in_axes\[0\] is a tuple of length 2 but args\[0\] is "
                                         r"a leaf"):
        hg.vmap(lambda x: x, in_axes=((0, 0),))(X)
    with pytest.raises(ValueError, match="one dict argument"):
        hg.vmap(lambda d: d, in_axes={"a": 0})({"a": X})
    with pytest.raises(TypeError, match=r"in_axes\[1\] is 1.5"):
        hg.vmap(lambda x, y: x, in_axes=(0, 1.5))
    with pytest.raises(TypeError, match="out_axes"):
        hg.vmap(lambda x: x, out_axes="0")
    with pytest.raises(TypeError, match="axis_size"):
        hg.vmap(lambda x: x, axis_size=-1)


def test_nothing_mapped_needs_axis_size():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        hg.vmap(lambda x: x, in_axes=None)(X)
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        hg.vmap(lambda d: d, in_axes=0)({"a": None})


@pytest.mark.parametrize("under", ["plain", "tape", "function"])
def test_out_axes_none_for_a_mapped_output(under):
    f = hg.vmap(lambda x, y: (x * 2.0, y), in_axes=(0, None), out_axes=(None, None))
    pattern = r"out_axes\[0\] is None but output\[0\] \(shape \(4,\) per member\) depends " \
              r"on the mapped axis"
    with pytest.raises(ValueError, match=pattern):
        if under == "plain":
            f(X, x0)
        elif under == "tape":
            with hg.GradientTape():
                f(X, x0)
        else:
            hg.function(f)(X, x0)


def test_out_axes_errors():
    with pytest.raises(ValueError, match=r"out_axes=3 is out of range for output"):
        hg.vmap(lambda x: x, out_axes=3)(X)
    with pytest.raises(ValueError, match="out_axes is a tuple of length 1 but the output is a "
                                         "tuple of length 2"):
        hg.vmap(lambda x: (x, x), out_axes=(1,))(X)
    with pytest.raises(TypeError, match=r"fun returned str at output\[1\]"):
        hg.vmap(lambda x: (x, "label"))(X)


def test_ops_along_an_axis_batch_with_shared_operands():
    """sort's derivative permutes by a shared permutation and averages ties within shared
    groups (kept apart per member); cumprod's recurrences take one batched operand."""
    rng = np.random.default_rng(3)
    x = np.array([[3.0, 1.0, 1.0, 2.0], [0.0, 5.0, 5.0, 5.0]])

    def sort_jvp(t):
        return hg.jvp(lambda y: hnp.sort(y, axis=1), (x,), (t,))[1]
    tangents = rng.normal(size=(3, 2, 4))
    np.testing.assert_allclose(hg.vmap(sort_jvp)(tangents),
                               np.stack([sort_jvp(t) for t in tangents]), rtol=1e-13)
    points = rng.normal(size=(4, 2, 4))
    points[:, :, 1] = points[:, :, 2]  # ties in every member

    def sort_grad(y):
        return hg.grad(lambda z: hnp.sum(hnp.sort(z, axis=1) * np.arange(4.0)))(y)
    np.testing.assert_allclose(hg.vmap(sort_grad)(points),
                               np.stack([sort_grad(y) for y in points]), rtol=1e-13)

    def cumprod_hessian(y):
        return hg.hessian(lambda z: hnp.sum(hnp.cumprod(z) * hnp.sin(z)))(y)
    np.testing.assert_allclose(hg.vmap(cumprod_hessian)(points[:, 0]),
                               np.stack([cumprod_hessian(y) for y in points[:, 0]]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [lambda x: hg.erf(x) * x[::-1],
                               lambda x: hnp.nanmean(hnp.reshape(x, (2, 3)), axis=-1),
                               lambda x: hnp.rot90(hnp.reshape(x, (2, 3)), 3)])
def test_ops_batch_as_their_members(f):
    xs = np.random.default_rng(5).normal(size=(4, 6))
    xs[1, 2] = np.nan
    np.testing.assert_allclose(hg.vmap(f)(xs), np.stack([f(x) for x in xs]), rtol=1e-14)
    jac = hg.vmap(hg.jacobian(f))(xs)
    np.testing.assert_allclose(jac, np.stack([hg.jacobian(f)(x) for x in xs]), rtol=1e-14)
