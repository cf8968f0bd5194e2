"""Constrained optimization with IPOPT: hessgrad's derivatives against CasADi's, in one run.

    python benchmarks/bench_ipopt.py [--quick] [--only NAME] [--n 10000] [--json FILE]
    python benchmarks/bench_ipopt.py --report FILE      # the tables of a saved run

Every problem of the constrained corpus (``hessgrad.problems_constrained``: the
Hock-Schittkowski problems at their size, the scalable ones at about ``--n`` variables) is
solved three ways, with the same IPOPT options (tol 1e-8, mu_strategy adaptive):

* ``hessgrad``: :func:`hessgrad.ipopt.minimize` (cyipopt-wheels' Ipopt 3.14.11 + MUMPS
  5.5.1), derivatives from hessgrad;
* ``casadi``: CasADi's ``nlpsol("ipopt")`` on the same problem code run on SX (CasADi 3.8's
  own Ipopt 3.14.19 + MUMPS 5.8.2, derivatives generated from the SX graph, evaluated in
  C++);
* ``cyipopt+casadi``: cyipopt (hessgrad's Ipopt binary) fed CasADi's derivative functions:
  with exact derivatives on both sides the iteration counts must be equal, and its solve
  time separates the two Ipopt builds from the two derivative engines.

Reported per problem: n, m, nonzeros of the Jacobian and of the Hessian's lower triangle,
colors against their lower bounds, iterations (hessgrad, cyipopt+casadi, casadi), the
objective against the known optimum, first-call time (hessgrad: trace, sparsity detection,
coloring, compile, first runs; CasADi: building the SX graph and ``nlpsol``, which
generates its derivative functions), the solve time (IPOPT's run, evaluations included),
and the time in function and derivative evaluations per iteration (hessgrad: the cyipopt
callbacks, Python included; CasADi: its ``t_wall_nlp_*`` statistics). Solve times are the
best of ``--repeats`` solves (default 3; a new ``minimize`` each, which traces again: its
setup is the "again" column). Single-threaded BLAS (``harness``).
"""

import harness  # noqa: F401 - first: pins BLAS and XLA to one thread

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from hessgrad import problems_constrained as pc  # noqa: E402
from hessgrad.ipopt import minimize  # noqa: E402

OPTIONS = {"tol": 1e-8, "mu_strategy": "adaptive"}
SCALABLE = ["goddard", "hanging_chain", "car_race", "vanderpol", "lq_control", "pde_control",
            "minsurf", "torsion"]
FIXED_SIZE = {"thomson": 150, "portfolio": 500}  # dense Lagrangian Hessians
CASADI_KEYS = ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l")


def problems(args):
    out = []
    for name in pc.names():
        if args.only and not any(o in name for o in args.only.split(",")):
            continue
        if name.startswith("hs"):
            if args.skip_hs:
                continue
            out.append(pc.get(name))
        elif name in FIXED_SIZE:
            out.append(pc.get(name, n=FIXED_SIZE[name] // (5 if args.quick else 1)))
        else:
            out.append(pc.get(name, n=args.n))
    return out


def solve_hessgrad(p, repeats, jit_kernels=False):
    runs = []
    for _ in range(repeats):
        res = minimize(p.fun, p.x0, bounds=p.bounds, constraints=p.constraints,
                       options=dict(OPTIONS), jit_kernels=jit_kernels)
        runs.append(res)
    best = min(runs, key=lambda r: r.solve_time)
    first = runs[0]
    evals = sum(best.eval_time.values())
    return {"f": best.fun, "nit": best.nit, "status": best.status,
            "first_call": first.setup_time, "again": min(r.setup_time for r in runs[1:])
            if repeats > 1 else None, "solve": best.solve_time,
            "eval": evals, "eval_per_iter": evals / max(best.nit, 1),
            "hess_per_call": best.eval_time["hessian"] / max(best.ncalls["hessian"], 1),
            "jac_per_call": best.eval_time["jacobian"] / max(best.ncalls["jacobian"], 1),
            "sparsity": best.sparsity, "eval_time": best.eval_time, "ncalls": best.ncalls}


def agreement(p):
    """The largest difference between hessgrad's and CasADi's Jacobian and Lagrangian
    Hessian at a point near x0 (random multipliers), relative to the largest entry."""
    import scipy.sparse as sp
    from casadi_problems import CasadiCallbacks
    from hessgrad.ipopt import nlp
    rng = np.random.default_rng(0)
    x = np.clip(p.x0 + 0.01 * (1 + np.abs(p.x0)) * rng.standard_normal(p.n), p.lb, p.ub)
    lam, sigma = rng.standard_normal(p.m), 0.7
    ours, theirs = nlp(p.fun, p.x0, constraints=p.constraints, bounds=p.bounds), \
        CasadiCallbacks(p)
    out = {}
    for what, shape, args in (("jacobian", (p.m, p.n), (x,)),
                              ("hessian", (p.n, p.n), (x, lam, sigma))):
        mats = [sp.csr_matrix((getattr(cb, what)(*args), getattr(cb, what + "structure")()),
                              shape=shape) for cb in (ours, theirs)]
        scale = max(abs(mats[1]).max() if mats[1].nnz else 0.0, 1e-300)
        out[what] = float(abs(mats[0] - mats[1]).max() / scale) if mats[1].nnz else 0.0
    return out


def solve_with_casadi(p, repeats):
    from casadi_problems import solve_casadi, solve_cyipopt_casadi
    runs = [solve_casadi(p, dict(OPTIONS)) for _ in range(repeats)]
    best = min(runs, key=lambda r: r["solve"])
    stats = best["stats"]
    evals = sum(stats.get("t_wall_" + k, 0.0) for k in CASADI_KEYS)
    hess_calls = max(stats.get("n_call_nlp_hess_l", 0), 1)
    jac_calls = max(stats.get("n_call_nlp_jac_g", 0), 1)
    same = min((solve_cyipopt_casadi(p, dict(OPTIONS)) for _ in range(repeats)),
               key=lambda r: r["solve"])
    return {"f": best["f"], "nit": best["nit"], "success": best["success"],
            "first_call": runs[0]["setup"], "solve": best["solve"], "eval": evals,
            "eval_per_iter": evals / max(best["nit"], 1),
            "hess_per_call": stats.get("t_wall_nlp_hess_l", 0.0) / hess_calls,
            "jac_per_call": stats.get("t_wall_nlp_jac_g", 0.0) / jac_calls,
            "same_ipopt": {"nit": same["nit"], "f": same["f"], "solve": same["solve"],
                           "setup": same["setup"]}}


def fmt(t):
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def markdown(columns, rows):
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---" if k == 0 else "---:" for k in range(len(columns))) + "|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def report(records, n):
    """Print the corpus table, the times and the ratios at about ``n`` variables."""
    corpus_cols = ["problem", "n", "m", "nnz(J)", "J colors (bound)", "nnz(H) lower",
                   "H colors (max row nnz)", "iters hessgrad", "iters cyipopt+CasADi",
                   "iters CasADi", "f", "known optimum"]
    corpus_rows = []
    bench_cols = ["problem", "n", "first call hg", "first call CasADi", "solve hg",
                  "solve cyipopt+CasADi", "solve CasADi", "evals/iter hg",
                  "evals/iter CasADi", "H call hg", "H call CasADi", "J call hg",
                  "J call CasADi"]
    bench_rows = []
    for r in records:
        h, c = r["hessgrad"], r.get("casadi")
        s = h["sparsity"]
        corpus_rows.append([
            r["name"], r["n"], r["m"], s["jac_nnz"],
            f"{s['jac_colors']} ({s['jac_lower_bound']})" if r["m"] else "-",
            s["hess_nnz"],
            f"{s['hess_colors']} ({s['hess_max_row_nnz']})" + (
                ", dense" if s["hess_density"] == 1 else ""),
            h["nit"], (f"{c['same_ipopt']['nit']}" + (f" (1 ulp: {r['ulp_spread']})"
                                                      if "ulp_spread" in r else ""))
            if c else "-", c["nit"] if c else "-",
            f"{h['f']:.10g}", "-" if r["known"] is None else f"{r['known']:.10g}"])
        bench_rows.append([
            r["name"], r["n"], fmt(h["first_call"]), fmt(c["first_call"]) if c else "-",
            fmt(h["solve"]), fmt(c["same_ipopt"]["solve"]) if c else "-",
            fmt(c["solve"]) if c else "-", fmt(h["eval_per_iter"]),
            fmt(c["eval_per_iter"]) if c else "-", fmt(h["hess_per_call"]),
            fmt(c["hess_per_call"]) if c else "-", fmt(h["jac_per_call"]),
            fmt(c["jac_per_call"]) if c else "-"])
    print("\n## Corpus\n")
    print(markdown(corpus_cols, corpus_rows))
    print("\n## Times\n")
    print(markdown(bench_cols, bench_rows))
    large = [r for r in records if r["n"] >= 0.9 * n and "casadi" in r]
    if large:
        def gm(values):
            return float(np.exp(np.mean(np.log(values))))
        ratios = {
            "derivative time per iteration, hessgrad / CasADi": gm(
                [r["hessgrad"]["eval_per_iter"] / r["casadi"]["eval_per_iter"]
                 for r in large]),
            "solve, hessgrad / cyipopt+CasADi (same Ipopt)": gm(
                [r["hessgrad"]["solve"] / r["casadi"]["same_ipopt"]["solve"] for r in large]),
            "solve, hessgrad / CasADi nlpsol": gm(
                [r["hessgrad"]["solve"] / r["casadi"]["solve"] for r in large]),
            "solve, cyipopt+CasADi / CasADi nlpsol (the two Ipopt builds)": gm(
                [r["casadi"]["same_ipopt"]["solve"] / r["casadi"]["solve"] for r in large]),
            "first call + solve, hessgrad / CasADi nlpsol": gm(
                [(r["hessgrad"]["first_call"] + r["hessgrad"]["solve"])
                 / (r["casadi"]["first_call"] + r["casadi"]["solve"]) for r in large]),
        }
        print(f"\n## Geometric means over the {len(large)} problems with n >= {0.9 * n:g}\n")
        for k, v in ratios.items():
            print(f"* {k}: {v:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1000, one repeat")
    parser.add_argument("--n", type=int, default=None,
                        help="variables of the scalable problems (default 10000)")
    parser.add_argument("--only", default="", help="comma-separated name substrings")
    parser.add_argument("--skip-hs", action="store_true", help="leave out Hock-Schittkowski")
    parser.add_argument("--repeats", type=int, default=None, help="solves per engine")
    parser.add_argument("--no-casadi", action="store_true")
    parser.add_argument("--jit-kernels", action="store_true",
                        help="hessgrad with fused Numba kernels (compiled per size)")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--report", metavar="FILE",
                        help="print the tables of an earlier --json run, solve nothing")
    args = parser.parse_args()
    args.n = args.n or (1000 if args.quick else 10000)
    if args.report:
        with open(args.report) as fh:
            saved = json.load(fh)
        report(saved["records"], saved.get("n", args.n))
        return
    repeats = args.repeats or (1 if args.quick else 3)
    info = harness.machine_info({"autograd": None, "jax": None, "torch": None})
    harness.print_machine(info)
    casadi = None
    if not args.no_casadi:
        try:
            import casadi
            print(f"# CasADi {casadi.__version__}")
        except ImportError:
            print("note: casadi is not installed (pip install -e '.[bench]'); hessgrad only")
    records, failures = [], []
    for p in problems(args):
        print(f"== {p.name}: n={p.n} m={p.m}", flush=True)
        rec = {"name": p.name, "n": p.n, "m": p.m, "known": p.minimum}
        rec["hessgrad"] = h = solve_hessgrad(p, repeats, args.jit_kernels)
        if casadi is not None:
            rec["casadi"] = c = solve_with_casadi(p, repeats)
            rec["agreement"] = agreement(p)
            if max(rec["agreement"].values()) > 1e-12:
                failures.append(f"{p.name}: derivatives differ from CasADi's by "
                                f"{rec['agreement']} (relative)")
            if c["same_ipopt"]["nit"] != h["nit"]:
                # exact derivatives agree to rounding; a long run can amplify the last bits:
                # CasADi's own, moved by one rounding unit at random, show the spread
                from casadi_problems import solve_cyipopt_casadi
                spread = [solve_cyipopt_casadi(p, dict(OPTIONS), ulps=seed)["nit"]
                          for seed in (1, 2, 3)]
                rec["ulp_spread"] = spread
                lo, hi = min(spread + [c["same_ipopt"]["nit"]]), max(spread + [
                    c["same_ipopt"]["nit"]])
                print(f"   iterations differ: hessgrad {h['nit']}, CasADi's derivatives "
                      f"{c['same_ipopt']['nit']}, moved by one ulp {spread}")
                if not lo <= h["nit"] <= hi:
                    failures.append(f"{p.name}: {h['nit']} iterations with hessgrad, "
                                    f"{c['same_ipopt']['nit']} with CasADi's derivatives "
                                    f"({spread} with them moved by one ulp)")
            if abs(c["f"] - h["f"]) > 1e-6 * max(1.0, abs(c["f"])):
                failures.append(f"{p.name}: f = {h['f']!r} (hessgrad), {c['f']!r} (CasADi)")
        if p.minimum is not None and abs(h["f"] - p.minimum) > max(p.rtol, 1e-6) * max(
                1.0, abs(p.minimum)):
            failures.append(f"{p.name}: f = {h['f']!r}, known optimum {p.minimum!r}")
        if h["status"] != 0:
            failures.append(f"{p.name}: IPOPT status {h['status']}")
        records.append(rec)
        print("   " + json.dumps({k: (round(v, 6) if isinstance(v, float) else v)
                                  for k, v in h.items() if k not in ("sparsity", "eval_time",
                                                                     "ncalls")}), flush=True)

    report(records, args.n)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "options": OPTIONS, "n": args.n, "records": records,
                       "failures": failures}, fh, indent=1, default=str)
    if failures:
        print("\nFAILED:")
        for f in failures:
            print("  " + f)
        sys.exit(1)


if __name__ == "__main__":
    main()
