"""Hessian-vector products and full Hessians, side by side with peers, as ratios, in one run.

1. HVP time / gradient time of the same engine (Pearlmutter: a small constant; the design
   target is <= 4) on Rosenbrock n = 100000 and logistic regression (10,000 rows, d = 1000):
   hessgrad ``hvp`` modes ``auto`` (default: eagerly rev-fwd), ``fwd-rev`` and ``rev-rev``,
   ``function`` of the HVP,
   and ``make_hvp`` (fixed x, many products); autograd ``hessian_tensor_product`` and
   ``make_hvp``; JAX ``jit`` of ``jvp`` of ``grad``; PyTorch ``torch.func.jvp`` of
   ``torch.func.grad``, autograd double-backward, and double-backward on a retained graph
   (fixed x, many products). References: ``scipy.optimize.rosen_hess_prod`` and the
   analytic logistic HVP.
2. Full Hessians, Rosenbrock n = 1000 and logistic d = 1000: ``hg.hessian``,
   ``autograd.hessian``, ``jax.jit(jax.hessian)``, ``torch.func.hessian``, checked against
   ``scipy.optimize.rosen_hess`` and ``X^T diag(p (1 - p)) X / m + lam I``.

Run from the repository root (see benchmarks/README.md)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_second_order.py
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import numpy as np  # noqa: E402

import hessgrad as hg  # noqa: E402
import problems as P  # noqa: E402

PEARLMUTTER_TARGET = 4.0

# Each HVP engine's ratio is taken to the gradient engine of the same family and mode.
GRAD_OF = {
    "numpy reference HVP": "numpy reference gradient",
    "hessgrad hvp auto": "hessgrad grad",
    "hessgrad hvp fwd-rev": "hessgrad grad",
    "hessgrad hvp rev-rev": "hessgrad grad",
    "hessgrad function(hvp fwd-rev)": "hessgrad function(grad)",
    "hessgrad make_hvp, per product": "hessgrad grad",
    "hessgrad make_hvp, setup + 1 product": "hessgrad grad",
    "autograd hessian_tensor_product": "autograd grad",
    "autograd make_hvp, per product": "autograd grad",
    "jax jit(jvp(grad))": "jax jit(grad)",
    "torch.func jvp(grad)": "torch.func.grad",
    "torch double backward": "torch autograd.grad",
    "torch double backward, retained graph, per product": "torch autograd.grad",
}


def grad_engines(peers, fs, args):
    """Gradient engines w.r.t. ``args[0]`` (the denominators of the HVP / grad ratios)."""
    f_hg, f_ag, f_jax, f_torch = fs
    traced = hg.function(hg.grad(f_hg))
    engines = [("hessgrad grad", lambda: hg.grad(f_hg)(*args)),
               ("hessgrad function(grad)", lambda: traced(*args))]
    if peers["autograd"]:
        g = peers["autograd"][0].grad(f_ag)
        engines.append(("autograd grad", lambda: g(*args)))
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jargs = [jax.device_put(jnp.asarray(a)) for a in args]
        jg = jax.jit(jax.grad(f_jax))
        engines.append(("jax jit(grad)", lambda: jg(*jargs).block_until_ready()))
    if peers["torch"]:
        torch = peers["torch"]
        targs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
        leaf = targs[0].clone().requires_grad_(True)

        def torch_autograd():
            (g,) = torch.autograd.grad(f_torch(leaf, *targs[1:]), leaf)
            return g
        tg = torch.func.grad(f_torch)
        engines += [("torch autograd.grad", torch_autograd),
                    ("torch.func.grad", lambda: tg(*targs))]
    return engines


def hvp_engines(peers, fs, args, v):
    """HVP engines: ``H(args[0]) @ v``."""
    f_hg, f_ag, f_jax, f_torch = fs
    hv_auto, hv_fr, hv_rr = (hg.hvp(f_hg, mode=m) for m in ("auto", "fwd-rev", "rev-rev"))
    traced = hg.function(lambda *a: hg.hvp(f_hg)(*a))
    fixed = hg.make_hvp(f_hg)(*args)
    engines = [
        ("hessgrad hvp auto", lambda: hv_auto(*args, v)),
        ("hessgrad hvp fwd-rev", lambda: hv_fr(*args, v)),
        ("hessgrad hvp rev-rev", lambda: hv_rr(*args, v)),
        ("hessgrad function(hvp fwd-rev)", lambda: traced(*args, v)),
        ("hessgrad make_hvp, per product", lambda: fixed(v)),
        ("hessgrad make_hvp, setup + 1 product", lambda: hg.make_hvp(f_hg)(*args)(v)),
    ]
    if peers["autograd"]:
        autograd = peers["autograd"][0]
        htp = autograd.hessian_tensor_product(f_ag)
        ag_fixed, _ = autograd.make_hvp(f_ag)(*args)
        engines += [("autograd hessian_tensor_product", lambda: htp(*args, v)),
                    ("autograd make_hvp, per product", lambda: ag_fixed(v))]
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jargs = [jax.device_put(jnp.asarray(a)) for a in args]
        jv = jax.device_put(jnp.asarray(v))

        @jax.jit
        def j_hvp(x, rest, u):
            return jax.jvp(lambda x: jax.grad(f_jax)(x, *rest), (x,), (u,))[1]
        engines.append(("jax jit(jvp(grad))",
                        lambda: j_hvp(jargs[0], jargs[1:], jv).block_until_ready()))
    if peers["torch"]:
        torch = peers["torch"]
        targs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
        tv = torch.from_numpy(v)
        tgrad = torch.func.grad(f_torch)
        leaf = targs[0].clone().requires_grad_(True)

        def double_backward():
            (g,) = torch.autograd.grad(f_torch(leaf, *targs[1:]), leaf, create_graph=True)
            (hv,) = torch.autograd.grad(g, leaf, tv)
            return hv
        (g_kept,) = torch.autograd.grad(f_torch(leaf, *targs[1:]), leaf, create_graph=True)

        def retained():
            (hv,) = torch.autograd.grad(g_kept, leaf, tv, retain_graph=True)
            return hv
        engines += [
            ("torch.func jvp(grad)",
             lambda: torch.func.jvp(lambda x: tgrad(x, *targs[1:]), (targs[0],), (tv,))[1]),
            ("torch double backward", double_backward),
            ("torch double backward, retained graph, per product", retained),
        ]
    return engines


def hessian_engines(peers, fs, args):
    f_hg, f_ag, f_jax, f_torch = fs
    H = hg.hessian(f_hg)  # built once, like every peer's transform below
    engines = [("hessgrad hessian", lambda: H(*args))]
    if peers["autograd"]:
        h = peers["autograd"][0].hessian(f_ag)
        engines.append(("autograd hessian", lambda: h(*args)))
    if peers["jax"]:
        jax, jnp = peers["jax"]
        jargs = [jax.device_put(jnp.asarray(a)) for a in args]
        jh = jax.jit(jax.hessian(f_jax))
        engines.append(("jax jit(hessian)", lambda: jh(*jargs).block_until_ready()))
    if peers["torch"]:
        torch = peers["torch"]
        targs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
        th = torch.func.hessian(f_torch)
        engines.append(("torch.func.hessian", lambda: th(*targs)))
    return engines


def ratio_rows(grad_medians, hvp_medians):
    rows = []
    for label, t_hvp in hvp_medians.items():
        glabel = GRAD_OF.get(label)
        t_grad = grad_medians.get(glabel)
        if t_grad is None:
            continue
        r = t_hvp / t_grad
        rows.append((label, glabel, harness.fmt_time(t_hvp), harness.fmt_time(t_grad),
                     f"{r:.2f}", "-" if "setup" in label else
                     "yes" if r <= PEARLMUTTER_TARGET else "NO"))
    return rows


def main():
    args = harness.parser(__doc__.splitlines()[0]).parse_args()
    bench = harness.Bench("bench_second_order", args)
    peers = bench.peers
    rosen_fs = P.per_engine(peers, P.rosen_for)
    logistic_fs = P.per_engine(peers, P.logistic_for, P.logistic_torch)
    columns = ("HVP engine", "its gradient engine", "HVP", "gradient", "HVP/grad",
               f"<= {PEARLMUTTER_TARGET:g}")
    rng = np.random.default_rng(1)

    # --- HVP / gradient ratios
    n = 1000 if args.quick else 100000
    x = P.rosen_point(n)
    v = rng.standard_normal(n)
    title = f"Rosenbrock n={n}"
    g_med = bench.case(f"{title}: gradient", ("numpy reference gradient",
                                              lambda: P.np_rosen_grad(x)),
                       grad_engines(peers, rosen_fs, [x]))
    h_med = bench.case(f"{title}: Hessian-vector product",
                       ("numpy reference HVP", lambda: P.np_rosen_hvp(x, v)),
                       hvp_engines(peers, rosen_fs, [x], v), rtol=1e-6, atol=1e-9)
    bench.summary(f"{title}: HVP time / gradient time (Pearlmutter target <= "
                  f"{PEARLMUTTER_TARGET:g})", columns, ratio_rows(g_med, h_med), left=2)

    m, d = (1000, 100) if args.quick else (10000, 1000)
    X, y, w = P.logistic_data(m, d)
    v = rng.standard_normal(d)
    title = f"logistic m={m} d={d}"
    g_med = bench.case(f"{title}: gradient", ("numpy reference gradient",
                                              lambda: P.np_logistic_grad(w, X, y)),
                       grad_engines(peers, logistic_fs, [w, X, y]))
    h_med = bench.case(f"{title}: Hessian-vector product",
                       ("numpy reference HVP", lambda: P.np_logistic_hvp(w, X, y, v)),
                       hvp_engines(peers, logistic_fs, [w, X, y], v), rtol=1e-6, atol=1e-9)
    bench.summary(f"{title}: HVP time / gradient time (Pearlmutter target <= "
                  f"{PEARLMUTTER_TARGET:g})", columns, ratio_rows(g_med, h_med), left=2)

    # --- full Hessians
    n = 100 if args.quick else 1000
    x = P.rosen_point(n)
    bench.case(f"Rosenbrock n={n}: full Hessian",
               ("numpy scipy rosen_hess", lambda: P.np_rosen_hessian(x)),
               hessian_engines(peers, rosen_fs, [x]), rtol=1e-6, atol=1e-9)
    bench.case(f"{title}: full Hessian",
               ("numpy analytic X^T diag(p(1-p)) X/m + lam I",
                lambda: P.np_logistic_hessian(w, X, y)),
               hessian_engines(peers, logistic_fs, [w, X, y]), rtol=1e-6, atol=1e-9)
    bench.finish()


if __name__ == "__main__":
    main()
