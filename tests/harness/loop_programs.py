"""Random loops of scalar operations (the shape of published test problems): the programs
re-rolling (hessgrad/tracing/reroll.py) packs, for tests/test_reroll.py and for

    python tests/harness/fuzz_loops.py --minutes 30 [--seed 0]

which compares every mode with re-rolling on against the loops differentiated as written."""

import numpy as np

import hessgrad.numpy as hnp


def random_loop(seed):
    """A random loop of scalar operations over ``x`` (size 6): per iteration a few
    temporaries from elements of ``x`` (by index expressions in ``i``), per-iteration and
    shared constants and earlier temporaries; one or two running sums, sometimes read back."""
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(5, 12)), 6
    nested = int(rng.integers(1, 3))  # an inner loop over k, as over a model's terms
    consts = rng.uniform(0.5, 1.5, m)
    unary = [hnp.sin, hnp.cos, hnp.tanh, hnp.exp, lambda a: a * a, lambda a: -a]
    binary = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
              lambda a, b: a / (1.5 + b * b)]
    plan = []
    for k in range(int(rng.integers(2, 6))):
        kind = rng.integers(0, 4)
        plan.append((kind, int(rng.integers(0, len(unary))), int(rng.integers(0, len(binary))),
                     int(rng.integers(0, n)), int(rng.integers(1, 3)), int(rng.integers(0, k + 1))))
    feedback = bool(rng.integers(0, 4) == 0)
    two_sums = bool(rng.integers(0, 2))

    def f(x):
        s, s2 = 0.0, 1.0
        for i in range(m):
            temps = [x[(i * 2 + 1) % n]]
            for kind, u, b, j, step, back in plan * nested:
                a = temps[back % len(temps)]
                if kind == 0:
                    t = unary[u](a)
                elif kind == 1:
                    t = binary[b](a, x[(j + step * i + len(temps)) % n])
                elif kind == 2:
                    t = binary[b](a, consts[i])
                else:
                    t = binary[b](a, 0.75)
                temps.append(t)
            term = temps[-1] * (hnp.tanh(s) if feedback else 1.0)
            s = s + term
            if two_sums:
                s2 = s2 + temps[1] * temps[-1]
        return s + 0.1 * s2 * s2
    return f, rng.uniform(-1.0, 1.0, n)
