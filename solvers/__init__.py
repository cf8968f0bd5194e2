"""Backward-compatible name for :mod:`hessgrad.solvers` (use ``from hessgrad import solvers``).

The Krylov methods and Hessian analytics live in ``hessgrad/solvers/``. This top-level
package is kept so that ``import solvers``, ``from solvers import eigsh`` and
``from solvers.spectral import SpectralDensity`` keep working: it makes ``solvers`` and each
``solvers.<submodule>`` the *same module objects* as ``hessgrad.solvers`` and
``hessgrad.solvers.<submodule>`` (so a monkeypatch through either name is seen by both).

A ``solvers.py`` in the working directory shadows this package, but not ``hessgrad.solvers``:
hessgrad itself never imports the top-level name.
"""

import importlib
import sys

_SUBMODULES = ("_kernels", "operators", "krylov", "inverse", "lanczos", "estimators",
               "spectral", "trust_region", "optimize")

for _sub in _SUBMODULES:
    sys.modules[f"{__name__}.{_sub}"] = importlib.import_module(f"hessgrad.solvers.{_sub}")
sys.modules[__name__] = importlib.import_module("hessgrad.solvers")
