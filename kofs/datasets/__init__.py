"""Seeded data generators for tests, benchmarks and examples (nothing is downloaded)."""

from kofs.datasets.splat import SplatCells, splat_counts
from kofs.datasets.synthetic import SyntheticCells, synthetic_counts

__all__ = ["SplatCells", "SyntheticCells", "splat_counts", "synthetic_counts"]
