"""Every registered primitive has test rows: some test module names it in its ``COVERED`` set
(checked at first and second order, forward and reverse, by that module)."""

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
    registered = {name for name in PRIMITIVES if not name.startswith(("test_", "doctest_"))}
    missing = sorted(registered - covered_names() - GRAPH_INTERNALS)
    assert not missing, f"primitives without test rows (add them to a COVERED set): {missing}"
