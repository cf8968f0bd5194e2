"""hessgrad: exact gradients, Hessian-vector products, Hessians and second-order analytics
for numpy-style Python code, with a graph mode and a tape (eager) mode."""

from . import malloc_tuning  # noqa: F401 - malloc thresholds for array-heavy reverse mode
from . import ops as _ops  # registers every primitive and Tensor's operators
from .custom import (custom_gradient, custom_jvp, custom_vjp, grad_pass_through,
                     recompute_grad)
from .engine.backprop import AggregationMethod, UnconnectedGradients
from .engine.forward import ForwardAccumulator
from .engine.gradients import gradients
from .engine.graph import Graph, get_default_graph, placeholder
from .engine.registry import defjvp, defvjp, primitive, seal_builtins as _seal_builtins
from .engine.tape import GradientTape
from .engine.tensor import ConcretizationError, Tensor, Variable, is_tensor
from .ops.core import (constant, convert_to_tensor, identity, ones_like, stop_gradient,
                       zeros_like)
from .ops.elementwise import (absolute as abs, add, cos, divide, equal, exp, expm1, greater,
                              greater_equal, less, less_equal, log, log1p, logaddexp, maximum,
                              minimum, multiply, negative, not_equal, power, sigmoid, sign, sin,
                              softplus, sqrt, square, subtract, tanh, where)
from .ops.linalg import einsum, matmul
from .ops.special import erf
from .ops.shape import concatenate, expand_dims, squeeze
from .tf_names import (broadcast_to, cast, concat, reduce_logsumexp, reduce_max, reduce_mean,
                       reduce_min, reduce_sum, reshape, stack, transpose)
from .second_order import hessian_vector_product, hessians, hvp, make_hvp
from .hessian_matrix import hessian
from .ops.control_flow import TensorArray, cond, foldl, foldr, map_fn, scan, while_loop
from .transforms import (elementwise_grad, grad, jacfwd, jacobian, jacrev, jvp, linearize,
                         value_and_grad, vjp)
from .tracing.capture import clear_caches
from .tracing.function import Function, function
from .vmap import vmap
from .operators import GaussNewtonOperator, HessianOperator
from .pytree import (PyTreeDef, ravel_pytree, tree_flatten, tree_leaves, tree_map,
                     tree_structure, tree_unflatten)
from .sparse import SparseHessian, SparseJacobian, sparse_hessian, sparse_jacobian
from .sparsity import hessian_sparsity, jacobian_sparsity

# The names users of JAX and PyTorch look for: jax.jit and jax.checkpoint; torch's vhp
# (v^T H = (H v)^T: the Hessian is symmetric, so it is the same product).
jit = function
checkpoint = recompute_grad
vhp = hvp
from . import numpy  # noqa: E402,F401 - the numpy-compatible namespace
from . import scipy, testing  # noqa: E402,F401
from . import ipopt  # noqa: E402,F401 - IPOPT driver (cyipopt imported when a solve starts)
from . import problems  # noqa: E402,F401 - built-in objectives


def _version():
    """pyproject.toml's version in a source checkout (what is imported), else the installed
    distribution's: one place to change it."""
    import importlib.metadata
    import pathlib
    import tomllib
    try:
        with open(pathlib.Path(__file__).parent.parent / "pyproject.toml", "rb") as f:
            project = tomllib.load(f).get("project", {})
        if project.get("name") == "hessgrad":
            return project["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return importlib.metadata.version("hessgrad")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
del _version


_seal_builtins()  # primitives registered from here on are the user's
