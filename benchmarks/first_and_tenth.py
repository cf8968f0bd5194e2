"""First-call and tenth-call times of hessgrad on the problems of bench_compiled.py, each task
in a fresh process with an empty kernel cache, calls back to back (what a user's loop sees;
with tiered compilation the calls before the compiled program is ready run uncompiled).

Run:  python benchmarks/first_and_tenth.py [--quick] [--only TEXT]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = ("grad", "hvp", "hessian")


def one(label, task, quick):
    sys.path.insert(0, HERE)
    import numpy as np

    import bench_compiled as bc
    import hessgrad as hg
    for name, make, _, data, x, small in bc.problems(quick):
        if name != label:
            continue
        f = make(bc.HNP, data)
        v = np.random.default_rng(1).standard_normal(x.shape)
        call = {"grad": lambda: g(x), "hvp": lambda: g(x, v), "hessian": lambda: g(x)}[task]
        g = {"grad": lambda: hg.function(hg.grad(f)), "hvp": lambda: hg.function(hg.hvp(f)),
             "hessian": lambda: hg.hessian(f)}[task]()
        times = []
        for _ in range(10):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        print(times[0], times[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(*args.one, args.quick)
    sys.path.insert(0, HERE)
    import bench_compiled as bc
    print(f"{'problem':34s} {'task':8s} {'first':>10s} {'tenth':>10s}")
    for label, _, _, _, x, small in bc.problems(args.quick):
        if args.only not in label:
            continue
        for task in TASKS:
            if task == "hessian" and not small:
                continue
            env = dict(os.environ, HESSGRAD_KERNEL_CACHE=tempfile.mkdtemp())
            p = subprocess.run([sys.executable, __file__, "--one", label, task] +
                               (["--quick"] if args.quick else []), env=env,
                               capture_output=True, text=True, timeout=1800)
            try:
                first, tenth = map(float, p.stdout.split()[-2:])
            except ValueError:
                print(f"{label:34s} {task:8s} failed: {p.stderr.strip().splitlines()[-1:]}")
                continue
            print(f"{label:34s} {task:8s} {first * 1e3:8.1f}ms {tenth * 1e3:8.2f}ms",
                  flush=True)


if __name__ == "__main__":
    main()
