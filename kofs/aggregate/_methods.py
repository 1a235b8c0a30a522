"""Imports every aggregator module so that each registers itself (one import line per module)."""

# isort: off
from kofs.aggregate import em  # noqa: F401
from kofs.aggregate import borda  # noqa: F401
from kofs.aggregate import rra  # noqa: F401
from kofs.aggregate import stuart  # noqa: F401
from kofs.aggregate import baselines  # noqa: F401
from kofs.aggregate import relevance  # noqa: F401
# isort: on
