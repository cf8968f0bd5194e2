"""Shared benchmark harness: single-threaded BLAS, optional peers, numerical agreement
checks, adaptive timing, a results table of medians and ratios, and ``--json`` output.

Import this module FIRST in a benchmark script (before numpy or any peer): importing it
pins every engine to one thread, because BLAS pools, XLA and OpenMP read their thread
counts when they are loaded.

Timing policy (``Bench.case``):

* one warm-up call per engine, which also gives the result that is checked against the
  hand-written numpy reference (``np.allclose``); an engine that disagrees is reported as
  FAILED, is not timed, and makes the script exit with status 1;
* adaptive repetition: the number of calls per measurement grows (1, 2, 5, 10, 20, ...)
  until one measurement takes at least ``--target`` seconds (0.2 s; 0.02 s with
  ``--quick``), then ``--repeats`` measurements (7; 3 with ``--quick``) are taken, fewer if
  they would exceed ``--budget`` seconds per engine;
* a call slower than ``--max-call`` seconds (20 s) is not repeated: its warm-up time is the
  one measurement (marked ``1 cold run``), so that the script stays within a few minutes;
* reported per engine: the median time per call, the IQR of the repeats (as a percent of
  the median), and ratios of the median to the fastest engine and to the numpy reference.

The garbage collector stays enabled (engines that create reference cycles pay for them as
a user would), but a collection runs before each measurement (after the imports, ``gc.freeze()`` keeps the
libraries' own objects out of these collections, which would otherwise take ~0.4 s each).
"""

import os
import sys

# Pin every engine to one thread before numpy, BLAS, XLA or torch are loaded.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
_LATE = [name for name in ("numpy", "jax", "torch") if name in sys.modules]
os.environ.update(THREAD_ENV)

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import hessgrad  # noqa: E402


# --------------------------------------------------------------------------- peers

def load_peers(skip=()):
    """Import the optional peers; a missing one is reported and left out (None).

    Returns a dict ``{"autograd": (autograd, autograd.numpy) | None, "jax": (jax,
    jax.numpy) | None, "torch": torch | None}``. JAX runs in float64 (``jax_enable_x64``)
    like every other engine; torch is set to one intra-op and one inter-op thread.
    """
    peers = {}
    if "autograd" in skip:
        peers["autograd"] = None
    else:
        try:
            import autograd
            import autograd.numpy as anp
            peers["autograd"] = (autograd, anp)
        except ImportError:
            print("note: autograd is not installed; skipping the autograd engines")
            peers["autograd"] = None
    if "jax" in skip:
        peers["jax"] = None
    else:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            jax.config.update("jax_platforms", "cpu")
            import jax.numpy as jnp
            peers["jax"] = (jax, jnp)
        except ImportError:
            print("note: jax is not installed; skipping the JAX engines")
            peers["jax"] = None
    if "torch" in skip:
        peers["torch"] = None
    else:
        try:
            import torch
            torch.set_num_threads(1)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:  # already set, or parallel work already started
                pass
            peers["torch"] = torch
        except ImportError:
            print("note: torch is not installed; skipping the PyTorch engines "
                  "(install with: pip install torch==2.13.0)")
            peers["torch"] = None
    return peers


def to_numpy(x):
    """A numpy array (or a tuple of them) from numpy, hessgrad, JAX or torch results."""
    if isinstance(x, (tuple, list)):
        return tuple(to_numpy(e) for e in x)
    if hasattr(x, "detach"):           # torch
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):  # hessgrad Tensor
        return np.asarray(x.numpy())
    return np.asarray(x)               # numpy, JAX


# --------------------------------------------------------------------------- machine

def machine_info(peers):
    """Facts about this run: date, CPU, versions, BLAS kernels and thread counts."""
    info = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "hessgrad": hessgrad.__version__,
        "thread_env": dict(THREAD_ENV),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
    }
    try:
        import scipy
        info["scipy"] = scipy.__version__
    except ImportError:
        pass
    if peers.get("autograd"):
        try:
            info["autograd"] = importlib.metadata.version("autograd")
        except importlib.metadata.PackageNotFoundError:
            info["autograd"] = "?"
    if peers.get("jax"):
        info["jax"] = peers["jax"][0].__version__
    if peers.get("torch"):
        torch = peers["torch"]
        info["torch"] = torch.__version__
        info["torch_threads"] = [torch.get_num_threads(), torch.get_num_interop_threads()]
        info["torch_blas"] = "mkl" if torch.backends.mkl.is_available() else "other"
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [{k: lib.get(k) for k in ("internal_api", "architecture",
                                                  "num_threads", "version")}
                        | {"file": os.path.basename(lib.get("filepath", ""))}
                        for lib in threadpool_info()]
    except ImportError:
        info["blas"] = None
    return info


def print_machine(info):
    print(f"# {info['date']}  {info['platform']}  cpus={info['cpu_count']}  "
          f"python {info['python']}")
    versions = [f"{k} {info[k]}" for k in ("hessgrad", "numpy", "scipy", "autograd", "jax",
                                           "torch") if k in info]
    print("# " + ", ".join(versions))
    if info["blas"] is None:
        print("# BLAS kernels: threadpoolctl not installed; not shown")
    else:
        for lib in info["blas"]:
            print(f"# thread pool: {lib['internal_api']} {lib['version'] or ''} "
                  f"kernel={lib['architecture'] or '-'} threads={lib['num_threads']} "
                  f"({lib['file']})")
    if "torch" in info:
        print(f"# torch: BLAS={info['torch_blas']} threads(intra, inter)="
              f"{tuple(info['torch_threads'])}")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if info[var] is not None:
            print(f"# WARNING: {var}={info[var]} is set and forces OpenBLAS's choice; run "
                  f"as `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python ...`")
    if _LATE:
        print(f"# WARNING: {', '.join(_LATE)} imported before benchmarks/harness.py; thread "
              f"pinning may not have taken effect")


# --------------------------------------------------------------------------- timing

def timed(fn, loops):
    """Seconds for ``loops`` calls of ``fn`` (after a garbage collection)."""
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(loops):
        fn()
    return time.perf_counter() - t0


def calibrate(fn, target, most=10 ** 7):
    """``(loops, seconds)``: the first of 1, 2, 5, 10, 20, ... calls of ``fn`` (warmed up) that
    take at least ``target`` seconds (at most ``most`` calls), and how long they took."""
    loops, base = 1, 1
    while True:
        t = timed(fn, loops)
        if t >= target or loops >= most:
            return loops, t
        for step in (1, 2, 5):
            if step * base > loops:
                loops = step * base
                break
        else:
            base *= 10
            loops = base


def interleaved_best(fns, rounds=25, calls=5):
    """The fastest single call of each of ``fns`` (a dict), the functions taking turns
    ``rounds`` times with ``calls`` calls each: on a shared machine, a slow phase then
    slows every engine alike, and the minimum is each one's own cost."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            for _ in range(calls):
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
    return best


def measure(fn, target=0.2, repeats=7, budget=10.0):
    """Per-call times of ``fn`` (already warmed up): ``(times, loops)``.

    The loop count grows 1, 2, 5, 10, 20, ... until one measurement takes ``target``
    seconds; then ``repeats`` measurements of that many calls (at least 3, fewer than
    ``repeats`` if they would take more than ``budget`` seconds).
    """
    loops, t = calibrate(fn, target)
    n = max(3, min(repeats, int(budget / max(t, 1e-9))))
    times = [t / loops] + [timed(fn, loops) / loops for _ in range(n - 1)]
    return times, loops


def _fmt_time(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def _fmt_ratio(r):
    if r is None:
        return "-"
    return f"{r:.3g}"


def _close(out, ref, rtol, atol_rel):
    """(ok, message): numpy.allclose of each leaf, atol scaled by the reference's size."""
    out, ref = to_numpy(out), to_numpy(ref)
    if isinstance(ref, tuple) and not isinstance(out, tuple):
        ref = ref[-1]  # a gradient-only engine against a (value, gradient) reference
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    if len(outs) != len(refs):
        return False, f"{len(outs)} results, the reference has {len(refs)}"
    for k, (o, r) in enumerate(zip(outs, refs)):
        o, r = np.asarray(o, dtype=np.float64), np.asarray(r, dtype=np.float64)
        if o.shape != r.shape:
            return False, f"result {k}: shape {o.shape}, reference shape {r.shape}"
        atol = atol_rel * max(float(np.max(np.abs(r))) if r.size else 0.0, 1e-300)
        if not np.allclose(o, r, rtol=rtol, atol=atol):
            err = np.abs(o - r)
            return False, (f"result {k}: max abs error {err.max():.3e} (atol {atol:.1e}), "
                           f"max rel error {np.max(err / np.maximum(np.abs(r), 1e-300)):.3e}"
                           f" (rtol {rtol:.0e})")
    return True, ""


# --------------------------------------------------------------------------- the run

def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="smoke run: small problems, short measurements, 3 repeats")
    p.add_argument("--json", metavar="FILE", help="also write all results as JSON")
    p.add_argument("--skip", default="",
                   help="comma-separated peers/engines to leave out (autograd, jax, torch, or "
                        "any substring of an engine label)")
    p.add_argument("--target", type=float, default=None,
                   help="seconds per measurement (default 0.2; 0.02 with --quick)")
    p.add_argument("--repeats", type=int, default=None,
                   help="measurements per engine (default 7; 3 with --quick)")
    p.add_argument("--budget", type=float, default=None,
                   help="max seconds of timing per engine (default 8; 1 with --quick)")
    p.add_argument("--max-call", type=float, default=20.0,
                   help="calls slower than this are timed once, cold (default 20 s)")
    return p


class Bench:
    """One script's run: peers, machine facts, cases and their results."""

    def __init__(self, name, args):
        self.name, self.args = name, args
        self.quick = args.quick
        self.target = args.target or (0.02 if args.quick else 0.2)
        self.repeats = args.repeats or (3 if args.quick else 7)
        self.budget = args.budget or (1.0 if args.quick else 8.0)
        self.skip = [s.strip() for s in args.skip.split(",") if s.strip()]
        self.peers = load_peers(skip=self.skip)
        self.info = machine_info(self.peers)
        gc.collect()
        gc.freeze()  # the imported libraries' objects: not rescanned by every collection
        self.records, self.failures, self.summaries = [], [], []
        self.t_start = time.perf_counter()
        print_machine(self.info)
        print(f"# {name}: target {self.target} s/measurement, up to {self.repeats} repeats"
              f"{'  (QUICK smoke run: small problems)' if self.quick else ''}")

    def skipped(self, label):
        return any(s in label for s in self.skip)

    def case(self, title, reference, engines, rtol=1e-7, atol=1e-10, per=None):
        """Check, time and tabulate one case.

        Args:
            title: the case's name in the table.
            reference: ``(label, fn)``: the hand-written numpy reference; its result is the
                truth every engine is checked against.
            engines: list of ``(label, fn)``; ``fn()`` returns the engine's result (blocked
                until ready); ``None`` entries (a missing peer) are dropped.
            rtol, atol: tolerances of the check; ``atol`` is relative to ``max|reference|``.
            per: optional ``(count, unit)``: also show ``median / count`` in microseconds.
        Returns:
            ``{label: median seconds}`` for the engines that ran.
        """
        print(f"\n== {title}")
        t_case = time.perf_counter()
        ref_label, ref_fn = reference
        truth = ref_fn()
        results = {}
        rows = [(ref_label, ref_fn, True)] + [(lab, fn, False) for lab, fn in
                                             (e for e in engines if e is not None)
                                             if not self.skipped(lab)]
        for label, fn, is_ref in rows:
            t0 = time.perf_counter()
            try:
                out = fn()
                cold = time.perf_counter() - t0
            except Exception as exc:  # report, keep going with the other engines
                self._fail(title, label, f"raised {type(exc).__name__}: {exc}")
                continue
            ok, msg = _close(out, truth, rtol, atol)
            if not ok:
                self._fail(title, label, msg)
                continue
            if cold > self.args.max_call:
                times, loops, note = [cold], 1, "1 cold run"
            else:
                times, loops = measure(fn, self.target, self.repeats, self.budget)
                note = ""
            results[label] = (times, loops, note, cold)
        medians = {lab: statistics.median(r[0]) for lab, r in results.items()}
        fastest = min(medians.values()) if medians else None
        ref_median = medians.get(ref_label)
        width = max([len(lab) for lab in medians] + [24])
        head = f"  {'engine':<{width}}  {'median':>9}  {'iqr%':>5}  {'x fastest':>9}  " \
               f"{'x numpy':>8}"
        if per:
            head += f"  {per[1]:>8}"
        print(head)
        for label, (times, loops, note, cold) in results.items():
            med = medians[label]
            q = np.percentile(times, [25, 75]) if len(times) > 1 else [med, med]
            iqr_pct = 100 * (q[1] - q[0]) / med if len(times) > 1 else None
            r_fast = med / fastest
            r_ref = med / ref_median if ref_median else None
            line = (f"  {label:<{width}}  {_fmt_time(med):>9}  "
                    f"{('%.0f' % iqr_pct) if iqr_pct is not None else '-':>5}  "
                    f"{_fmt_ratio(r_fast):>9}  {_fmt_ratio(r_ref):>8}")
            if per:
                line += f"  {med / per[0] * 1e6:>8.3g}"
            if note:
                line += f"  ({note})"
            print(line, flush=True)
            self.records.append({
                "case": title, "engine": label, "reference": label == ref_label,
                "median_s": med, "q1_s": float(q[0]), "q3_s": float(q[1]),
                "iqr_s": float(q[1] - q[0]), "repeats": len(times), "loops": loops,
                "first_call_s": cold, "note": note,
                "ratio_to_fastest": r_fast, "ratio_to_numpy": r_ref,
                **({"per_unit": per[1], "per_value": med / per[0] * 1e6} if per else {}),
            })
        print(f"  ({time.perf_counter() - t_case:.0f} s)")
        return medians

    def summary(self, title, columns, rows, left=1):
        """Print and record a derived table (e.g. HVP time / gradient time); the first
        ``left`` columns are text (left-aligned), the others numbers."""
        print(f"\n== {title}")
        widths = [max(len(str(c)), *(len(str(r[k])) for r in rows)) if rows else len(str(c))
                  for k, c in enumerate(columns)]
        print("  " + "  ".join(f"{c:<{w}}" if k < left else f"{c:>{w}}"
                               for k, (c, w) in enumerate(zip(columns, widths))))
        for r in rows:
            print("  " + "  ".join(f"{v!s:<{w}}" if k < left else f"{v!s:>{w}}"
                                   for k, (v, w) in enumerate(zip(r, widths))))
        self.summaries.append({"title": title, "columns": list(columns),
                               "rows": [list(map(str, r)) for r in rows]})

    def _fail(self, title, label, msg):
        print(f"  FAILED  {label}: {msg}  -- not timed", flush=True)
        self.failures.append({"case": title, "engine": label, "message": msg})

    def finish(self):
        """Write ``--json``, print the failures; the exit status is 1 if any engine failed."""
        elapsed = time.perf_counter() - self.t_start
        print(f"\n# {self.name} finished in {elapsed:.0f} s")
        if self.args.json:
            with open(self.args.json, "w") as fh:
                json.dump({"script": self.name, "quick": self.quick, "machine": self.info,
                           "settings": {"target_s": self.target, "repeats": self.repeats,
                                        "budget_s": self.budget,
                                        "max_call_s": self.args.max_call},
                           "results": self.records, "summaries": self.summaries,
                           "failures": self.failures, "elapsed_s": elapsed}, fh, indent=1)
            print(f"# results written to {self.args.json}")
        if self.failures:
            print(f"\nNUMERICAL AGREEMENT FAILED for {len(self.failures)} engine(s):")
            for f in self.failures:
                print(f"  {f['case']}: {f['engine']}: {f['message']}")
            sys.exit(1)


fmt_time = _fmt_time
fmt_ratio = _fmt_ratio
