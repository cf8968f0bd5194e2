"""llvmlite plumbing shared by the modules that compile LLVM IR themselves.

:mod:`hessgrad.compiler.native` (whole-graph kernels) and :mod:`.vecmath` (vectorised math
functions) both JIT-compile IR text with MCJIT for this CPU and pass ndarray objects to the
machine code, which reads their data pointers itself.
"""

import ctypes

import numpy as np


def llvm():
    """``(llvmlite.binding, llvmlite.ir)``, imported on first use (llvmlite comes with numba)."""
    import llvmlite.binding as binding
    import llvmlite.ir as ir
    return binding, ir


def target_machine():
    """A new target machine for this CPU: MCJIT takes ownership of the one it is given."""
    binding, _ = llvm()
    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    target = binding.Target.from_triple(binding.get_process_triple())
    return target.create_target_machine(cpu=binding.get_host_cpu_name(),
                                        features=binding.get_host_cpu_features().flatten(),
                                        opt=2, jit=True)


def compile_ir(text):
    """Optimise IR ``text`` at -O2 for this CPU and JIT it; returns the execution engine
    (keep it alive while its functions are in use)."""
    binding, _ = llvm()
    machine = target_machine()
    module = binding.parse_assembly(text)
    module.verify()
    tuning = binding.create_pipeline_tuning_options(speed_level=2)
    passes = binding.create_pass_builder(machine, tuning)
    passes.getModulePassManager().run(module, passes)
    engine = binding.create_mcjit_compiler(module, machine)  # owns both from here
    engine.finalize_object()
    return engine


def _data_offset():
    """Where an ndarray object holds its data pointer (after the object header, in
    numpy's ``PyArrayObject_fields``), found by looking: kernels take the array objects
    themselves, which ctypes passes at no cost, instead of ``a.ctypes.data`` (about 0.5 us
    each)."""
    probe = np.arange(3.0)
    for offset in range(8, 64, 8):
        if ctypes.c_void_p.from_address(id(probe) + offset).value == probe.ctypes.data:
            return offset
    raise ImportError("hessgrad.kernels.llvm: cannot find the data pointer of an ndarray")


DATA_OFFSET = _data_offset()
