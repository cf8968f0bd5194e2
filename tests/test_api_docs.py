"""The API reference builds from the docstrings (``docs/build_api.py``), and every public name
of the documented modules has a docstring of its own."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _build_api():
    spec = importlib.util.spec_from_file_location("_hessgrad_docs_build_api",
                                                  ROOT / "docs" / "build_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_builds_and_every_public_name_has_a_docstring(tmp_path):
    build_api = _build_api()
    missing = build_api.build(tmp_path)
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)
    pages = {p.name for p in tmp_path.glob("*.md")}
    assert pages == {f"{m}.md" for m in build_api.MODULES} | {"index.md"}
    top = (tmp_path / "hessgrad.md").read_text()
    for name in ("hessian", "make_hvp", "function", "HessianOperator", "vmap"):
        assert f"## `{name}`" in top
    assert "## `eigsh`" in (tmp_path / "hessgrad.solvers.md").read_text()
    assert "## `sum`" in (tmp_path / "hessgrad.numpy.md").read_text()


def test_a_missing_docstring_is_reported(tmp_path, monkeypatch):
    import types

    build_api = _build_api()
    fake = types.ModuleType("hessgrad_fake_for_docs")
    fake.__doc__ = "A module."

    def undocumented(x):
        return x

    undocumented.__module__ = "hessgrad.fake"
    fake.undocumented = undocumented
    monkeypatch.setitem(__import__("sys").modules, "hessgrad_fake_for_docs", fake)
    missing = build_api.build(tmp_path, modules=("hessgrad_fake_for_docs",))
    assert missing == ["hessgrad_fake_for_docs.undocumented"]
