"""The Goddard rocket by direct collocation, solved by IPOPT with hessgrad's exact sparse
derivatives.

A rocket climbs vertically against drag (``D = Dc v^2 exp(-hc (h - 1))``) and gravity
(``g = 1 / h^2``), burning fuel at a rate proportional to its thrust ``T`` (``0 <= T <=
3.5``); how should it throttle to reach the greatest altitude (Goddard 1919; the scaled
problem of COPS 3.0, whose optimum is ``h(tf) = 1.01283``)? The states ``h, v, m`` and the
control ``T`` are discretised on ``nh`` intervals of a free final time ``tf`` and the
dynamics become ``3 nh`` trapezoidal collocation equations: a few thousand variables and
constraints, written below as numpy array expressions.

``hessgrad.ipopt.minimize`` reads the Jacobian's pattern (banded, plus the column of
``tf``) and the Lagrangian Hessian's pattern off the traced functions, colors them (a
handful of colors, independent of ``nh``), and hands IPOPT the exact sparse derivatives,
the Hessian of the Lagrangian from one batched product per iteration. The solution has the
classic structure: full thrust, a singular arc of intermediate thrust where drag and
gravity are balanced, then coasting with the engine off. With matplotlib installed the
trajectories are plotted.

    python examples/optimal_control_ipopt.py [--nh 800] [--plot goddard.png]
"""

import argparse
import importlib.util

import numpy as np

import hessgrad.numpy as hnp
from hessgrad.ipopt import minimize

# COPS 3.0's scaled Goddard rocket
H0, V0, M0, G0 = 1.0, 0.0, 1.0, 1.0
TC, HC, VC, MC = 3.5, 500.0, 620.0, 0.6
DC, MF, C, TMAX = 0.5 * VC * M0 / G0, MC * M0, 0.5 * np.sqrt(G0 * H0), TC * G0 * M0
COPS_OPTIMUM = 1.01283


def rocket(nh):
    """``(altitude, dynamics, x0, bounds)`` on ``nh`` intervals; the variables are
    ``[h (nh+1), v (nh+1), m (nh+1), T (nh+1), tf]``."""
    K = nh + 1

    def split(z):
        return z[:K], z[K:2 * K], z[2 * K:3 * K], z[3 * K:4 * K], z[4 * K]

    def altitude(z):                  # maximize h(tf): minimize -h(tf)
        return -z[K - 1]

    def dynamics(z):                  # trapezoidal collocation of h' = v, v' = a, m' = -T/c
        h, v, m, T, tf = split(z)
        step = tf / nh
        drag = DC * v ** 2 * hnp.exp(-HC * (h - H0) / H0)
        accel = (T - drag) / m - G0 * (H0 / h) ** 2
        return hnp.concatenate([
            h[1:] - h[:-1] - 0.5 * step * (v[1:] + v[:-1]),
            v[1:] - v[:-1] - 0.5 * step * (accel[1:] + accel[:-1]),
            m[1:] - m[:-1] + 0.5 * step * (T[1:] + T[:-1]) / C])

    t = np.linspace(0.0, 1.0, K)
    x0 = np.concatenate([np.ones(K), t * (1 - t), M0 + (MF - M0) * t, np.full(K, TMAX / 2),
                         [1.0]])
    lb = np.concatenate([np.full(K, H0), np.zeros(K), np.full(K, MF), np.zeros(K), [0.0]])
    ub = np.concatenate([np.full(2 * K, np.inf), np.full(K, M0), np.full(K, TMAX),
                         [np.inf]])
    for index, value in ((0, H0), (K, V0), (2 * K, M0), (3 * K - 1, MF)):  # h, v, m at 0;
        lb[index] = ub[index] = value                                      # m(tf) = mf
    return altitude, dynamics, x0, list(zip(lb, ub)), split


def _plot(t, h, v, m, T, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9, 6), sharex=True)
    for ax, y, label in zip(axes.ravel(), (h, v, m, T),
                            ("altitude h", "speed v", "mass m", "thrust T")):
        ax.plot(t, y)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("time")
    fig.suptitle(f"Goddard rocket: h(tf) = {h[-1]:.5f}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(nh=800, plot="goddard_rocket.png"):
    """Solve on ``nh`` intervals; returns a dict with the solution and the solver's facts.
    ``plot=None`` disables the figure."""
    altitude, dynamics, x0, bounds, split = rocket(nh)
    res = minimize(altitude, x0, bounds=bounds,
                   constraints=[{"type": "eq", "fun": dynamics}])
    h, v, m, T, tf = split(res.x)
    t = np.linspace(0.0, tf, nh + 1)
    s = res.sparsity
    print(f"Goddard rocket, {nh} intervals: {s['n']} variables, {s['m']} constraints")
    print(f"  Jacobian: {s['jac_nnz']} nonzeros, {s['jac_colors']} colors "
          f"(at least {s['jac_lower_bound']})")
    print(f"  Hessian of the Lagrangian: {s['hess_nnz']} nonzeros in the lower triangle, "
          f"{s['hess_colors']} colors")
    print(f"  IPOPT: {res.message} in {res.nit} iterations")
    print(f"  h(tf) = {h[-1]:.6f} (COPS 3.0: {COPS_OPTIMUM}), tf = {tf:.5f}")
    evals = sum(res.eval_time.values())
    print(f"  setup (trace, detect, color, compile) {res.setup_time:.2f} s, solve "
          f"{res.solve_time:.2f} s, of which derivatives and values {evals:.3f} s")
    full, off = np.flatnonzero(T < 0.99 * TMAX), np.flatnonzero(T > 0.01 * TMAX)
    if len(full) and len(off):
        print(f"  full thrust until t = {t[full[0]]:.4f}, engine off from "
              f"t = {t[min(off[-1] + 1, nh)]:.4f}")
    if plot:
        if importlib.util.find_spec("matplotlib") is None:
            print("(matplotlib is not installed, so no plot: pip install 'hessgrad[plot]')")
        else:
            _plot(t, h, v, m, T, plot)
            print(f"wrote {plot}")
    return {"result": res, "t": t, "h": h, "v": v, "m": m, "T": T, "tf": tf}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nh", type=int, default=800)
    parser.add_argument("--plot", default="goddard_rocket.png")
    args = parser.parse_args()
    main(nh=args.nh, plot=args.plot)
