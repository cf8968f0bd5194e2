"""What primitives declare for the compiler (hessgrad.engine.facts), checked against their own
forwards: scalar forms compute the op, algebra facts hold, ``out=`` calls write fresh
buffers; and ops are rebuilt by Op.replace without losing anything."""

import math
import types

import numpy as np
import pytest

import hessgrad as hg  # noqa: F401 - registers the primitives
from hessgrad.compiler.ir import Op
from hessgrad.compiler.scalar import Var, python_operator
from hessgrad.engine.registry import PRIMITIVES
from hessgrad.kernels import scalar as helpers

SCALAR = sorted(name for name, p in PRIMITIVES.items() if p.lowering.scalar is not None)
# the scalar helpers as Python functions, and numpy's domain: Python's math raises where
# generated kernels (error_model="numpy") return NaN or infinity
NAMESPACE = {"math": math, "abs": abs, "_k": types.SimpleNamespace(
    **{f: getattr(helpers, f).py_func for f in ("sign", "sigmoid", "maximum", "minimum",
                                               "logaddexp")})}
VALUES = [0.3, 0.7, 1.9, 1.0]
CONDITIONS = {"where": 0, "logical_not": 0}  # operands that are conditions (booleans)


def _operands(name):
    n = PRIMITIVES[name].lowering.arity or 3
    return [[True, False, True, False] if CONDITIONS.get(name) == j else VALUES[j:] + VALUES[:j]
            for j in range(n)]


@pytest.mark.parametrize("name", SCALAR)
def test_scalar_forms_compute_the_op(name):
    prim = PRIMITIVES[name]
    for row in zip(*_operands(name)):
        names = [f"x{j}" for j in range(len(row))]
        text = prim.lowering.scalar(*[Var(n) for n in names]).py()
        got = eval(text, NAMESPACE, dict(zip(names, row)))  # noqa: S307 - our own text
        want = prim.forward(*[np.asarray(v) for v in row])
        assert np.asarray(want).dtype.kind == ("b" if isinstance(got, bool) else "f")
        np.testing.assert_allclose(float(got), float(want), rtol=1e-15, err_msg=text)


@pytest.mark.parametrize("name", sorted(n for n, p in PRIMITIVES.items()
                                        if p.algebra.elementwise))
def test_elementwise_ufuncs_are_called_with_out(name):
    prim = PRIMITIVES[name]
    forward = getattr(prim.forward, "unchecked", prim.forward)
    if isinstance(forward, np.ufunc):
        assert prim.lowering.call is forward
    call = prim.lowering.call
    assert prim.lowering.fresh == (call is not None)
    if call is None or prim.lowering.scalar is None or name in CONDITIONS:
        return
    args = [np.linspace(0.1, 0.9, 300) + j for j in range(prim.lowering.arity)]
    want = prim.forward(*args)
    assert not any(np.shares_memory(call(*args), a) for a in args)
    for j in range(len(args)):  # generated code writes into a dead operand's buffer
        if args[j].dtype == want.dtype:
            into = [a.copy() for a in args]
            assert call(*into, out=into[j]) is into[j] and np.array_equal(into[j], want)


def _with_facts(fact):
    return sorted(n for n, p in PRIMITIVES.items() if getattr(p.algebra, fact))


@pytest.mark.parametrize("name", sorted(n for n, p in PRIMITIVES.items()
                                        if p.algebra.unit is not None))
def test_units_are_identity_elements(name):
    prim = PRIMITIVES[name]
    x = np.random.default_rng(0).standard_normal((3, 4))
    unit = np.full_like(x, prim.algebra.unit)
    positions = prim.algebra.unit_at or (0, 1)
    for j in positions:
        args = [x, x] if prim.lowering.arity == 2 or prim.lowering.arity is None else [x]
        args[j] = unit
        out = prim.forward(*args)
        assert np.array_equal(out, x) and out.dtype == x.dtype


@pytest.mark.parametrize("name", _with_facts("involution"))
def test_involutions_undo_themselves(name):
    prim = PRIMITIVES[name]
    x = np.random.default_rng(1).standard_normal(7)
    assert np.array_equal(prim.forward(prim.forward(x)), x)


CASES = {  # primitive -> (operand, params with which the op returns its operand, other params)
    "reshape": (np.ones((2, 3)), {"shape": (2, 3)}, {"shape": (3, 2)}),
    "broadcast_to": (np.ones((2, 3)), {"shape": (2, 3)}, {"shape": (4, 2, 3)}),
    "sum_to": (np.ones((2, 3)), {"shape": (2, 3)}, {"shape": (1, 3)}),
    "cast": (np.ones((2, 3)), {"dtype": np.float64}, {"dtype": np.float32}),
    "transpose": (np.arange(6.0).reshape(2, 3), {"axes": (0, 1)}, {"axes": (1, 0)}),
    "getitem": (np.arange(6.0), {"index": (slice(None), Ellipsis)},
                {"index": slice(None, None, -1)}),
}


@pytest.mark.parametrize("name", _with_facts("noop"))
def test_noop_params_return_the_operand(name):
    prim = PRIMITIVES[name]
    x, same, other = CASES[name]
    noop = prim.algebra.noop
    assert noop is True or noop(same, x.shape)
    assert np.array_equal(prim.forward(x, **same), x)
    if noop is not True:
        assert not noop(other, x.shape)
        assert not np.array_equal(np.ravel(prim.forward(x, **other)), np.ravel(x))


@pytest.mark.parametrize("name", _with_facts("compose"))
def test_compositions_equal_the_two_ops(name):
    prim = PRIMITIVES[name]
    x = np.arange(24.0).reshape(2, 3, 4)
    pairs = {"transpose": [({"axes": (1, 0, 2)}, {"axes": (2, 0, 1)}), ({}, {"axes": None}),
                           ({"axes": (-1, 0, 1)}, {})],
             "reshape": [({"shape": (6, 4)}, {"shape": (4, 6)})]}[name]
    for inner, outer in pairs:
        once = prim.forward(x, **prim.algebra.compose(inner, outer, x.shape))
        assert np.array_equal(once, prim.forward(prim.forward(x, **inner), **outer))


@pytest.mark.parametrize("name", _with_facts("fill_value") + _with_facts("forwards"))
def test_fills_and_forwarding(name):
    prim = PRIMITIVES[name]
    x = np.random.default_rng(2).standard_normal((2, 5))
    want = x if prim.algebra.forwards else np.full_like(x, prim.algebra.fill_value)
    assert np.array_equal(prim.forward(x), want)


def test_python_operators_only_for_operator_forms():
    assert python_operator(PRIMITIVES["add"]) == ("+", "iu")
    assert python_operator(PRIMITIVES["less_equal"]) == ("<=", "iub")
    assert python_operator(PRIMITIVES["equal"]) == ("==", "iub")
    assert python_operator(PRIMITIVES["add_n"]) == ("+", "iu")  # of two operands
    for name in ("divide", "power", "maximum", "sin", "where"):
        assert python_operator(PRIMITIVES[name]) is None


def test_replace_copies_everything_it_does_not_change():
    prim = PRIMITIVES["sum"]
    op = Op(prim, prim.forward, [1], {"axis": 0, "keepdims": True, "ddof": 1}, (2,), False,
            "node", ["node", "other"], extra={"source": "x"})
    new = op.replace(args=[3])
    for slot in Op.__slots__:
        if slot != "args":
            assert getattr(new, slot) == getattr(op, slot)
    assert new.args == [3] and op.args == [1] and new.nodes is not op.nodes
    other = op.replace(prim=PRIMITIVES["mean"])
    assert other.fn is PRIMITIVES["mean"].forward and other.params == op.params
    with pytest.raises(TypeError, match="no slots"):
        op.replace(name="mean")
