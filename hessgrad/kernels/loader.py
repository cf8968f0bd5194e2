"""Compile generated kernel source with Numba: once per process, machine code cached on disk.

Numba's on-disk cache needs a real source file, so each distinct source is written once to
``$HESSGRAD_KERNEL_CACHE`` (default ``~/.cache/hessgrad/kernels``; a temporary directory if
that is not writable) under a name derived from its hash, and imported from there.
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

_LOADED = {}


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
    modname = f"hessgrad_kernel_{digest}"
    path = os.path.join(cache_dir(), modname + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # per writer
        with open(tmp, "w") as fh:
            fh.write(source)
        os.replace(tmp, path)  # atomic: concurrent writers never leave half a file
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    fn = _LOADED[source] = getattr(module, entry)
    return fn


def available():
    """True when Numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True
