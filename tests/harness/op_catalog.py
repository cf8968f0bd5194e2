"""The harness's catalog: every sample (from the ``op_samples_*`` tables), the public functions
that must have samples, and the short list of those that need none (and why)."""

import dataclasses
import os

import hessgrad as hg
import hessgrad.numpy as hnp
import hessgrad.scipy as hgs

from op_known_bugs import KNOWN

import op_samples_elementwise
import op_samples_reductions
import op_samples_indexing
import op_samples_linalg
import op_samples_misc
import op_samples_shapes
import op_samples_scipy

TABLES = [op_samples_elementwise, op_samples_reductions, op_samples_shapes,
          op_samples_indexing, op_samples_linalg, op_samples_misc, op_samples_scipy]


def _identity(function):
    """What makes two names aliases: the function object, or for a bound method (a
    distribution's ``logpdf``, a new object at each lookup) its object and function."""
    owner = getattr(function, "__self__", None)
    if owner is None:
        return id(function)
    return id(owner), id(getattr(function, "__func__", function))


def all_samples():
    """Every table's samples, each call once; an alias (a later name of the same function
    object: ``acos`` after ``arccos``) keeps only its first sample."""
    samples, seen, names_of = [], set(), {}
    for table in TABLES:
        for s in table.SAMPLES:
            names = names_of.setdefault(_identity(s.function()), [])
            if s.name not in names:
                names.append(s.name)
            alias_sampled = names[0] != s.name and any(t.name == s.name for t in samples)
            if s.id in seen or alias_sampled:
                continue
            seen.add(s.id)
            samples.append(dataclasses.replace(s, xfail=KNOWN[s.id]) if s.id in KNOWN else s)
    return samples


SAMPLES = all_samples()


# ``HESSGRAD_HARNESS=full``: every mode on every sample, fused kernels forced on small arrays.
FULL = os.environ.get("HESSGRAD_HARNESS") == "full"


def every_mode(samples):
    """The samples to run in every mode: each function's first one (all of them with
    ``HESSGRAD_HARNESS=full``); the others run the core modes."""
    if FULL:
        return {s.id for s in samples}
    first = {}
    for s in samples:
        first.setdefault(s.name, s.id)
    return set(first.values())


EVERY_MODE = every_mode(SAMPLES)

# Public functions without samples, each for a reason: they compute nothing differentiable, or
# write into their argument (tested with numpy's semantics elsewhere).
_NOT_NUMERIC = "dtype, shape, printing or error-state helper: no array result to check"
_IN_PLACE = ("writes into its first argument in place: numpy's semantics, derivatives in every "
             "mode and transform are tested in tests/ops/test_inplace.py and "
             "tests/numpy/test_numpy_functional_updates.py")
_CALLABLES = ("takes closures over the traced values (branches), or defines a primitive: "
              "tested in tests/ops/test_control_flow_ops.py and tests/engine")
EXCLUDED = {
    **{name: _NOT_NUMERIC for name in (
        "array2string array_repr array_str broadcast_shapes can_cast common_type "
        "format_float_positional format_float_scientific get_printoptions geterr iscomplexobj "
        "isdtype isrealobj isscalar issubdtype iterable min_scalar_type mintypecode ndim "
        "printoptions promote_types result_type set_printoptions seterr shape size "
        "typename").split()},
    **{name: _IN_PLACE for name in "copyto place put putmask".split()},
    "hg.cond": _CALLABLES, "hg.primitive": _CALLABLES,
    **{name: "declares a user primitive's rule (autograd's): tested in "
             "tests/test_extension_api.py" for name in ("hg.defvjp", "hg.defjvp")},
    "vectorize": "returns a function, not an array: tested in tests/numpy/test_vectorize.py",
    **{"scipy.optimize." + name: (
        "builds SciPy callbacks or a LinearOperator around a function (no array in, no "
        "array out to differentiate): tested with scipy.optimize in tests/test_scipy_adapters.py")
       for name in ("objective", "constraint", "hessian_operator")},
}

SCIPY_MODULES = ("special", "stats", "linalg", "signal", "integrate", "optimize")


def public_functions():
    """Every public function the harness must cover, by its sample name: ``hessgrad.numpy``'s
    (and its ``linalg`` and ``fft``), hessgrad's top-level ops (``hg.erf``), and the functions
    in the ``__all__`` of each ``hessgrad.scipy`` submodule, a distribution's methods
    (``scipy.stats.norm.logpdf``) standing for it."""
    names = set()
    for prefix, module in (("", hnp), ("linalg.", hnp.linalg), ("fft.", hnp.fft)):
        for name in dir(module):
            value = getattr(module, name)
            if not name.startswith("_") and callable(value) and not isinstance(value, type):
                names.add(prefix + name)
    for name in dir(hg):
        value = getattr(hg, name)
        module = getattr(value, "__module__", "") or ""
        if not name.startswith("_") and callable(value) and not isinstance(value, type) and \
                module.startswith(("hessgrad.engine.registry", "hessgrad.ops",
                                   "hessgrad.tf_names")):
            names.add("hg." + name)
    for module_name in SCIPY_MODULES:
        module = getattr(hgs, module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type):
                continue  # a class (rv_continuous, Objective): its instances' methods count
            prefix = f"scipy.{module_name}.{name}"
            if module_name == "stats":  # a distribution: its methods (logpdf, cdf, ...)
                names.update(f"{prefix}.{m}" for m in dir(value)
                             if not m.startswith("_") and callable(getattr(value, m)))
            elif callable(value):
                names.add(prefix)
    return names
