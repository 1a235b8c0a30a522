"""The compute kernels' per-run cache: results that one run computes once and several of its
steps use (a chunked matrix's per-gene moments: one pass over the file for the magnitude check
and every ranker; the approximate kNN candidates that Laplacian Score and SPEC share; the
genes' gene-id order that every list and the fusion are ordered by).

The store belongs to the run (:attr:`kofs.context.Context.kernels`) and is made active for the
kernels while the run works (:func:`kernel_cache`, a context manager and decorator); nothing is
kept between runs and there is no process-wide state to reset. A kernel called outside any
run computes without a cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_ACTIVE: ContextVar[dict[str, dict[Any, Any]] | None] = ContextVar(
    "kofs_kernel_cache", default=None
)


@contextlib.contextmanager
def kernel_cache(
    store: dict[str, dict[Any, Any]] | None = None,
) -> Iterator[dict[str, dict[Any, Any]]]:
    """Make ``store`` the kernels' cache inside the block (or decorated call). ``None``: keep
    the active store, or start an empty one for this block when none is active."""
    if store is None:
        active = _ACTIVE.get()
        if active is not None:
            yield active
            return
        store = {}
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)


def run_store() -> dict[str, dict[Any, Any]]:
    """The active store, or a new one outside a run (what a new Context holds)."""
    active = _ACTIVE.get()
    return {} if active is None else active


def cache_of(kind: str) -> dict[Any, Any] | None:
    """The active run's cache of ``kind`` (e.g. ``"moments"``); None outside a run."""
    store = _ACTIVE.get()
    return None if store is None else store.setdefault(kind, {})
