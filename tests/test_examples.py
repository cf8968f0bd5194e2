"""Every example's main() runs at a small size and reaches its claimed result."""

import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
README = EXAMPLES.parent / "README.md"


def load(name):
    spec = importlib.util.spec_from_file_location(f"hessgrad_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested():
    tested = {"newton_cg_vs_lbfgs", "scipy_trust_krylov", "mlp_hessian_spectrum",
              "influence_functions", "while_loop_second_order", "optimal_control_ipopt",
              "distributed_newton_cg"}  # run by tests/test_distributed.py (needs Dask)
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested


def test_newton_cg_vs_lbfgs(capsys):
    r = load("newton_cg_vs_lbfgs").main(d=10, m=200)
    assert "Newton-CG" in capsys.readouterr().out
    newton, lbfgs = r["Newton-CG"], r["L-BFGS-B"]
    assert newton["nhessp"] > 0 and newton["nit"] < lbfgs["nit"]
    assert newton["loss"] == pytest.approx(lbfgs["loss"], abs=1e-9)


def test_scipy_trust_krylov(capsys):
    r = load("scipy_trust_krylov").main(n=10, methods=("trust-krylov",))
    assert "trust-krylov" in capsys.readouterr().out
    assert r["trust-krylov"]["nhessp"] > 0
    assert r["trust-krylov"]["fun"] < 1e-12


def test_mlp_hessian_spectrum(capsys, tmp_path):
    r = load("mlp_hessian_spectrum").main(hidden=4, steps=40, plot=str(tmp_path / "s.png"))
    out = capsys.readouterr().out
    assert "after training" in out
    assert r["losses"][-1] < r["losses"][0]
    for stage in ("before", "after"):
        assert r[stage]["top"][0] >= r[stage]["bottom"][0]


@pytest.mark.slow
def test_influence_functions(capsys):
    r = load("influence_functions").main(d=4, m=60, top=3)
    assert "most influential" in capsys.readouterr().out
    # first-order predictions match leave-one-out retraining closely
    np.testing.assert_allclose(r["predicted"][r["order"]], r["actual"], rtol=0.2, atol=1e-4)


def test_while_loop_second_order(capsys):
    r = load("while_loop_second_order").main(n=3)
    assert "while_loop" in capsys.readouterr().out
    np.testing.assert_allclose(r["grad"], r["grad_ift"], atol=1e-10)
    np.testing.assert_allclose(r["hessian"], r["hessian_fd"], atol=1e-6)
    np.testing.assert_allclose(r["hessian_while_loop"], r["hessian"], atol=1e-10)
    np.testing.assert_allclose(r["hessian_while_loop_gg"], r["hessian"], atol=1e-10)


def test_readme_quick_start(capsys):
    # The README's Quick start, as written (it asserts the eigenvalues itself).
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    namespace = {"__name__": "readme_quick_start"}
    exec(compile(code, "README.md (Quick start)", "exec"), namespace)
    fun, nit = capsys.readouterr().out.split()
    assert float(fun) < 1e-10 and int(nit) > 0
    assert namespace["H"].shape == (20, 20) and namespace["top"].shape == (3,)


@pytest.mark.slow
def test_optimal_control_ipopt(capsys, tmp_path):
    from hessgrad import ipopt
    if not ipopt.available():
        pytest.skip("cyipopt is not installed: pip install -e '.[ipopt]'")
    r = load("optimal_control_ipopt").main(nh=60, plot=str(tmp_path / "goddard.png"))
    out = capsys.readouterr().out
    assert "Goddard rocket, 60 intervals: 245 variables, 180 constraints" in out
    res = r["result"]
    assert res.success and res.sparsity["hess_colors"] <= 4
    assert r["h"][-1] == pytest.approx(1.01283, abs=2e-4)      # COPS 3.0's optimum
    assert np.all(np.diff(r["m"]) <= 1e-9)                        # fuel is only burnt
