"""Influence functions (Koh and Liang, 2017) for logistic regression with inverse-HVPs.

Which training points most affect the loss at a test point? For a model trained to
``w* = argmin L(w)``, ``L(w) = (1/m) sum_i l_i(w) + lam/2 |w|^2``, removing training point
``i`` moves the parameters by about ``H^{-1} grad l_i(w*) / m`` (``H`` the Hessian of ``L``),
so the test loss changes by about

    delta_i = grad l_test(w*)^T H^{-1} grad l_i(w*) / m = s_test^T grad l_i(w*) / m.

One matrix-free solve ``s_test = H^{-1} grad l_test`` (``solvers.inverse_hvp`` by CG on
``hg.HessianOperator``; checked against ``solvers.cg``) gives every ``delta_i`` at once, with
the per-example gradients from ``hg.jacobian``. The prediction is then checked against
actually retraining without the most influential points.

    python examples/influence_functions.py
"""

import numpy as np
from scipy.optimize import minimize

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad import solvers
from hessgrad import problems


def make_losses(X, y, lam):
    def per_example(w):
        return hnp.logaddexp(0.0, -y * (X @ w))

    def train_loss(w, keep=None):
        losses = per_example(w)
        if keep is not None:              # drop points, keeping the 1/m normalisation
            losses = losses * keep
        return hnp.sum(losses) / X.shape[0] + 0.5 * lam * hnp.sum(w * w)
    return per_example, train_loss


def fit(train_loss, w0, keep=None):
    obj = hg.scipy.objective(lambda w: train_loss(w, keep))
    res = minimize(obj.fun, w0, jac=obj.jac, hessp=obj.hessp, method="trust-krylov",
                   options={"gtol": 1e-12})
    return res.x


def main(d=10, m=300, seed=0, top=5):
    data = problems.get("logistic", n=d, seed=seed, m=m + 1).data
    X, y, lam = data["X"][:m], data["y"][:m], 1e-2
    x_test, y_test = data["X"][m], data["y"][m]
    per_example, train_loss = make_losses(X, y, lam)

    def test_loss(w):
        return hnp.logaddexp(0.0, -y_test * hnp.sum(x_test * w))

    w_star = fit(train_loss, np.zeros(d))
    H = hg.HessianOperator(train_loss, w_star)
    g_test = hg.grad(test_loss)(w_star)
    s_test = solvers.inverse_hvp(H, g_test, method="cg", rtol=1e-12)
    hvps = H.nmatvec
    s_cg, info = solvers.cg(H, g_test, rtol=1e-12)
    residual = np.linalg.norm(H @ s_test - g_test) / np.linalg.norm(g_test)
    print(f"logistic regression, {m} training points, d={d}: test loss "
          f"{float(test_loss(w_star)):.4f}")
    print(f"s_test = H^-1 grad l_test: {hvps} Hessian-vector products, relative residual "
          f"{residual:.1e}; solvers.cg (info={info}) agrees to "
          f"{np.max(np.abs(s_test - s_cg)):.1e}")

    G = np.asarray(hg.jacobian(per_example)(w_star))        # (m, d) per-example gradients
    predicted = G @ s_test / m                                # change of test loss if removed
    order = np.argsort(-np.abs(predicted))[:top]
    base = float(test_loss(w_star))
    actual = []
    for i in order:
        keep = np.ones(m)
        keep[i] = 0.0
        actual.append(float(test_loss(fit(train_loss, w_star, keep))) - base)
    actual = np.array(actual)
    print(f"\nthe {top} most influential training points (removing one changes the test "
          f"loss by):")
    print(f"{'index':>6} {'label':>6} {'predicted':>12} {'retrained':>12}")
    for i, a in zip(order, actual):
        print(f"{i:>6} {int(y[i]):>6} {predicted[i]:>12.3e} {a:>12.3e}")
    corr = float(np.corrcoef(predicted[order], actual)[0, 1]) if top > 1 else 1.0
    print(f"\ncorrelation of predicted and retrained changes: {corr:.4f}")
    return {"predicted": predicted, "order": order, "actual": actual, "correlation": corr,
            "s_test": s_test}


if __name__ == "__main__":
    main()
