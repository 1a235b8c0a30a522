"""The compute kernels every layer uses: in-memory, sparse (CSR), chunked (dask) and compiled
(numba) array operations, tie-aware ranks and the canonical input order.

Private to kofs: nothing here is a public API. Each module imports only the contract
(:mod:`kofs.errors`, :mod:`kofs.types`) and its siblings, so any layer may use it.
"""
