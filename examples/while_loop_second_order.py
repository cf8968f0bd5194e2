"""Second derivatives through a loop: an unrolled fixed-point iteration.

A small "equilibrium layer" ``x = tanh(W x + theta)`` (``W`` contractive) is solved by
iterating until the update is below ``1e-13`` -- a Python ``while`` loop whose trip count
depends on the data. The loss ``f(theta) = |x*(theta)|^2 / 2`` is differentiated through
the unrolled loop:

* the gradient with ``hg.grad`` is compared with the implicit-function-theorem gradient
  ``(I - D W)^{-T} D x*`` (``D = diag(1 - x*^2)``);
* the Hessian as ``hg.grad(hg.grad(...))`` (one row per basis vector, eager tapes) is
  compared with central differences of the gradient;
* the same loop written with ``hg.while_loop`` (the trip count found above) gives the same
  first and second derivatives, also through ``hg.hessian``, which traces its function into
  a graph -- something the Python loop's data-dependent stopping test cannot be.

    python examples/while_loop_second_order.py
"""

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp


def make_problem(n, seed):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, n))
    W *= 0.5 / np.linalg.norm(W, 2)              # contraction: the iteration converges
    return W


def fixed_point_python(W, theta, tol=1e-13, max_iter=500):
    x = 0.0 * theta
    it = 0
    while it < max_iter:
        x_new = hnp.tanh(W @ x + theta)
        change = hnp.max(hnp.abs(x_new - x))   # data-dependent stopping rule
        x, it = x_new, it + 1
        if change < tol:
            break
    return x, it


def fixed_point_while_loop(W, theta, iterations):
    _, x = hg.while_loop(lambda i, x: i < iterations,
                         lambda i, x: (i + 1, hnp.tanh(W @ x + theta)),
                         (hg.constant(0), 0.0 * theta))
    return x


def main(n=6, seed=0):
    W = make_problem(n, seed)
    theta0 = np.random.default_rng(seed + 1).standard_normal(n)

    def f(theta):
        x, _ = fixed_point_python(W, theta)
        return 0.5 * hnp.sum(x * x)

    x_star, iterations = fixed_point_python(W, theta0)
    x_star = np.asarray(x_star)
    print(f"fixed point of x = tanh(W x + theta), n={n}: {iterations} iterations")

    grad_f = hg.grad(f)
    g = np.asarray(grad_f(theta0))
    D = np.diag(1.0 - x_star ** 2)
    g_ift = D @ np.linalg.solve((np.eye(n) - D @ W).T, x_star)   # implicit function theorem
    print(f"gradient vs implicit-function-theorem gradient: max error "
          f"{np.max(np.abs(g - g_ift)):.1e}")

    # Hessian as grad of grad: row i is the gradient of the i-th gradient entry.
    H_gg = np.array([np.asarray(hg.grad(lambda t, i=i: grad_f(t)[i])(theta0))
                     for i in range(n)])
    h = 1e-5
    H_fd = np.column_stack([(np.asarray(grad_f(theta0 + h * e)) -
                             np.asarray(grad_f(theta0 - h * e))) / (2 * h) for e in np.eye(n)])
    print(f"Hessian as grad(grad): vs finite differences {np.max(np.abs(H_gg - H_fd)):.1e}, "
          f"asymmetry {np.max(np.abs(H_gg - H_gg.T)):.1e}")

    def f_loop(theta):
        x = fixed_point_while_loop(W, theta, iterations)
        return 0.5 * hnp.sum(x * x)

    g_loop = np.asarray(hg.grad(f_loop)(theta0))
    H_loop = np.asarray(hg.hessian(f_loop)(theta0))
    H_loop_gg = np.array([np.asarray(hg.grad(lambda t, i=i: hg.grad(f_loop)(t)[i])(theta0))
                          for i in range(n)])
    print(f"hg.while_loop version: gradient {np.max(np.abs(g_loop - g)):.1e}, Hessian "
          f"{np.max(np.abs(H_loop - H_gg)):.1e}, grad(grad) {np.max(np.abs(H_loop_gg - H_gg)):.1e} "
          f"from the Python loop's")
    eig = np.linalg.eigvalsh(0.5 * (H_gg + H_gg.T))
    print(f"Hessian eigenvalues: {np.array2string(eig, precision=4)}")
    return {"grad": g, "grad_ift": g_ift, "hessian": H_gg, "hessian_fd": H_fd,
            "grad_while_loop": g_loop, "hessian_while_loop": H_loop,
            "hessian_while_loop_gg": H_loop_gg}


if __name__ == "__main__":
    main()
