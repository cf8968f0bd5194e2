"""The hessgrad command, run in-process through hessgrad.cli.main."""

import json
import pathlib
import shlex
import sys

import numpy as np
import pytest

import hessgrad as hg
from hessgrad import cli, problems

USER_MODULE = '''
import hessgrad as hg
import hessgrad.numpy as hnp
import numpy as np

def loss(x):
    return hnp.sum(hnp.sin(x) * x ** 2) + hnp.sum(x[:-1] * x[1:])

def wrong(x):                      # float() cuts the gradient: check must catch it
    return float(np.sum(x ** 2)) + hnp.sum(x)

def vector(x):
    return 2.0 * x

def not_a_number(x):               # log of negative entries
    return hnp.sum(hnp.log(x))

def infinite(x):
    return hnp.sum(x * x) / 0.0

@hg.custom_gradient
def _cube_sum(x):
    def grad(dy):
        return dy * 1.5 * 3.0 * x ** 2   # 1.5 times the true gradient
    return hnp.sum(x ** 3), grad

def wrong_custom_gradient(x):      # its Hessian agrees with differences of its gradient
    return _cube_sum(x)

CONSTANT = 3
'''

# The logistic model with an L2 penalty and fewer rows than parameters: its Hessian
# is 0.01 I plus a rank-30 term, so 0.01 repeats 270 times. Its data come from seed 0, the
# seed analyze uses by default.
RIDGE_MODULE = '''
import hessgrad.numpy as hnp
import numpy as np

_rng = np.random.default_rng(0)
X = _rng.standard_normal((30, 300)) / np.sqrt(300) * 3
y = np.where(_rng.standard_normal(30) > 0, 1.0, -1.0)

def loss(w):
    return hnp.mean(hnp.logaddexp(0.0, -y * (X @ w))) + 0.005 * hnp.sum(w * w)
'''


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "clitest_user_mod.py").write_text(USER_MODULE)
    (tmp_path / "clitest_ridge_mod.py").write_text(RIDGE_MODULE)
    np.save(tmp_path / "w300.npy", np.zeros(300))
    (tmp_path / "clitest_broken_mod.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "clitest_dep_mod.py").write_text("import clitest_no_such_dependency\n")
    np.save(tmp_path / "x.npy", np.linspace(-1.0, 1.0, 6))
    np.save(tmp_path / "x2d.npy", np.ones((2, 3)))
    np.save(tmp_path / "xstr.npy", np.array(["a", "b"]))
    (tmp_path / "notnpy.npy").write_text("hello")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("clitest_user_mod", "clitest_broken_mod", "clitest_dep_mod",
                 "clitest_ridge_mod"):
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


@pytest.mark.slow
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
    code, out, err = run(capsys, "analyze", "saddle", "--n", "20", "--k", "2", "--json", "-")
    assert code == 0
    result = json.loads(out)            # --json -: stdout holds the JSON alone
    assert "bottom-2 eigenvalues" in err and "bottom-2" not in out
    np.testing.assert_allclose(result["bottom_eigenvalues"], [-2.0, -1.25], rtol=1e-8)
    neg = result["negative_count"]     # a stochastic (Hutchinson-type) estimate
    assert abs(neg["estimate"] - 3.0) <= 4 * neg["std_error"] + 1e-8
    lo, hi = neg["confidence_interval"]
    assert lo <= 3 <= hi and neg["level"] == 0.99 and result["contradictions"] == []


def test_analyze_finds_every_copy_of_the_ridge_eigenvalue(capsys, workdir):
    # eigsh used to print [0.01, 0.01, 0.022, ...] here (copies of a multiple eigenvalue
    # missed, as ARPACK misses them) and analyze exited 0 beside the exact [0.01] * 5.
    code, out, err = run(capsys, "analyze", "clitest_ridge_mod:loss", "--x0", "w300.npy",
                         "--k", "5", "--json", "-")
    assert code == 0, err
    result = json.loads(out)
    np.testing.assert_allclose(result["bottom_eigenvalues"], np.full(5, 0.01), rtol=1e-9)
    np.testing.assert_allclose(result["exact"]["bottom_eigenvalues"], np.full(5, 0.01),
                               rtol=1e-9)
    detail = result["bottom_eigenvalues_detail"]
    assert detail["checked"] and all(detail["converged"])
    assert result["contradictions"] == [] and "MISMATCH" not in err


def test_analyze_exits_1_when_an_estimate_contradicts_its_exact_value(capsys, monkeypatch):
    import solvers

    real_eigsh, real_hutchpp = solvers.eigsh, solvers.hutchpp

    def shifted_eigsh(*args, **kwargs):      # converged values 1.0 off the spectrum
        res = real_eigsh(*args, **kwargs)
        res.eigenvalues = res.eigenvalues + 1.0
        return res

    def overconfident_hutchpp(*args, **kwargs):
        est = real_hutchpp(*args, **kwargs)
        return solvers.estimators.TraceEstimate(est.trace + 100.0, 1e-3, est.num_matvecs,
                                                est.num_samples, est.level)

    monkeypatch.setattr(solvers, "eigsh", shifted_eigsh)
    monkeypatch.setattr(solvers, "hutchpp", overconfident_hutchpp)
    code, out, err = run(capsys, "analyze", "quadratic", "--n", "30", "--k", "2")
    assert code == 1
    assert out.count("CONTRADICTS the exact value") == 3      # top, bottom, trace
    assert "MISMATCH: 3 estimate(s) contradict" in out
    assert "max error 1 > residual bound" in out and "outside the interval" in out


def test_analyze_reports_what_converged_within_the_budget(capsys, tmp_path):
    # The README's example used to end in an EigshNoConvergence traceback (n = 100-300).
    # With a budget too small for the clustered bottom end, rows say what converged and
    # give intervals for the rest, and the exact values lie in them (exit 0).
    path = tmp_path / "out.json"
    code, out, err = run(capsys, "analyze", "quadratic", "--n", "200", "--k", "3",
                         "--max-hvps", "60", "--json", str(path))
    assert code == 0, out + err
    assert "not converged within 60 HVPs" in out and "Traceback" not in err
    result = json.loads(path.read_text())
    bottom = result["bottom_eigenvalues_detail"]
    assert not all(bottom["converged"])
    exact = np.asarray(result["exact"]["bottom_eigenvalues"])
    lam = problems.get("quadratic", n=200).exact["eigenvalues"]
    for a, b in bottom["intervals"]:
        assert np.any((lam >= a - 1e-9) & (lam <= b + 1e-9))
    assert bottom["values"][0] >= exact[0] - 1e-9          # a Ritz value bounds lam_min
    assert not result["condition_converged"]
    # (JSON spells infinity "inf")
    assert result["condition_lower_bound"] <= 1000.0 <= float(result["condition_upper_bound"])
    assert result["contradictions"] == []


def test_analyze_progress_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(cli, "PROGRESS_SECONDS", 0.0)
    code, out, err = run(capsys, "analyze", "quadratic", "--n", "30", "--k", "1")
    assert code == 0
    assert "hessgrad: bottom-1 eigenvalues (eigsh SA): " in err and " HVPs, " in err
    assert " HVPs, " not in out
    code, out, err = run(capsys, "analyze", "quadratic", "--n", "30", "--k", "1", "--quiet")
    assert code == 0 and " HVPs, " not in err


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("command", ["analyze", "check"])
@pytest.mark.parametrize("function, what", [("not_a_number", "nan"), ("infinite", "inf")])
def test_non_finite_value_is_bad_input(capsys, workdir, command, function, what):
    # analyze printed a full report and exited 0; check said "max abs error nan".
    code, out, err = run(capsys, command, f"clitest_user_mod:{function}", "--x0", "x.npy")
    assert code == 2
    assert f"f(x0) is {what}" in err and out == ""


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
    ("clitest_user_mod:nope",
     "has no attribute 'nope'; callables defined there: infinite, loss, not_a_number"),
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


@pytest.mark.skipif(not cli._has_matplotlib(), reason="matplotlib not installed")
def test_plot_options_log_scale_dpi_and_size(capsys, tmp_path):
    path = tmp_path / "density-log.png"
    code, _, err = run(capsys, "analyze", "saddle", "--n", "10", "--k", "1", "--plot",
                       str(path), "--plot-log", "--plot-dpi", "50", "--plot-size", "4x3")
    assert code == 0, err
    with open(path, "rb") as f:           # PNG header: width and height in pixels
        header = f.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")) \
        == (200, 150)


@pytest.mark.skipif(not cli._has_matplotlib(), reason="matplotlib not installed")
def test_plot_spectral_density_function(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from hessgrad import solvers

    lam = np.concatenate([np.linspace(1.0, 2.0, 30), [50.0]])
    density = solvers.spectral_density(np.diag(lam), num_probes=4, lanczos_steps=12, rng=0)
    for log in (False, True):
        path = tmp_path / f"d{int(log)}.svg"
        with matplotlib.rc_context({"svg.fonttype": "none"}):   # text as text
            sigma = cli.plot_spectral_density(density, path, exact_eigenvalues=lam, log=log,
                                              dpi=60, figsize=(5, 3))
        text = path.read_text()
        assert sigma == pytest.approx((50.0 - 1.0) / 100, rel=0.05)
        assert "4 probes x 12 Lanczos steps" in text and "sigma" in text
    with pytest.raises(ValueError, match="positive"):
        cli.plot_spectral_density(density, tmp_path / "x.png", dpi=0)


@pytest.mark.parametrize("flag, value", [("--plot-dpi", "0"), ("--plot-size", "7by4"),
                                         ("--plot-size", "0x4")])
def test_plot_option_errors(capsys, flag, value):
    code, _, err = run(capsys, "analyze", "quadratic", "--n", "5", "--plot", "x.png", flag,
                       value)
    assert code == 2
    assert flag in err


def test_check_passes_and_fails(capsys, workdir):
    code, out, _ = run(capsys, "check", "clitest_user_mod:loss", "--x0", "x.npy")
    assert code == 0
    assert "all checks passed" in out and "FAIL" not in out
    code, out, _ = run(capsys, "check", "clitest_user_mod:wrong", "--x0", "x.npy")
    assert code == 1
    assert "FAIL gradient" in out and "MISMATCH" in out


def test_check_compares_the_hessian_with_second_differences_of_f(capsys, workdir):
    # A custom gradient 1.5x too large: its Hessian agrees with differences of that
    # gradient ("ok Hessian" used to be printed); second differences of f disagree.
    code, out, _ = run(capsys, "check", "clitest_user_mod:wrong_custom_gradient", "--x0",
                       "x.npy")
    assert code == 1
    assert "ok   Hessian, all 6x6 entries (FD of gradient)" in out
    assert "FAIL Hessian vs second differences of f" in out
    code, out, _ = run(capsys, "check", "clitest_user_mod:loss", "--x0", "x.npy")
    assert code == 0 and "ok   Hessian vs second differences of f" in out


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


@pytest.mark.slow
def test_analyze_with_dask_workers_matches_exact_spectrum(capsys):
    pytest.importorskip("distributed")
    code = cli.main(["analyze", "quadratic", "--n", "8", "--k", "1", "--probes", "6",
                     "--workers", "2", "--json", "-"])
    assert code == 0
    out = capsys.readouterr().out
    result = json.loads(out)
    np.testing.assert_allclose(result["top_eigenvalues"], result["exact"]["top_eigenvalues"],
                               rtol=1e-8)


@pytest.mark.slow
def test_analyze_with_dask_workers_and_a_module_in_the_working_directory(capsys, workdir):
    # The workers could not import clitest_user_mod (found through this process's working
    # directory only) and the error advised rewriting the function; the module file is now
    # sent to them.
    pytest.importorskip("distributed")
    code, out, err = run(capsys, "analyze", "clitest_user_mod:loss", "--x0", "x.npy",
                         "--k", "1", "--probes", "6", "--workers", "2", "--json", "-")
    assert code == 0, err
    result = json.loads(out)
    H = hg.hessian(sys.modules["clitest_user_mod"].loss)(np.linspace(-1.0, 1.0, 6))
    np.testing.assert_allclose(result["top_eigenvalues"], np.linalg.eigvalsh(H)[-1:],
                               rtol=1e-8)


README = pathlib.Path(__file__).resolve().parent.parent / "README.md"

# The user module the README's commands name (any scalar function of a flat vector).
MYMODULE = '''
import hessgrad.numpy as hnp

def loss(x):
    return hnp.sum(hnp.sin(x) * x ** 2) + 0.5 * hnp.sum(x[:-1] * x[1:]) + hnp.sum(x ** 4)
'''


def readme_commands():
    """The command lines of the README's section "The `hessgrad` command"."""
    section = README.read_text().split("## The `hessgrad` command", 1)[1]
    block = section.split("\n## ", 1)[0].split("```", 2)[1]
    return [shlex.split(line.split("#", 1)[0]) for line in block.strip().splitlines()]


README_COMMANDS = readme_commands()


def test_readme_lists_the_commands():
    assert len(README_COMMANDS) >= 5
    assert all(argv[0] == "hessgrad" for argv in README_COMMANDS)
    assert {argv[1] for argv in README_COMMANDS} == {"analyze", "check", "bench"}


@pytest.mark.parametrize("argv", README_COMMANDS, ids=" ".join)
def test_readme_command_runs_as_shown(argv, capsys, tmp_path, monkeypatch):
    # Every command of the README, at the sizes it shows, from a directory holding the
    # mymodule.py and x.npy it names.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mymodule", raising=False)
    (tmp_path / "mymodule.py").write_text(MYMODULE)
    np.save(tmp_path / "x.npy", np.linspace(-1.0, 1.0, 10))
    code, out, err = run(capsys, *argv[1:])
    if "--plot" in argv and not cli._has_matplotlib():
        # Documented: --plot needs the plot extra; the rest of the command runs without it.
        assert code == 2 and cli.PLOT_HINT in err
        i = argv.index("--plot")
        argv = argv[:i] + argv[i + 2:]
        code, out, err = run(capsys, *argv[1:])
    assert code == 0, out + err
    if argv[1] == "analyze":
        assert "cost" in out and "MISMATCH" not in out and "Traceback" not in err
        if "--json" in argv:
            result = json.loads((tmp_path / argv[argv.index("--json") + 1]).read_text())
            assert result["contradictions"] == [] and result["n"] == 10
        if "--plot" in argv:
            assert (tmp_path / argv[argv.index("--plot") + 1]).stat().st_size > 1000
    elif argv[1] == "check":
        assert "all checks passed" in out
    else:
        assert "x fastest" in out
    sys.modules.pop("mymodule", None)


def test_version_flag_prints_the_package_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"hessgrad {hg.__version__}"
