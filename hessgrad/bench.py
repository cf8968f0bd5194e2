"""``hessgrad bench``: value / grad / hvp / hessian timed across autodiff engines.

Each built-in problem is written once against an array namespace
(:meth:`hessgrad.problems.Problem.fun_for`), so every engine runs the same mathematics:
hessgrad eager, hessgrad traced (``hg.function``), autograd, JAX (``jit``, float64) and
PyTorch (``torch.func``, float64), whichever are installed, plus the problem's hand-written
numpy reference where one exists. All engines are checked against the reference (or
hessgrad eager) before anything is timed; a disagreement makes the command exit with 1.
"""

import importlib.util
import math
import os
import platform
import sys
import time

import numpy as np

SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                     "MKL_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1",
                     "NUMEXPR_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
ENGINES = ("hessgrad", "hessgrad-function", "autograd", "jax", "torch", "numpy")
OPS = ("value", "grad", "hvp", "hessian")
_INSTALL = {"autograd": "pip install autograd", "jax": "pip install 'jax[cpu]'",
            "torch": "pip install torch"}
_MODULE = {"autograd": "autograd", "jax": "jax", "torch": "torch"}


def _usage_error(message):
    from .cli import UsageError

    return UsageError(message)


def _split(text, known, what):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        raise _usage_error(f"--{what}: empty list; choose from {', '.join(known)}")
    bad = [s for s in items if s not in known]
    if bad:
        raise _usage_error(f"--{what}: unknown {', '.join(map(repr, bad))}; choose from "
                           f"{', '.join(known)}")
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- engines
# Each builder returns {op: callable} with value(x) -> float, grad(x) -> (n,),
# hvp(x, v) -> (n,), hessian(x) -> (n, n); numpy in, numpy out.

def _hessgrad(problem, traced):
    import hessgrad as hg

    f = problem.fun
    ops = {"value": f, "grad": hg.grad(f), "hvp": hg.hvp(f), "hessian": hg.hessian(f)}
    if traced:
        ops = {k: hg.function(v) for k, v in ops.items()}
    value = ops["value"]
    ops["value"] = lambda x: float(np.asarray(value(x)))
    return ops


def _autograd(problem):
    import autograd
    import autograd.numpy as anp

    f = problem.fun_for(anp)
    return {"value": f, "grad": autograd.grad(f), "hvp": autograd.hessian_tensor_product(f),
            "hessian": autograd.hessian(f)}


def _jax(problem):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    f = problem.fun_for(jnp, jnp.asarray)
    g = jax.grad(f)
    jitted = {"value": jax.jit(f), "grad": jax.jit(g),
              "hvp": jax.jit(lambda x, v: jax.jvp(g, (x,), (v,))[1]),
              "hessian": jax.jit(jax.hessian(f))}
    # np.asarray waits for the result (JAX dispatches asynchronously).
    return {k: (lambda fn: lambda *a: np.asarray(fn(*a)))(fn) for k, fn in jitted.items()}


class _TorchNamespace:
    """The few numpy names the problems use, for torch tensors."""

    def __init__(self, torch):
        self._torch = torch
        self.sum, self.mean, self.tanh, self.reshape = (torch.sum, torch.mean, torch.tanh,
                                                        torch.reshape)

    def logaddexp(self, a, b):
        t = self._torch
        a = a if isinstance(a, t.Tensor) else t.tensor(a, dtype=t.float64)
        return t.logaddexp(a, b)


def _torch(problem):
    import torch
    from torch.func import grad, hessian, jvp

    torch.set_num_threads(1)
    f = problem.fun_for(_TorchNamespace(torch),
                        lambda a: torch.from_numpy(np.ascontiguousarray(a, np.float64)))
    g = grad(f)
    T = torch.from_numpy
    return {"value": lambda x: f(T(x)).item(), "grad": lambda x: g(T(x)).numpy(),
            "hvp": lambda x, v: jvp(g, (T(x),), (T(v),))[1].numpy(),
            "hessian": (lambda h: lambda x: h(T(x)).numpy())(hessian(f))}


def _numpy(problem):
    return dict(problem.reference)


_BUILDERS = {"hessgrad": lambda p: _hessgrad(p, False),
             "hessgrad-function": lambda p: _hessgrad(p, True),
             "autograd": _autograd, "jax": _jax, "torch": _torch, "numpy": _numpy}


def available(engine):
    """Whether ``engine``'s package is installed (hessgrad and numpy always are)."""
    mod = _MODULE.get(engine)
    return mod is None or importlib.util.find_spec(mod) is not None


def _versions():
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ("hessgrad", "autograd", "jax", "torch"):
        if importlib.util.find_spec(name) is None:
            continue
        try:
            from importlib.metadata import version
            out[name] = version(name)
        except Exception:
            pass
    return out


# --------------------------------------------------------------------------- timing

def _timed(fn, args, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn(*args)
    return time.perf_counter() - t0


def median_time(fn, args, repeats, min_sample):
    """Median seconds per call: calls are batched so one sample lasts >= ``min_sample``."""
    number = 1
    while True:
        t = _timed(fn, args, number)
        if t >= min_sample or number >= 1 << 20:
            break
        number = min(number * max(2, int(1.5 * min_sample / max(t, 1e-9))), 1 << 20)
    samples = [_timed(fn, args, number) / number for _ in range(repeats)]
    return float(np.median(samples))


def _fmt_time(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t * 1e9:.3g} ns"


class _Progress:
    """Progress lines on stderr, only once a run has lasted a few seconds."""

    def __init__(self, total, after=2.0):
        self.total, self.after, self.start, self.done = total, after, time.perf_counter(), 0

    def step(self, label):
        self.done += 1
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.after:
            print(f"[bench {self.done}/{self.total}, {elapsed:.0f} s] {label}",
                  file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- driver

def _agree(result, expected):
    """Max abs difference and whether it is within rtol 1e-8 of the reference's scale."""
    a = np.asarray(result, np.float64)
    b = np.asarray(expected, np.float64)
    if a.shape != b.shape:
        return math.inf, False
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return err, bool(np.all(np.isfinite(a))) and err <= 1e-8 * max(scale, 1e-300) + 1e-12


def run(args, out):
    from . import problems as _problems

    problem_names = _split(args.problems, _problems.names(), "problems")
    ops = _split(args.ops, OPS, "ops")
    engines = _split(args.engines, ENGINES, "engines") if args.engines else list(ENGINES)
    n = args.n if args.n is not None else (50 if args.quick else 100)
    if n < 2:
        raise _usage_error(f"--n must be >= 2, got {n}")
    repeats = args.repeats if args.repeats is not None else (5 if args.quick else 11)
    if repeats < 1:
        raise _usage_error(f"--repeats must be >= 1, got {repeats}")
    min_sample = 0.005 if args.quick else 0.05

    notes = []
    for e in list(engines):
        if not available(e):
            engines.remove(e)
            notes.append(f"{e}: skipped, not installed ({_INSTALL[e]})")
    for k, v in SINGLE_THREAD_ENV.items():      # for engines imported from here on
        os.environ.setdefault(k, v)
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    limiter = None
    if importlib.util.find_spec("threadpoolctl") is not None:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(1)
    try:
        rows, failed = _run(problem_names, ops, engines, n, repeats, min_sample, notes,
                            args.quick, _problems)
    finally:
        if limiter is not None:
            limiter.restore_original_limits()

    _print_table(rows, out, markdown=args.markdown)
    print(f"\nmedian time per call; 'x fastest' is relative to the fastest autodiff engine "
          f"in each row group, 'x numpy' to the hand-written numpy reference; "
          f"{repeats} samples per cell, single-threaded", file=out)
    for note in notes:
        print(f"note: {note}", file=out)
    if args.json:
        from .cli import write_json
        write_json(args.json, {"n": n, "quick": bool(args.quick), "repeats": repeats,
                                "versions": _versions(), "platform": platform.platform(),
                                "results": rows, "notes": notes}, out)
    return 1 if failed else 0


def _run(problem_names, ops, engines, n, repeats, min_sample, notes, quick, _problems):
    rows, failed = [], False
    total = len(problem_names) * len(ops) * len(engines)
    progress = _Progress(total)
    for pname in problem_names:
        problem = _problems.get(pname, n=None if pname == "mlp" else n, seed=0,
                                **({"hidden": 8} if pname == "mlp" and quick else {}))
        x = problem.x0 + 0.1 * np.random.default_rng(1).standard_normal(problem.n)
        v = np.random.default_rng(2).standard_normal(problem.n)
        built = {}
        for e in engines:
            if e == "numpy" and not problem.reference:
                continue
            try:
                built[e] = _BUILDERS[e](problem)
            except Exception as exc:
                notes.append(f"{e} on {pname}: setup failed: {type(exc).__name__}: {exc}")
                failed = True
        for op in ops:
            call_args = (x, v) if op == "hvp" else (x,)
            ref_engine = "numpy" if op in built.get("numpy", {}) else "hessgrad"
            results, group = {}, []
            for e in engines:
                fn = built.get(e, {}).get(op)
                if fn is None:
                    progress.step(f"{pname} {op} {e}: n/a")
                    continue
                try:
                    results[e] = fn(*call_args)   # also the warm-up (JIT compilation)
                except Exception as exc:
                    notes.append(f"{e} {op} on {pname} failed: {type(exc).__name__}: {exc}")
                    failed = True
                    progress.step(f"{pname} {op} {e}: failed")
            expected = results.get(ref_engine)
            for e in engines:
                if e not in results:
                    continue
                err, ok = (0.0, True) if expected is None else _agree(results[e], expected)
                row = {"problem": pname, "n": problem.n, "op": op, "engine": e,
                       "max_abs_diff": err, "agrees": ok, "median_s": None}
                if not ok:
                    failed = True
                    notes.append(f"{e} {op} on {pname} disagrees with {ref_engine}: max abs "
                                 f"difference {err:.3g}; not timed")
                else:
                    row["median_s"] = median_time(built[e][op], call_args, repeats,
                                                  min_sample)
                progress.step(f"{pname} {op} {e}: {_fmt_time(row['median_s'])}")
                group.append(row)
            timed = [r["median_s"] for r in group if r["median_s"] and r["engine"] != "numpy"]
            fastest = min(timed) if timed else None
            ref = next((r["median_s"] for r in group if r["engine"] == "numpy"), None)
            for r in group:
                t = r["median_s"]
                r["ratio_fastest"] = t / fastest if t and fastest else None
                r["ratio_numpy"] = t / ref if t and ref else None
            rows.extend(group)
    return rows, failed


def _print_table(rows, out, markdown=False):
    header = ["problem", "n", "op", "engine", "median", "x fastest", "x numpy"]
    body = []
    for r in rows:
        body.append([r["problem"], str(r["n"]), r["op"],
                     r["engine"] + (" (reference)" if r["engine"] == "numpy" else ""),
                     _fmt_time(r["median_s"]) if r["agrees"] else "MISMATCH",
                     f"{r['ratio_fastest']:.2f}" if r.get("ratio_fastest") else "-",
                     f"{r['ratio_numpy']:.2f}" if r.get("ratio_numpy") else "-"])
    if markdown:
        print("| " + " | ".join(header) + " |", file=out)
        print("|" + "|".join("---" if i < 4 else "---:" for i in range(len(header))) + "|",
              file=out)
        for line in body:
            print("| " + " | ".join(line) + " |", file=out)
        return
    widths = [max(len(h), *(len(line[i]) for line in body)) if body else len(h)
              for i, h in enumerate(header)]
    right = {1, 4, 5, 6}
    fmt = lambda cells: "  ".join(c.rjust(w) if i in right else c.ljust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    print(fmt(header), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    previous = None
    for r, line in zip(rows, body):
        if previous is not None and (r["problem"], r["op"]) != previous:
            print("", file=out)
        previous = (r["problem"], r["op"])
        print(fmt(line), file=out)
