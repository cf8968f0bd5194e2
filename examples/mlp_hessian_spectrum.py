"""The Hessian spectrum of a small tanh MLP at initialisation and after training.

For the built-in ``mlp`` regression problem (``hessgrad.problems``), the loss Hessian is
analysed matrix-free, from Hessian-vector products only: extreme eigenvalues by Lanczos
(``solvers.eigsh``), the spectral density by stochastic Lanczos quadrature
(``solvers.spectral_density``) and the negative-curvature mass below ``-1e-3``. Then a few
hundred steps of gradient descent (a traced ``hg.value_and_grad``) train the network and the
analysis is repeated: the bulk of the spectrum concentrates near zero, a few outliers carry
the curvature, and the top eigenvalue stays below the gradient-descent stability limit
``2 / learning_rate``. With matplotlib installed the two densities are plotted.

    python examples/mlp_hessian_spectrum.py [--plot spectrum.png]
"""

import argparse
import importlib.util

import numpy as np

import hessgrad as hg
from hessgrad import solvers
from hessgrad import problems


def analyse(fun, theta, k=5, seed=0, num_probes=8, lanczos_steps=40):
    H = hg.HessianOperator(fun, theta)
    top = solvers.eigsh(H, k=k, which="LA", return_eigenvectors=False, rng=seed)[::-1]
    bottom = solvers.eigsh(H, k=k, which="SA", return_eigenvectors=False, rng=seed)
    density = solvers.spectral_density(H, num_probes=num_probes,
                                       lanczos_steps=min(lanczos_steps, H.shape[0]), rng=seed)
    negative_mass = density.trace(lambda x: (x < -1e-3).astype(float)) / H.shape[0]
    return {"top": top, "bottom": bottom, "density": density,
            "negative_fraction": float(negative_mass), "hvps": H.nmatvec}


def train(fun, theta, steps, learning_rate):
    step = hg.function(hg.value_and_grad(fun))
    losses = []
    for _ in range(steps):
        value, g = step(theta)
        losses.append(float(value))
        theta = theta - learning_rate * np.asarray(g)
    return theta, losses


def _plot(before, after, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo = min(before["bottom"][0], after["bottom"][0])
    hi = max(before["top"][0], after["top"][0])
    span = hi - lo
    grid = np.linspace(lo - 0.05 * span, hi + 0.05 * span, 600)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, r in (("initialisation", before), ("after training", after)):
        ax.semilogy(grid, np.maximum(r["density"].density(grid, span / 200), 1e-8), label=label)
    ax.set_xlabel("Hessian eigenvalue")
    ax.set_ylabel("density (SLQ, log scale)")
    ax.set_title("MLP loss Hessian spectrum")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(hidden=16, steps=300, learning_rate=0.2, seed=0, plot="mlp_hessian_spectrum.png"):
    """Returns the analyses before and after training; ``plot=None`` disables the figure."""
    problem = problems.get("mlp", seed=seed, hidden=hidden)
    print(f"{problem.description}\n")
    before = analyse(problem.fun, problem.x0, seed=seed)
    theta, losses = train(problem.fun, problem.x0, steps, learning_rate)
    after = analyse(problem.fun, theta, seed=seed)
    print(f"loss: {losses[0]:.4f} at initialisation -> {float(problem.fun(theta)):.4f} after "
          f"{steps} gradient-descent steps (learning rate {learning_rate}, stability limit "
          f"2/lr = {2 / learning_rate:g})\n")
    for label, r in (("initialisation", before), ("after training", after)):
        print(f"{label}:")
        print(f"  top eigenvalues     {np.array2string(r['top'], precision=4)}")
        print(f"  bottom eigenvalues  {np.array2string(r['bottom'], precision=4)}")
        print(f"  fraction of eigenvalues < -1e-3 (SLQ): {r['negative_fraction']:.3f}")
        print(f"  ({r['hvps']} Hessian-vector products)")
        edges = np.linspace(r["bottom"][0], r["top"][0], 9)
        mass = [r["density"].trace(lambda x, a=a, b=b: ((x >= a) & (x < b)).astype(float))
                for a, b in zip(edges[:-1], edges[1:])]
        print("  eigenvalue histogram (SLQ estimate of counts per bin):")
        for a, b, c in zip(edges[:-1], edges[1:], mass):
            bar = "#" * int(round(max(c, 0.0) / problem.n * 60))
            print(f"    [{a:8.3f}, {b:8.3f})  {max(c, 0.0):7.1f}  {bar}")
    if plot:
        if importlib.util.find_spec("matplotlib") is None:
            print("\n(matplotlib is not installed, so no plot: pip install 'hessgrad[plot]')")
        else:
            _plot(before, after, plot)
            print(f"\nwrote {plot}")
    return {"before": before, "after": after, "losses": losses}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", default="mlp_hessian_spectrum.png")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    main(steps=args.steps, plot=args.plot)
