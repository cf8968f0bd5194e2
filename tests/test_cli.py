"""The hessgrad command, run in-process through hessgrad.cli.main."""

import json
import sys

import numpy as np
import pytest

import hessgrad as hg
from hessgrad import cli, problems

USER_MODULE = '''
import hessgrad.numpy as hnp
import numpy as np

def loss(x):
    return hnp.sum(hnp.sin(x) * x ** 2) + hnp.sum(x[:-1] * x[1:])

def wrong(x):                      # float() cuts the gradient: check must catch it
    return float(np.sum(x ** 2)) + hnp.sum(x)

def vector(x):
    return 2.0 * x

CONSTANT = 3
'''


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "clitest_user_mod.py").write_text(USER_MODULE)
    (tmp_path / "clitest_broken_mod.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "clitest_dep_mod.py").write_text("import clitest_no_such_dependency\n")
    np.save(tmp_path / "x.npy", np.linspace(-1.0, 1.0, 6))
    np.save(tmp_path / "x2d.npy", np.ones((2, 3)))
    np.save(tmp_path / "xstr.npy", np.array(["a", "b"]))
    (tmp_path / "notnpy.npy").write_text("hello")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("clitest_user_mod", "clitest_broken_mod", "clitest_dep_mod"):
        sys.modules.pop(name, None)


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_quadratic_exact_eigenvalues(capsys, tmp_path):
    path = tmp_path / "out.json"
    code, out, err = run(capsys, "analyze", "quadratic", "--n", "40", "--k", "3",
                         "--json", str(path))
    assert code == 0, err
    assert "exact:" in out and "top-3 eigenvalues" in out
    result = json.loads(path.read_text())
    exact = problems.get("quadratic", n=40).exact
    lam = np.sort(exact["eigenvalues"])
    np.testing.assert_allclose(result["top_eigenvalues"], lam[::-1][:3], rtol=1e-8)
    np.testing.assert_allclose(result["bottom_eigenvalues"], lam[:3], rtol=1e-8)
    assert result["condition_number"] == pytest.approx(exact["condition_number"], rel=1e-6)
    trace = result["trace"]
    assert abs(trace["estimate"] - exact["trace"]) < 5 * trace["std_error"] + 1e-6
    assert result["negative_count"]["estimate"] == pytest.approx(0.0, abs=1e-8)
    assert result["exact"]["trace"] == pytest.approx(exact["trace"])
    assert result["n"] == 40 and result["hvp_count"] > 0


def test_analyze_prints_dense_reference_values_for_small_problems(capsys, tmp_path):
    path = tmp_path / "out.json"
    code, out, err = run(capsys, "analyze", "mlp", "--k", "2", "--json", str(path))
    assert code == 0, err
    result = json.loads(path.read_text())
    target = problems.get("mlp")
    lam = np.linalg.eigvalsh(hg.hessian(target.fun)(target.x0))
    np.testing.assert_allclose(result["exact"]["top_eigenvalues"], lam[::-1][:2], rtol=1e-10)
    assert result["exact"]["negative_count"] == int(np.sum(lam < 0))
    assert result["exact"]["trace"] == pytest.approx(lam.sum(), rel=1e-10)
    np.testing.assert_allclose(result["top_eigenvalues"], lam[::-1][:2], rtol=1e-8)


def test_analyze_saddle_counts_negative_eigenvalues(capsys):
    code, out, _ = run(capsys, "analyze", "saddle", "--n", "20", "--k", "2", "--json", "-")
    assert code == 0
    result = json.loads(out[out.index("{"):])
    np.testing.assert_allclose(result["bottom_eigenvalues"], [-2.0, -1.25], rtol=1e-8)
    neg = result["negative_count"]     # a stochastic (Hutchinson-type) estimate
    assert abs(neg["estimate"] - 3.0) <= 4 * neg["std_error"] + 1e-8


def test_analyze_user_function(capsys, workdir):
    code, out, err = run(capsys, "analyze", "clitest_user_mod:loss", "--x0", "x.npy",
                         "--k", "2")
    assert code == 0, err
    assert "clitest_user_mod:loss" in out and "n=6" in out
    code, out, err = run(capsys, "analyze", "./clitest_user_mod.py:loss", "--x0", "x.npy",
                         "--k", "1")
    assert code == 0, err


def test_analyze_builtin_with_x0_sets_n(capsys, workdir):
    code, out, err = run(capsys, "analyze", "rosenbrock", "--x0", "x.npy", "--k", "2")
    assert code == 0, err
    assert "n=6" in out


def test_unknown_problem_lists_known_ones(capsys):
    code, _, err = run(capsys, "analyze", "rosenbrok")
    assert code == 2
    assert "unknown problem 'rosenbrok'" in err
    for name in problems.names():
        assert name in err


@pytest.mark.parametrize("spec, message", [
    ("clitest_nowhere_mod:f", "module not found"),
    ("clitest_broken_mod:f", "raised RuntimeError: boom at import"),
    ("clitest_dep_mod:f", "clitest_no_such_dependency"),
    ("clitest_user_mod:nope", "has no attribute 'nope'; callables defined there: loss"),
    ("clitest_user_mod:CONSTANT", "is an int, not a callable"),
    ("clitest_user_mod:vector", "must return a scalar, but returned shape (6,)"),
    ("missing_file.py:f", "no such file"),
])
def test_bad_module_function(capsys, workdir, spec, message):
    code, _, err = run(capsys, "check", spec, "--x0", "x.npy")
    assert code == 2
    assert message in err


@pytest.mark.parametrize("argv, message", [
    (["check", "clitest_user_mod:loss"], "needs a point: pass --x0 FILE.npy"),
    (["check", "clitest_user_mod:loss", "--x0", "nope.npy"], "no such file 'nope.npy'"),
    (["check", "clitest_user_mod:loss", "--x0", "x2d.npy"],
     "shape (2, 3); clitest_user_mod:loss expects a 1-D array of shape (n,)"),
    (["check", "clitest_user_mod:loss", "--x0", "xstr.npy"], "expected real numbers"),
    (["check", "clitest_user_mod:loss", "--x0", "notnpy.npy"], "cannot read 'notnpy.npy'"),
    (["analyze", "rosenbrock", "--n", "5", "--x0", "x.npy"], "expects a 1-D array of shape (5,)"),
    (["analyze", "mlp", "--x0", "x.npy"], "of shape (353,)"),
    (["analyze", "quadratic", "--k", "0"], "--k must be >= 1"),
    (["analyze", "rosenbrock", "--n", "1"], "n must be >= 2"),
    (["analyze", "--bogus"], "unrecognized arguments: --bogus"),
    (["bench", "--engines", "numpy,cuda"], "unknown 'cuda'"),
    (["bench", "--ops", "grad,jacobian"], "unknown 'jacobian'"),
    (["bench", "--problems", "rosenbrok"], "unknown 'rosenbrok'"),
])
def test_bad_input_messages(capsys, workdir, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err


def test_plot_without_matplotlib(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_has_matplotlib", lambda: False)
    code, _, err = run(capsys, "analyze", "quadratic", "--n", "5", "--plot", "x.png")
    assert code == 2
    assert "pip install 'hessgrad[plot]'" in err


@pytest.mark.skipif(not cli._has_matplotlib(), reason="matplotlib not installed")
def test_plot_with_matplotlib(capsys, tmp_path):
    path = tmp_path / "density.png"
    code, _, err = run(capsys, "analyze", "saddle", "--n", "10", "--k", "1",
                       "--plot", str(path))
    assert code == 0, err
    assert path.stat().st_size > 1000


def test_check_passes_and_fails(capsys, workdir):
    code, out, _ = run(capsys, "check", "clitest_user_mod:loss", "--x0", "x.npy")
    assert code == 0
    assert "all checks passed" in out and "FAIL" not in out
    code, out, _ = run(capsys, "check", "clitest_user_mod:wrong", "--x0", "x.npy")
    assert code == 1
    assert "FAIL gradient" in out and "MISMATCH" in out


def test_check_large_n_uses_directions(capsys):
    code, out, _ = run(capsys, "check", "rosenbrock", "--n", "30", "--max-full", "10")
    assert code == 0
    assert "random directions" in out


def test_help_texts(capsys):
    for argv in (["--help"], ["analyze", "--help"], ["check", "--help"], ["bench", "--help"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "usage: hessgrad" in out
    code, out, _ = run(capsys)
    assert code == 2 and "analyze" in out and "bench" in out


def test_bench_tiny_run(capsys, tmp_path):
    path = tmp_path / "bench.json"
    code, out, err = run(capsys, "bench", "--problems", "quadratic", "--ops", "grad,hvp",
                         "--engines", "hessgrad,hessgrad-function,numpy,autograd", "--n", "8",
                         "--repeats", "1", "--quick", "--json", str(path))
    assert code == 0, out + err
    data = json.loads(path.read_text())
    rows = data["results"]
    assert {r["engine"] for r in rows} <= {"hessgrad", "hessgrad-function", "numpy",
                                           "autograd"}
    assert all(r["agrees"] and r["median_s"] > 0 for r in rows)
    assert "x fastest" in out and "numpy (reference)" in out


def test_analyze_with_dask_workers_matches_exact_spectrum(capsys):
    pytest.importorskip("distributed")


    code = cli.main(["analyze", "quadratic", "--n", "8", "--k", "1", "--probes", "6",
                     "--workers", "2", "--json", "-"])
    assert code == 0
    out = capsys.readouterr().out
    result = json.loads(out[out.index("{"):])
    np.testing.assert_allclose(result["top_eigenvalues"], result["exact"]["top_eigenvalues"],
                               rtol=1e-8)
