"""What the capture check costs: hessgrad's implicit caches (hessian, make_hvp,
HessianOperator, the SciPy objective) run ``f`` once eagerly per call to check what it reads
from outside its arguments (``hessgrad.tracing.capture``). Passing an ``hg.function`` skips
the check (the caches then trust the trace, as before the check existed), so timing both in
one run gives the check's price per call, as a ratio.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_capture.py [--quick]

First calls (trace + compile) are timed once per problem in a fresh cache
(``hg.clear_caches()``), checked and trusted.
"""

import harness  # noqa: F401 - first: one thread for BLAS

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
from problems import logistic_data, rosen_point  # noqa: E402


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logistic(m, d):
    X, y, w = logistic_data(m, d)

    def f(w):  # the data closed over: a captured matrix (lifted when large)
        return hnp.mean(hnp.logaddexp(0.0, -y * (X @ w))) + 0.005 * hnp.sum(w * w)
    return f, w


def mlp():
    p = hg.problems.get("mlp")
    return p.fun, p.x0


PROBLEMS = {
    "rosenbrock n=50": lambda: (rosenbrock, rosen_point(50)),
    "rosenbrock n=1e4": lambda: (rosenbrock, rosen_point(10_000)),
    "logistic 1000x100": lambda: logistic(1000, 100),
    "logistic 10000x1000": lambda: logistic(10_000, 1000),
    "mlp (353)": mlp,
}


def tasks(f, x):
    v = np.ones_like(x)
    out = {
        "make_hvp(f)(x)(v)": lambda: hg.make_hvp(f)(x)(v),
        "HessianOperator(f, x) @ v": lambda: hg.HessianOperator(f, x) @ v,
        "objective fun + jac": lambda: (lambda o: (o.fun(x), o.jac(x)))(OBJECTIVES[id(f)]),
        "objective hessp": lambda: OBJECTIVES[id(f)].hessp(x, v),
    }
    if x.size <= 400:
        out["hessian(f)(x)"] = lambda: hg.hessian(f)(x)
    return out


OBJECTIVES = {}


def median_time(fn, quick):
    times, _ = harness.measure(fn, target=0.02 if quick else 0.2, repeats=3 if quick else 7,
                               budget=3.0 if quick else 10.0)
    return statistics.median(times)


def first_call(fn):
    hg.clear_caches()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    args = harness.parser(__doc__).parse_args()
    print(f"{'problem':<22}{'task':<28}{'checked':>11}{'trusted':>11}{'ratio':>7}"
          f"{'1st checked':>13}{'1st trusted':>13}")
    ratios = []
    for name, make in PROBLEMS.items():
        f, x = make()
        trusted = hg.function(f)
        for g in (f, trusted):
            OBJECTIVES[id(g)] = hg.scipy.objective(g)
        for task, checked_fn in tasks(f, x).items():
            trusted_fn = tasks(trusted, x)[task]
            first = (first_call(checked_fn), first_call(trusted_fn))
            checked_fn(), trusted_fn()
            t_checked = median_time(checked_fn, args.quick)
            t_trusted = median_time(trusted_fn, args.quick)
            ratios.append(t_checked / t_trusted)
            print(f"{name:<22}{task:<28}{harness._fmt_time(t_checked):>11}"
                  f"{harness._fmt_time(t_trusted):>11}{t_checked / t_trusted:>7.2f}"
                  f"{harness._fmt_time(first[0]):>13}{harness._fmt_time(first[1]):>13}")
    print(f"geometric mean checked / trusted: {np.exp(np.mean(np.log(ratios))):.2f}")


if __name__ == "__main__":
    main()
