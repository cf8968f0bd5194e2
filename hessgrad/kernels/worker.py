"""The kernel-compiling subprocess (``python -m hessgrad.kernels.worker``, started by
:mod:`.remote`): compiles Numba kernels and LLVM IR into the on-disk caches, so that the
process that asked only loads machine code while its compiling thread waits on a pipe
without holding the GIL.

One request per line on stdin, one reply per line: JSON ``{"kind": "numba", "path", "entry",
"types"}`` (a kernel source file in the cache directory, the function to compile, its
argument types pickled and base64-encoded) or ``{"kind": "llvm", "text", "key", "extra"}``
(see :func:`.llvm.compile_ir`); the reply is ``{"ok": true}`` or ``{"ok": false, "error":
...}``. The process exits when its stdin closes.
"""

import base64
import json
import os
import pickle
import sys


def serve(requests, replies):
    from hessgrad.kernels import llvm, loader

    for line in requests:
        try:
            req = json.loads(line)
            if req["kind"] == "numba":
                fn = loader.import_kernel(req["path"], req["entry"])
                fn.compile(pickle.loads(base64.b64decode(req["types"])))
            elif req["kind"] == "llvm":
                llvm.compile_ir(req["text"], key=req["key"],
                                extra=base64.b64decode(req["extra"]))
            else:
                raise ValueError(f"unknown request kind {req['kind']!r}")
            reply = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - the asking process compiles it itself
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def _kernels_only():
    """Make ``hessgrad.kernels`` importable without running ``hessgrad/__init__.py``: the
    kernels are the bottom layer (numpy, numba, llvmlite), the package's ``__init__`` imports
    every layer above them (1.5 s of the worker's start)."""
    import importlib.util
    import types

    if "hessgrad" in sys.modules:
        return
    spec = importlib.util.find_spec("hessgrad")
    package = types.ModuleType("hessgrad")
    package.__path__ = list(spec.submodule_search_locations)
    package.__file__ = spec.origin
    sys.modules["hessgrad"] = package


def main():
    # The replies keep their own copy of stdout; whatever a compiler prints goes to stderr.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    _kernels_only()
    from hessgrad.kernels import llvm, loader  # noqa: F401 - before "ready" (the parent waits)
    replies.write("ready\n")
    replies.flush()
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
