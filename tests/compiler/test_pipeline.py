"""The compiler pipeline (hessgrad.compiler.pipeline): one ordered list of named passes, each
with its flag and a one-line description; the summary that print(f.graph) shows lists the
passes that changed the program; passes can be turned off by name."""

import ast
import pathlib

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler import compile_plan, pipeline
from hessgrad.engine.registry import PRIMITIVES


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_one_ordered_list_of_named_passes():
    names = [p.name for p in pipeline.PIPELINE]
    assert len(set(names)) == len(names)
    assert names.index("simplify") < names.index("accumulate") < names.index("whole_graph") \
        < names.index("stream_rows") < names.index("merge_products") < names.index("fuse") \
        < names.index("codegen")
    for p in pipeline.PIPELINE:
        assert p.flag in ("optimize", "jit_kernels")
        assert p.doc and "\n" not in p.doc
    assert [name for name, _ in pipeline.PIPELINE[2].steps] == ["fold", "algebra", "rewrites",
                                                                "scalarize", "cse"]
    text = pipeline.describe()
    assert len(text.splitlines()) == len(pipeline.PIPELINE) + 5  # simplify's steps indented


@pytest.mark.parametrize("n, lowered", [(50, "whole_graph"), (5000, "fuse")])
def test_printed_graph_says_which_passes_changed_the_program(n, lowered):
    f = hg.function(hg.grad(rosen))
    f(np.linspace(-1, 1, n))
    compiled = f.get_concrete_function(np.linspace(-1, 1, n)).compiled
    head = str(f.graph).partition("After optimization: ")[2].splitlines()[0]
    assert head == compiled.summary()
    ran = head.partition("; passes: ")[2].split(", ")
    assert ran[:2] == ["simplify(1)", "accumulate(1)"]
    assert list(compiled.passes) == [r.partition("(")[0] for r in ran]
    assert lowered in compiled.passes and ("codegen" in compiled.passes) == (lowered == "fuse")
    marked = [line.split()[1] for line in compiled.describe_passes().splitlines()
              if line.startswith("[x]")]
    assert marked == list(compiled.passes)


def test_passes_are_turned_off_by_name(monkeypatch):
    def f(x):
        return hnp.sin(x) * 2.0 + hnp.sin(x) * 2.0

    x = np.linspace(0, 1, 7)
    plan = hg.function(f).get_concrete_function(x).plan
    merged = compile_plan(plan, jit_kernels=False)
    assert merged.counts_after == {"sin": 1, "multiply": 1, "add": 1}
    apart = compile_plan(plan, jit_kernels=False, skip={"cse"})
    assert apart.counts_after == {"sin": 2, "multiply": 2, "add": 1}
    assert "- cse" in apart.describe_passes() and "- fold" not in apart.describe_passes()
    np.testing.assert_array_equal(apart.run([x])[0], merged.run([x])[0])
    monkeypatch.setenv("HESSGRAD_SKIP_PASSES", "simplify, fuse")
    raw = compile_plan(plan)
    assert "simplify" not in raw.passes and raw.counts_after == raw.counts_before
    assert "[-] simplify" in raw.describe_passes()
    np.testing.assert_array_equal(raw.run([x])[0], merged.run([x])[0])


def test_compiler_and_kernels_name_no_op():
    """No module of hessgrad.compiler or hessgrad.kernels spells a primitive's name: what
    the compiler knows of an op is declared with it (prim.lowering, prim.algebra) or
    registered per primitive object."""
    root = pathlib.Path(hg.__file__).parent
    found = []
    for path in sorted((root / "compiler").glob("*.py")) + sorted((root / "kernels").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value in PRIMITIVES:
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert not found
