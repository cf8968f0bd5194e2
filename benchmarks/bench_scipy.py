"""hessgrad.scipy against JAX (jax.scipy) and autograd (autograd.scipy): value, gradient, one
Hessian-vector product and the full Hessian of five objectives of the statistical corpus
(tests/objectives/stats_corpus.py, the same source bound to each library's numpy and scipy
modules), eager and compiled, in one run.

Objectives (small data sets, 25-100 observations, 3-5 parameters: what is timed is mostly the
per-call overhead of each engine, as in a typical maximum-likelihood fit):
``poisson_glm``, ``student_t_robust_regression``, ``gp_marginal_likelihood`` (Cholesky of a
25 x 25 kernel matrix), ``gaussian_mixture`` (logsumexp), ``mvn_cholesky_mle``.

Engines: hessgrad eager (``hg.grad``, ``hg.hvp``, ``hg.hessian``) and compiled
(``hg.function`` of each); JAX ``jax.jit`` of each and eager; autograd (eager only). The check
reference is hessgrad's eager result (its agreement with finite differences and SciPy is
tested in tests/objectives/test_stats_corpus.py); the value's reference is SciPy itself.

Run from the repository root::

    python benchmarks/bench_scipy.py [--quick] [--json out.json]
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import importlib.util  # noqa: E402
import pathlib  # noqa: E402

import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402
import hessgrad.scipy as hs  # noqa: E402

_PATH = pathlib.Path(__file__).resolve().parents[1] / "tests" / "objectives" / \
    "stats_corpus.py"
_spec = importlib.util.spec_from_file_location("_bench_stats_corpus", _PATH)
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

NAMES = ["poisson_glm", "student_t_robust_regression", "gp_marginal_likelihood",
         "gaussian_mixture", "mvn_cholesky_mle"]


# what autograd cannot differentiate (its gaps, reported instead of timed)
AUTOGRAD_GAPS = {
    "student_t_robust_regression": "autograd.scipy.stats.t.logpdf has no derivative in df",
    "gp_marginal_likelihood": "autograd.scipy.linalg.cho_factor has no VJP",
}
COLUMNS = ["scipy", "hessgrad eager", "hessgrad function", "jax jit", "jax eager", "autograd"]


def _by_name(objs):
    return {o.name: o for o in objs}


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_scipy", args)
    peers = bench.peers
    reference = _by_name(corpus.build(np, scipy.special, scipy.stats, scipy.linalg,
                                      scipy.signal, scipy.integrate))
    ours = _by_name(corpus.build(hnp, hs.special, hs.stats, hs.linalg, hs.signal,
                                 hs.integrate))
    jaxed = None
    if peers["jax"]:
        jax, jnp = peers["jax"]
        import jax.scipy.linalg as jla
        import jax.scipy.special as jsp
        import jax.scipy.stats as jst
        jaxed = _by_name(corpus.build(jnp, jsp, jst, jla, None, None))
    auto = None
    if peers["autograd"]:
        autograd, anp = peers["autograd"]
        import autograd.scipy.linalg as ala
        import autograd.scipy.special as asp
        import autograd.scipy.stats as ast
        auto = _by_name(corpus.build(anp, asp, ast, ala, None, None))
    rows = []
    for name in NAMES:
        x = ours[name].x0 + 0.05
        v = np.cos(np.arange(len(x)) + 1.0)
        f = ours[name].fn
        cases = {
            "value": (lambda: float(reference[name].fn(x)),
                      [("hessgrad eager", lambda: float(f(x))),
                       ("hessgrad function", lambda c=hg.function(f): float(c(x)))]),
            "gradient": (lambda: hg.grad(f)(x),
                         [("hessgrad function", lambda c=hg.function(hg.grad(f)): c(x))]),
            "HVP": (lambda: hg.hvp(f)(x, v),
                    [("hessgrad function", lambda c=hg.function(hg.hvp(f)): c(x, v))]),
            "Hessian": (lambda: hg.hessian(f)(x),
                        [("hessgrad function", lambda c=hg.function(hg.hessian(f)): c(x))]),
        }
        if jaxed is not None:
            jf = jaxed[name].fn
            jx, jv = jnp.asarray(x), jnp.asarray(v)
            jg = jax.grad(jf)

            def jhvp(x, v, jg=jg):
                return jax.jvp(jg, (x,), (v,))[1]
            jh = jax.hessian(jf)
            for kind, fn in (("value", jf), ("gradient", jg), ("HVP", jhvp), ("Hessian", jh)):
                call_args = (jx, jv) if kind == "HVP" else (jx,)
                jitted = jax.jit(fn)
                cases[kind][1].extend([
                    ("jax jit", lambda j=jitted, a=call_args: np.asarray(j(*a))),
                    ("jax eager", lambda j=fn, a=call_args: np.asarray(j(*a)))])
        if auto is not None and name in AUTOGRAD_GAPS:
            print(f"note: {name}: autograd not timed beyond the value "
                  f"({AUTOGRAD_GAPS[name]})")
            cases["value"][1].append(("autograd", lambda af=auto[name].fn: float(af(x))))
        elif auto is not None:
            af = auto[name].fn
            ag = autograd.grad(af)
            engines = {"value": lambda: float(af(x)), "gradient": lambda: ag(x),
                       "HVP": lambda: autograd.hessian_tensor_product(af)(x, v),
                       "Hessian": lambda: autograd.hessian(af)(x)}
            for kind, fn in engines.items():
                cases[kind][1].append(("autograd", fn))
        for kind, (ref_fn, engines) in cases.items():
            label = "scipy" if kind == "value" else "hessgrad eager"
            medians = bench.case(f"{name}: {kind}", (label, ref_fn), engines, rtol=1e-9,
                                 atol=1e-12)
            rows.append((name, kind) + tuple(
                harness._fmt_time(medians[e]) if e in medians else "-" for e in COLUMNS))
    bench.summary("median time per call", ["objective", "quantity"] + COLUMNS, rows, left=2)
    bench.finish()


if __name__ == "__main__":
    main()
