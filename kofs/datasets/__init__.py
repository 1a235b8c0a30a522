"""Seeded data generators for tests, benchmarks and examples (nothing is downloaded)."""

from kofs.datasets.synthetic import SyntheticCells, synthetic_counts

__all__ = ["SyntheticCells", "synthetic_counts"]
