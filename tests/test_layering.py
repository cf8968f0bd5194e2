"""The layer diagram of DESIGN.md stays true: imports (module level or inside functions) only
point down. ``hessgrad.solvers`` may use hessgrad's public API inside functions, to
differentiate a user's f when no derivative was passed; nothing below the front ends imports
it. The top-level ``solvers`` package is only a backward-compatible alias of
``hessgrad.solvers``, and hessgrad never imports it (a user's ``solvers.py`` would shadow it)."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Lower rank = lower layer. A module may import modules of its own rank or below.
RANKS = {
    "hessgrad.kernels": 0, "hessgrad.malloc_tuning": 0, "hessgrad.coloring": 0,
    "hessgrad.recent": 0,
    "hessgrad.engine": 1,
    "hessgrad.ops": 2,
    "hessgrad.compiler": 3,
    "hessgrad.tracing": 4,               # hessgrad.function and the caches of traces
    "hessgrad.custom": 5, "hessgrad.vmap": 5, "hessgrad.arguments": 5,
    "hessgrad.pytree": 5,                # tree_map, tree_flatten, ravel_pytree (engine.nest)
    "hessgrad.numpy": 6,
    "hessgrad.transforms": 7, "hessgrad.sparsity": 7,
    "hessgrad.testing": 8, "hessgrad.second_order": 8,
    "hessgrad.operators": 9, "hessgrad.sparse": 9,
    "hessgrad.hessian_matrix": 10,
    "hessgrad.scipy": 11, "hessgrad.problems": 11, "hessgrad.ipopt": 11,
    "hessgrad.problems_constrained": 11,
    "hessgrad": 12,                      # the package's public API (its __init__)
    "hessgrad.solvers": 13,
    "solvers": 13,                       # the backward-compatible alias of hessgrad.solvers
    "hessgrad.distributed": 14, "hessgrad.cli": 14, "hessgrad.bench": 14,
    "hessgrad.__main__": 14,
}


def sources():
    for path in list((ROOT / "hessgrad").rglob("*.py")) + list((ROOT / "solvers").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = module if rel.name == "__init__" else module.rsplit(".", 1)[0]
        yield module, package, ast.parse(path.read_text())


def layer_of(module):
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in RANKS:
            return name
    raise KeyError(module)


def _target(node, package):
    if node.level:
        base = package.split(".")[:len(package.split(".")) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module


def imports():
    for module, package, tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(node, package)
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
        if src == "hessgrad.solvers" and dst == "hessgrad":
            continue  # solvers differentiate a user's f through the public API (lazily)
        if RANKS[dst] > RANKS[src]:
            upward.append(f"{module}:{line} imports {target} ({src} -> {dst})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_hessgrad_never_imports_the_top_level_solvers():
    """``import solvers`` finds a user's ``solvers.py`` first when one is in the working
    directory; hessgrad reaches its solvers only as ``hessgrad.solvers``."""
    found = [f"{module}:{line} imports {target}" for module, target, line in imports()
             if module.startswith("hessgrad") and layer_of(target) == "solvers"]
    assert not found, "\n".join(found)


def test_top_level_solvers_is_an_alias_of_hessgrad_solvers():
    import hessgrad.solvers
    import hessgrad.solvers.spectral
    import solvers
    import solvers.spectral
    from solvers.estimators import TraceEstimate

    assert solvers is hessgrad.solvers
    assert solvers.spectral is hessgrad.solvers.spectral
    assert TraceEstimate is hessgrad.solvers.estimators.TraceEstimate


def test_engine_knows_no_ops():
    for module, target, line in imports():
        if module.startswith("hessgrad.engine"):
            assert target.startswith("hessgrad.engine"), f"{module}:{line} imports {target}"


def _is_private(name):
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_crosses_layers():
    """A name another layer needs is public where it is defined (or moves down to a shared
    module): a private import across layers is a coupling nobody sees."""
    crossing = []
    for module, package, tree in sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _target(node, package)
            if not target or not target.startswith(("hessgrad", "solvers")):
                continue
            for a in node.names:
                full = target if node.module else f"{target}.{a.name}"
                if (_is_private(a.name) or _is_private(full.rsplit(".", 1)[-1])) and \
                        layer_of(full) != layer_of(module):
                    crossing.append(f"{module}:{node.lineno} imports {a.name} from {target}")
    assert not crossing, "private names imported across layers:\n" + "\n".join(crossing)


def _module_names(tree, package):
    """Names bound to hessgrad modules by ``import`` statements anywhere in ``tree``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(("hessgrad", "solvers")):
                    names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            target = _target(node, package)
            for a in node.names:
                full = f"{target}.{a.name}" if target else a.name
                if full.startswith(("hessgrad", "solvers")) and (ROOT / full.replace(
                        ".", "/")).with_suffix(".py").exists() or (ROOT / full.replace(
                        ".", "/") / "__init__.py").exists():
                    names.add(a.asname or a.name)
    return names


def test_no_module_assigns_into_another_modules_globals():
    """Control points down too: a hook an upper layer installs into a lower module's globals
    is a dependency pointing up in disguise (pass it explicitly, or register it on the
    Primitive)."""
    found = []
    for module, package, tree in sources():
        modules = _module_names(tree, package)
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                while isinstance(t, (ast.Attribute, ast.Subscript)) and \
                        isinstance(t.value, (ast.Attribute, ast.Subscript)):
                    t = t.value
                if isinstance(t, (ast.Attribute, ast.Subscript)) and \
                        isinstance(t.value, ast.Name) and t.value.id in modules:
                    found.append(f"{module}:{node.lineno} assigns into {t.value.id}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "setattr" and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in modules:
                found.append(f"{module}:{node.lineno} setattr on {node.args[0].id}")
    assert not found, "assignments into other modules:\n" + "\n".join(found)
