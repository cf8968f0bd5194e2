"""Every tuning threshold of the compiler and of the compiled kernels, in one place.

Each says what it decides and what was measured to set it (2-core machines: an AMD EPYC with
AVX2 and one with AVX-512; timings in benchmarks/README.md). Code reads them as attributes of
this module at the time it decides (``tuning.MIN_SIZE``), so a test can change one with
``monkeypatch.setattr``. Here, at the bottom of the layers, because the kernels read some
of them too.
"""

# --- graph optimizer -------------------------------------------------------------------------
# Constants up to this many elements are scanned for a diagonal (a folded slice of a traced
# Jacobian's identity basis): one pass over them when the program is optimized.
DIAGONAL_MAX_SIZE = 1 << 22
# Array params and constants up to these sizes are compared by value for common
# subexpressions (their bytes are the key); larger ones by identity.
CSE_PARAM_MAX_SIZE = 4096
CSE_CONST_MAX_SIZE = 16

# --- whole-graph kernels (compiler/wholegraph.py) --------------------------------------------
# Measured (benchmarks/bench_compiled.py problems, 2 cores): the gradient of a 40-op sin/tanh
# chain breaks even with the per-op path at about 200-400 elements; Rosenbrock's gradient and
# HVP stay faster up to 30000 elements, but from a few thousand on the fused kernels of the
# per-op path are within 20%.
MAX_SIZE = 2048
# ... and with an op that numpy runs on SIMD transcendental loops (``Lowering.simd``), which
# beat the kernels' scalar libm calls from a few hundred elements on.
MAX_SIZE_SIMD = 256
# Numba compiles 500 ops in 0.5-3 s (2-3 ms per statement of its own passes), llvmlite (the
# native back end) 1300 in 0.2 s: programs above these sizes keep the per-op path.
MAX_OPS = 1000  # when Numba compiles the kernel text
MAX_NATIVE_OPS = 20000
# One or two numpy calls cost less than a compile saves, and stay bit-identical to numpy.
MIN_OPS = 3
# Products of more multiply-adds than this stay on BLAS, which is faster.
MAX_MATMUL = 4096

# --- fused kernels of the per-op path (compiler/fusion.py) -----------------------------------
# Groups whose loop has fewer elements stay on numpy (set with fusion in 47ecacf, where a
# kernel call's overhead was about a numpy call's; not measured again since).
MIN_SIZE = 512
# Numba's compile time grows faster than linearly with a kernel's size, above all with its
# number of array arguments: the gradient of a 150-step unrolled RNN w.r.t. its weight
# matrix (an ``add_n`` of 150 outer products) made one kernel of 16 ops and 165 arguments
# that took 15 s to compile. Groups stop growing at this many operands (counted per op, so
# also at most this many ops), and an op with more operands stays on numpy.
MAX_GROUP_ARGS = 48
# Terms of an ``accumulate`` may start at most this many elements apart along the last axis
# to join a loop (each offset keeps that many scalars between iterations; Rosenbrock n = 1e5,
# gradient 106 -> 43 us when the shifted slices of x[1:] and x[:-1] joined the loop).
MAX_SHIFT = 4

# --- one pass over a large matrix (compiler/products.py, compiler/streamed.py) ---------------
# Two products with one matrix are merged from this many elements on: smaller matrices stay
# in the cache, where two BLAS calls are as fast (10,000 x 1000: two GEMVs 8 ms, one pass
# 4.6-5.7 ms).
MIN_MATRIX_SIZE = 10 ** 6
# Matrices of at least this many elements (32 MiB of float64, the last-level cache here) are
# streamed by rows: smaller ones stay in the cache between two BLAS passes, which are then
# faster (10,000 x 100: 0.26 ms against 0.39 for the row kernel).
STREAM_MIN_SIZE = 2 ** 22

# --- vectorised math (kernels/vecmath.py) ----------------------------------------------------
# Smallest arrays each loop takes: below, numpy's (scipy's) call costs less than the ctypes
# call (about 1 us). Measured on an AVX-512 machine: logaddexp and expit break even at
# 150-200 elements (numpy 12 and 6 ns per element, these loops 2.5 and 2); tanh at about
# 1000 where numpy's own loop is vectorised (1.7 ns against 0.9), else (14 ns) at about 64
# (a 64-element tanh took 1.2 us against numpy's 0.5 with AVX-512).
VECMATH_MIN_SIZE = 192
LOGADDEXP_MIN_SIZE = VECMATH_MIN_SIZE
SIGMOID_MIN_SIZE = VECMATH_MIN_SIZE
TANH_MIN_SIZE_SIMD_NUMPY = 1024
TANH_MIN_SIZE_SCALAR_NUMPY = 64

# --- tiered compilation (tracing/tiers.py) ---------------------------------------------------
# A lazy trace compiles (in the background) at its TIER_CALLS-th uncompiled run: a second run
# is the first sign that the trace is reused (a dense Hessian at one point runs once).
TIER_CALLS = 2
# ... or once its uncompiled runs took as long as compiling it is estimated to: a constant
# plus a time per step of the plan. Measured on a loaded 2-core machine (first_call.py's
# objectives): the 37,517-step HVP of a 400-step ODE optimized in 10.6 s and its batched
# program built in 12.7 s (0.6 ms per step); the 5,245-step HVP of an .at[] loop 5.5 s plus
# 8.8 s of Numba kernels (2.7 ms per step).
TIER_COMPILE_SECONDS = 0.05
TIER_COMPILE_SECONDS_PER_STEP = 1e-3
# The compilation runs in a daemon thread; False compiles in the calling thread when the
# trace becomes hot (deterministic: tests).
TIER_BACKGROUND = True
# While an uncompiled run is under way, the compiling thread holds the GIL at most about this
# fraction of the time (it sleeps between slices), so the run is slowed at most that much.
TIER_DUTY = 0.15

# --- block products at a fixed point (tracing/blocks.py: HessianOperator.matmat) ------------
# A batch of k Hessian-vector products at one point runs in blocks of this many members: one
# batched program compiled for this size serves every k (a program compiled per k cost 0.4-8 s
# at each new k). Measured (Rosenbrock n=1000, an MLP of 705 parameters): 8 columns in one
# batched run cost 1.5-4 matvecs.
MATMAT_BLOCK = 8

# Re-rolling (tracing/reroll.py): a traced function of at least this many nodes whose packed
# program is at least REROLL_MIN_GAIN times smaller is differentiated as the packed program;
# a pack needs REROLL_MIN_LANES like operations.
REROLL_MIN_NODES = 2000
REROLL_MIN_GAIN = 4
REROLL_MIN_LANES = 4
