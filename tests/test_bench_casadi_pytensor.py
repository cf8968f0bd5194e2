"""Smoke run of benchmarks/bench_casadi_pytensor.py (issue 39) on one small problem: hessgrad
and CasADi's SX, MX and buffer engines agree with the hand-written reference (the script exits
1 on a FAILED engine) and the summary table is printed (about 8 s). The compiling engines
(CasADi's gcc, PyTensor's C and Numba: 15 s more) are left to the script's own ``--quick``
run. Skipped without CasADi (the ``bench`` extra). Speed is not checked here."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("casadi") is None,
                    reason="casadi is a benchmark extra: pip install -e '.[bench]'")
def test_quick_smoke_on_arwhead():
    cmd = [sys.executable, os.path.join("benchmarks", "bench_casadi_pytensor.py"), "--quick",
           "--only", "arwhead", "--skip", "casadi C,pytensor", "--target", "0.001",
           "--repeats", "2", "--budget", "0.05"]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "FAILED" not in run.stdout
    assert "geometric mean of peer time / hg compiled time" in run.stdout
    for engine in ("casadi SX", "casadi MX", "casadi SX buffer"):
        assert engine in run.stdout
