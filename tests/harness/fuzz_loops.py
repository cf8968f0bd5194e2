"""Random loops of scalar operations, re-rolled against as written, for as long as asked.

    python tests/harness/fuzz_loops.py --minutes 30 [--seed 0]

Each loop's gradient (``hg.function(hg.grad)``), Hessian (``hg.hessian``,
``hg.function(hg.hessian)``) and sparse Hessian with re-rolling (at any size) are compared
with the same derivatives with re-rolling off; disagreements are printed with the seed (the
program is ``loop_programs.random_loop(seed)``) and the exit status is 1."""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hessgrad as hg  # noqa: E402
from hessgrad.kernels import tuning  # noqa: E402
from hessgrad.tracing.reroll import rerolled  # noqa: E402
from loop_programs import random_loop  # noqa: E402


def check(seed):
    """``(rerolled, problems)`` for loop ``seed``."""
    f, x = random_loop(seed)
    tuning.REROLL_MIN_NODES = 10 ** 9
    want_g, want_h = hg.grad(f)(x), hg.hessian(f)(x)
    tuning.REROLL_MIN_NODES = 20
    packed = rerolled(f, [x]) is not None
    tol = 1e-10 * max(np.abs(want_h).max(), 1.0)
    got = {"hessian": hg.hessian(f)(x), "function(hessian)": hg.function(hg.hessian(f))(x),
           "sparse_hessian": hg.sparse_hessian(f)(x).toarray(),
           "function(grad)": hg.function(hg.grad(f))(x)}
    problems = []
    for name, value in got.items():
        want = want_g if name == "function(grad)" else want_h
        if not np.allclose(value, want, rtol=1e-10, atol=tol):
            problems.append(f"{name}: max difference {np.max(np.abs(value - want)):.3g}")
    return packed, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    deadline = time.time() + 60 * args.minutes
    seed, runs, packed, failures = args.seed, 0, 0, 0
    while time.time() < deadline:
        was_packed, problems = check(seed)
        runs += 1
        packed += was_packed
        if problems:
            failures += 1
            print(f"seed {seed}: " + "; ".join(problems), flush=True)
        seed += 1
    print(f"{runs} loops ({packed} re-rolled), {failures} disagreeing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
