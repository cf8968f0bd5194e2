"""Compile the plans nested in a program's ops: the condition and body of a ``while`` loop,
the branches of a ``cond``. They run once per iteration (or call), so interpreting them step
by step, with every step's argument checks, dominated loops in compiled graphs (a 50-step
RNN scan's gradient: 17 ms against 0.6 ms unrolled)."""

import warnings

from ..engine.graph import Plan


def compile_blocks(prog, compile_plan):
    """Replace every :class:`Plan` in the params of ``prog``'s ops by ``compile_plan(plan)``
    (which compiles the plans nested in it the same way); a plan that fails to compile
    stays as it is, with a warning, as a whole graph does. Returns how many were compiled."""
    compiled = {}  # id(plan) -> compiled: a loop's VJP may share its blocks' plans
    for op in prog.ops:
        if not any(isinstance(v, Plan) for v in op.params.values()):
            continue
        params = dict(op.params)  # the graph node keeps its own (its VJP reads them)
        for key, plan in op.params.items():
            if isinstance(plan, Plan):
                if id(plan) not in compiled:
                    compiled[id(plan)] = _compile(plan, compile_plan, op.name)
                params[key] = compiled[id(plan)]
        op.params = params
    return len(compiled)


def _compile(plan, compile_plan, name):
    try:
        return compile_plan(plan)
    except Exception as exc:  # noqa: BLE001 - the interpreted plan computes the same
        warnings.warn(f"hessgrad.function: compiling a block of a '{name}' op failed "
                      f"({type(exc).__name__}: {exc}); it runs uncompiled", RuntimeWarning,
                      stacklevel=2)
        return plan
