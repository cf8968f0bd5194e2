"""Rewrites: the simplify pass applies what primitives declare about their algebra, and rules
registered per primitive object; the numbers stay the plan's."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler import compile_plan
from hessgrad.compiler.ir import Program
from hessgrad.compiler.rewrite import Rules, sweep
from hessgrad.ops.core import add_n, cast, getitem, identity, ones_like, stop_gradient, \
    zeros_like
from hessgrad.ops.shape import transpose

ONES, ZEROS = np.ones((3, 4)), np.zeros((3, 4))
CASES = {  # a program -> the op that the algebra removes from it
    "multiply": lambda x: hnp.sin(x) * ONES + ONES * hnp.cos(x),
    "divide": lambda x: hnp.sin(x) / ONES,
    "add": lambda x: (hnp.sin(x) + ZEROS) * (ZEROS + hnp.cos(x)),
    "subtract": lambda x: hnp.sin(x) - ZEROS,
    "negative": lambda x: -(-hnp.sin(x)),
    "add_n": lambda x: add_n(hnp.sin(x), ZEROS) * 2.0,
    "identity": lambda x: identity(hnp.sin(x)) * 2.0,
    "stop_gradient": lambda x: stop_gradient(hnp.sin(x)) * 2.0,
    "getitem": lambda x: getitem(hnp.sin(x), index=(slice(None), Ellipsis)) * 2.0,
    "cast": lambda x: cast(hnp.sin(x), dtype=np.float64) * 2.0,
    "transpose": lambda x: transpose(transpose(hnp.sin(x))) * 2.0,
    "ones_like": lambda x: ones_like(x) * hnp.sin(x) + zeros_like(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_declared_algebra_removes_the_op(name):
    x = np.random.default_rng(0).standard_normal((3, 4))
    plan = hg.function(CASES[name]).get_concrete_function(x).plan
    compiled = compile_plan(plan, jit_kernels=False)
    assert name in compiled.counts_before and name not in compiled.counts_after
    np.testing.assert_array_equal(compiled.run([x])[0], plan.run([x])[0])
    kept = compile_plan(plan, jit_kernels=False, skip={"algebra"})
    assert name in kept.counts_after


def test_rules_apply_to_their_primitive_object_only():
    x = np.linspace(0, 1, 5)
    plan = hg.function(lambda x: hnp.sin(x) * 2.0 + hnp.cos(x)).get_concrete_function(x).plan
    prog = Program(plan)
    seen = []
    rules = Rules()

    @rules.register(hg.sin.primitive)
    def swap(s, op):  # sin -> cos, keeping everything else of the op
        seen.append(op.name)
        return [op.replace(prim=hg.cos.primitive)]

    assert sweep(prog, (rules,)) == 1 and seen == ["sin"]
    assert [op.name for op in prog.ops] == ["cos", "multiply", "cos", "add"]
    assert all(op.node is not None for op in prog.ops)


def test_a_primitive_declares_its_rewrites_and_simplify_applies_them():
    """The simplify pass asks each op's primitive for its rules (``prim.rewrites``): one
    declared with a user's primitive applies to that primitive's ops only, and the built-in
    ones (an outer product, a sum of a broadcast, a constant power) live with their ops."""
    seen = []

    def as_cos(sweep, op):  # rewritten into a cheaper (here: another) op of the same type
        seen.append(op.name)
        return [op.replace(prim=hg.cos.primitive)]

    twin = hg.primitive("test_rewrites_sin_twin", np.sin, rewrites=(as_cos,))
    x = np.linspace(0, 1, 5)
    plan = hg.function(lambda x: twin(x) * 2.0 + hnp.sin(x)).get_concrete_function(x).plan
    compiled = compile_plan(plan, jit_kernels=False)
    assert seen == ["test_rewrites_sin_twin"]
    assert "test_rewrites_sin_twin" not in compiled.counts_after
    np.testing.assert_allclose(compiled.run([x])[0], 2 * np.cos(x) + np.sin(x))
    assert compile_plan(plan, jit_kernels=False, skip={"rewrites"}).counts_after[
        "test_rewrites_sin_twin"] == 1
    for op in (hg.matmul, hg.power):
        assert op.primitive.rewrites
    assert hg.sin.primitive.rewrites == ()
