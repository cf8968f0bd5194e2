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


# The quick subset, ``python -m pytest -m "not slow"``: parametrized cases marked ``slow`` by
# test and parameters (whole slow files set ``pytestmark``; other slow cases are marked where
# their parameters are listed). Measured with --durations on the 2-core development machine.
_SLOW_CASES = {
    # the ill-conditioned matrix in every operator form but one: the ndarray form stays quick
    "tests/solvers/test_solvers_lanczos.py::test_eigsh_zoo":
        lambda p: p["name"] == "spd_ill" and p["form"] != "ndarray",
    # 1100 copies of one eigenvalue: seed 0 stays quick
    "tests/solvers/test_solvers_lanczos.py::test_eigsh_finds_every_copy_of_a_multiple_eigenvalue":
        lambda p: p["seed"] != 0,
    # the README's analyze of the built-in problems (the mlp's dense reference, n = 200)
    "tests/test_cli.py::test_readme_command_runs_as_shown":
        lambda p: p["argv"][1] == "analyze" and "--x0" not in p["argv"],
}


@pytest.hookimpl(tryfirst=True)   # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the slow cases of ``_SLOW_CASES``. The docstring examples that solve with IPOPT
    need the optional cyipopt: skipped, with the reason, where it is not installed (the tests
    mark themselves)."""
    for item in items:
        rule = _SLOW_CASES.get(item.nodeid.split("[", 1)[0])
        callspec = getattr(item, "callspec", None)
        if rule is not None and callspec is not None and rule(callspec.params):
            item.add_marker(pytest.mark.slow)
    solving = [item for item in items if item.name == "hessgrad.ipopt.minimize"]
    if not solving:
        return
    from hessgrad.ipopt import available
    if not available():
        skip = pytest.mark.skip(reason="cyipopt is not installed: pip install -e '.[ipopt]'")
        for item in solving:
            item.add_marker(skip)
