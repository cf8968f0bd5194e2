"""Run every solvers module's doctests: the examples in docstrings must hold."""

import doctest
import importlib

import pytest

MODULES = ["operators", "krylov", "inverse", "lanczos", "estimators", "spectral",
           "_kernels", "__init__"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module("hessgrad.solvers" if name == "__init__"
                                     else f"hessgrad.solvers.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
