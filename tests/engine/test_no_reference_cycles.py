"""The eager calls leave no reference cycles behind: their intermediates and results are
freed when the last reference goes, not at the next garbage collection. Cyclic garbage
holding large arrays made later calls page-fault (a gradient at n = 1e5 took 5 ms instead of
1 ms after an HVP had run)."""

import gc

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.tracing import capture as capture_module


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


X = np.linspace(0.1, 1.0, 8)
V = np.ones(8)


def _tape_gradient():
    x = hg.constant(X)
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = rosen(x)
    return tape.gradient(y, x)


def _accumulator():
    x = hg.constant(X)
    with hg.ForwardAccumulator(x, hg.constant(V)) as acc:
        y = rosen(x)
    return acc.jvp(y)


def _rosen_of_dict(p):
    return rosen(p["x"])


CALLS = {
    "grad": lambda: hg.grad(rosen)(X),
    "grad of a dict": lambda: hg.grad(lambda p: rosen(p["x"]))({"x": X}),
    "value_and_grad": lambda: hg.value_and_grad(rosen)(X),
    "hvp": lambda: hg.hvp(rosen)(X, V),
    "hessian": lambda: hg.hessian(rosen)(X),
    "make_hvp": lambda: hg.make_hvp(rosen)(X)(V),
    "make_hvp batched": lambda: hg.make_hvp(rosen)(X).batched(np.eye(8)),
    "HessianOperator matmat": lambda: hg.HessianOperator(rosen, X).matmat(np.eye(8)[:, :5]),
    "HessianOperator of a dict": lambda: hg.HessianOperator(_rosen_of_dict, {"x": X}).matmat(
        np.eye(8)[:, :3]),
    "ravel_pytree": lambda: hg.ravel_pytree({"x": X, "y": [V, 2.0]})[1](np.zeros(17)),
    "GradientTape": _tape_gradient,
    "ForwardAccumulator": _accumulator,
}


@pytest.mark.parametrize("capture", ["eager", "symbolic"])
@pytest.mark.parametrize("name", list(CALLS))
def test_call_leaves_no_cyclic_garbage(name, capture, monkeypatch):
    # implicit caches check f's captured state by an eager or (for costly eager runs, so
    # on a loaded machine too) a symbolic run: neither may leave cycles
    monkeypatch.setattr(capture_module, "MODE", capture)
    call = CALLS[name]
    call()  # warm caches (traces, compiled kernels) outside the measured call
    gc.collect()
    gc.disable()
    try:
        call()
        garbage = gc.collect()
    finally:
        gc.enable()
    assert garbage == 0, f"{name} left {garbage} objects in reference cycles"
