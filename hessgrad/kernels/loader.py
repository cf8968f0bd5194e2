"""Compile generated kernel source with Numba: once per process, machine code cached on disk.

Numba's on-disk cache needs a real source file, so each distinct source is written once to
``$HESSGRAD_KERNEL_CACHE`` (default ``~/.cache/hessgrad/kernels``; a temporary directory if
that is not writable) under a name derived from its hash, and imported from there. Numba
compiles a kernel at its first call with new argument types; in a thread that prefers the
worker process (:mod:`.remote`) the worker compiles those types into Numba's cache first, and
this process only loads the machine code.
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

from . import remote

_LOADED = {}
_FILES = {}  # id(kernel) -> (path, entry): what the worker imports to compile it


def cache_dir():
    path = os.environ.get("HESSGRAD_KERNEL_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "hessgrad", "kernels")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = os.path.join(tempfile.gettempdir(), "hessgrad-kernels")
    os.makedirs(path, exist_ok=True)
    return path


def load(source, entry="kernel"):
    """The function ``entry`` defined by ``source`` (a module text using ``numba.njit``)."""
    fn = _LOADED.get(source)
    if fn is not None:
        return fn
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    path = os.path.join(cache_dir(), f"hessgrad_kernel_{digest}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # per writer
        with open(tmp, "w") as fh:
            fh.write(source)
        os.replace(tmp, path)  # atomic: concurrent writers never leave half a file
    fn = import_kernel(path, entry)
    _FILES[id(fn)] = (path, entry)
    # Numba's dispatcher looks this method up on the instance when a call's argument types
    # have no machine code yet: the one place to see those types before it compiles.
    compile_here = fn._compile_for_args

    def compile_for_args(*args, **kws):
        if remote.wanted():
            try:
                types = [fn.typeof_pyval(a) for a in args]
            except Exception:  # noqa: BLE001 - Numba's own call below says what is wrong
                types = None
            if types is not None:
                remote.compile_numba(path, entry, types)
        return compile_here(*args, **kws)  # loads what the worker cached, else compiles

    fn._compile_for_args = compile_for_args
    _LOADED[source] = fn
    return fn


def compile_types(fn, types):
    """``fn.compile(types)`` for a kernel from :func:`load`, by the worker process first
    where the thread prefers it (see :mod:`.remote`)."""
    if remote.wanted() and id(fn) in _FILES:
        remote.compile_numba(*_FILES[id(fn)], types)
    return fn.compile(tuple(types))


def import_kernel(path, entry="kernel"):
    """The function ``entry`` of the kernel source file ``path`` (imported once)."""
    modname = os.path.splitext(os.path.basename(path))[0]
    module = sys.modules.get(modname)
    if module is None or getattr(module, "__file__", None) != path:
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    return getattr(module, entry)


def available():
    """True when Numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True
