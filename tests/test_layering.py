"""The layer diagram of DESIGN.md stays true: imports (module level or inside functions) only
point down. ``solvers`` may use hessgrad's public API inside functions, to differentiate a
user's f when no derivative was passed; nothing below the front ends imports ``solvers``."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Lower rank = lower layer. A module may import modules of its own rank or below.
RANKS = {
    "hessgrad.kernels": 0, "hessgrad._runtime": 0, "hessgrad.coloring": 0, "hessgrad._recent": 0,
    "hessgrad.engine": 1,
    "hessgrad.ops": 2,
    "hessgrad.numpy": 3, "hessgrad.compiler": 3, "hessgrad.custom": 3, "hessgrad.vmap": 3,
    "hessgrad.transforms": 4, "hessgrad.sparsity": 4,
    "hessgrad.testing": 5, "hessgrad.second_order": 5,
    "hessgrad.operators": 6, "hessgrad.sparse": 6,
    "hessgrad.scipy": 7, "hessgrad.problems": 7, "hessgrad.ipopt": 7,
    "hessgrad.problems_constrained": 7,
    "hessgrad": 8,                      # the package's public API (its __init__)
    "solvers": 9,
    "hessgrad.distributed": 10, "hessgrad.cli": 10, "hessgrad.bench": 10,
    "hessgrad.__main__": 10,
}


def layer_of(module):
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in RANKS:
            return name
    raise KeyError(module)


def imports():
    for path in list((ROOT / "hessgrad").rglob("*.py")) + list((ROOT / "solvers").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = module if rel.name == "__init__" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module
                targets = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if t.startswith(("hessgrad", "solvers")):
                    yield module, t, node.lineno


def test_imports_point_down():
    upward = []
    for module, target, line in imports():
        src, dst = layer_of(module), layer_of(target)
        if src == "solvers" and dst == "hessgrad":
            continue  # solvers differentiate a user's f through the public API (lazily)
        if RANKS[dst] > RANKS[src]:
            upward.append(f"{module}:{line} imports {target} ({src} -> {dst})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_engine_knows_no_ops():
    for module, target, line in imports():
        if module.startswith("hessgrad.engine"):
            assert target.startswith("hessgrad.engine"), f"{module}:{line} imports {target}"
