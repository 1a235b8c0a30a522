"""Shared fixtures. Data from ../shared is located through ``KOFS_SHARED`` or the folder beside
the repository; tests that need it skip with a clear reason when it is absent."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# CI (CI=true) replays the same hypothesis examples every run: a red build is reproducible and
# never a roll of the dice; locally examples stay random to keep exploring. No deadlines: the
# machines are shared. No example database: tests write nothing outside tmp_path (a failing
# example is printed with its seed instead).
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Every temporary file of the run (pytest's tmp_path root included, and the temp files of CLI
# subprocesses through TMPDIR) goes into one private folder of the system temp folder, removed
# when pytest ends: the suite leaves nothing behind, and the leftover check below sees only
# this run's files, never those of other processes sharing the machine.
_SESSION_TMP = Path(tempfile.mkdtemp(prefix="pytest-kofs-session-"))
os.environ["TMPDIR"] = str(_SESSION_TMP)
tempfile.tempdir = None  # recomputed from TMPDIR on next use

#: Names of temp entries that kofs code or tests would create outside pytest's tmp_path.
LEAK_PREFIXES = ("kofs", "tmp")

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


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_in_the_temp_folder():
    """Fail the run when tests or kofs left files in the temp folder outside ``tmp_path``."""
    yield
    left = sorted(p.name for p in _SESSION_TMP.iterdir() if p.name.startswith(LEAK_PREFIXES))
    if left:
        pytest.fail(
            f"the tests left {len(left)} entries in the temp folder (use tmp_path): "
            + ", ".join(left[:5]),
            pytrace=False,
        )


def pytest_unconfigure(config):
    """Remove the run's private temp folder (pytest's tmp_path root lives in it)."""
    shutil.rmtree(_SESSION_TMP, ignore_errors=True)
