"""Embarrassingly parallel Hessian analytics on a :class:`DistributedHessianOperator`:
Hutchinson probes made and contracted on the workers, and stochastic Lanczos quadrature
(per-probe tasks on replicas, or all probes in lockstep over shards)."""

import math
import numbers

import numpy as np

from . import _worker


def _entropy(rng):
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    return rng


def hutchinson(op, num_matvecs, *, distribution="rademacher", rng=None, progress=None):
    """Hutchinson's ``tr(H) ~ mean_i z_i^T H z_i`` with the probes made on the workers.

    Probes ``8 c`` to ``8 c + 7`` come from ``numpy.random.default_rng(seed_c)``, with
    ``seed_c`` the ``c``-th child of ``numpy.random.SeedSequence(rng)`` (rng: an int, None, or
    a Generator from which one integer is drawn); the workers' blocks hold whole groups of 8,
    so a seed gives the same estimate on any cluster. Only the ``num_matvecs`` quadratic
    forms travel back.

    Args:
        op: a :class:`DistributedHessianOperator`.
        num_matvecs: number of probes ``m >= 1``.
        distribution: ``"rademacher"`` or ``"gaussian"``.
        rng: seed or ``numpy.random.Generator``.
        progress: True/False to force the stderr progress line (default: many blocks).
    Returns:
        ``solvers.estimators.TraceEstimate`` (``trace``, ``std_error``, ``num_matvecs``).
    Raises:
        ValueError: ``num_matvecs < 1`` or an unknown distribution.
    """
    from hessgrad.solvers.estimators import TraceEstimate  # noqa: PLC0415 - beside the CLI

    if not isinstance(num_matvecs, numbers.Integral) or num_matvecs < 1:
        raise ValueError(f"hutchinson: num_matvecs must be an int >= 1, got {num_matvecs!r}")
    if distribution not in ("rademacher", "gaussian"):
        raise ValueError(f"hutchinson: distribution must be 'rademacher' or 'gaussian', got "
                         f"{distribution!r}")
    m = int(num_matvecs)
    group = _worker.PROBES_PER_SEED
    blocks = _blocks(m, group * math.ceil(op.block_size(m) / group))
    seeds = _probe_seeds(rng, m)
    samples = np.empty(m)

    def collect(s, e, values):
        samples[s:e] = values

    op.run_blocks(blocks, "hutchinson probes",
                  lambda s, e: (_worker.quadratic_forms, seeds[s // group:-(-e // group)],
                                e - s, distribution),
                  collect, progress)
    op.nmatvec += m
    std = float(np.std(samples, ddof=1) / math.sqrt(m)) if m > 1 else math.inf
    return TraceEstimate(float(samples.mean()), std, m)


def _probe_seeds(rng, m):
    return np.random.SeedSequence(_entropy(rng)).spawn(-(-m // _worker.PROBES_PER_SEED))


def hutchinson_probes(n, num_matvecs, distribution="rademacher", rng=None):
    """The probes :func:`hutchinson` uses (rows), for checking it against a local run."""
    return _worker.probes(_probe_seeds(rng, num_matvecs), n, num_matvecs, distribution)


def spectral_density(op, *, num_probes=10, lanczos_steps=30, rng=None, progress=None):
    """Stochastic Lanczos quadrature of the Hessian's spectrum over the cluster.

    The Rademacher start vectors are drawn on the client from ``rng`` (one row per probe, in
    order). With one shard (the objective is :func:`replicated` on every worker) probes are
    split into tasks, each running ``solvers.lanczos`` against its worker's replica; with
    several shards all probes advance together, one distributed ``matmat`` per Lanczos step
    (full reorthogonalisation on the client).

    Returns:
        ``solvers.SpectralDensity`` (``nodes``, ``weights``, ``trace(f)``, ``density``).
    Raises:
        ValueError: the counts are not positive ints.
    """
    from hessgrad.solvers.spectral import SpectralDensity  # noqa: PLC0415 - beside the CLI

    for name, val in (("num_probes", num_probes), ("lanczos_steps", lanczos_steps)):
        if not isinstance(val, numbers.Integral) or val < 1:
            raise ValueError(f"spectral_density: {name} must be an int >= 1, got {val!r}")
    n = op.shape[0]
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    steps = min(int(lanczos_steps), n)
    V0 = rng.integers(0, 2, size=(num_probes, n)) * 2.0 - 1.0
    if op.objective.n_shards == 1:
        nodes = np.zeros((num_probes, steps))
        weights = np.zeros((num_probes, steps))
        per_task = max(1, math.ceil(num_probes / (2 * op.objective.n_workers())))

        def collect(s, e, result):
            nodes[s:e], weights[s:e] = result

        op.run_blocks(list(_blocks(num_probes, per_task)), "lanczos probes",
                      lambda s, e: (_worker.lanczos_quadrature, V0[s:e], steps),
                      collect, progress)
        op.nmatvec += num_probes * steps
        return SpectralDensity(nodes, weights, n, num_probes * steps)
    start = op.nmatvec
    nodes, weights = lockstep_quadrature(op.matmat, V0, steps)
    return SpectralDensity(nodes, weights, n, op.nmatvec - start)


def lockstep_quadrature(matmat, V0, steps):
    """Lanczos from every row of ``V0`` at once (one ``matmat`` per step over the probes
    still running), with two passes of classical Gram-Schmidt against each probe's basis.
    Returns Gauss quadrature ``(nodes, weights)``, one row per probe; a probe that found an
    invariant subspace after ``m < steps`` steps has zero weights past ``m``."""
    p, n = V0.shape
    eps = np.finfo(np.float64).eps
    Q = np.zeros((p, steps + 1, n))
    Q[:, 0] = V0 / np.linalg.norm(V0, axis=1, keepdims=True)
    T = np.zeros((p, steps, steps))
    size = np.full(p, steps)
    anorm = np.zeros(p)
    active = list(range(p))
    for j in range(steps):
        if not active:
            break
        W = np.asarray(matmat(Q[active, j].T), dtype=np.float64).T
        still = []
        for w, i in zip(W, active):
            anorm[i] = max(anorm[i], float(np.linalg.norm(w)))
            basis = Q[i, :j + 1]
            h = basis @ w
            w = w - basis.T @ h
            c = basis @ w
            w -= basis.T @ c
            T[i, j, j] = h[j] + c[j]
            beta = float(np.linalg.norm(w))
            if not math.isfinite(beta):
                raise FloatingPointError("spectral_density: the operator produced NaN or inf")
            if j + 1 == steps:
                continue
            if beta <= max(n, 100) * eps * anorm[i]:
                size[i] = j + 1          # invariant subspace: T is exact
                continue
            T[i, j, j + 1] = T[i, j + 1, j] = beta
            Q[i, j + 1] = w / beta
            still.append(i)
        active = still
    nodes = np.zeros((p, steps))
    weights = np.zeros((p, steps))
    for i in range(p):
        m = size[i]
        theta, S = np.linalg.eigh(T[i, :m, :m])
        nodes[i, :m] = theta
        weights[i, :m] = S[0] ** 2
    return nodes, weights


def _blocks(n, b):
    b = max(1, int(b))
    return [(s, min(s + b, n)) for s in range(0, n, b)]
