"""Constant powers lowered to products and square roots (issue 39): the p-Laplacian energy of
the issue, its value and gradient compiled by ``hg.function``, and ``x ** c`` alone on 10^5
elements for each exponent (fused kernels and the numpy path), before and after, in one
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


def _interleaved(fns, args, feed):
    """Median seconds per call of each function, taking turns round by round."""
    times = {k: [] for k in fns}
    for _ in range(args.rounds):
        for k, f in fns.items():
            times[k].append(timeit.timeit(lambda: f(feed), number=args.calls) / args.calls)
    return {k: 1e6 * float(np.median(v)) for k, v in times.items()}


def _before_after(make, feed):
    """``make()``'s functions compiled without (before) and with (after) the rewrites."""
    fns = {}
    for label, skip in (("before", "rewrites"), ("after", "")):
        os.environ["HESSGRAD_SKIP_PASSES"] = skip
        for name, f in make().items():
            fns[name, label] = f
            f(feed)
    os.environ.pop("HESSGRAD_SKIP_PASSES")
    return fns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    u = np.random.default_rng(0).standard_normal(args.m * args.m)
    for p in (3.0, 4.0, 2.5):  # exponents 1.5, 2 and 1.25 (no cheap form: pow either way)
        energy = p_laplacian(args.m, p)
        fns = _before_after(lambda: {
            "value": hg.function(energy, compile="eager"),
            "grad": hg.function(hg.grad(energy), compile="eager")}, u)
        us = _interleaved(fns, args, u)
        diff = abs(float(fns["value", "before"](u)) - float(fns["value", "after"](u)))
        print(f"p = {p} (x ** {p / 2}), m = {args.m}: value {us['value', 'before']:.1f} -> "
              f"{us['value', 'after']:.1f} us, grad {us['grad', 'before']:.1f} -> "
              f"{us['grad', 'after']:.1f} us; value / grad "
              f"{us['value', 'before'] / us['grad', 'before']:.2f} -> "
              f"{us['value', 'after'] / us['grad', 'after']:.2f}; |value difference| {diff:.1e}")
    x = np.random.default_rng(1).uniform(0.1, 10.0, 10**5)
    print("x ** c on 10^5 float64, us before -> after (compiled kernel; numpy path):")
    for c in (2, 3, 4, -1, -2, 0.5, 1.5, 2.5, -0.5, -1.5):
        fns = _before_after(lambda: {
            "fused": hg.function(lambda x: x ** c, compile="eager"),
            "numpy": hg.function(lambda x: x ** c, compile="eager", jit_kernels=False)}, x)
        us = _interleaved(fns, argparse.Namespace(rounds=args.rounds // 3 or 1, calls=20), x)
        print(f"  c = {c:4}: {us['fused', 'before']:7.1f} -> {us['fused', 'after']:6.1f}; "
              f"{us['numpy', 'before']:7.1f} -> {us['numpy', 'after']:6.1f}")


if __name__ == "__main__":
    main()
