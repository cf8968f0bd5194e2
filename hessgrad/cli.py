"""The ``hessgrad`` command: ``analyze`` a Hessian, ``bench`` engines, ``check`` derivatives.

``main(argv)`` returns the exit code (0 success, 1 a check or benchmark found a numerical
mismatch, or an analyze estimate contradicts its exact value, 2 bad input a user can fix),
so tests can run it in-process::

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

    def __init__(self, label, fun, x0, description="", exact=None, problem=None,
                 module_file=None):
        self.label, self.fun, self.x0 = label, fun, x0
        self.description = description
        self.exact = exact or {}
        self.problem = problem
        self.module_file = module_file   # the user's .py file, shipped to Dask workers


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
    return Target(spec, fun, x0, f"user function {spec}", module_file=_module_file(spec))


def _module_file(spec):
    """The single-file module that ``module:function`` came from (None for a package or
    an installed module, which the workers import themselves)."""
    module_name = spec.partition(":")[0]
    if module_name.endswith(".py"):
        return os.path.abspath(module_name)
    path = getattr(sys.modules.get(module_name), "__file__", None) or ""
    if not path.endswith(".py") or os.path.basename(path) == "__init__.py":
        return None
    if "site-packages" in path or "dist-packages" in path:
        return None
    return path


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
    if not math.isfinite(value):
        raise UsageError(f"f(x0) is {value}: {target.label} is not finite at the point "
                         f"(x0 of shape {target.x0.shape}); choose a point where it is, or "
                         f"fix the function")
    return value


def _check_finite(what, target, values):
    """Raise UsageError if ``values`` (a gradient, a product) has NaN or inf entries."""
    bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
    if bad:
        raise UsageError(f"{what} of {target.label} at x0 has {bad} non-finite (nan or inf) "
                         f"entr{'y' if bad == 1 else 'ies'}, although f(x0) is finite")
    return values


def _differentiate(what, target, thunk):
    try:
        return thunk()
    except UsageError:
        raise
    except ModuleNotFoundError as e:
        raise UsageError(f"{what} of {target.label} failed: module {e.name!r} not found "
                         f"where the products run (with --workers: on the Dask workers; "
                         f"install it there, or keep what the function needs in its own "
                         f"file, which hessgrad sends to the workers)") from None
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


def write_json(path, payload, out):
    """Write ``payload`` as JSON to ``path`` ('-': to ``out``) for ``--json``."""
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
        # The user's module file travels with the objective: the workers cannot import it
        # from this process's working directory.
        modules = [target.module_file] if target.module_file else []
        objective = hgd.replicated(target.fun, workers=args.workers, modules=modules)
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
    if not 0 < args.level < 1:
        raise UsageError(f"--level must be between 0 and 1, got {args.level}")
    if args.max_hvps < 1:
        raise UsageError(f"--max-hvps must be >= 1, got {args.max_hvps}")
    start = time.perf_counter()
    target = resolve_target(args.target, args.x0, args.n, args.seed)
    x0 = target.x0
    value = _evaluate(target)
    g = _differentiate("the gradient", target, lambda: np.asarray(grad(target.fun)(x0)))
    _check_finite("the gradient", target, g)
    # With --json - stdout carries the JSON only: the table goes to stderr.
    table = sys.stderr if args.json == "-" else out
    if distributed_operator is None:
        H = _differentiate("the Hessian-vector product", target,
                           lambda: HessianOperator(target.fun, x0))
        return _report(args, out, table, target, value, g, H, start, dense=True)
    cluster, H = distributed_operator(target, x0)
    with cluster:
        return _report(args, out, table, target, value, g, H, start, dense=False)


# Up to this size the matrix-free estimates are printed beside the exact values of the
# dense Hessian (one batched computation and an eigvalsh: milliseconds at n = 353).
DENSE_REFERENCE_MAX = 2000
# Accuracy granted to the dense reference, relative to max|eigenvalue| (its Hessian comes
# from a different computation than the products; both are exact up to rounding).
REFERENCE_RTOL = 1e-9


# A stage that runs longer than this prints a progress line on stderr this often.
PROGRESS_SECONDS = 2.0


class _Counted:
    """The Hessian operator with a product counter and, for a stage that takes longer, a
    progress line on stderr every PROGRESS_SECONDS."""

    def __init__(self, H, n, quiet):
        self.H, self.shape, self.dtype = H, (n, n), np.dtype(np.float64)
        self.nmatvec, self.quiet = 0, quiet
        self.stage, self.stage_start, self.stage_count, self.shown = "", 0.0, 0, 0.0

    def begin(self, stage):
        self.stage, self.stage_count = stage, self.nmatvec
        self.stage_start = self.shown = time.perf_counter()

    def _tick(self):
        now = time.perf_counter()
        if not self.quiet and now - self.shown >= PROGRESS_SECONDS:
            self.shown = now
            print(f"hessgrad: {self.stage}: {self.nmatvec - self.stage_count} HVPs, "
                  f"{now - self.stage_start:.1f} s", file=sys.stderr, flush=True)

    def matvec(self, v):
        self.nmatvec += 1
        self._tick()
        return np.asarray(self.H.matvec(v), dtype=np.float64)

    def matmat(self, V):
        self.nmatvec += V.shape[1]
        self._tick()
        return np.asarray(self.H.matmat(V), dtype=np.float64)


class _Table:
    """The report's rows, printed as soon as each is computed."""

    def __init__(self, stream):
        self.stream = stream

    def row(self, label, estimate, *notes):
        print(f"  {label:<34} {estimate}", file=self.stream)
        for note in notes:
            if note:
                print(f"  {'':<34} {note}", file=self.stream)
        self.stream.flush()


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


def _exact_facts(args, target, x0, dense, progress):
    """What is known exactly: the problem's facts, else (n <= DENSE_REFERENCE_MAX) the
    dense Hessian's."""
    exact = dict(target.exact)
    if "eigenvalues" not in exact and dense and x0.size <= DENSE_REFERENCE_MAX:
        progress.begin("dense Hessian for the exact column")
        exact = {**_dense_reference(target, x0, args.threshold), **exact}
    if "eigenvalues" in exact:
        lam = np.sort(np.asarray(exact["eigenvalues"], dtype=np.float64))
        exact["eigenvalues"] = lam
        exact.setdefault("negative_count", int(np.sum(lam < args.threshold)))
    return exact


def _report(args, out, table_stream, target, value, g, H, start, dense):
    n = target.x0.size
    probe = _differentiate("the Hessian-vector product", target,
                           lambda: np.asarray(H.matvec(np.ones(n))))
    _check_finite("the Hessian-vector product", target, probe)
    report = _Report(args, target, H, table_stream)
    report.header(value, g)
    report.exact = _exact_facts(args, target, target.x0, dense, report.ops)
    report.eigenvalues("LA")
    report.eigenvalues("SA")
    report.trace()
    report.condition()
    report.count()
    report.summary(start)
    if args.plot:
        report.plot()
    if args.json:
        write_json(args.json, report.result, out)
    return 1 if report.contradictions else 0


class _Report:
    """The rows of ``hessgrad analyze``: each estimate computed, checked against the exact
    value when known, printed, and kept for the JSON."""

    def __init__(self, args, target, H, stream):
        from hessgrad import solvers

        self.solvers, self.args, self.target = solvers, args, target
        self.n = target.x0.size
        self.k = min(args.k, self.n)
        self.ops = _Counted(H, self.n, args.quiet)
        self.table = _Table(stream)
        self.exact, self.contradictions = {}, []
        self.result = {"target": target.label, "description": target.description,
                       "n": self.n, "seed": args.seed, "level": args.level,
                       "max_hvps": args.max_hvps}

    def checked(self, name, found):
        """Record a contradiction (the reason ``found``, or None) and word its note."""
        if not found:
            return None
        self.contradictions.append(f"{name}: {found}")
        return f"CONTRADICTS the exact value: {found}"

    def header(self, value, g):
        t = self.target
        print(f"hessgrad analyze: {t.label}{f' -- {t.description}' if t.description else ''} "
              f"(n={self.n}, seed={self.args.seed})", file=self.table.stream)
        self.result.update(value=value, grad_norm=float(np.linalg.norm(g)))
        self.table.row("f(x0)", _fmt(value))
        self.table.row("||grad f(x0)||", _fmt(self.result["grad_norm"]))

    def eigenvalues(self, which):
        label = "top" if which == "LA" else "bottom"
        name = f"{label}-{self.k} eigenvalues (eigsh {which})"
        self.ops.begin(name)
        res = self.solvers.eigsh(self.ops, k=self.k, which=which, tol=1e-10,
                                 rng=_rng(self.args, which), max_matvecs=self.args.max_hvps,
                                 return_eigenvectors=False, full_output=True)
        entry = _eigen_entry(res, descending=which == "LA")
        self.result[f"{label}_eigenvalues"] = entry["values"]
        self.result[f"{label}_eigenvalues_detail"] = entry
        want = _exact_end(self.exact, self.k, which)
        self.table.row(name, _fmt(entry["values"]), _eigen_note(res, self.args.max_hvps),
                       None if want is None else f"exact: {_fmt(want)}",
                       None if want is None else self.checked(
                           f"{label}-{self.k} eigenvalues",
                           _eigen_contradiction(res, self.exact, which)))

    def trace(self):
        args, exact = self.args, self.exact
        self.ops.begin(f"trace (Hutch++, {args.probes} HVPs)")
        tr = self.solvers.hutchpp(self.ops, args.probes, rng=_rng(args, "trace"),
                                  level=args.level)
        self.result["trace"] = {"estimate": tr.trace, "std_error": tr.std_error,
                                "num_matvecs": tr.num_matvecs, "method": "Hutch++",
                                "confidence_interval": list(tr.confidence_interval),
                                "level": tr.level}
        self.table.row(f"trace (Hutch++, {tr.num_matvecs} HVPs)",
                       f"{_fmt(tr.trace)} +/- {_fmt(tr.std_error)} (std. error), "
                       f"{_pct(args.level)} CI {_fmt(list(tr.confidence_interval))}",
                       f"exact: {_fmt(exact['trace'])}" if "trace" in exact else None,
                       self.checked("trace", _outside(exact.get("trace"),
                                                      tr.confidence_interval, "the interval",
                                                      _trace_slack(exact))))

    def condition(self):
        args, exact = self.args, self.exact
        self.ops.begin("condition number (eigsh BE, then min|eigenvalue|)")
        cond = self.solvers.condition_number_estimate(
            self.ops, tol=1e-8, rng=_rng(args, "condition"), max_matvecs=args.max_hvps,
            full_output=True)
        self.result.update(condition_number=cond.condition_number,
                           condition_lower_bound=cond.lower_bound,
                           condition_upper_bound=cond.upper_bound,
                           condition_converged=bool(cond.success),
                           condition_message=cond.message)
        self.table.row("condition number max|l|/min|l|", _condition_text(cond),
                       cond.message if cond.success and cond.message != "converged" else None,
                       None if cond.success else f"not resolved within {args.max_hvps} "
                                                 f"HVPs: {cond.message}",
                       f"exact: {_fmt(exact['condition_number'])}"
                       if "condition_number" in exact else None,
                       self.checked("condition number", _condition_contradiction(cond, exact)))

    def count(self):
        args, exact, t = self.args, self.exact, self.args.threshold
        below = "negative eigenvalues" if t == 0 else f"eigenvalues < {t:g}"
        self.ops.begin(f"{below} (stochastic Lanczos quadrature)")
        # Matrix-free always (dense_max=0): the exact column is the dense count.
        count = self.solvers.negative_eigenvalue_count(
            self.ops, threshold=t, num_probes=20, lanczos_steps=min(40, self.n),
            level=args.level, dense_max=0, rng=_rng(args, "count"))
        self.result["negative_count"] = {
            "estimate": count.estimate, "std_error": count.std_error, "threshold": t,
            "level": count.level, "confidence_interval": list(count.confidence_interval),
            "bias_bound": count.bias_bound, "method": count.method,
            "num_matvecs": count.num_matvecs}
        self.table.row(f"{below} (SLQ)",
                       f"{count.estimate:.2f}, {_pct(args.level)} CI "
                       f"{_fmt(list(count.confidence_interval))} (std. error "
                       f"{_fmt(count.std_error)}, quadrature bias <= "
                       f"{_fmt(count.bias_bound)})",
                       f"exact: {exact['negative_count']}" if "negative_count" in exact
                       else None,
                       self.checked(below, _count_contradiction(count, exact, t)))

    def summary(self, start):
        known = _known(self.exact, self.k)
        if known:
            self.result["exact"] = known
            errs = [np.max(np.abs(np.asarray(self.result[f"{end}_eigenvalues"])
                                  - known[f"{end}_eigenvalues"]))
                    for end in ("top", "bottom") if f"{end}_eigenvalues" in known]
            if errs:
                self.table.row("max eigenvalue error vs exact", _fmt(max(errs)))
        seconds = time.perf_counter() - start
        self.result.update(hvp_count=self.ops.nmatvec, seconds=seconds,
                           contradictions=self.contradictions)
        self.table.row("cost", f"{self.ops.nmatvec} Hessian-vector products, {seconds:.2f} s")
        if self.contradictions:
            print(f"MISMATCH: {len(self.contradictions)} estimate(s) contradict their exact "
                  f"check beyond their stated uncertainty: {'; '.join(self.contradictions)}",
                  file=self.table.stream)

    def plot(self):
        self.ops.begin("spectral density for the plot")
        density = self.solvers.spectral_density(self.ops, num_probes=PLOT_PROBES,
                                                lanczos_steps=min(PLOT_LANCZOS_STEPS, self.n),
                                                rng=_rng(self.args, "plot"))
        _plot_density(density, self.result, self.exact, self.args, self.target)
        print(f"wrote {self.args.plot}", file=sys.stderr)


def _rng(args, use):
    """The random numbers of one estimate: from --seed, but a stream of its own, apart from
    ``default_rng(seed)``, which may well have made the problem's data (a start vector equal
    to a data row lies in the data's span, a special subspace for the Hessian)."""
    uses = ("LA", "SA", "trace", "condition", "count", "plot")
    return np.random.default_rng([args.seed, 1 + uses.index(use)])


def _pct(level):
    return f"{100 * level:g}%"


def _known(exact, k):
    known = {}
    if "eigenvalues" in exact:
        known["top_eigenvalues"] = _exact_end(exact, k, "LA")
        known["bottom_eigenvalues"] = _exact_end(exact, k, "SA")
    for key in ("trace", "condition_number", "negative_count"):
        if key in exact:
            known[key] = exact[key]
    return known


def _exact_end(exact, k, which):
    """The exact top (descending) or bottom (ascending) ``k`` eigenvalues, if known."""
    if "eigenvalues" not in exact:
        return None
    lam = exact["eigenvalues"]
    return lam[::-1][:k] if which == "LA" else lam[:k]


def _eigen_entry(res, descending):
    """eigsh's full result as JSON-ready fields (top ones in descending order)."""
    order = slice(None, None, -1) if descending else slice(None)
    return {"values": res.eigenvalues[order], "residual_norms": res.residual_norms[order],
            "converged": res.converged[order], "intervals": res.intervals[order],
            "checked": res.checked, "missed_then_found": res.missed,
            "num_matvecs": res.nmatvec, "message": res.message}


def _eigen_note(res, budget):
    """What a reader must know about an eigsh row beyond its values."""
    if not res.success:
        rest = [f"{_fmt(w)} +/- {_fmt(r)}" for w, r, c in
                zip(res.eigenvalues, res.residual_norms, res.converged) if not c]
        return (f"not converged within {budget} HVPs: {', '.join(rest)} (each interval "
                f"contains an eigenvalue); the others converged")
    if not res.checked:
        return "converged; the multiplicity check was cut short: a copy may be missing"
    if res.missed:
        return (f"converged; {res.missed} eigenvalue(s) found by the multiplicity check "
                f"(a multiple eigenvalue)")
    return None


def _eigen_contradiction(res, exact, which):
    """Why eigsh's values contradict the exact spectrum, or None.

    Converged: the returned vectors are orthonormal with residuals r_i, so (Kahan) the
    values lie within ||R|| <= sqrt(sum r_i^2) of k eigenvalues; claimed as the extreme k,
    they must be that close to them. Not converged: each interval [theta - r, theta + r]
    must contain an eigenvalue, and the extreme Ritz value bounds the extreme eigenvalue.
    Both up to REFERENCE_RTOL of the spectrum's scale.
    """
    lam = exact.get("eigenvalues")
    if lam is None:
        return None
    k = res.eigenvalues.size
    slack = REFERENCE_RTOL * max(float(np.abs(lam).max()), 1e-300)
    if res.success:
        want = lam[-k:] if which == "LA" else lam[:k]
        err = float(np.max(np.abs(res.eigenvalues - want)))
        bound = float(np.sqrt(np.sum(res.residual_norms ** 2))) + slack
        return (f"max error {_fmt(err)} > residual bound {_fmt(bound)}"
                if err > bound else None)
    for (a, b) in res.intervals:
        if not np.any((lam >= a - slack) & (lam <= b + slack)):
            return f"no eigenvalue in [{_fmt(a)}, {_fmt(b)}]"
    edge = res.eigenvalues[-1] if which == "LA" else res.eigenvalues[0]
    if (which == "LA" and lam[-1] < edge - slack) or (which == "SA" and lam[0] > edge + slack):
        return f"the extreme eigenvalue is beyond the Ritz value {_fmt(edge)}"
    return None


def _outside(value, interval, what, slack=0.0):
    """``value`` (known to ``slack``) outside ``interval``: the reason, else None."""
    if value is None:
        return None
    lo, hi = interval
    if lo - slack <= value <= hi + slack:
        return None
    return f"{_fmt(value)} outside {what} {_fmt([lo, hi])}"


def _trace_slack(exact):
    """The exact trace's own accuracy: REFERENCE_RTOL of the eigenvalues' magnitudes."""
    lam = exact.get("eigenvalues")
    return 0.0 if lam is None else REFERENCE_RTOL * float(np.sum(np.abs(lam)))


def _condition_text(cond):
    bounds = f"bounds [{_fmt(cond.lower_bound)}, {_fmt(cond.upper_bound)}]"
    if cond.success:
        return f"{_fmt(cond.condition_number)} ({bounds})"
    return f">= {_fmt(cond.lower_bound)} (a bound that always holds; {bounds})"


def _condition_contradiction(cond, exact):
    """The exact condition number (up to its own rounding: min|eigenvalue| is known to
    about n eps max|eigenvalue|) outside the estimate's bounds, or None."""
    if "condition_number" not in exact or "eigenvalues" not in exact:
        return None
    lam = np.abs(exact["eigenvalues"])
    big, small = float(lam.max()), float(lam.min())
    fuzz = lam.size * np.finfo(np.float64).eps * big + REFERENCE_RTOL * big
    low = big / (small + fuzz)
    high = big / (small - fuzz) if small > fuzz else math.inf
    rel = 1e-9
    if high < cond.lower_bound * (1 - rel) or low > cond.upper_bound * (1 + rel):
        return (f"{_fmt(exact['condition_number'])} outside the bounds "
                f"{_fmt([cond.lower_bound, cond.upper_bound])}")
    return None


def _count_contradiction(count, exact, threshold):
    """The exact count (eigenvalues within the reference's rounding of the threshold may
    fall either side) outside the estimate's interval, or None."""
    if "eigenvalues" not in exact:
        if "negative_count" in exact:
            return _outside(exact["negative_count"], count.confidence_interval, "the "
                            "interval")
        return None
    lam = exact["eigenvalues"]
    fuzz = REFERENCE_RTOL * max(float(np.abs(lam).max()), 1e-300)
    low, high = int(np.sum(lam < threshold - fuzz)), int(np.sum(lam < threshold + fuzz))
    lo, hi = count.confidence_interval
    if high < lo or low > hi:
        return f"{exact['negative_count']} outside the interval {_fmt([lo, hi])}"
    return None


PLOT_PROBES = 20           # SLQ probes of the density plotted by ``analyze --plot``
PLOT_LANCZOS_STEPS = 40    # Lanczos steps per probe (at most n)


def plot_spectral_density(density, path, *, exact_eigenvalues=None, title=None, log=False,
                          sigma=None, dpi=120, figsize=(7.0, 4.0)):
    """Save a plot of a stochastic-Lanczos-quadrature spectral density (matplotlib, Agg).

    The curve is the Gaussian-broadened SLQ density; a caption under the axes states the
    broadening ``sigma``, the number of probes and of Lanczos steps. Known eigenvalues are
    drawn as a rug of short, thin, semi-transparent ticks at the bottom of the axes, beneath
    the curve.

    Args:
        density: a ``hessgrad.solvers.spectral.SpectralDensity`` (from
            ``solvers.spectral_density``).
        path: file to write; the format follows its suffix (``.png``, ``.pdf``, ``.svg``).
        exact_eigenvalues: eigenvalues to draw as the rug (None: no rug).
        title: the axes' title (default "Hessian spectral density").
        log: density on a logarithmic axis (shows small eigenvalue clusters and tails next
            to a large peak); values below ``1e-8`` of the peak are cut off.
        sigma: width of the Gaussian broadening (default: 1% of the span of the Ritz
            values).
        dpi: resolution of raster output.
        figsize: ``(width, height)`` in inches.
    Returns:
        The ``sigma`` used.
    Raises:
        ValueError: ``dpi`` or a ``figsize`` entry is not positive, or ``sigma <= 0``.
        OSError: ``path`` cannot be written.
    """
    width, height = (float(v) for v in figsize)
    if not (dpi > 0 and width > 0 and height > 0):
        raise ValueError(f"dpi and figsize must be positive, got dpi={dpi}, "
                         f"figsize={figsize}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo = float(np.min(density.nodes))
    hi = float(np.max(density.nodes))
    if exact_eigenvalues is not None and np.size(exact_eigenvalues):
        lo = min(lo, float(np.min(exact_eigenvalues)))
        hi = max(hi, float(np.max(exact_eigenvalues)))
    span = max(hi - lo, 1e-12)
    if sigma is None:
        sigma = span / 100.0
    if not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    grid = np.linspace(lo - 0.05 * span - 3 * sigma, hi + 0.05 * span + 3 * sigma, 1000)
    values = density.density(grid, sigma)
    fig, ax = plt.subplots(figsize=(width, height))
    try:
        ax.plot(grid, values, lw=1.5, color="C0", zorder=3, label="SLQ density estimate")
        if log:
            peak = float(np.max(values)) if np.max(values) > 0 else 1.0
            ax.set_yscale("log")
            ax.set_ylim(peak * 1e-8, peak * 3)
        else:
            ax.set_ylim(bottom=0)
        if exact_eigenvalues is not None and np.size(exact_eigenvalues):
            # x in data units, y in axes units: ticks 4% of the axes high, whatever the scale
            ax.vlines(np.ravel(exact_eigenvalues), 0.0, 0.04, transform=ax.get_xaxis_transform(),
                      colors="k", linewidths=0.6, alpha=0.35, zorder=2,
                      label="exact eigenvalues")
        ax.set_xlabel("eigenvalue")
        ax.set_ylabel("density (log scale)" if log else "density")
        ax.set_title(title or "Hessian spectral density")
        ax.legend(loc="upper right", fontsize="small")
        probes, steps = density.nodes.shape
        caption = (f"SLQ, {probes} probes x {steps} Lanczos steps ({density.num_matvecs} "
                   f"Hessian-vector products); Gaussian broadening sigma = {sigma:.3g}")
        fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize="small",
                 color="0.3", wrap=True)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return sigma


def _plot_density(density, result, exact, args, target):
    try:
        plot_spectral_density(
            density, args.plot, exact_eigenvalues=exact.get("eigenvalues"),
            title=f"Hessian spectral density: {target.label} (n={result['n']})",
            log=args.plot_log, dpi=args.plot_dpi, figsize=args.plot_size)
    except OSError as e:
        raise UsageError(f"--plot: cannot write {args.plot!r}: {e}") from None


def _figsize(text):
    """``--plot-size WxH`` in inches, e.g. ``7x4`` or ``10x6.5``."""
    try:
        width, height = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in inches (e.g. 7x4), got "
                                         f"{text!r}") from None
    if not (width > 0 and height > 0 and width * height < 1e4):
        raise argparse.ArgumentTypeError(f"figure size must be positive (and sane), got "
                                         f"{text!r}")
    return width, height


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


# --------------------------------------------------------------------------- check

def _fd_step(x):
    # Central differences: truncation ~ h^2, rounding ~ eps / h; h ~ eps^(1/3) balances them.
    return np.finfo(np.float64).eps ** (1 / 3) * np.maximum(1.0, np.abs(x))


# Second differences of f: truncation ~ h^2 times the fourth derivative, rounding ~ eps |f|
# / h^2; h ~ eps^(1/4) balances them, leaving about sqrt(eps) relative accuracy: checked
# to this tolerance.
SECOND_DIFFERENCE_RTOL = 1e-4


def _second_difference_step(x):
    return float(np.finfo(np.float64).eps ** 0.25 * max(1.0, float(np.max(np.abs(x)))))


def _second_differences(fval, x, U, h):
    """``u_i^T H u_j`` for unit columns of ``U`` from four values of ``f`` each (central
    second differences), and the largest ``|f|`` met (for the rounding estimate)."""
    d = U.shape[1]
    D = np.empty((d, d))
    fmax = abs(fval(x))
    for i in range(d):
        for j in range(i, d):
            a, b = h * U[:, i], h * U[:, j]
            vals = [fval(x + a + b), fval(x + a - b), fval(x - a + b), fval(x - a - b)]
            fmax = max(fmax, *map(abs, vals))
            D[i, j] = D[j, i] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4 * h * h)
    return D, fmax


def check(args, out):
    from . import ConcretizationError, grad, hessian, hvp

    if not args.rtol > 0 or not args.atol >= 0:
        raise UsageError(f"--rtol must be > 0 and --atol >= 0, got {args.rtol}, {args.atol}")
    target = resolve_target(args.target, args.x0, args.n, args.seed)
    f, x0, n = target.fun, target.x0, target.x0.size
    _evaluate(target)
    fval = lambda x: float(np.asarray(f(x)))  # noqa: E731
    print(f"hessgrad check: {target.label} at x0 of shape {x0.shape} "
          f"(central differences, rtol={args.rtol:g}, atol={args.atol:g})", file=out)
    try:
        g = _differentiate("the gradient", target,
                           lambda: np.asarray(grad(f)(x0), np.float64))
    except UsageError as e:
        if not isinstance(e.__context__, ConcretizationError):
            raise
        # f turns a differentiated value into a plain number (float(), a numpy array): its
        # gradient would silently miss that path -- a finding, not bad input
        print(f"  FAIL gradient: {e.__context__}", file=out)
        print("MISMATCH in 1 check(s): gradient", file=out)
        return 1
    gradf = grad(f)
    h = _fd_step(x0)
    rng = np.random.default_rng(args.seed)
    full = n <= args.max_full
    failures = []

    def report(name, exact, approx, atol=args.atol, rtol=args.rtol):
        exact, approx = np.asarray(exact, np.float64), np.asarray(approx, np.float64)
        if not np.all(np.isfinite(exact)):
            print(f"  FAIL {name:<44} hessgrad's values have nan or inf entries", file=out)
            failures.append(name)
            return
        if not np.all(np.isfinite(approx)):
            print(f"  FAIL {name:<44} the finite differences are not finite (f is nan or "
                  f"inf within a step of x0)", file=out)
            failures.append(name)
            return
        err = float(np.max(np.abs(exact - approx))) if exact.size else 0.0
        scale = float(np.max(np.abs(approx))) if approx.size else 0.0
        ok = err <= atol + rtol * scale
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
    # The checks above difference the gradient, so a wrong custom gradient passes them
    # with a Hessian consistent with it; second differences of f itself do not.
    U = rng.standard_normal((n, args.directions))
    U /= np.linalg.norm(U, axis=0)
    HU = attempt("Hessian vs second differences of f",
                 lambda: np.column_stack([np.asarray(hvp(f)(x0, u), np.float64)
                                          for u in U.T]))
    if HU is not None:
        step = _second_difference_step(x0)
        fd2, fmax = _second_differences(fval, x0, U, step)
        rounding = 8 * np.finfo(np.float64).eps * fmax / step ** 2
        rtol2 = max(args.rtol, SECOND_DIFFERENCE_RTOL)
        report(f"Hessian vs second differences of f, {args.directions} dirs", U.T @ HU, fd2,
               atol=args.atol + rounding, rtol=rtol2)
        print(f"  {'':<4} (u^T H v against [f(x+hu+hv) - f(x+hu-hv) - f(x-hu+hv) + "
              f"f(x-hu-hv)] / 4h^2, h = {step:.2g}; tolerance rtol {rtol2:g} + rounding "
              f"{rounding:.2g})", file=out)
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
        epilog="Exit codes: 0 success, 1 a numerical mismatch was found (check, bench, or an "
               "analyze estimate contradicting its exact value), 2 bad input (also a "
               "non-finite f(x0)). Run 'hessgrad COMMAND --help' for details.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"hessgrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    target_help = (f"a built-in problem ({names}; default: {DEFAULT_PROBLEM}) or "
                   f"module:function (a scalar function of a flat float64 vector, written "
                   f"with hessgrad.numpy; also path/to/file.py:function)")
    a = sub.add_parser(
        "analyze", help="Hessian eigenvalues, trace, condition number, negative curvature",
        description="Analyze the Hessian at a point, matrix-free (Hessian-vector products "
                    "only): gradient norm, top-k and bottom-k eigenvalues (Lanczos, with a "
                    "check for missed copies of multiple eigenvalues), trace (Hutch++) with "
                    "a confidence interval, condition number with bounds, number of negative "
                    "eigenvalues (stochastic Lanczos quadrature) with an interval that "
                    "includes the quadrature's bias, optionally a spectral-density plot. "
                    "Rows are printed as they are computed, progress goes to stderr. The "
                    "exact values (known for quadratic and saddle, else from the dense "
                    "Hessian up to n = 2000) are printed beside the estimates; exit code 1 "
                    "when an estimate contradicts its exact value beyond its stated "
                    "uncertainty.")
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
    a.add_argument("--level", type=float, default=0.99, help="confidence level of the "
                   "stochastic estimates' intervals (default 0.99); an exact value outside "
                   "its interval counts as a contradiction, so a correct estimator does that "
                   "in about 1 - LEVEL of runs")
    a.add_argument("--max-hvps", type=int, default=3000, help="budget of Hessian-vector "
                   "products for each eigenvalue solve and the condition number (default "
                   "3000); what is unresolved then is reported with bounds")
    a.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    a.add_argument("--plot", metavar="FILE.png", help=f"save a spectral-density plot (needs "
                   f"matplotlib: {PLOT_HINT}); the format follows the suffix (.png, .pdf, .svg)")
    a.add_argument("--plot-log", action="store_true", help="plot the density on a log scale "
                   "(small clusters and tails next to a large peak)")
    a.add_argument("--plot-dpi", type=_positive_int, default=120, metavar="DPI",
                   help="resolution of the plot (default 120)")
    a.add_argument("--plot-size", type=_figsize, default=(7.0, 4.0), metavar="WxH",
                   help="figure size in inches (default 7x4)")
    a.add_argument("--json", metavar="FILE", help="also write the results as JSON ('-': the "
                   "JSON alone on stdout, the table on stderr)")
    a.set_defaults(func=analyze)

    c = sub.add_parser(
        "check", help="check a function's gradient and Hessian against finite differences",
        description="Check hessgrad's gradient and Hessian of your function against central "
                    "finite differences at --x0. Small problems (n <= --max-full) are checked "
                    "entry by entry, larger ones along random directions; the Hessian also "
                    "against second differences of f itself (so a wrong custom gradient "
                    "cannot hide behind a Hessian consistent with it), to relative tolerance "
                    "max(--rtol, 1e-4) plus rounding. Exit code 1 on a mismatch, 2 when f(x0) "
                    "is not finite.")
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
