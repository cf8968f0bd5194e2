"""The kernel-compiling subprocess (hessgrad/kernels/remote.py, worker.py): it compiles Numba
kernels and LLVM IR into the disk caches, this process loads the machine code and gets the
same numbers; when it cannot start, this process compiles; it exits when closed."""

import ctypes
import os
import sys
import threading

import numpy as np
import pytest

from hessgrad.kernels import llvm, loader, remote

pytest.importorskip("numba")

SOURCE = """from numba import njit


@njit(cache=True, nogil=True)
def kernel(a, s):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * s + {tag}
    return out
"""

IR = """
define double @worker_twice_plus(double %x, double %y) {
  %a = fmul double %x, 2.0
  %b = fadd double %a, %y
  ret double %b
}
"""


def _source(tag):
    return "import numpy as np\n" + SOURCE.format(tag=float(tag))


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """One worker for the module (it takes a second or two to start), and its cache."""
    with pytest.MonkeyPatch.context() as mp:
        cache = tmp_path_factory.mktemp("worker-cache")
        mp.setenv("HESSGRAD_KERNEL_CACHE", str(cache))
        mp.delenv("HESSGRAD_COMPILE_WORKER", raising=False)
        w = remote.Worker()
        mp.setattr(remote, "default", lambda: w)
        yield w
        w.close()


def test_the_worker_compiles_a_kernel_and_this_process_loads_it(worker):
    kernel = loader.load(_source(1))
    a = np.arange(5.0)
    with remote.preferred():
        out = kernel(a, 3.0)
    np.testing.assert_array_equal(out, a * 3.0 + 1.0)
    assert worker.pid is not None
    assert sum(kernel._cache_hits.values()) == 1  # loaded from what the worker cached
    assert not kernel._cache_misses


def test_explicit_signature_goes_to_the_worker_too(worker):
    from numba import typeof

    kernel = loader.load(_source(2))
    a = np.arange(4.0)
    with remote.preferred():
        loader.compile_types(kernel, [typeof(a), typeof(2.0)])
    assert sum(kernel._cache_hits.values()) == 1
    np.testing.assert_array_equal(kernel(a, 2.0), a * 2.0 + 2.0)


def test_llvm_ir_compiled_by_the_worker_is_loaded_without_parsing_it(worker, monkeypatch):
    binding, _ = llvm.llvm()
    parse = binding.parse_assembly

    def only_the_empty_module(text):  # a load from the cache parses only that
        assert text.startswith("target triple"), "the IR was compiled in this process"
        return parse(text)
    monkeypatch.setattr(binding, "parse_assembly", only_the_empty_module)
    with remote.preferred():
        engine = llvm.compile_ir(IR, key="test_compile_worker twice_plus")
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(
        engine.get_function_address("worker_twice_plus"))
    assert fn(3.0, 0.5) == 6.5


def test_two_threads_at_once(worker):
    kernels = [loader.load(_source(10 + k)) for k in range(2)]
    a = np.arange(3.0)
    results = [None, None]

    def run(k):
        with remote.preferred():
            results[k] = kernels[k](a, 1.0)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        np.testing.assert_array_equal(results[k], a + 10.0 + k)


def test_a_failed_request_leaves_the_worker_usable(worker):
    assert worker.request({"kind": "no such thing"}) is False
    assert not worker.broken
    assert worker.request({"kind": "llvm", "text": "not IR", "key": None, "extra": ""}) is False
    assert not worker.broken


def test_without_preference_nothing_goes_to_the_worker(worker, monkeypatch):
    monkeypatch.setattr(worker, "request", lambda message: pytest.fail("sent to the worker"))
    kernel = loader.load(_source(3))
    np.testing.assert_array_equal(kernel(np.ones(2), 1.0), [4.0, 4.0])


def test_a_worker_that_cannot_start_means_compiling_here(tmp_path, monkeypatch):
    monkeypatch.setenv("HESSGRAD_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    broken = remote.Worker()
    monkeypatch.setattr(remote, "default", lambda: broken)
    kernel = loader.load(_source(4))
    with remote.preferred():
        out = kernel(np.arange(3.0), 2.0)
        engine = llvm.compile_ir(IR, key="test_compile_worker broken")
    np.testing.assert_array_equal(out, np.arange(3.0) * 2.0 + 4.0)
    assert sum(kernel._cache_misses.values()) == 1  # compiled in this process
    assert engine.get_function_address("worker_twice_plus")
    assert broken.broken and broken.pid is None
    assert not remote.wanted()  # and not tried again


@pytest.mark.skipif(not hasattr(os, "waitpid"), reason="POSIX process check")
def test_the_worker_exits_when_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("HESSGRAD_KERNEL_CACHE", str(tmp_path))
    w = remote.Worker()
    assert w.request({"kind": "no such thing"}) is False  # starts it
    pid = w.pid
    assert pid is not None
    w.close()
    assert w.pid is None and w.broken
    with pytest.raises(ProcessLookupError):  # exited and reaped: no zombie left
        os.kill(pid, 0)
    assert w.request({"kind": "llvm", "text": IR, "key": None, "extra": ""}) is False
