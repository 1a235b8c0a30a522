"""Shared fixtures. Data from ../shared is located through ``KOFS_SHARED`` or the folder beside
the repository; tests that need it skip with a clear reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# CI (CI=true) replays the same hypothesis examples every run: a red build is reproducible and
# never a roll of the dice; locally examples stay random to keep exploring. No deadlines: the
# machines are shared.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = Path(__file__).resolve().parents[1]
TESTDATA = REPO / "tests" / "data"


def _shared_real() -> Path:
    root = Path(os.environ.get("KOFS_SHARED", REPO.parent / "shared"))
    return root / "data" / "real"


SHARED_REAL = _shared_real()
HAVE_SHARED = (SHARED_REAL / "ALL" / "ALL_gene_expr.tsv.gz").is_file()
needs_shared = pytest.mark.skipif(
    not HAVE_SHARED,
    reason=f"real data not found at {SHARED_REAL} (set KOFS_SHARED to the shared/ folder)",
)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ``shared/data/real``; skips the test when the folder is absent."""
    if not HAVE_SHARED:
        pytest.skip(f"real data not found at {SHARED_REAL} (set KOFS_SHARED to the shared/ folder)")
    return SHARED_REAL


@pytest.fixture(scope="session")
def testdata() -> Path:
    """Path to the small fixtures in ``tests/data``."""
    return TESTDATA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path, monkeypatch):
    """Runs cache parsed GO in the user's cache folder by default: keep tests in tmp_path."""
    monkeypatch.setenv("KOFS_CACHE_DIR", str(tmp_path / "kofs-cache"))


@pytest.fixture(autouse=True)
def _reset_kofs_logging():
    """The CLI configures the ``kofs`` logger for a process; give every test a fresh one."""
    import logging

    yield
    logger = logging.getLogger("kofs")
    logger.handlers.clear()
    logger.setLevel(logging.NOTSET)
    logger.propagate = True
