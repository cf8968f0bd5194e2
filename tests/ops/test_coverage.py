"""Every registered primitive has test rows (some test module names it in its ``COVERED`` set,
checked at first and second order, forward and reverse, by that module) and declares all its
rules, or says why not where it is declared."""

import ast
import pathlib

import hessgrad  # noqa: F401 - registers every primitive
import hessgrad.numpy  # noqa: F401
from hessgrad.engine.registry import PRIMITIVES

TESTS = pathlib.Path(__file__).resolve().parents[1]
GRAPH_INTERNALS = {"placeholder", "const"}  # graph inputs: no derivative to test


def covered_names():
    names = set()
    for path in TESTS.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "COVERED" for t in node.targets):
                names |= set(ast.literal_eval(node.value))
    return names


def test_every_registered_primitive_has_test_rows():
    # hessgrad's own (users' primitives, as tests and doctests declare, are registered after
    # hessgrad's are sealed; @primitive names them by module and function)
    registered = {name for name, p in PRIMITIVES.items()
                  if p.builtin and not name.startswith(("test_", "doctest_"))}
    missing = sorted(registered - covered_names() - GRAPH_INTERNALS)
    assert not missing, f"primitives without test rows (add them to a COVERED set): {missing}"


# Graph nodes the engine itself makes: no operands to batch, no dependence on x to trace.
SOURCES = {"placeholder", "const", "read_variable"}


def _builtins():
    return [p for name, p in PRIMITIVES.items() if p.builtin and name not in SOURCES]


def test_every_primitive_declares_how_it_batches():
    """A batching rule (``batch=``, or ``batch_values=`` on arrays), or explicitly
    ``batch=per_member`` (each member on its own: said where the op is declared)."""
    missing = sorted(p.name for p in _builtins() if p.batch is None and p.batch_values is None)
    assert not missing, f"primitives without a batching rule: {missing}"


def test_every_differentiable_primitive_declares_its_sparsity():
    """A sparsity rule, or explicitly the conservative ``patterns.dense``."""
    missing = sorted(p.name for p in _builtins() if not p.nondiff and p.sparsity is None)
    assert not missing, f"primitives without a sparsity rule: {missing}"


def test_every_differentiable_primitive_has_both_derivatives():
    missing = sorted(p.name for p in _builtins() if not p.nondiff and not (
        (p.vjps or p.joint_vjp) and (p.jvps or p.joint_jvp or p.linear)))
    assert not missing, f"primitives without a VJP or a JVP rule: {missing}"
