"""hessgrad: exact gradients, Hessian-vector products, Hessians and second-order analytics
for numpy-style Python code, with a graph mode and a tape (eager) mode."""

from . import _runtime  # noqa: F401 - malloc thresholds for array-heavy reverse mode
from . import ops as _ops  # registers every primitive and Tensor's operators
from .custom import custom_gradient, grad_pass_through, recompute_grad
from .engine.backprop import AggregationMethod, UnconnectedGradients
from .engine.capture import clear_caches
from .engine.forward import ForwardAccumulator
from .engine.function import Function, function
from .engine.gradients import gradients
from .engine.graph import Graph, get_default_graph, placeholder
from .engine.registry import primitive, seal_builtins as _seal_builtins
from .engine.tape import GradientTape
from .engine.tensor import Tensor, Variable, is_tensor
from .ops.core import (constant, convert_to_tensor, identity, ones_like, stop_gradient,
                       zeros_like)
from .ops.elementwise import (absolute as abs, add, cos, divide, equal, exp, expm1, greater,
                              greater_equal, less, less_equal, log, log1p, logaddexp, maximum,
                              minimum, multiply, negative, not_equal, power, sigmoid, sign, sin,
                              softplus, sqrt, square, subtract, tanh, where)
from .ops.linalg import einsum, matmul
from .ops.shape import concatenate, expand_dims, squeeze
from .tf_names import (broadcast_to, cast, concat, reduce_logsumexp, reduce_max, reduce_mean,
                       reduce_min, reduce_sum, reshape, stack, transpose)
from .second_order import hessian, hessian_vector_product, hessians, hvp, make_hvp
from .ops.control_flow import TensorArray, cond, while_loop
from .ops.higher_order import foldl, foldr, map_fn, scan
from .transforms import grad, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp
from .vmap import vmap
from .operators import GaussNewtonOperator, HessianOperator
from .compiler import compile_plan as _compile_plan
from .engine.function import set_plan_compiler as _set_plan_compiler
from .sparse import SparseHessian, SparseJacobian, sparse_hessian, sparse_jacobian
from .sparsity import hessian_sparsity, jacobian_sparsity
from . import numpy  # noqa: E402,F401 - the numpy-compatible namespace
from . import scipy, testing  # noqa: E402,F401
from . import ipopt  # noqa: E402,F401 - IPOPT driver (cyipopt imported when a solve starts)
from . import problems  # noqa: E402,F401 - built-in objectives

__version__ = "0.1.0"


_set_plan_compiler(_compile_plan)  # hessgrad.function compiles traced graphs
_seal_builtins()  # primitives registered from here on are the user's
