"""Tiered compilation (hessgrad/tracing/tiers.py): a lazy trace runs its plan uncompiled until
it is hot, then compiles (in the background, or here in the calling thread with
``TIER_BACKGROUND`` off) and runs compiled; every tier gives the same numbers up to
rounding. No timing is asserted."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning
from hessgrad.tracing.function import LazySpecialized, Specialized
from hessgrad.tracing.tiers import compile_mode


def loss(x):
    u = hnp.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        u = u.at[i].set(u[i - 1] * 0.5 + hnp.sin(x[i]) * x[i - 1])
    return hnp.sum(u ** 2) + hnp.sum(hnp.exp(-x * x))


X = np.linspace(-1.0, 1.0, 12)


@pytest.fixture
def in_thread(monkeypatch):
    """Compile in the calling thread when the trace gets hot: the switch is deterministic."""
    monkeypatch.setattr(tuning, "TIER_BACKGROUND", False)


def test_compile_mode_from_argument_and_environment(monkeypatch):
    monkeypatch.delenv("HESSGRAD_COMPILE", raising=False)
    assert compile_mode() == "lazy"
    assert compile_mode("eager") == "eager"
    assert compile_mode("lazy", optimize=False) == "never"
    for value, mode in (("0", "never"), ("never", "never"), ("1", "eager"),
                        ("eager", "eager"), ("lazy", "lazy")):
        monkeypatch.setenv("HESSGRAD_COMPILE", value)
        assert compile_mode() == mode
    monkeypatch.setenv("HESSGRAD_COMPILE", "0")  # off everywhere, whatever a function says
    assert compile_mode("eager") == "never"
    monkeypatch.setenv("HESSGRAD_COMPILE", "eager")  # a function's own choice wins
    assert compile_mode("lazy") == "lazy"
    with pytest.raises(ValueError, match="compile must be one of"):
        hg.function(loss, compile="sometimes")


def test_lazy_trace_runs_uncompiled_until_hot_then_compiled(in_thread):
    f = hg.function(hg.grad(loss), compile="lazy")
    expected = hg.grad(loss)(X)
    first = f(X)
    c = f.get_concrete_function(X)
    # the first call ran the plan; the second one made the trace hot (compiled after it)
    assert c._compiled is None and c.tier == "plan"
    second = f(X)
    assert c.tier == "compiled"
    third = f(X)
    assert c.compiled is not None and c.compiled.ops_after <= c.compiled.ops_before
    for value in (first, second, third):
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)


def test_lazy_trace_hot_by_time_compiles_after_one_call(in_thread, monkeypatch):
    monkeypatch.setattr(tuning, "TIER_CALLS", 10 ** 6)
    monkeypatch.setattr(tuning, "TIER_COMPILE_SECONDS", 0.0)
    monkeypatch.setattr(tuning, "TIER_COMPILE_SECONDS_PER_STEP", 0.0)
    f = hg.function(loss, compile="lazy")
    f(X)
    assert f.get_concrete_function(X).tier == "compiled"


def test_background_compilation_is_swapped_in(monkeypatch):
    monkeypatch.setattr(tuning, "TIER_BACKGROUND", True)
    f = hg.function(hg.grad(loss), compile="lazy")
    expected = f(X)
    c = f.get_concrete_function(X)
    f(X)  # hot: compiling in a daemon thread
    assert c.tier in ("compiling", "compiled")
    assert c.wait_compiled() is not None
    assert c.tier == "compiled"
    np.testing.assert_allclose(f(X), expected, rtol=1e-12, atol=1e-12)


def test_never_and_eager(in_thread):
    f = hg.function(loss, compile="never")
    for _ in range(3):
        f(X)
    c = f.get_concrete_function(X)
    assert c.tier == "plan" and c.compiled is None
    g = hg.function(loss, compile="eager")
    np.testing.assert_allclose(g(X), f(X), rtol=1e-12)
    assert g.get_concrete_function(X).tier == "compiled"


def test_lazy_hessian_compiles_its_batched_program(in_thread, monkeypatch):
    monkeypatch.setenv("HESSGRAD_COMPILE", "lazy")
    h = hg.hessian(loss, detect_sparsity=False)
    first = h(X)
    second = h(X)  # hot: compiled after this call, with the batched program it ran
    third = h(X)
    np.testing.assert_allclose(first, first.T, rtol=1e-12)
    for value in (second, third):
        np.testing.assert_allclose(value, first, rtol=1e-10, atol=1e-12)
    monkeypatch.setenv("HESSGRAD_COMPILE", "eager")
    np.testing.assert_allclose(hg.hessian(lambda x: loss(x))(X), first, rtol=1e-10, atol=1e-12)


def test_batched_runs_do_not_lower_the_unbatched_program():
    f = hg.function(hg.grad(loss), compile="eager")
    c = f.get_concrete_function(X)
    compiled = c.compiled
    assert not compiled.lowered
    out = c.run_batched([np.stack([X, -X])], [True])
    assert not compiled.lowered  # a dense Hessian only runs batched programs
    np.testing.assert_allclose(out[1], f(-X), rtol=1e-12)
    assert compiled.lowered


def test_a_cheaper_tier_first_then_kernels(in_thread, monkeypatch):
    """A lazy trace compiles without Numba kernels first, then lowers the same optimized
    program with them (the optimizer runs once)."""
    monkeypatch.setattr(tuning, "MIN_SIZE", 1)  # fuse even these small arrays
    monkeypatch.setattr(tuning, "MAX_OPS", 0)
    monkeypatch.setattr(tuning, "MAX_NATIVE_OPS", 0)
    seen = []
    f = hg.function(hg.grad(loss), compile="lazy")
    expected = f(X)
    c = f.get_concrete_function(X)
    tiers = c._tiers
    original = tiers._tier

    def tier(build, background):
        compiled = original(build, background)
        seen.append(compiled.jit_kernels)
        return compiled
    monkeypatch.setattr(tiers, "_tier", tier)
    f(X)
    assert seen == [False, True]
    assert c.tier == "compiled" and c.compiled.jit_kernels and c.compiled.fused_kernels
    np.testing.assert_allclose(f(X), expected, rtol=1e-12, atol=1e-12)


def test_without_kernels_one_tier(in_thread, monkeypatch):
    monkeypatch.setenv("HESSGRAD_JIT_KERNELS", "0")
    f = hg.function(hg.grad(loss), compile="lazy")
    expected = f(X)
    f(X)
    c = f.get_concrete_function(X)
    assert c.tier == "compiled" and not c.compiled.jit_kernels
    np.testing.assert_allclose(f(X), expected, rtol=1e-12, atol=1e-12)


def quad_loss(x):
    return loss(x) + 0.25 * hnp.sum(x ** 4)


@pytest.fixture
def lazy_env(monkeypatch):
    """hessgrad's own caches (make_hvp, HessianOperator) in lazy mode; a fresh function per
    test keeps their traces apart."""
    monkeypatch.setenv("HESSGRAD_COMPILE", "lazy")


def _tiers_of(hvp_at):
    linear = hvp_at.linear
    assert isinstance(linear, LazySpecialized)
    return linear, linear.concrete._tiers


def test_lazy_make_hvp_starts_uncompiled_then_swaps_in_the_split(in_thread, lazy_env):
    f = lambda x: quad_loss(x)  # noqa: E731 - a new function: a trace of its own
    H = hg.hessian(quad_loss)(X)
    rng = np.random.default_rng(0)
    vs = rng.standard_normal((6, X.size))
    hv = hg.make_hvp(f)(X)
    linear, tiers = _tiers_of(hv)
    assert not tiers.started and not linear.compiled and linear.concrete._compiled is None
    np.testing.assert_allclose(hv(vs[0]), H @ vs[0], rtol=1e-10, atol=1e-12)
    # the first product ran the plan: nothing compiled
    assert not tiers.started and not linear.compiled and tiers.ready is None
    np.testing.assert_allclose(hv(vs[1]), H @ vs[1], rtol=1e-10, atol=1e-12)
    # TIER_CALLS products: hot, compiled (here, in this thread) with the split warmed up
    assert tuning.TIER_CALLS == 2 and tiers.started and tiers.final
    assert tiers.ready.has_split(linear._flags)
    for v in vs[2:]:
        np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)
    assert linear.compiled and linear._inner is not None
    assert linear.largest_intermediate == linear._inner.largest_intermediate
    # another point of the same f: the trace is compiled, its split built (no compile)
    hv2 = hg.make_hvp(f)(-X)
    np.testing.assert_allclose(hv2(vs[0]), hg.hessian(quad_loss)(-X) @ vs[0],
                               rtol=1e-10, atol=1e-12)


def test_lazy_hessian_operator_batched_products_in_both_states(in_thread, lazy_env):
    f = lambda x: quad_loss(x)  # noqa: E731
    H = hg.hessian(quad_loss)(X)
    V = np.random.default_rng(1).standard_normal((X.size, 11))  # a block of 8 and 3 more
    op = hg.HessianOperator(f, X)
    assert op.info()["compiled"] is False
    np.testing.assert_allclose(op.matmat(V), H @ V, rtol=1e-10, atol=1e-12)
    assert op.info()["compiled"] is False  # one batched run of the plan: not hot yet
    np.testing.assert_allclose(op.matmat(V[:, :5]), H @ V[:, :5], rtol=1e-10, atol=1e-12)
    assert op.info()["compiled"] is True  # hot: compiled after that call
    for _ in range(3):  # blocks: the block program is compiled once matmat is hot
        np.testing.assert_allclose(op.matmat(V), H @ V, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op.matvec(V[:, 0]), H @ V[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op.to_dense(), H, rtol=1e-10, atol=1e-12)


def test_lazy_make_hvp_background_swap(monkeypatch, lazy_env):
    monkeypatch.setattr(tuning, "TIER_BACKGROUND", True)
    f = lambda x: quad_loss(x)  # noqa: E731
    H = hg.hessian(quad_loss)(X)
    hv = hg.make_hvp(f)(X)
    linear, tiers = _tiers_of(hv)
    v = np.cos(np.arange(X.size))
    for _ in range(2):
        np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)
    assert tiers.started  # hot: compiling in a daemon thread, the products do not wait
    assert tiers.wait() is not None and tiers.final
    np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)
    assert linear.compiled and linear._source is tiers.ready
    np.testing.assert_allclose(hv.batched(np.stack([v, -v])), np.stack([H @ v, -(H @ v)]),
                               rtol=1e-10, atol=1e-12)


def test_split_wanted_after_the_compilation_started_is_warmed(in_thread, lazy_env):
    """A specialization made while the trace compiles (another point) has its split built
    by the tiers still to come, not at a call."""
    f = hg.function(hg.hvp(quad_loss), compile="lazy")
    c = f.get_concrete_function(X, np.zeros_like(X))
    tiers = c._tiers
    built = []
    original = tiers._tier

    def tier(build, background):
        if not built:  # a specialization asked for while the first tier is warmed up
            built.append(c.specialize([X, np.zeros_like(X)], [True, False]))
        return original(build, background)
    tiers._tier = tier
    tiers.start()
    spec = built[0]
    assert isinstance(spec, LazySpecialized) and tiers.ready.has_split(spec._flags)
    v = np.sin(np.arange(X.size))
    np.testing.assert_allclose(spec([v]), hg.hessian(quad_loss)(X) @ v, rtol=1e-10,
                               atol=1e-12)
    assert spec.compiled


def test_eager_and_never_make_hvp_unchanged(monkeypatch):
    v = np.cos(np.arange(X.size))
    H = hg.hessian(quad_loss)(X)
    monkeypatch.setenv("HESSGRAD_COMPILE", "eager")
    hv = hg.make_hvp(lambda x: quad_loss(x))(X)
    assert isinstance(hv.linear, Specialized)  # compiled at once
    np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)
    monkeypatch.setenv("HESSGRAD_COMPILE", "never")
    hv = hg.make_hvp(lambda x: quad_loss(x))(X)
    assert not isinstance(hv.linear, (Specialized, LazySpecialized))  # folded per point
    np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)


def test_uncompiled_products_run_only_the_part_that_depends_on_v(lazy_env, monkeypatch):
    """Before the trace is hot the products run the plan with the point folded in (its
    forward pass and gradient once per point, as the never mode's folded trace)."""
    monkeypatch.setattr(tuning, "TIER_CALLS", 10 ** 6)
    monkeypatch.setattr(tuning, "TIER_COMPILE_SECONDS", 1e6)
    f = lambda x: quad_loss(x)  # noqa: E731
    H = hg.hessian(quad_loss)(X)
    hv = hg.make_hvp(f)(X)
    linear, tiers = _tiers_of(hv)
    V = np.random.default_rng(2).standard_normal((5, X.size))
    for v in V:
        np.testing.assert_allclose(hv(v), H @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.batched(V), V @ H, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.batched(V[:0]), V[:0], atol=0)
    assert not tiers.started and not linear.compiled and tiers.calls == 6  # not the empty batch
    at = linear._plan_at
    assert 0 < len(at.steps) < len(linear.concrete.plan.steps)
    assert linear.largest_intermediate >= 1
