"""Process set-up that makes array-heavy autodiff fast.

Reverse mode keeps many same-sized intermediates alive at once. With glibc's default
settings each large array is a fresh ``mmap`` returned to the OS when freed, so every gradient
pays page faults again for all of its memory (several times the arithmetic, measured on the
Rosenbrock gradient at n = 100,000). Raising glibc's mmap and trim thresholds keeps freed
blocks in the heap for reuse. Set ``HESSGRAD_MALLOC_TUNING=0`` to leave malloc untouched.
"""

import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_MAX = 32 * 2**20   # glibc's upper limit on 64-bit systems
_TRIM_THRESHOLD = 512 * 2**20


def tune_malloc():
    """Apply the thresholds (glibc on Linux only); returns True when applied."""
    if os.environ.get("HESSGRAD_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to tune
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


MALLOC_TUNED = tune_malloc()
