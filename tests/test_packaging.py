"""Packaging: hessgrad's solvers cannot be shadowed by a user's ``solvers.py``, both import
forms of the solvers work, and the ``bench`` extra does not pull PyTorch (a CUDA build on a
CPU machine)."""

import os
import pathlib
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get(
        "PYTHONPATH", "").split(os.pathsep) if p])
    return env


def test_analyze_runs_beside_a_users_solvers_py(tmp_path):
    (tmp_path / "solvers.py").write_text(
        "raise RuntimeError(\"the user's solvers.py was imported\")\n")
    proc = subprocess.run(
        [sys.executable, "-m", "hessgrad", "analyze", "quadratic", "--n", "12", "--k", "2",
         "--probes", "6", "--quiet"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "negative eigenvalues" in proc.stdout


def test_both_import_forms():
    import solvers
    from hessgrad import solvers as hs

    assert solvers is hs
    assert solvers.eigsh is hs.eigsh
    assert set(hs.__all__) <= set(dir(solvers))


def test_bench_extra_has_no_torch():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    bench = meta["project"]["optional-dependencies"]["bench"]
    assert not [r for r in bench if r.lower().startswith("torch")], bench
