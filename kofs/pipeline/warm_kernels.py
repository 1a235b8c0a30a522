"""Compile the single-cell path's kernels on another thread while the input is read.

A new installation's first process compiles kofs's numba kernels (:mod:`kofs._compute.jit`
caches them on disk for every later process): 1.7-3 s of compilation at 20,000 cells, spent
when each kernel is first called, after the matrix has been read. :func:`start` (called by
:func:`kofs.pipeline.run.read_single_cell_data` before it reads an ``.h5ad`` or 10x input)
compiles them on a background thread, so compilation overlaps the reading
(docs/benchmarks.md: first run over second 1.08-1.12 instead of 1.18-1.23). With a warm cache
each kernel is loaded from disk in milliseconds.

The signatures are those of a canonical CSR matrix of float64 values with int32 indices (any
matrix of fewer than 2^31 stored values); a kernel called with other types (a larger matrix's
int64 indices) is compiled on its first call, as without this module. Nothing here changes a
result: the kernels are the same functions, compiled earlier. A failure is logged and ignored
(the kernel then compiles on its first call).
"""

from __future__ import annotations

import logging
import threading

from kofs._compute.jit import AVAILABLE

__all__ = ["start"]

log = logging.getLogger(__name__)

_started = False
_lock = threading.Lock()


def _signatures() -> list:
    from numba import types as T

    import kofs._compute.counts as counts
    import kofs._compute.numba_kernels as nk
    import kofs.rankers._count_kernels as ck

    i32 = T.Array(T.int32, 1, "C")
    i64 = T.Array(T.int64, 1, "C")
    f64 = T.Array(T.float64, 1, "C")
    f2 = T.Array(T.float64, 2, "C")
    b1 = T.Array(T.boolean, 1, "C")
    f, i, b = T.float64, T.int64, T.boolean
    # in the order the default single-cell plan first calls them
    return [
        (nk._column_stats, (i32, f64, f64, f64, i64)),
        (counts._recover_rows, (i32, f64, b, f, i, i, f64, b1)),
        (ck._zero_sums, (f64, f64, f64, f, f, i, i, f64, f64)),
        (ck._stored_sums, (i32, i32, f64, f64, f64, f, f, i, i, f2)),
        (nk._take_rows_columns, (i32, i32, f64, i64, i, i, i64, i32, f64, b)),
        (nk._csr_dense_rows, (i32, i32, f64, f2, i, i, f2)),
        (nk._csr_t_dense_rows, (i32, i32, f64, f2, i, i, f2)),
        (nk._graph_rows, (i32, i32, f64, i32, i32, f64, i, i, b, f64, f64)),
        (counts._column_square_sums, (i32, f64, f64)),
    ]


def _compile() -> None:
    try:
        for kernel, signature in _signatures():
            kernel.compile(signature)
    except Exception as exc:  # an optimisation only: the kernel compiles on its first call
        log.debug("compiling the single-cell kernels ahead failed: %s", exc)


def start(threads: int | None = None) -> threading.Thread | None:
    """Compile (or load from the disk cache) the kernels on a daemon thread, once per process;
    nothing without numba, or when the run has one thread (``threads``: the run's cap, as
    ``--threads``; numba's thread count, ``NUMBA_NUM_THREADS``): the compilation takes a core
    of the run's, not one more."""
    global _started
    if not AVAILABLE or (threads is not None and threads < 2):
        return None
    from kofs._compute import numba_kernels

    with _lock:
        if _started or numba_kernels.threads() < 2:
            return None
        _started = True
    thread = threading.Thread(target=_compile, name="kofs-compile-kernels", daemon=True)
    thread.start()
    return thread
