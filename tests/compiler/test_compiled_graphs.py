"""hessgrad.function compiled (optimizer + generated code + Numba kernels) against the plan
interpreter and eager mode: same numbers for values, gradients and HVPs on every op family and
on the objectives corpus; the optimizer's rewrites; error notes; batched runs."""

import os

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.registry import PRIMITIVES
from hessgrad.kernels import tuning



import _hessgrad_tests_objectives_corpus as corpus  # noqa: E402 - registered by conftest.py

HG = {o.name: o for o in corpus.load_corpus(hnp)}
NP = {o.name: o for o in corpus.OBJECTIVES}
SMOOTH = [o.name for o in corpus.OBJECTIVES if o.smooth]

MODES = {"plan": dict(optimize=False), "nokernels": dict(jit_kernels=False),
         "kernels": dict(jit_kernels=True)}


def _close(a, b, rtol=1e-11):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


def _all_modes(fn, x, rtol=1e-11):
    """value, gradient and make_hvp of ``fn`` at x: eager vs every compilation mode."""
    v = np.random.default_rng(0).standard_normal(np.shape(x))
    value, grad = hg.value_and_grad(fn)(x)
    hv = hg.hvp(fn)(x, v)
    for mode, flags in MODES.items():
        f_val = hg.function(fn, **flags)
        f_grad = hg.function(hg.grad(fn), **flags)
        _close(f_val(x), value, rtol)
        _close(f_grad(x), grad, rtol)
        _close(f_grad(x), grad, rtol)  # second call: the steady-state path
        env = {"plan": {"HESSGRAD_COMPILE": "0"}, "nokernels": {"HESSGRAD_JIT_KERNELS": "0"},
               "kernels": {}}[mode]
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            _close(hg.make_hvp(fn)(x)(v), hv, rtol)
        finally:
            for k, o in old.items():
                os.environ.pop(k) if o is None else os.environ.__setitem__(k, o)


@pytest.fixture
def small_kernels(monkeypatch):
    """Fuse even small arrays so kernels run on the small corpus problems (and keep them off
    the whole-graph path, which would otherwise take them)."""
    monkeypatch.setattr(tuning, "MIN_SIZE", 1)
    monkeypatch.setattr(tuning, "MAX_OPS", 0)


A = np.random.default_rng(1).standard_normal((40, 30)) / 5
B = np.random.default_rng(2).standard_normal((30, 30)) + 8 * np.eye(30)

FAMILIES = {
    "arith": lambda x: hnp.sum((x * 3.0 - 1.0) / (2.0 + x * x) + x ** 3 - (-x) ** 2),
    "transcendental": lambda x: hnp.sum(hnp.exp(-x * x) + hnp.log1p(x * x) + hnp.tanh(x)
                                        * hnp.sin(x) + hnp.cos(x) + hnp.expm1(x / 4)
                                        + hnp.sqrt(x * x + 1.0) + hnp.log(2.0 + hnp.abs(x))),
    "piecewise": lambda x: hnp.sum(hnp.where(x > 0, x * x, -x) + hnp.maximum(x, 0.3)
                                   + hnp.minimum(x * 2, 0.1) + hnp.square(x)),
    "logistic": lambda x: hnp.sum(hg.sigmoid(x) + hnp.logaddexp(0.0, x) + hg.softplus(-x)),
    "reduction": lambda x: hnp.mean(x ** 2) + hnp.max(x) + hg.reduce_logsumexp(x)
    + hnp.sum(hnp.reshape(x, (-1, 20)).sum(axis=0) ** 2),
    "shape": lambda x: hnp.sum(hnp.transpose(hnp.reshape(x, (20, -1))) ** 2 * 0.5)
    + hnp.sum(hnp.concatenate([x[1:], x[:1]]) * x) + hnp.sum(x[::2] * x[1::2]),
    "linalg": lambda x: hnp.sum(hnp.tanh(A @ x[:30]) ** 2) + x[:30] @ hnp.linalg.solve(B, x[:30])
    + hnp.einsum("i,ij,j->", x[:40], A, x[40:70]),
    # gradients that add slices into one buffer: x[None] (a scatter at index None, which
    # is not "the whole buffer"), and overlapping slices of a reshaped value
    "scatter": lambda x: hnp.sum(hnp.sin(hnp.concatenate([x[None], x[None][:, :-4]], axis=1))
                                 ** 2)
    + hnp.sum(hnp.sin(hnp.diff(x, n=2)) ** 2)
    + hnp.sum(hnp.sin(hnp.diff(hnp.reshape(x, (-1, 2)), axis=0))),
    "control_flow": lambda x: hg.while_loop(lambda i, s: i < 3,
                                            lambda i, s: (i + 1, s * 0.9 + hnp.sin(s)),
                                            (0, x))[1].sum(),
}


@pytest.mark.parametrize("n", [80, 2000])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_op_families_agree(family, n):
    x = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    _all_modes(FAMILIES[family], x)


@pytest.mark.parametrize("family", ["arith", "transcendental", "piecewise", "logistic"])
def test_op_families_with_small_kernels(family, small_kernels):
    x = np.random.default_rng(3).uniform(-1.5, 1.5, 50)
    _all_modes(FAMILIES[family], x)


def _x0(name):
    o = NP[name]
    n = max([d for d in o.dims if d <= 10] or [min(o.dims)])
    return np.asarray(o.x0(n), dtype=np.float64)


@pytest.mark.parametrize("name", SMOOTH)
def test_corpus_gradient_and_hvp(name):
    _all_modes(HG[name].fn, _x0(name), rtol=1e-10)


@pytest.mark.parametrize("name", SMOOTH[::4])
def test_corpus_with_small_kernels(name, small_kernels):
    _all_modes(HG[name].fn, _x0(name), rtol=1e-10)


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_optimizer_shrinks_gradient_graph_and_reports():
    f = hg.function(hg.grad(rosen), jit_kernels=False)
    x = np.linspace(-1, 1, 50)
    f(x)
    c = f.get_concrete_function(x)
    assert c.compiled.ops_after < c.compiled.ops_before
    assert "ones_like" in c.compiled.counts_before
    for gone in ("ones_like", "broadcast_to", "sum", "scatter_add", "add_n"):
        assert gone not in c.compiled.counts_after
    assert c.compiled.counts_after["accumulate"] == 1
    assert c.compiled.counts_after["getitem"] == 2  # x[:-1] taken once (CSE)
    assert len(c.optimized_steps) == c.compiled.ops_after
    assert f.graph is c.graph and f.compile_time > 0
    assert "def compiled_graph" in c.compiled.source


def test_printed_graph_lists_ops_before_and_after_optimization():
    f = hg.function(hg.grad(rosen), jit_kernels=False)
    x = np.linspace(-1, 1, 50)
    f(x)
    compiled = f.get_concrete_function(x).compiled
    assert f.graph.optimized is compiled
    text = str(f.graph)
    traced, _, optimized = text.partition("After optimization: ")
    assert traced.startswith(f"Graph with {len(f.graph.nodes)} ops (as traced):")
    # one line per traced node, with its parameters and result type
    assert len(traced.strip().splitlines()) == 1 + len(f.graph.nodes)
    assert "getitem(identity:0, index=slice(1, None, None))  -> float64[49]" in traced
    assert "broadcast_to" in traced and "ones_like" in traced
    head, *steps = optimized.strip().splitlines()
    assert head == compiled.summary() and len(steps) == compiled.ops_after
    assert any(s.strip().startswith("v") and "accumulate(" in s for s in steps)
    assert not any("ones_like" in s or "broadcast_to" in s for s in steps)
    assert any("= subtract(1, v" in s for s in steps)  # scalar constants by value
    assert not any("power(" in s for s in steps)  # x ** 2 lowered: multiply(v3, v3)
    assert repr(f.graph) == f"<hessgrad.Graph: {len(f.graph.nodes)} ops, " \
        f"{compiled.ops_after} after optimization>"
    assert repr(compiled).startswith(f"<CompiledPlan: {compiled.ops_before} steps -> ")


def test_graph_built_by_hand_prints_its_ops():
    g = hg.Graph()
    with g.as_default():
        x = hg.placeholder("float64", shape=(None, 3), name="x")
        hg.reduce_sum(x * np.arange(12.0).reshape(4, 3), axis=-1)
    text = str(g)
    assert g.optimized is None and "After optimization" not in text
    assert "x = placeholder()  -> float64[?,3]" in text
    assert "<array float64[4,3]>" in text  # a large captured constant by type, not value
    assert repr(g) == "<hessgrad.Graph: %d ops>" % len(g.nodes)


def test_kernels_fuse_large_elementwise_trees():
    f = hg.function(hg.grad(rosen))
    x = np.linspace(-1, 1, 5000)
    np.testing.assert_allclose(f(x), hg.grad(rosen)(x), rtol=1e-13)
    c = f.get_concrete_function(x)
    assert c.compiled.fused_kernels >= 1   # one multi-output kernel since clusters
    assert "@njit" in c.compiled.kernel_sources[0]
    off = hg.function(hg.grad(rosen), jit_kernels=False)
    off(x)
    assert off.get_concrete_function(x).compiled.fused_kernels == 0


def test_fused_sum_reduction():
    f = hg.function(lambda x: hnp.sum(hnp.sqrt(x * x + 1.0) * x + 1.0))
    x = np.linspace(-1, 1, 3000)
    out = f(x)
    assert isinstance(out, np.float64)
    np.testing.assert_allclose(out, np.sum(np.sqrt(x * x + 1.0) * x + 1.0), rtol=1e-13)
    c = f.get_concrete_function(x)
    assert c.compiled.counts_after == {"fused": 1}


def test_cse_and_dead_code():
    def f(x):
        unused = hnp.exp(x) * 7.0  # noqa: F841 - dead
        return hnp.sin(x) * 2.0 + hnp.sin(x) * 2.0
    g = hg.function(f, jit_kernels=False)
    x = np.linspace(0, 1, 7)
    np.testing.assert_allclose(g(x), 4.0 * np.sin(x), rtol=1e-15)
    counts = g.get_concrete_function(x).compiled.counts_after
    assert counts == {"sin": 1, "multiply": 1, "add": 1}


def test_transpose_reshape_broadcast_rewrites():
    def f(x):
        t = hnp.transpose(hnp.transpose(x, (1, 0, 2)), (1, 0, 2))
        r = hnp.reshape(hnp.reshape(t, (6, 4)), (4, 6))
        s = hg.ops.core.sum_to(hg.broadcast_to(x, (3, 2, 3, 4)), shape=(2, 3, 4))
        return r * 2.0, s
    g = hg.function(f, jit_kernels=False)
    x = np.arange(24.0).reshape(2, 3, 4)
    r, s = g(x)
    np.testing.assert_array_equal(r, x.reshape(4, 6) * 2.0)
    np.testing.assert_array_equal(s, 3 * x)
    counts = g.get_concrete_function(x).compiled.counts_after
    assert counts.get("transpose", 0) == 0 and counts["reshape"] == 1
    assert "broadcast_to" not in counts and "sum_to" not in counts


def test_in_place_reuse_never_clobbers_results():
    def f(x):
        a = x * 2.0
        b = a + 1.0
        c = b * b
        return a, c, hnp.exp(c) - c
    g = hg.function(f)
    x = np.linspace(-1, 1, 3000)
    before = x.copy()
    a, c, d = g(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(a, x * 2.0)
    np.testing.assert_array_equal(c, (x * 2.0 + 1.0) ** 2)
    np.testing.assert_allclose(d, np.exp(c) - c, rtol=1e-14)
    assert "out=" in g.get_concrete_function(x).compiled.source or \
        g.get_concrete_function(x).compiled.fused_kernels


def test_in_place_ufunc_reuses_a_dead_buffer():
    g = hg.function(lambda x, y: hnp.exp(x * y) + y, jit_kernels=False)
    x, y = np.ones(10), np.full(10, 2.0)
    np.testing.assert_allclose(g(x, y), np.exp(x * y) + y)
    assert "out=" in g.get_concrete_function(x, y).compiled.source
    np.testing.assert_array_equal(y, 2.0)


def test_error_note_names_the_node():
    g = hg.function(lambda m: hnp.sum(hnp.linalg.cholesky(m) * 2.0))
    with pytest.raises(np.linalg.LinAlgError) as info:
        g(-np.eye(3))
    assert any("while running graph node" in n and "cholesky" in n
               for n in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match="placeholder"):
        g.get_concrete_function(np.eye(3)).compiled.run([np.eye(2)])


def test_batched_runs_fall_back_to_the_plan():
    f = hg.function(lambda x: hnp.sum(hnp.tanh(x) ** 2))
    xs = np.random.default_rng(4).standard_normal((5, 2000))
    np.testing.assert_allclose(f.map(xs), np.sum(np.tanh(xs) ** 2, axis=1), rtol=1e-12)
    H = hg.hessian(rosen)(np.linspace(-1, 1, 8))
    from scipy.optimize import rosen_hess
    np.testing.assert_allclose(H, rosen_hess(np.linspace(-1, 1, 8)), rtol=1e-12)


def test_transcendentals_stay_numpy_ufuncs_between_kernels(monkeypatch):
    f = hg.function(lambda x: hnp.sum(hnp.tanh(x * 2.0 + 1.0) * 3.0 - x))
    x = np.linspace(-1, 1, 3000)
    np.testing.assert_allclose(f(x), np.sum(np.tanh(x * 2.0 + 1.0) * 3.0 - x), rtol=1e-13)
    counts = f.get_concrete_function(x).compiled.counts_after
    assert counts == {"fused": 2, "tanh": 1}
    for prim in PRIMITIVES.values():  # no op's numpy loop beats a fused one: all fused
        monkeypatch.setattr(prim.lowering, "simd", False)
    g = hg.function(lambda x: hnp.sum(hnp.tanh(x * 2.0 + 1.0) * 3.0 - x))
    np.testing.assert_allclose(g(x), f(x), rtol=1e-13)
    assert g.get_concrete_function(x).compiled.counts_after == {"fused": 1}


def test_compiled_lazily_and_batches_compile_a_batched_program_per_size():
    f = hg.function(lambda x: hnp.sum(x * x))
    x = np.ones(3)
    c = f.get_concrete_function(x)
    assert c._compiled is None and c.compile_time == 0.0
    for k in (1, 9):
        np.testing.assert_allclose(f.map(np.ones((k, 3))), np.full(k, 3.0))
    assert list(c._compiled._batched) == [(1, (True,)), (9, (True,))]
    assert f.compile_time > 0


def _batched_cases():
    rng = np.random.default_rng(5)
    A, b = rng.standard_normal((30, 12)), rng.standard_normal(30)
    W = rng.standard_normal((3, 4))
    return [
        # matmul with a unit-vector batch (gathered) and a general batch, then logaddexp
        ("logistic", lambda w: hnp.mean(hnp.logaddexp(0.0, -b * (A @ w))) + hnp.sum(w * w),
         rng.standard_normal(12)),
        # slices (accumulated gradients), fused elementwise trees over the batch
        ("rosen", lambda x: hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
         rng.standard_normal(700)),
        # a matrix argument: reductions with axes, broadcasting of a lower-rank batch
        ("rows", lambda w: hnp.sum(hnp.log(hnp.sum(hnp.exp(w * W), axis=1))) +
         hnp.sum(hnp.tanh(w) * hnp.sum(w, axis=0)), rng.standard_normal((3, 4))),
        # newaxis, transpose, reshape, keepdims and max reductions behind the batch axis
        ("shapes", lambda w: hnp.sum((w.T @ w)[None] ** 2) +
         hnp.sum(hnp.max(hnp.reshape(w, (4, 3)), axis=-1) ** 3) +
         hnp.sum(hnp.mean(w * w, axis=0, keepdims=True) * w), rng.standard_normal((3, 4))),
    ]


@pytest.mark.parametrize("name, f, x", _batched_cases(), ids=lambda c: c if
                         isinstance(c, str) else "")
def test_batched_programs_equal_the_plan_on_basis_and_general_batches(name, f, x):
    n = x.size
    for V in (np.eye(n).reshape((n,) + x.shape),
              np.random.default_rng(1).standard_normal((12,) + x.shape)):
        compiled = hg.function(hg.hvp(f)).get_concrete_function(x, V[0])
        plain = hg.function(hg.hvp(f), optimize=False).get_concrete_function(x, V[0])
        got = compiled.run_batched([x, V], [False, True])
        want = plain.run_batched([x, V], [False, True])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert compiled._compiled._batched[(len(V), (False, True))]  # not the plan
    with pytest.raises(ValueError, match="placeholder"):
        compiled.run_batched([x, np.ones((12, n + 1))], [False, True])


def test_unbatched_fetches_are_broadcast_over_the_batch():
    f = hg.function(lambda x, y: (hnp.sum(x * y), hnp.sum(y)))
    X = np.arange(30.0).reshape(10, 3)
    c = f.get_concrete_function(X[0], np.ones(3))
    dots, ys = c.run_batched([X, np.ones(3)], [True, False])
    np.testing.assert_allclose(dots, X.sum(axis=1))
    np.testing.assert_allclose(ys, np.full(10, 3.0))


def test_float32_and_tensor_inputs():
    f = hg.function(lambda x: hnp.sum(hnp.exp(x) * x * 0.5))
    x32 = np.linspace(-1, 1, 2000, dtype=np.float32)
    out = f(x32)
    assert out.dtype == np.float32
    ref = hg.function(lambda x: hnp.sum(hnp.exp(x) * x * 0.5), optimize=False)(x32)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    t = f(hg.constant(x32))
    assert isinstance(t, hg.Tensor)


def test_variables_are_read_at_every_call():
    v = hg.Variable(np.ones(1000))
    f = hg.function(lambda x: hnp.sum(hnp.exp(x * v) * v))
    x = np.linspace(0, 1, 1000)
    first = f(x)
    v.assign(np.full(1000, 2.0))
    np.testing.assert_allclose(f(x), np.sum(np.exp(2 * x) * 2), rtol=1e-13)
    assert first != f(x)


def test_outer_product_matmuls_become_broadcast_multiplies():
    a = np.random.default_rng(8).standard_normal((50, 1))

    def f(b):
        return hnp.sum(hnp.tanh(a @ b) ** 2)

    b = np.random.default_rng(9).standard_normal((1, 7))
    g = hg.function(hg.grad(f))
    np.testing.assert_array_equal(g(b), hg.function(hg.grad(f), optimize=False)(b))
    compiled = g.get_concrete_function(b).compiled
    assert compiled.counts_after.get("matmul", 0) < compiled.counts_before["matmul"]


def test_constant_results_are_the_callers_to_update_in_place():
    # A linear function's gradient (and its zero HVP) fold to constants that every call
    # returns: a caller's in-place update (g *= -lr) changed the next call's result.
    f = lambda x: 3.0 * hnp.sum(x)  # noqa: E731
    for n in (4, 3000):  # the whole-graph path and the per-op path
        x = np.zeros(n)
        for flags in MODES.values():
            g = hg.function(hg.grad(f), **flags)
            out = g(x)
            out *= -0.5
            np.testing.assert_array_equal(g(x), np.full(n, 3.0))
        hv = hg.make_hvp(f)(x)
        out = hv(np.ones(n))
        out += 7.0
        np.testing.assert_array_equal(hv(np.ones(n)), np.zeros(n))
        value, grad = hg.function(hg.value_and_grad(f))(x)
        grad += 1.0
        np.testing.assert_array_equal(hg.function(hg.value_and_grad(f))(x)[1], np.full(n, 3.0))


def test_loop_bodies_and_branches_are_compiled_too():
    from hessgrad.compiler import CompiledPlan
    from hessgrad.compiler.blocks import compile_blocks
    from hessgrad.compiler.ir import Program
    from hessgrad.engine.graph import Plan

    def f(x):
        y = hg.cond(hg.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: x - 1.0)
        return hg.reduce_sum(hg.scan(lambda acc, e: hg.tanh(acc * e), y, initializer=1.0))

    x = np.linspace(-0.5, 1.0, 7)
    fn = hg.function(hg.grad(f))
    compiled = fn.get_concrete_function(x).compiled
    nested = [v for op in compiled.program.ops for v in op.params.values()
              if isinstance(v, (Plan, CompiledPlan))]
    assert {op.name for op in compiled.program.ops} >= {"while", "cond"}
    assert nested and all(isinstance(v, CompiledPlan) for v in nested)
    np.testing.assert_allclose(fn(x), hg.function(hg.grad(f), optimize=False)(x), rtol=1e-14)
    np.testing.assert_allclose(fn(x), hg.grad(f)(x), rtol=1e-14)

    # a block that fails to compile runs as it is, with a warning
    prog = Program(fn.get_concrete_function(x).plan)
    def broken(plan):
        raise RuntimeError("no")
    with pytest.warns(RuntimeWarning, match="compiling a block of a '(while|cond)' op failed "
                                            r"\(RuntimeError: no\)"):
        compile_blocks(prog, broken)
    assert all(isinstance(v, Plan) for op in prog.ops for v in op.params.values()
               if isinstance(v, (Plan, CompiledPlan)))


def _blocks(compiled):
    """The compiled condition and body plans of the ``while`` ops of a compiled program."""
    from hessgrad.compiler import CompiledPlan
    return [(op.params["cond_plan"], op.params["body_plan"]) for op in compiled.program.ops
            if op.name == "while" and isinstance(op.params["body_plan"], CompiledPlan)]


def test_loop_blocks_check_their_feeds_cheaply():
    """A loop runs its blocks' feed checks every iteration: the counter comes back as a numpy
    scalar and a history has a run-time length, and neither goes through the converting
    path; feeds a block never reads are not looked at. Wrong values are still refused."""
    def loss(w, xs):
        hs = hg.scan(lambda h, x: hnp.tanh(h @ w + x), xs, initializer=np.zeros(4))
        return hnp.sum(hs ** 2)

    rng = np.random.default_rng(3)
    w, xs = rng.standard_normal((4, 4)) / 2, rng.standard_normal((6, 4))
    f = hg.function(hg.grad(loss, argnums=(0, 1)), jit_kernels=False)
    for got, want in zip(f(w, xs), hg.grad(loss, argnums=(0, 1))(w, xs)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    blocks = _blocks(f.get_concrete_function(w, xs).compiled)
    assert len(blocks) == 2  # the forward loop and the reverse loop
    for cond, body in blocks:
        assert cond.source.count("_feed(") == 1 < len(cond.plan.feed_slots)
        lines = body.source.splitlines()
        converts = [i for i, line in enumerate(lines) if "_feed(" in line]
        assert converts and all(lines[i - 1].lstrip().startswith("if ") for i in converts)
    assert "_T0" in blocks[0][1].source  # the counter: its numpy scalar type is accepted
    history = next(line for line in blocks[1][1].source.splitlines() if ".ndim != 2" in line)
    assert ".shape[1] != 4" in history
    body = blocks[1][1]
    feeds = [np.zeros(s, d) if None not in s else np.zeros((3,) + tuple(s[1:]), d)
             for s, d in zip(body.plan.feed_shapes, body.plan.feed_dtypes)]
    j = next(j for j, s in enumerate(body.plan.feed_shapes) if s == (None, 4))
    feeds[j] = np.zeros((3, 5))
    with pytest.raises(ValueError, match=r"placeholder .* has shape \(None, 4\)"):
        body.run(feeds)


def test_zero_dim_feeds_take_numpy_scalars_of_their_dtype_only():
    f = hg.function(lambda x: x * 2.0, jit_kernels=False)
    compiled = f.get_concrete_function(np.float64(1.5)).compiled
    assert compiled.run([np.float64(1.5)])[0] == 3.0
    out = compiled.run([np.float32(1.5)])[0]  # converted to the placeholder's dtype
    assert out == 3.0 and np.result_type(out) == np.float64
