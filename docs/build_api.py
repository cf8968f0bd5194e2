"""Generate hessgrad's API reference (Markdown) from its docstrings, standard library only.

    python docs/build_api.py                 # writes docs/api/*.md (not checked in)
    python docs/build_api.py --out DIR       # elsewhere
    python docs/build_api.py --check         # build into a temporary directory, report only

One page per public module (:data:`MODULES`): its docstring, then each public name with its
signature and docstring. The public names of a module are its ``__all__`` when it has one,
else the names in ``dir(module)`` that do not start with ``_`` and are not modules. A name
defined outside hessgrad (numpy's dtypes and constants that ``hessgrad.numpy`` re-exports,
say) is listed as a re-export, without its docstring. A function, class or object of a
hessgrad class without a docstring of its own is *missing*: the build reports it, and
``tests/test_api_docs.py`` (run by ``python -m pytest``, so in CI) fails on it.

Exit status: 0 when every public name has a docstring, 1 otherwise.
"""

import argparse
import importlib
import inspect
import pathlib
import sys
import tempfile
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]

MODULES = (
    "hessgrad",
    "hessgrad.numpy", "hessgrad.numpy.linalg", "hessgrad.numpy.fft",
    "hessgrad.scipy", "hessgrad.scipy.special", "hessgrad.scipy.stats",
    "hessgrad.scipy.linalg", "hessgrad.scipy.signal", "hessgrad.scipy.integrate",
    "hessgrad.scipy.optimize",
    "hessgrad.solvers",
    "hessgrad.testing", "hessgrad.problems", "hessgrad.ipopt",
)


def _defined_in_hessgrad(obj):
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "")
    return isinstance(module, str) and module.split(".")[0] in ("hessgrad", "solvers")


def _own_doc(obj):
    """The docstring ``obj`` itself has (a class's, not one inherited from its bases; an
    instance of a hessgrad class, its class's)."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
    elif inspect.isroutine(obj) or isinstance(obj, property):
        doc = getattr(obj, "__doc__", None)
    else:
        doc = type(obj).__dict__.get("__doc__") if _defined_in_hessgrad(type(obj)) else None
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else None


def public_names(module):
    """``(name, object)`` for each public name of ``module``, sorted."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n), types.ModuleType)]
    return sorted(((n, getattr(module, n)) for n in names), key=lambda p: p[0].lower())


def _signature(name, obj):
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "object"


def _class_members(cls):
    """Public methods and properties defined on a hessgrad class itself, with docstrings."""
    out = []
    for name, member in sorted(cls.__dict__.items()):
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            out.append((name, member))
    return out


def _doc_block(doc):
    """A docstring as Markdown: its summary paragraph as prose, the rest (Args:, Returns:,
    doctests, indented lists) verbatim in a text block."""
    if not doc:
        return []
    summary, _, rest = doc.partition("\n\n")
    out = [" ".join(summary.split()), ""]
    if rest.strip():
        out += ["```text", rest.rstrip(), "```", ""]
    return out


def render_module(name):
    """``(markdown, missing)`` for the module called ``name``; ``missing`` lists the public
    names (``module.name``) without a docstring."""
    module = importlib.import_module(name)
    lines = [f"# `{name}`", ""]
    doc = inspect.getdoc(module)
    missing = [] if doc else [f"{name} (module docstring)"]
    lines += _doc_block(doc)
    submodules = sorted(n for n in dir(module) if not n.startswith("_") and isinstance(
        getattr(module, n), types.ModuleType) and f"{name}.{n}" in MODULES)
    if submodules:
        lines += ["Submodules: " + ", ".join(
            f"[`{name}.{s}`]({name}.{s}.md)" for s in submodules), ""]
    reexports = []
    for pname, obj in public_names(module):
        if isinstance(obj, types.ModuleType):
            continue
        if not _defined_in_hessgrad(obj) or not (callable(obj) or _defined_in_hessgrad(
                type(obj))):
            reexports.append((pname, obj))
            continue
        own = _own_doc(obj)
        if own is None:
            missing.append(f"{name}.{pname}")
        lines += [f"## `{pname}`", "", f"*{_kind(obj)}*", "", "```python",
                  _signature(pname, obj) if callable(obj) else pname, "```", "",
                  ] + (_doc_block(own) or ["*(no docstring)*", ""])
        if inspect.isclass(obj):
            for mname, member in _class_members(obj):
                mdoc = _own_doc(member)
                sig = mname if isinstance(member, property) else _signature(mname, member)
                lines += [f"### `{pname}.{mname}`", "", "```python", sig, "```", ""]
                lines += _doc_block(mdoc)
    if reexports:
        lines += ["## Re-exported names", "",
                  "Defined outside hessgrad (numpy's dtypes, constants and helpers), "
                  "documented there:", ""]
        for pname, obj in reexports:
            origin = getattr(obj, "__module__", None) or type(obj).__module__
            lines.append(f"* `{pname}` ({origin})")
        lines.append("")
    return "\n".join(lines), missing


def build(out_dir, modules=MODULES):
    """Write one page per module and ``index.md`` into ``out_dir``; return the missing
    docstrings."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    missing, index = [], ["# hessgrad API reference", "",
                          "Generated by `python docs/build_api.py` from the docstrings.", ""]
    for name in modules:
        text, miss = render_module(name)
        (out_dir / f"{name}.md").write_text(text)
        missing += miss
        first = (inspect.getdoc(importlib.import_module(name)) or "").split("\n\n")[0]
        index.append(f"* [`{name}`]({name}.md): {' '.join(first.split())}")
    (out_dir / "index.md").write_text("\n".join(index) + "\n")
    return missing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "api"),
                        help="output directory (default docs/api)")
    parser.add_argument("--check", action="store_true",
                        help="build into a temporary directory and only report")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            missing = build(tmp)
    else:
        missing = build(args.out)
        print(f"wrote {len(MODULES) + 1} pages to {args.out}")
    for m in missing:
        print(f"missing docstring: {m}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
