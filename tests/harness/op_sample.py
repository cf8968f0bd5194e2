"""The sample type of the op-by-op harness: one call of one public function on fixed inputs.

A :class:`Sample` names a public function by its path below ``hessgrad`` ("sum",
"linalg.det", "fft.rfft", "hg.erf", "scipy.special.erf", "scipy.stats.norm.logpdf":
``hessgrad.numpy.sum``, ``hessgrad.numpy.linalg.det``, ..., ``hessgrad.erf``,
``hessgrad.scipy.special.erf``, the method ``logpdf`` of ``hessgrad.scipy.stats.norm``) and
holds its arguments. Its reference values come from numpy's function of the same path (SciPy's
for a ``scipy.`` path). Floating-point numpy arrays among the
positional arguments (and in lists or tuples among them) are the *inputs*: traced in graph
modes, batched by ``vmap`` and
differentiated. Everything else (Python numbers, tuples, strings, keyword arguments, integer
arrays) is a static part of the call, except in a sample with no float input, where integer and
boolean arrays are the (non-differentiable) inputs. Sample tables build samples with
:func:`sample` and live in ``op_samples_*.py`` (one module per family of functions).
"""

import dataclasses
import importlib

import numpy as np

import hessgrad as hg
import hessgrad.numpy as hnp


@dataclasses.dataclass(frozen=True)
class Sample:
    name: str                 # public path: "sum", "linalg.det", "hg.erf"
    args: tuple
    kwargs: dict
    label: str                # what distinguishes it from the function's other samples
    xfail: str = None         # a known bug this sample shows (strict xfail, reason names it)
    derivatives: bool = True  # False: values only (e.g. only defined at integers)
    numpy: bool = True        # compare the eager value with numpy's function of the same path
    hessians: bool = True     # False: no Hessians (dense n^2 too big for the sample)
    traceable: bool = True    # False: eager only (a Python bool or shape-dependent result)
    reference: object = None  # the reference function, when not numpy's/SciPy's of that path
    reference_rtol: float = None  # its tolerance, when looser than the modes' (an ODE solver)

    @property
    def id(self):
        return f"{self.name}[{self.label}]"

    def function(self):
        return resolve(self.name)

    def numpy_twin(self):
        """numpy's (SciPy's) function of the same path, the sample's ``reference``, or None
        (hessgrad-only, or excluded)."""
        if not self.numpy or self.name.startswith("hg."):
            return None
        if self.reference is not None:
            return self.reference
        target, path = np, self.name.split(".")
        if path[0] == "scipy":
            target, path = importlib.import_module(".".join(path[:2])), path[2:]
        for part in path:
            target = getattr(target, part, None)
            if target is None:
                return None
        return target

    def input_positions(self):
        """Paths (tuples of indices into ``args`` and the lists or tuples inside it) of the
        traced inputs."""
        arrays = list(_array_paths(self.args, ()))
        floats = [p for p, a in arrays if a.dtype.kind in "fc"]
        return floats if floats else [p for p, _ in arrays]

    def inputs(self):
        return [_at(self.args, p) for p in self.input_positions()]

    def differentiable(self):
        """Derivatives are checked: real float inputs only (complex ones: values only)."""
        inputs = self.inputs()
        return self.derivatives and bool(inputs) and all(a.dtype.kind == "f" for a in inputs)

    def call(self, *inputs):
        """The function on ``inputs`` put in place of the sample's own inputs."""
        args = self.args
        for path, value in zip(self.input_positions(), inputs):
            args = _replace(args, path, value)
        return self.function()(*args, **self.kwargs)


def _array_paths(value, path):
    if _is_array(value):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            yield from _array_paths(item, path + (k,))


def _at(value, path):
    for k in path:
        value = value[k]
    return value


def _replace(value, path, new):
    """``value`` (nested lists and tuples) with the item at ``path`` replaced by ``new``."""
    if not path:
        return new
    items = list(value)
    items[path[0]] = _replace(items[path[0]], path[1:], new)
    return type(value)(items) if isinstance(value, tuple) else items


def _is_array(a):
    return type(a) is np.ndarray


def resolve(name):
    """The public function at ``name`` ("sum", "linalg.det", "hg.erf", "scipy.special.erf",
    "scipy.stats.norm.logpdf")."""
    if name.startswith("hg."):
        return getattr(hg, name[3:])
    target, path = hnp, name.split(".")
    if path[0] == "scipy":
        target, path = importlib.import_module("hessgrad." + ".".join(path[:2])), path[2:]
    for part in path:
        target = getattr(target, part)
    return target


def describe(value):
    """A short label for an argument: shape for arrays, repr otherwise."""
    if _is_array(value):
        shape = "x".join(map(str, value.shape)) if value.ndim else "0d"
        kind = "" if value.dtype.kind == "f" else value.dtype.kind
        return f"{kind}{shape}"
    if callable(value):
        return getattr(value, "__name__", "fn")
    return repr(value)


def sample(name, *args, label=None, xfail=None, derivatives=True, numpy=True, hessians=True,
           traceable=True, reference=None, reference_rtol=None, **kwargs):
    """A :class:`Sample`; its label defaults to the arguments described ("2x3,axis=-1")."""
    if label is None:
        label = ",".join([describe(a) for a in args] +
                         [f"{k}={describe(v)}" for k, v in kwargs.items()])
    return Sample(name, tuple(args), dict(kwargs), label, xfail, derivatives, numpy, hessians,
                  traceable, reference, reference_rtol)
