"""HessianOperator.matmat against a loop of matvec (issue 37 part 2).

For each problem and k = 1, 5, 20 columns: the first matmat at that k (includes any
compilation for the new k) and the median of repeated calls, beside the median of a loop of
k matvecs. Run from the repository root:

    python benchmarks/bench_matmat.py [--compile lazy|eager|never]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

parser = argparse.ArgumentParser()
parser.add_argument("--compile", default=None, help="HESSGRAD_COMPILE for this run")
parser.add_argument("--ks", default="1,5,20")
parser.add_argument("--repeats", type=int, default=15)
opts = parser.parse_args()
if opts.compile:
    os.environ["HESSGRAD_COMPILE"] = opts.compile

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


rng = np.random.default_rng(0)
X = rng.standard_normal((200, 20))
Y = rng.standard_normal((200, 1))
SHAPES = [(20, 32), (32,), (32, 1), (1,)]


def mlp(p):
    W1, b1, W2, b2 = p[:640].reshape(20, 32), p[640:672], p[672:704].reshape(32, 1), p[704:]
    h = hnp.tanh(hnp.matmul(X, W1) + b1)
    r = hnp.matmul(h, W2) + b2 - Y
    return 0.5 * hnp.mean(r ** 2)


PROBLEMS = [("rosenbrock n=1000", rosenbrock, rng.standard_normal(1000)),
            ("mlp 20-32-1, 200 points (n=705)", mlp, 0.1 * rng.standard_normal(705))]


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ks = [int(k) for k in opts.ks.split(",")]
    print(f"# HESSGRAD_COMPILE={os.environ.get('HESSGRAD_COMPILE', '(default lazy)')}; "
          f"least of {opts.repeats} interleaved rounds (a busy machine only slows runs down)")
    print(f"{'problem':34s} {'k':>3s} {'loop matvec':>12s} {'matmat 1st':>11s} "
          f"{'matmat':>10s} {'ratio':>6s}")
    for label, f, x in PROBLEMS:
        H = hg.HessianOperator(f, x)
        v = rng.standard_normal(x.size)
        for _ in range(30):  # warm the matvec path (lazy tiers compile when hot)
            H.matvec(v)
        time.sleep(0.5)
        for k in ks:
            V = rng.standard_normal((x.size, k))
            first = timed(lambda: H.matmat(V))
            ref = np.column_stack([H.matvec(V[:, j]) for j in range(k)])
            assert np.allclose(H.matmat(V), ref, rtol=1e-9, atol=1e-9), (label, k)
            for _ in range(3):  # a lazy trace compiles its block program once matmat is hot
                H.matmat(V)
            time.sleep(1.0)
            loops, mms = [], []
            for _ in range(opts.repeats):
                loops.append(timed(lambda: [H.matvec(V[:, j]) for j in range(k)]))
                mms.append(timed(lambda: H.matmat(V)))
            loop, mm = min(loops), min(mms)
            print(f"{label:34s} {k:3d} {loop * 1e3:10.3f}ms {first * 1e3:9.1f}ms "
                  f"{mm * 1e3:8.3f}ms {mm / loop:6.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
