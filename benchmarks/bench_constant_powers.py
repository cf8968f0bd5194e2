"""Constant powers lowered to products and square roots (issue 39): the p-Laplacian energy of
the issue, its value and gradient compiled by ``hg.function``, before and after, in one
process. "Before" compiles with the simplify step ``rewrites`` skipped
(``HESSGRAD_SKIP_PASSES=rewrites``, read when each plan is compiled), which in these programs
turns off only the power rewrite: its ``x ** 1.5`` is then pow() per element in the fused loop.
The engines take turns round by round; medians over the rounds.

    python benchmarks/bench_constant_powers.py [--m 32] [--rounds 31] [--calls 200]
"""

import argparse
import os
import timeit

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp


def p_laplacian(m, p):
    h = 1.0 / (m + 1)

    def energy(u):
        U = hnp.pad(hnp.reshape(u, (m, m)), 1)  # zero boundary
        dx = (U[1:, :-1] - U[:-1, :-1]) / h
        dy = (U[:-1, 1:] - U[:-1, :-1]) / h
        return h * h * hnp.sum((dx * dx + dy * dy + 1e-8) ** (p / 2)) / p - h * h * hnp.sum(u)
    return energy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    u = np.random.default_rng(0).standard_normal(args.m * args.m)
    for p in (3.0, 4.0, 2.5):  # exponents 1.5, 2 and 1.25 (no cheap form: pow either way)
        energy = p_laplacian(args.m, p)
        fns = {}
        for label, skip in (("before", "rewrites"), ("after", "")):
            os.environ["HESSGRAD_SKIP_PASSES"] = skip
            fns["value", label] = hg.function(energy, compile="eager")
            fns["grad", label] = hg.function(hg.grad(energy), compile="eager")
            for f in fns.values():
                f(u)
        os.environ.pop("HESSGRAD_SKIP_PASSES")
        times = {k: [] for k in fns}
        for _ in range(args.rounds):
            for k, f in fns.items():
                times[k].append(timeit.timeit(lambda: f(u), number=args.calls) / args.calls)
        us = {k: 1e6 * float(np.median(v)) for k, v in times.items()}
        diff = abs(float(fns["value", "before"](u)) - float(fns["value", "after"](u)))
        print(f"p = {p} (x ** {p / 2}), m = {args.m}: value {us['value', 'before']:.1f} -> "
              f"{us['value', 'after']:.1f} us, grad {us['grad', 'before']:.1f} -> "
              f"{us['grad', 'after']:.1f} us; value / grad "
              f"{us['value', 'before'] / us['grad', 'before']:.2f} -> "
              f"{us['value', 'after'] / us['grad', 'after']:.2f}; |value difference| {diff:.1e}")


if __name__ == "__main__":
    main()
