"""llvmlite plumbing shared by the modules that compile LLVM IR themselves.

:mod:`hessgrad.compiler.native` (whole-graph kernels) and :mod:`.vecmath` (vectorised math
functions) both JIT-compile IR text with MCJIT for this CPU and pass ndarray objects to the
machine code, which reads their data pointers itself.
"""

import contextlib
import ctypes
import hashlib
import os
import threading

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


def compile_ir(text, key=None, extra=b""):
    """Optimise IR ``text`` at -O2 for this CPU and JIT it; returns the execution engine
    (keep it alive while its functions are in use).

    The machine code is cached on disk (next to the Numba kernels, see
    :func:`.loader.cache_dir`) under ``key`` (default: the text itself) with the bytes
    ``extra`` the caller wants back (see :func:`load_cached`), for this CPU and llvmlite
    version: a later process loads it in about a millisecond instead of spending 0.1-0.2 s
    in LLVM's passes and code generation (the 200-op chain's HVP kernel: 140 ms)."""
    binding, _ = llvm()
    path = _cache_path(text if key is None else key, binding)
    cached = _read_entry(path)
    if cached is not None:
        return _load(cached[1], binding)
    machine = target_machine()
    module = binding.parse_assembly(text)
    module.verify()
    tuning = binding.create_pipeline_tuning_options(speed_level=2)
    passes = binding.create_pass_builder(machine, tuning)
    passes.getModulePassManager().run(module, passes)
    engine = binding.create_mcjit_compiler(module, machine)  # owns both from here
    engine.set_object_cache(lambda _module, buffer: _write_entry(path, extra, bytes(buffer)),
                            None)
    engine.finalize_object()
    return engine


def load_cached(key):
    """``(engine, extra)`` for machine code compiled earlier under ``key``, or None."""
    binding, _ = llvm()
    cached = _read_entry(_cache_path(key, binding))
    return None if cached is None else (_load(cached[1], binding), cached[0])


def _load(obj, binding):
    # The object holds every symbol: an empty module stands for the IR.
    module = binding.parse_assembly(f'target triple = "{binding.get_process_triple()}"')
    engine = binding.create_mcjit_compiler(module, target_machine())
    engine.set_object_cache(None, lambda _module: obj)
    engine.finalize_object()
    return engine


# A cache entry: magic, SHA-256 of the rest, the length of ``extra`` (8 bytes), ``extra``,
# then the object code.
_MAGIC = b"hessgrad-llvm-object-2\n"


def _cache_path(key, binding):
    import llvmlite

    from .loader import cache_dir
    material = "\n".join([llvmlite.__version__, binding.get_process_triple(),
                          binding.get_host_cpu_name(),
                          binding.get_host_cpu_features().flatten(), key])
    digest = hashlib.sha256(material.encode()).hexdigest()[:32]
    return os.path.join(cache_dir(), f"llvm-{digest}.o")


def _read_entry(path):
    """``(extra, object code)`` cached at ``path``, or None (absent, unreadable or damaged:
    the entry carries the SHA-256 of its contents)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if len(data) < head + 8 or not data.startswith(_MAGIC):
        return None
    rest = data[head:]
    if hashlib.sha256(rest).digest() != data[len(_MAGIC):head]:
        return None
    n = int.from_bytes(rest[:8], "little")
    extra, obj = rest[8:8 + n], rest[8 + n:]
    return (extra, obj) if obj else None


def _write_entry(path, extra, obj):
    rest = len(extra).to_bytes(8, "little") + extra + obj
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # per writer
    try:
        with open(tmp, "wb") as fh:
            fh.write(_MAGIC + hashlib.sha256(rest).digest() + rest)
        os.replace(tmp, path)  # atomic: concurrent writers never leave half a file
    except OSError:  # a cache that cannot be written only costs the next process time
        with contextlib.suppress(OSError):
            os.remove(tmp)


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
