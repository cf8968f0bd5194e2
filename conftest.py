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


# The quick subset, ``python -m pytest -m "not slow"``: cases marked ``slow`` here by test id
# and a rule on their parameters (None: every case). Whole slow files set ``pytestmark``, whole
# slow tests carry ``@pytest.mark.slow``. Chosen from per-test durations measured on the 2-core
# development machine.
_SLOW_CASES = {
    # the ill-conditioned matrix in every operator form but one: the ndarray form stays quick
    "tests/solvers/test_solvers_lanczos.py::test_eigsh_zoo":
        lambda p: p["name"] == "spd_ill" and p["form"] != "ndarray",
    # 1100 copies of one eigenvalue: seed 0 stays quick
    "tests/solvers/test_solvers_lanczos.py::test_eigsh_finds_every_copy_of_a_multiple_eigenvalue":
        lambda p: p["seed"] != 0,
    # the README's bench and analyze of the built-in problems (the mlp's dense reference)
    "tests/test_cli.py::test_readme_command_runs_as_shown":
        lambda p: p["argv"][1] == "bench" or p["argv"][1] == "analyze" and "--x0" not in p["argv"],
    # a 10,000-op chain differentiated in graph mode (the tape's stays quick)
    "tests/engine/test_tf_semantics.py::test_long_chain_has_no_recursion_limit":
        lambda p: p["mode"] == "graph",
    # eig's derivatives against JAX for real input (the complex case stays quick)
    "tests/numpy/test_numpy_eig.py::test_derivatives_match_jax":
        lambda p: not p["complex_input"],
    # the ODE-integrating least squares (hundreds of steps traced): the others stay quick
    **{f"tests/objectives/test_stats_corpus.py::{test}":
       lambda p: p["name"] in ("lotka_volterra_least_squares", "sir_least_squares",
                               "kalman_local_level")
       for test in ("test_gradient_and_hessian_against_finite_differences",
                    "test_hessgrad_function_equals_eager")},
    # a dynamic-programming table written cell by cell, traced
    "tests/objectives/test_inplace_corpus.py::test_traced_by_hessgrad_function":
        lambda p: p["name"] == "soft_dtw",
    # a docstring example that starts a local Dask cluster
    "hessgrad/distributed/__init__.py::hessgrad.distributed.sharded": None,
}


@pytest.hookimpl(tryfirst=True)   # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the slow cases of ``_SLOW_CASES``. The docstring examples that solve with IPOPT
    need the optional cyipopt: skipped, with the reason, where it is not installed (the tests
    mark themselves)."""
    for item in items:
        base = item.nodeid.split("[", 1)[0]
        if base not in _SLOW_CASES:
            continue
        rule, callspec = _SLOW_CASES[base], getattr(item, "callspec", None)
        if rule is None or callspec is not None and rule(callspec.params):
            item.add_marker(pytest.mark.slow)
    solving = [item for item in items if item.name == "hessgrad.ipopt.minimize"]
    if not solving:
        return
    from hessgrad.ipopt import available
    if not available():
        skip = pytest.mark.skip(reason="cyipopt is not installed: pip install -e '.[ipopt]'")
        for item in solving:
            item.add_marker(skip)
