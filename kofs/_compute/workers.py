"""Work spread over joblib worker processes, with the workers' warnings brought home.

A warning raised in a worker process (scikit-learn's convergence warnings in the lasso of
fssi, SciPy's in the linear programs of sparsity-score) is printed by that process straight to
the inherited stderr, as the raw two lines of Python's default, past the command's warning
handling (one log line each, docs/guarantees.md). :func:`parallel_map` records them in the
worker and raises them again in the calling process, where they are handled like any other.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any


def _recording(func: Callable, item: Any, kw: dict) -> tuple[Any, list]:
    with warnings.catch_warnings(record=True) as caught:
        result = func(item, **kw)
    return result, [(w.message, w.category, w.filename, w.lineno) for w in caught]


def parallel_map(func: Callable, items: Iterable, n_jobs: int, **kw: Any) -> list:
    """``[func(item, **kw) for item in items]`` in ``n_jobs`` joblib worker processes (in this
    process when ``n_jobs == 1``); the workers' warnings are raised again here, in order."""
    if n_jobs == 1:
        return [func(item, **kw) for item in items]
    from joblib import Parallel, delayed

    out = Parallel(n_jobs=n_jobs)(delayed(_recording)(func, item, kw) for item in items)
    for _, caught in out:
        for message, category, filename, lineno in caught:
            warnings.warn_explicit(message, category, filename, lineno)
    return [result for result, _ in out]
