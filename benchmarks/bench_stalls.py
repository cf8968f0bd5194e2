"""Stalls of back-to-back calls while a lazy trace compiles in the background.

Each run is a fresh process with an empty kernel cache: ``HessianOperator(p.fun, p.x0)`` of a
built-in problem, then ``matvec`` back to back for ``--seconds`` (``--case mlp`` /
``logistic``), or a plain lazy ``hg.function(hg.grad(f))`` called in a loop (``--case
grad-mlp``). Reports per run: the first and second call, the count of calls over 1 ms (and
over 5 ms), p50 / p99 / max of calls 3 on, and when the last tier came in (-1: not
within the run). ``--diagnose`` also samples the compiling thread's stack and
prints, for each stall over 5 ms, where that thread was at both ends of it.

Run:  python benchmarks/bench_stalls.py [--case mlp] [--runs 3] [--seconds 3] [--diagnose]
      HESSGRAD_COMPILE=never python benchmarks/bench_stalls.py  (the uncompiled reference)
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def _stack(frame, depth=6):
    out = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        out.append(f"{os.path.basename(code.co_filename)}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return " < ".join(out)


class Sampler(threading.Thread):
    """Records the compiling thread's stack every ~0.3 ms (when this thread gets the GIL)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples = []  # (time, stack)
        self.stop = False

    def run(self):
        while not self.stop:
            t = time.perf_counter()
            frames = sys._current_frames()
            for th in threading.enumerate():
                if th.name == "hessgrad-compile" and th.ident in frames:
                    self.samples.append((t, _stack(frames[th.ident])))
            time.sleep(0.0003)


def one(case, seconds, diagnose):
    import numpy as np

    import hessgrad as hg
    from hessgrad import problems
    from hessgrad.tracing.tiers import Tiers

    name = case.split("-")[-1]
    p = problems.get(name)
    sampler = Sampler() if diagnose else None
    if sampler:
        sampler.start()
    v = np.random.default_rng(1).standard_normal(p.x0.shape)
    times, starts = [], []
    t0 = time.perf_counter()
    if case.startswith("grad-"):
        g = hg.function(hg.grad(p.fun))
        call = lambda: g(p.x0)  # noqa: E731
    else:
        op = hg.HessianOperator(p.fun, p.x0)
        call = lambda: op.matvec(v)  # noqa: E731
    first_build = time.perf_counter() - t0
    call()  # the first call (its time is recorded below as well, from a second one on)
    # the trace's compilations, found once (before the timed calls: a scan of the heap)
    tiers = [o for o in gc.get_objects() if isinstance(o, Tiers)]
    done = None  # when the last tier came in
    times.append(time.perf_counter() - t0 - first_build)
    starts.append(first_build)
    while time.perf_counter() - t0 < seconds:
        s = time.perf_counter()
        call()
        e = time.perf_counter()
        starts.append(s - t0)
        times.append(e - s)
        if done is None and len(times) % 50 == 0 and tiers and all(t.final for t in tiers):
            done = e - t0
    out = {"build": first_build, "times": times, "starts": starts, "compiled_s": done}
    if sampler:
        sampler.stop = True
        report = []
        for s, d in zip(starts, times):
            if d < 0.005:
                continue
            before = [x for x in sampler.samples if x[0] - t0 <= s + 0.0005]
            after = [x for x in sampler.samples if x[0] - t0 >= s + d - 0.0005]
            report.append({"start": s, "ms": d * 1e3,
                           "before": before[-1][1] if before else None,
                           "after": after[0][1] if after else None})
        out["stalls"] = report
    print(json.dumps(out))


def summary(data):
    times, starts = data["times"], data["starts"]
    import numpy as np
    rest = np.array(times[2:]) * 1e3
    compiled = data.get("compiled_s")
    over = [s for s, t in zip(starts, times) if t > 1e-3]
    return {"n": len(times), "1st_ms": times[0] * 1e3, "2nd_ms": times[1] * 1e3,
            "over1": int((rest > 1).sum()), "over5": int((rest > 5).sum()),
            "p50_ms": float(np.median(rest)), "p99_ms": float(np.percentile(rest, 99)),
            "max_ms": float(rest.max()), "last_over1_s": over[-1] if over else 0.0,
            "tail_p50_ms": float(np.median(rest[-200:])),
            "compiled_s": -1.0 if compiled is None else compiled}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="mlp", help="mlp, logistic, grad-mlp, ...")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--diagnose", action="store_true")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.case, args.seconds, args.diagnose)
    for _ in range(args.runs):
        env = dict(os.environ, HESSGRAD_KERNEL_CACHE=tempfile.mkdtemp(prefix="stalls-"))
        cmd = [sys.executable, os.path.abspath(__file__), "--one", "--case", args.case,
               "--seconds", str(args.seconds)] + (["--diagnose"] if args.diagnose else [])
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode:
            print(p.stderr)
            continue
        data = json.loads(p.stdout.strip().splitlines()[-1])
        s = summary(data)
        print(args.case, " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in s.items()), flush=True)
        for stall in data.get("stalls", []):
            print(f"  stall at {stall['start']:.3f}s {stall['ms']:.1f} ms\n"
                  f"    before: {stall['before']}\n    after:  {stall['after']}")


if __name__ == "__main__":
    main()
