"""Imports every ranker family so that each registers its rankers (one import line per family).

The import order is the order of ``kofs methods``: keep it, do not sort these lines.
"""

# ruff: noqa: I001
from kofs.rankers import classic  # noqa: F401
from kofs.rankers import spectral  # noqa: F401
from kofs.rankers import knowledge  # noqa: F401
from kofs.rankers import supervised  # noqa: F401
from kofs.rankers import multivariate  # noqa: F401
from kofs.rankers import sparse  # noqa: F401
from kofs.rankers import counts  # noqa: F401
from kofs.rankers import autocorrelation  # noqa: F401
