"""The ``hessgrad`` command: ``analyze`` a Hessian, ``bench`` engines, ``check`` derivatives.

``main(argv)`` returns the exit code (0 success, 1 a check or benchmark found a numerical
mismatch, 2 bad input a user can fix), so tests can run it in-process::

    hessgrad analyze                          # Hessian analytics on the built-in mlp problem
    hessgrad analyze quadratic --n 200 --k 3  # estimates printed beside the exact values
    hessgrad analyze mymodule:loss --x0 x.npy --json out.json --plot density.png
    hessgrad check mymodule:loss --x0 x.npy   # gradient and Hessian vs finite differences
    hessgrad bench --quick                    # hessgrad vs autograd / JAX / PyTorch

>>> main(["analyze", "nonesuch"])
2
"""

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np

DEFAULT_PROBLEM = "mlp"
PLOT_HINT = "pip install 'hessgrad[plot]'"


class UsageError(Exception):
    """Bad input the user can fix: printed as ``hessgrad: error: ...``, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors raise UsageError instead of exiting (so main() returns 2)."""

    def error(self, message):
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


# --------------------------------------------------------------------------- targets

class Target:
    """What to analyze: a function of a flat vector, its point, and known facts."""

    def __init__(self, label, fun, x0, description="", exact=None, problem=None):
        self.label, self.fun, self.x0 = label, fun, x0
        self.description = description
        self.exact = exact or {}
        self.problem = problem


def _problem_names():
    from . import problems

    return problems.names()


def load_callable(spec):
    """Import ``module:function`` (or ``path/to/file.py:function``; dotted attributes allowed).

    Raises:
        UsageError: the module cannot be imported (not found, or importing it raised), the
            attribute is missing, or it is not callable; the message says which.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"expected module:function, got {spec!r}")
    if module_name.endswith(".py"):
        if not os.path.isfile(module_name):
            raise UsageError(f"cannot import {module_name!r}: no such file")
        mod_spec = importlib.util.spec_from_file_location(
            os.path.splitext(os.path.basename(module_name))[0], module_name)
        module = importlib.util.module_from_spec(mod_spec)
        importer = lambda: mod_spec.loader.exec_module(module)  # noqa: E731
    else:
        module = None
        importer = None
    # As `python -m`, let modules in the current directory be found.
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        if importer is not None:
            importer()
        else:
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UsageError(
                f"cannot import {module_name!r}: module not found (run hessgrad from the "
                f"directory that contains it, add that directory to PYTHONPATH, or pass a "
                f"file path such as path/to/{module_name.split('.')[-1]}.py:{attr})") from None
        raise UsageError(f"importing {module_name!r} failed: {e} (a module it imports is "
                         f"not installed)") from None
    except Exception as e:  # the user's module raised while being imported
        raise UsageError(f"importing {module_name!r} raised {type(e).__name__}: {e}") from None
    finally:
        if added:
            sys.path.remove(os.getcwd())
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            available = sorted(k for k, v in vars(module).items()
                               if callable(v) and not k.startswith("_")
                               and getattr(v, "__module__", None) == module.__name__)
            hint = (f"; callables defined there: {', '.join(available)}" if available
                    else "; it defines no public functions")
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        kind = type(obj).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise UsageError(f"{spec!r} is {article} {kind}, not a callable function of a flat "
                         f"vector")
    return obj


def load_x0(path, expected_n=None, what="the function"):
    """Load a real 1-D starting point from a ``.npy`` (or single-array ``.npz``) file."""
    shape_hint = f"shape ({expected_n},)" if expected_n is not None else "shape (n,)"
    howto = f"save a float64 array of {shape_hint} with numpy.save({path!r}, x)"
    if not os.path.isfile(path):
        raise UsageError(f"--x0: no such file {path!r}; {howto}")
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as e:
        raise UsageError(f"--x0: cannot read {path!r} as a .npy file ({e}); {howto}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        keys = list(data.keys())
        if len(keys) != 1:
            raise UsageError(f"--x0: {path!r} holds {len(keys)} arrays ({', '.join(keys)}); "
                             f"expected one array of {shape_hint}")
        data = data[keys[0]]
    x = np.asarray(data)
    if x.dtype.kind not in "biuf":
        raise UsageError(f"--x0: {path!r} holds a {x.dtype} array; expected real numbers "
                         f"(float64) of {shape_hint}")
    if x.ndim != 1 or x.size == 0 or (expected_n is not None and x.shape != (expected_n,)):
        raise UsageError(f"--x0: {path!r} holds an array of shape {x.shape}; {what} expects "
                         f"a 1-D array of {shape_hint}")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise UsageError(f"--x0: {path!r} contains NaN or infinite entries")
    return x


def resolve_target(spec, x0_path=None, n=None, seed=0, **options):
    """A built-in problem name or ``module:function`` -> :class:`Target`."""
    from . import problems

    spec = spec or DEFAULT_PROBLEM
    if ":" not in spec:
        if spec not in problems.names():
            raise UsageError(f"unknown problem {spec!r}; known problems: "
                             f"{', '.join(problems.names())} (or pass module:function "
                             f"with --x0 FILE.npy)")
        x0 = None
        if x0_path is not None:
            if n is None and spec != "mlp":
                x0 = load_x0(x0_path, None, f"problem {spec!r}")
                n = x0.size
            else:
                expected = n if n is not None else problems.get(spec, seed=seed, **options).n
                x0 = load_x0(x0_path, expected, f"problem {spec!r}"
                             + (f" (--n {n})" if n is not None else ""))
        try:
            problem = problems.get(spec, n=n, seed=seed, **options)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return Target(spec, problem.fun, problem.x0 if x0 is None else x0,
                      problem.description, problem.exact if x0 is None else {}, problem)
    if n is not None:
        raise UsageError("--n applies to built-in problems only; for module:function the "
                         "size is that of --x0")
    fun = load_callable(spec)
    if x0_path is None:
        raise UsageError(f"{spec} needs a point: pass --x0 FILE.npy (a 1-D float64 array "
                         f"saved with numpy.save)")
    x0 = load_x0(x0_path, None, spec)
    return Target(spec, fun, x0, f"user function {spec}")


def _evaluate(target):
    """f(x0) as a float, with actionable errors for a function that does not fit."""
    try:
        value = target.fun(target.x0)
    except Exception as e:
        raise UsageError(f"calling {target.label}(x0) with x0 of shape {target.x0.shape} "
                         f"raised {type(e).__name__}: {e}") from None
    shape = np.shape(value.numpy() if hasattr(value, "numpy") else value)
    if shape != ():
        raise UsageError(f"{target.label} must return a scalar, but returned shape {shape}")
    value = float(value.numpy() if hasattr(value, "numpy") else value)
    return value


def _differentiate(what, target, thunk):
    try:
        return thunk()
    except UsageError:
        raise
    except Exception as e:
        raise UsageError(f"{what} of {target.label} failed: {type(e).__name__}: {e} (write "
                         f"the function with hessgrad.numpy, e.g. `import hessgrad.numpy as "
                         f"hnp`)") from None


# --------------------------------------------------------------------------- output helpers

def _fmt(x):
    if x is None:
        return "-"
    if isinstance(x, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    return f"{x:.6g}"


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else str(x)   # strict JSON has no inf / nan
    return x


def _write_json(path, payload, out):
    text = json.dumps(_jsonable(payload), indent=2)
    if path == "-":
        out.write(text + "\n")
        return
    try:
        with open(path, "w") as fh:
            fh.write(text + "\n")
    except OSError as e:
        raise UsageError(f"--json: cannot write {path!r}: {e.strerror}") from None
    print(f"wrote {path}", file=sys.stderr)


def _has_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


# --------------------------------------------------------------------------- analyze

def analyze(args, out):
    """``hessgrad analyze``; with ``--workers N`` the Hessian-vector products run on a local
    Dask cluster of N worker processes (``hessgrad.distributed``)."""
    if not getattr(args, "workers", None):
        return _analyze(args, out, None)
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    try:
        import distributed  # noqa: F401 - only to give the install hint early
    except ImportError:
        print("hessgrad: error: --workers needs Dask; install it with "
              "pip install 'hessgrad[distributed]'", file=sys.stderr)
        return 2
    from . import distributed as hgd

    def distributed_operator(target, x0):
        objective = hgd.replicated(target.fun, workers=args.workers)
        return objective, objective.hessian_operator(x0)
    return _analyze(args, out, distributed_operator)


def _analyze(args, out, distributed_operator):
    from . import HessianOperator, grad

    if args.plot and not _has_matplotlib():
        print(f"hessgrad: error: --plot needs matplotlib, which is not installed; "
              f"{PLOT_HINT}", file=sys.stderr)
        return 2
    if args.k < 1:
        raise UsageError(f"--k must be >= 1, got {args.k}")
    if args.probes < 3:
        raise UsageError(f"--probes must be >= 3 (Hutch++ needs three blocks), got "
                         f"{args.probes}")
    start = time.perf_counter()
    target = resolve_target(args.target, args.x0, args.n, args.seed)
    x0, n = target.x0, target.x0.size
    exact = target.exact
    k = min(args.k, n)
    value = _evaluate(target)
    g = _differentiate("the gradient", target, lambda: np.asarray(grad(target.fun)(x0)))
    if distributed_operator is None:
        H = _differentiate("the Hessian-vector product", target,
                           lambda: HessianOperator(target.fun, x0))
        return _report(args, out, target, x0, n, exact, k, value, g, H, start)
    cluster, H = distributed_operator(target, x0)
    with cluster:
        return _report(args, out, target, x0, n, exact, k, value, g, H, start)


# Up to this size the matrix-free estimates are printed beside the exact values of the
# dense Hessian (one batched computation and an eigvalsh: milliseconds at n = 353).
DENSE_REFERENCE_MAX = 2000
# Restarts of the H^2 Lanczos for an interior min|eigenvalue| (about 20 HVPs each): past a
# few hundred HVPs a Hessian with eigenvalues clustered at 0 is not resolved anyway.
CONDITION_RESTARTS = 50


def _dense_reference(target, x0, threshold):
    """Eigenvalues, trace, condition number and count below ``threshold`` of the dense
    Hessian at ``x0``, to check the estimates against."""
    from . import hessian

    n = x0.size
    h = np.asarray(hessian(target.fun)(x0)).reshape(n, n)
    lam = np.linalg.eigvalsh((h + h.T) / 2)
    smallest = np.min(np.abs(lam))
    return {"eigenvalues": lam, "trace": float(np.trace(h)),
            "condition_number": float(np.max(np.abs(lam)) / smallest) if smallest > 0
            else float("inf"),
            "negative_count": int(np.sum(lam < threshold))}


def _report(args, out, target, x0, n, exact, k, value, g, H, start):
    import solvers

    from . import HessianOperator

    _differentiate("the Hessian-vector product", target, lambda: H.matvec(np.ones(n)))
    result = {"target": target.label, "description": target.description, "n": n,
              "seed": args.seed, "value": value, "grad_norm": float(np.linalg.norm(g))}

    def eigs(which):
        try:
            return solvers.eigsh(H, k=k, which=which, tol=1e-10, rng=args.seed,
                                 return_eigenvectors=False)
        except RuntimeError as e:   # EigshNoConvergence: report what converged
            print(f"warning: {e}", file=sys.stderr)
            return None

    top, bottom = eigs("LA"), eigs("SA")
    result["top_eigenvalues"] = None if top is None else top[::-1]
    result["bottom_eigenvalues"] = bottom
    tr = solvers.hutchpp(H, args.probes, rng=args.seed)
    result["trace"] = {"estimate": tr.trace, "std_error": tr.std_error,
                       "num_matvecs": tr.num_matvecs, "method": "Hutch++"}
    # For an indefinite Hessian min|lambda| is interior: Lanczos on H^2, which may not
    # converge when many eigenvalues cluster at 0 (neural nets); cap its cost and report
    # the guaranteed lower bound when it stops unconverged.
    cond = solvers.condition_number_estimate(H, tol=1e-8, maxiter=CONDITION_RESTARTS,
                                             rng=args.seed, full_output=True)
    result["condition_number"] = cond.condition_number
    result["condition_lower_bound"] = cond.lower_bound
    result["condition_note"] = None if cond.success else (
        f">= {_fmt(cond.lower_bound)} (lower bound: min|eigenvalue| is interior and "
        f"unresolved after {cond.nmatvec} HVPs)")
    # One stochastic Lanczos quadrature run gives the count below the threshold (what
    # solvers.negative_eigenvalue_count computes), the mass near it, and the plot.
    steps = min(40, n)
    density = solvers.spectral_density(H, num_probes=20, lanczos_steps=steps, rng=args.seed)
    t = args.threshold
    est, err = density.trace(lambda x: (x < t).astype(np.float64), return_std_error=True)
    lo = bottom[0] if bottom is not None else float(np.min(density.nodes))
    hi = top[-1] if top is not None else float(np.max(density.nodes))
    resolution = (hi - lo) / (2 * steps)   # about half the spacing of the quadrature nodes
    near = density.trace(lambda x: (np.abs(x - t) < resolution).astype(np.float64))
    result["negative_count"] = {"estimate": est, "std_error": err, "threshold": t,
                                "resolution": resolution, "near_threshold": near,
                                "method": "stochastic Lanczos quadrature"}
    result["hvp_count"] = H.nmatvec
    result["seconds"] = time.perf_counter() - start

    if "eigenvalues" not in exact and n <= DENSE_REFERENCE_MAX and isinstance(H, HessianOperator):
        exact = {**_dense_reference(target, x0, args.threshold), **exact}
    known = {}
    if "eigenvalues" in exact:
        lam = np.sort(exact["eigenvalues"])
        known["top_eigenvalues"] = lam[::-1][:k]
        known["bottom_eigenvalues"] = lam[:k]
    for key in ("trace", "condition_number", "negative_count"):
        if key in exact:
            known[key] = exact[key]
    if known:
        result["exact"] = known

    _print_analysis(result, known, k, out)
    if args.plot:
        _plot_density(density, result, exact, args.plot, target)
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        _write_json(args.json, result, out)
    return 0


def _print_analysis(r, known, k, out):
    def row(label, estimate, exact_value=None):
        line = f"  {label:<34} {estimate}"
        if exact_value is not None:
            line += f"\n  {'':<34} exact: {exact_value}"
        print(line, file=out)

    desc = f" -- {r['description']}" if r["description"] else ""
    print(f"hessgrad analyze: {r['target']}{desc} (n={r['n']}, seed={r['seed']})", file=out)
    row("f(x0)", _fmt(r["value"]))
    row("||grad f(x0)||", _fmt(r["grad_norm"]))
    row(f"top-{k} eigenvalues (eigsh LA)", _fmt(r["top_eigenvalues"]),
        _fmt(known["top_eigenvalues"]) if "top_eigenvalues" in known else None)
    row(f"bottom-{k} eigenvalues (eigsh SA)", _fmt(r["bottom_eigenvalues"]),
        _fmt(known["bottom_eigenvalues"]) if "bottom_eigenvalues" in known else None)
    tr = r["trace"]
    row(f"trace (Hutch++, {tr['num_matvecs']} HVPs)",
        f"{_fmt(tr['estimate'])} +/- {_fmt(tr['std_error'])} (std. error)",
        _fmt(known.get("trace")) if "trace" in known else None)
    row("condition number max|l|/min|l|", r["condition_note"] or _fmt(r["condition_number"]),
        _fmt(known.get("condition_number")) if "condition_number" in known else None)
    neg = r["negative_count"]
    below = "negative eigenvalues" if neg["threshold"] == 0 else \
        f"eigenvalues < {neg['threshold']:g}"
    caveat = ""
    if neg["near_threshold"] >= 0.25 * r["n"]:   # a large cluster at the threshold
        caveat = (f"\n  {'':<34} unreliable: ~{neg['near_threshold']:.0f} eigenvalues lie "
                  f"within the SLQ resolution {neg['resolution']:.2g} of {neg['threshold']:g}")
    row(f"{below} (SLQ)", f"{neg['estimate']:.2f} +/- {_fmt(neg['std_error'])}{caveat}",
        _fmt(known.get("negative_count")) if "negative_count" in known else None)
    if "top_eigenvalues" in known and r["top_eigenvalues"] is not None:
        errs = [np.max(np.abs(np.asarray(r[key]) - known[key]))
                for key in ("top_eigenvalues", "bottom_eigenvalues") if r[key] is not None]
        row("max eigenvalue error vs exact", _fmt(max(errs)))
    row("cost", f"{r['hvp_count']} Hessian-vector products, {r['seconds']:.2f} s")


def _plot_density(density, result, exact, path, target):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo = float(np.min(density.nodes))
    hi = float(np.max(density.nodes))
    span = max(hi - lo, 1e-12)
    grid = np.linspace(lo - 0.05 * span, hi + 0.05 * span, 800)
    sigma = span / 100.0
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(grid, density.density(grid, sigma), lw=1.5, label="SLQ density estimate")
    if "eigenvalues" in exact:
        ax.plot(exact["eigenvalues"], np.zeros_like(exact["eigenvalues"]), "|", ms=12,
                color="k", label="exact eigenvalues")
    ax.set_xlabel("eigenvalue")
    ax.set_ylabel("density")
    ax.set_title(f"Hessian spectral density: {target.label} (n={result['n']})")
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    except OSError as e:
        raise UsageError(f"--plot: cannot write {path!r}: {e}") from None
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- check

def _fd_step(x):
    # Central differences: truncation ~ h^2, rounding ~ eps / h; h ~ eps^(1/3) balances them.
    return np.finfo(np.float64).eps ** (1 / 3) * np.maximum(1.0, np.abs(x))


def check(args, out):
    from . import grad, hessian, hvp

    if not args.rtol > 0 or not args.atol >= 0:
        raise UsageError(f"--rtol must be > 0 and --atol >= 0, got {args.rtol}, {args.atol}")
    target = resolve_target(args.target, args.x0, args.n, args.seed)
    f, x0, n = target.fun, target.x0, target.x0.size
    _evaluate(target)
    fval = lambda x: float(np.asarray(f(x)))  # noqa: E731
    g = _differentiate("the gradient", target, lambda: np.asarray(grad(f)(x0), np.float64))
    gradf = grad(f)
    h = _fd_step(x0)
    rng = np.random.default_rng(args.seed)
    full = n <= args.max_full
    print(f"hessgrad check: {target.label} at x0 of shape {x0.shape} "
          f"(central differences, rtol={args.rtol:g}, atol={args.atol:g})", file=out)
    failures = []

    def report(name, exact, approx):
        exact, approx = np.asarray(exact, np.float64), np.asarray(approx, np.float64)
        err = float(np.max(np.abs(exact - approx))) if exact.size else 0.0
        scale = float(np.max(np.abs(approx))) if approx.size else 0.0
        ok = bool(np.all(np.isfinite(exact))) and err <= args.atol + args.rtol * scale
        print(f"  {'ok  ' if ok else 'FAIL'} {name:<44} max abs error {err:.3g} "
              f"(scale {scale:.3g})", file=out)
        if not ok:
            failures.append(name)

    if full:
        fd = np.empty(n)
        for i in range(n):
            e = np.zeros(n)
            e[i] = h[i]
            fd[i] = (fval(x0 + e) - fval(x0 - e)) / (2 * h[i])
        report(f"gradient, all {n} coordinates", g, fd)
    else:
        V = rng.standard_normal((n, args.directions))
        hv = float(np.min(h))
        fd = [(fval(x0 + hv * v) - fval(x0 - hv * v)) / (2 * hv) for v in V.T]
        report(f"gradient, {args.directions} random directions", g @ V, fd)

    def attempt(name, thunk):
        # After the value and gradient worked, a failing second derivative is a finding.
        try:
            return thunk()
        except Exception as e:
            print(f"  FAIL {name}: {type(e).__name__}: {e}", file=out)
            failures.append(name)
            return None

    if full:
        H = attempt("Hessian", lambda: np.asarray(hessian(f)(x0)))
    if full and H is not None:
        Hfd = np.empty((n, n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = h[j]
            Hfd[:, j] = (np.asarray(gradf(x0 + e)) - np.asarray(gradf(x0 - e))) / (2 * h[j])
        report(f"Hessian, all {n}x{n} entries (FD of gradient)", H, Hfd)
        report("Hessian symmetry", H, H.T)
        V = rng.standard_normal((n, args.directions))
        report(f"Hessian-vector products, {args.directions} directions",
               np.column_stack([hvp(f)(x0, v) for v in V.T]), H @ V)
    elif not full:
        V = rng.standard_normal((n, args.directions))
        hv = float(np.min(h))
        HV = attempt("Hessian-vector products",
                     lambda: np.column_stack([hvp(f)(x0, v) for v in V.T]))
        if HV is not None:
            fd = np.column_stack([(np.asarray(gradf(x0 + hv * v))
                                   - np.asarray(gradf(x0 - hv * v))) / (2 * hv) for v in V.T])
            report(f"Hessian-vector products, {args.directions} directions", HV, fd)
    if failures:
        print(f"MISMATCH in {len(failures)} check(s): {', '.join(failures)}", file=out)
        return 1
    print("all checks passed", file=out)
    return 0


# --------------------------------------------------------------------------- bench

def bench(args, out):
    from . import bench as _bench

    return _bench.run(args, out)


# --------------------------------------------------------------------------- parser

def build_parser():
    names = ", ".join(_problem_names())
    parser = _Parser(
        prog="hessgrad",
        description="Second-order analytics for numpy-style functions: Hessian spectra, "
                    "derivative checks and engine benchmarks.",
        epilog="Exit codes: 0 success, 1 a numerical mismatch was found (check, bench), "
               "2 bad input. Run 'hessgrad COMMAND --help' for details.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    target_help = (f"a built-in problem ({names}; default: {DEFAULT_PROBLEM}) or "
                   f"module:function (a scalar function of a flat float64 vector, written "
                   f"with hessgrad.numpy; also path/to/file.py:function)")
    a = sub.add_parser(
        "analyze", help="Hessian eigenvalues, trace, condition number, negative curvature",
        description="Analyze the Hessian at a point, matrix-free (Hessian-vector products "
                    "only): gradient norm, top-k and bottom-k eigenvalues (Lanczos), trace "
                    "(Hutch++) with its standard error, condition number, number of negative "
                    "eigenvalues (stochastic Lanczos quadrature), optionally a spectral-"
                    "density plot. For problems with a known spectrum (quadratic, saddle) "
                    "the exact values are printed beside the estimates.")
    a.add_argument("target", nargs="?", default=DEFAULT_PROBLEM, metavar="PROBLEM|module:function",
                   help=target_help)
    a.add_argument("--x0", metavar="FILE.npy", help="point to analyze (numpy.save of a 1-D "
                   "float array); required for module:function, default for problems: the "
                   "problem's x0")
    a.add_argument("--n", type=int, help="size of a built-in problem (default: its own)")
    a.add_argument("--workers", type=int, default=None, help="run the Hessian-vector products "
                   "on a local Dask cluster of this many worker processes (needs "
                   "'hessgrad[distributed]')")
    a.add_argument("--k", type=int, default=5, help="number of top and of bottom eigenvalues "
                   "(default 5)")
    a.add_argument("--probes", type=int, default=60, help="Hutch++ budget in Hessian-vector "
                   "products (default 60)")
    a.add_argument("--seed", type=int, default=0, help="seed of the problem data and of the "
                   "random probes (default 0)")
    a.add_argument("--threshold", type=float, default=0.0, help="count eigenvalues below "
                   "this value (default 0: negative curvature)")
    a.add_argument("--plot", metavar="FILE.png", help=f"save a spectral-density plot (needs "
                   f"matplotlib: {PLOT_HINT})")
    a.add_argument("--json", metavar="FILE", help="also write the results as JSON ('-' for "
                   "stdout)")
    a.set_defaults(func=analyze)

    c = sub.add_parser(
        "check", help="check a function's gradient and Hessian against finite differences",
        description="Check hessgrad's gradient and Hessian of your function against central "
                    "finite differences at --x0. Small problems (n <= --max-full) are checked "
                    "entry by entry, larger ones along random directions. Exit code 1 on a "
                    "mismatch.")
    c.add_argument("target", metavar="module:function|PROBLEM", help=target_help)
    c.add_argument("--x0", metavar="FILE.npy", help="the point (1-D float array saved with "
                   "numpy.save); required for module:function")
    c.add_argument("--n", type=int, help="size of a built-in problem")
    c.add_argument("--seed", type=int, default=0, help="seed of random directions")
    c.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (default 1e-5)")
    c.add_argument("--atol", type=float, default=1e-7, help="absolute tolerance (default 1e-7)")
    c.add_argument("--directions", type=int, default=5, help="random directions for large n "
                   "(default 5)")
    c.add_argument("--max-full", type=int, default=100, help="check every entry up to this n "
                   "(default 100)")
    c.set_defaults(func=check)

    b = sub.add_parser(
        "bench", help="time value/grad/hvp/hessian across autodiff engines",
        description="Time value, gradient, Hessian-vector product and Hessian of the built-in "
                    "problems in hessgrad (eager and hg.function), autograd, JAX (jit) and "
                    "PyTorch (torch.func), whichever are installed, next to hand-written numpy "
                    "references. All engines are first checked to agree numerically; the "
                    "table shows medians and ratios to the fastest engine and to numpy. BLAS "
                    "and the engines run single-threaded.")
    b.add_argument("--problems", default="rosenbrock,logistic",
                   help="comma-separated problems (default rosenbrock,logistic)")
    b.add_argument("--ops", default="value,grad,hvp,hessian",
                   help="comma-separated subset of value,grad,hvp,hessian")
    b.add_argument("--engines", default=None,
                   help="comma-separated subset of hessgrad,hessgrad-function,autograd,jax,"
                        "torch,numpy (default: all installed)")
    b.add_argument("--n", type=int, help="problem size (default: 100, --quick: 50)")
    b.add_argument("--quick", action="store_true",
                   help="small sizes (n=50), 5 samples per cell (~15 s)")
    b.add_argument("--repeats", type=int, default=None, help="timing samples per cell")
    b.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    b.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    b.set_defaults(func=bench)
    return parser


def main(argv=None):
    """Run the ``hessgrad`` command; returns the exit code."""
    out = sys.stdout
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:     # --help
            return int(e.code or 0)
        if args.command is None:
            parser.print_help(out)
            return 2
        if args.command == "bench" and argv is None:
            _bench_reexec()
        return args.func(args, out)
    except UsageError as e:
        print(f"hessgrad: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hessgrad: interrupted", file=sys.stderr)
        return 130


def _bench_reexec():
    """Re-run the command with single-threaded BLAS before numpy loads its BLAS.

    numpy is already imported when this module runs (it is imported by ``hessgrad``), and
    OpenBLAS/MKL read their thread counts at load time, so the environment variables only
    take effect in a fresh process. In-process callers (tests) get threadpoolctl instead.
    """
    from .bench import SINGLE_THREAD_ENV

    if os.environ.get("HESSGRAD_BENCH_CHILD") == "1":
        return
    if all(os.environ.get(k) == v for k, v in SINGLE_THREAD_ENV.items()):
        return
    env = dict(os.environ, HESSGRAD_BENCH_CHILD="1", **SINGLE_THREAD_ENV)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, "-m", "hessgrad", *sys.argv[1:]], env)
    except OSError:
        pass        # fall back to threadpoolctl in-process


if __name__ == "__main__":
    sys.exit(main())
