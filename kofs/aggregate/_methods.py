"""Imports every aggregator module so that each registers itself (one import line per module)."""
