import importlib.util
import os
import pathlib
import sys

import numpy
import pytest

# Traces compile at their first call, so the tests test compiled code and no test depends on
# when a background compilation finishes (tests/test_tiered_compilation.py tests the tiers).
os.environ.setdefault("HESSGRAD_COMPILE", "eager")

_OBJECTIVES = pathlib.Path(__file__).resolve().parent / "tests" / "objectives"


def _register(name, path):
    """Import a test helper by path under a unique name (tests/ has no packages, and a bare
    ``corpus``/``fd`` could collide with same-named modules elsewhere)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


# The objectives corpus and its finite-difference helpers, importable from any test module as
# ``import _hessgrad_tests_objectives_corpus as corpus`` (and ``..._fd``).
_register("_hessgrad_tests_objectives_corpus", _OBJECTIVES / "corpus.py")
_register("_hessgrad_tests_objectives_fd", _OBJECTIVES / "fd.py")
_register("_hessgrad_tests_objectives_inplace_corpus", _OBJECTIVES / "inplace_corpus.py")


@pytest.fixture(autouse=True)
def _doctest_numpy(doctest_namespace):
    doctest_namespace["np"] = numpy


def pytest_collection_modifyitems(config, items):
    """The docstring examples that solve with IPOPT need the optional cyipopt: skipped, with
    the reason, where it is not installed (the tests mark themselves)."""
    solving = [item for item in items if item.name == "hessgrad.ipopt.minimize"]
    if not solving:
        return
    from hessgrad.ipopt import available
    if not available():
        skip = pytest.mark.skip(reason="cyipopt is not installed: pip install -e '.[ipopt]'")
        for item in solving:
            item.add_marker(skip)
