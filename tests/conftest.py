"""Shared fixtures, test tiers and hypothesis profiles (docs/testing.md).

Tiers: a plain ``pytest`` runs the fast tier; ``pytest --full`` runs the whole suite (README
command 2, ``make test``, ``.ci/run``). Tests of the full tier only carry one of the markers in
:data:`FULL_TIER` (registered in pyproject.toml); most get it from a fixture they use
(:data:`MARKED_BY_FIXTURE`): a test that asks for ``shared_data`` is ``real_data``, one that
asks for ``python_process`` is ``subprocess``, one that asks for ``browser`` is ``browser``,
one that asks for ``faiss`` (approximate kNN search) is ``slow``.

Data from ../shared is located through ``KOFS_SHARED`` or the folder beside the repository;
tests that need it skip with a clear reason when it is absent."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

#: Markers of the full tier (registered, with their meaning, in pyproject.toml): the fast tier
#: deselects tests carrying any of them.
FULL_TIER = ("slow", "subprocess", "crash", "browser", "real_data")

#: Fixtures that mark every test using them (directly or through another fixture).
MARKED_BY_FIXTURE = {
    "shared_data": "real_data",
    "python_process": "subprocess",
    "browser": "browser",
    "faiss": "slow",
}

# Hypothesis: few examples in the fast tier, many in the full run (``--full``); an explicit
# ``--hypothesis-profile`` wins. CI (CI=true) replays the same examples every run: a red build
# is reproducible and never a roll of the dice; locally examples stay random to keep exploring.
# No deadlines: the machines are shared. No example database: tests write nothing outside
# tmp_path (a failing example is printed with its seed instead).
_HYPOTHESIS = dict(
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("fast", max_examples=10, **_HYPOTHESIS)
settings.register_profile("full", max_examples=200, **_HYPOTHESIS)


def costly_examples(full: int) -> int:
    """Example count for a property test whose examples cost ~0.1 s or more: ``full`` in the
    full run, in proportion to the active profile otherwise (at least 2). The profile is loaded
    before test modules are imported, so ``@settings(max_examples=costly_examples(20))`` works."""
    return max(2, round(full * settings.default.max_examples / 200))


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        help="kofs: run the whole suite (every tier) with many hypothesis examples",
    )


def _profile(config) -> str:
    return config.getoption("hypothesis_profile", None) or (
        "full" if config.getoption("full") else "fast"
    )


#: The BLAS thread limit of an xdist worker (kept alive for the session: see below).
_BLAS_LIMIT: list[Any] = []


def pytest_configure(config):
    settings.load_profile(_profile(config))
    # Each xdist worker gets its share of the cores for BLAS: with one worker per core and
    # OpenBLAS's default of one thread per core, the threads outnumber the cores and OpenBLAS's
    # waiting threads spin (a 3,000 x 60 QR: 0.9 s against 0.02 s with one thread). kofs sets
    # its own limits where it uses threads on purpose (``threadpool_limits(threads)``).
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and not _BLAS_LIMIT:
        from threadpoolctl import threadpool_limits

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        _BLAS_LIMIT.append(threadpool_limits(max(1, (cores or 1) // workers), user_api="blas"))


def _fast_tier(config) -> bool:
    """The fast tier applies unless ``--full`` or an explicit ``-m`` selects the tests."""
    return not (config.getoption("full") or config.option.markexpr)


def pytest_report_header(config):
    tier = "fast (`pytest --full` runs the whole suite)" if _fast_tier(config) else "full"
    return f"kofs test tier: {tier}; hypothesis profile: {_profile(config)}"


def pytest_collection_modifyitems(config, items):
    """Mark tests by the fixtures they use, skip real-data tests without the data, and keep
    the fast tier's tests (a test named by its node id on the command line always runs)."""
    for item in items:
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
        if not HAVE_SHARED and item.get_closest_marker("real_data"):
            item.add_marker(pytest.mark.skip(reason=NO_SHARED))
    if not _fast_tier(config):
        return
    named = {a for a in config.args if "::" in a}
    keep, drop = [], []
    for item in items:
        full_only = any(item.get_closest_marker(m) for m in FULL_TIER)
        (drop if full_only and not _named(item, named) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


#: A fast-tier test using more CPU seconds than this is named at the end of the run.
FAST_TIER_CPU = 5.0
_CPU_HEAVY: list[tuple[float, str]] = []


def _cpu_seconds() -> float:
    try:
        import resource
    except ImportError:  # Windows: this process's own CPU time
        return time.process_time()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_CPU_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item.stash[_CPU_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Measure the CPU time of every test, setup to teardown (its threads and child processes
    included: load on a shared machine does not inflate it), on its teardown report: the
    reports reach the process that prints the summary also when pytest-xdist's workers ran
    the tests."""
    outcome = yield
    if call.when == "teardown" and _CPU_START in item.stash:
        used = _cpu_seconds() - item.stash[_CPU_START]
        outcome.get_result().user_properties.append(("cpu_seconds", used))


def pytest_runtest_logreport(report):
    """Name the fast-tier tests that are not fast (see :func:`pytest_terminal_summary`)."""
    if report.when != "teardown" or any(m in report.keywords for m in FULL_TIER):
        return
    used = dict(report.user_properties).get("cpu_seconds", 0.0)
    if used > FAST_TIER_CPU:
        _CPU_HEAVY.append((used, report.nodeid))


def pytest_terminal_summary(terminalreporter):
    if _CPU_HEAVY and _fast_tier(terminalreporter.config):
        terminalreporter.section("fast-tier tests that are not fast")
        terminalreporter.write_line(
            f"these used more than {FAST_TIER_CPU:g} s of CPU: mark them @pytest.mark.slow, "
            "or make them cheaper (docs/testing.md)"
        )
        for used, nodeid in sorted(_CPU_HEAVY, reverse=True):
            terminalreporter.write_line(f"{used:6.1f} s  {nodeid}")


def _named(item, named: set[str]) -> bool:
    """Whether a command-line argument names ``item`` by its node id (or its class's)."""
    mine = item.nodeid.partition("::")[2]
    for arg in named:
        path, _, rest = arg.partition("::")
        if Path(path).resolve() == item.path and (
            mine == rest or mine.startswith((rest + "[", rest + "::"))
        ):
            return True
    return False


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
NO_SHARED = f"real data not found at {SHARED_REAL} (set KOFS_SHARED to the shared/ folder)"
#: For a test that finds the real data itself: it is ``real_data`` and skips without the data.
needs_shared = pytest.mark.real_data


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ``shared/data/real``; skips the test when the folder is absent."""
    if not HAVE_SHARED:
        pytest.skip(NO_SHARED)
    return SHARED_REAL


@pytest.fixture(scope="session")
def testdata() -> Path:
    """Path to the small fixtures in ``tests/data``."""
    return TESTDATA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


class ExampleData(NamedTuple):
    paths: dict
    expression: Any  # kofs.types.Expression, samples aligned with the labels
    labels: Any  # kofs.types.SampleCategories: the lineage column
    sources: Any  # kofs.sources.KnowledgeSources: GO, KEGG pathways, STRING


@pytest.fixture(scope="session")
def example_data() -> ExampleData:
    """The bundled example (kofs.datasets.example), read once for the whole run; read-only."""
    from kofs.datasets.example import example_paths
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels
    from kofs.sources import read_sources

    paths = example_paths()
    labels = read_labels(paths["labels"], label_column="lineage")
    expr = read_expression(paths["expression"], sample_ids=labels.samples)
    expr, labels = align_labels(expr, labels)
    sources = read_sources(
        go=paths["go"],
        go_annotations=paths["go_annotations"],
        pathways=paths["pathways"],
        interactions=paths["interactions"],
    )
    return ExampleData(paths, expr, labels, sources)


@pytest.fixture(scope="session")
def _session_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kofs-cache")


@pytest.fixture(autouse=True)
def _shared_cache_dir(_session_cache_dir, monkeypatch):
    """kofs caches parsed GO in the user's cache folder by default: every test of the run
    shares one cache folder under pytest's temp root instead (it warms once; the cache is
    keyed by content and safe under concurrent writers). Tests of the cache itself take
    :func:`private_cache_dir` or a folder of their own."""
    monkeypatch.setenv("KOFS_CACHE_DIR", str(_session_cache_dir))


@pytest.fixture
def private_cache_dir(tmp_path, monkeypatch) -> Path:
    """An empty cache folder for this test alone (``KOFS_CACHE_DIR``)."""
    folder = tmp_path / "kofs-cache"
    monkeypatch.setenv("KOFS_CACHE_DIR", str(folder))
    return folder


def _default_sigint() -> None:
    # a shell without job control starts background jobs with Ctrl-C ignored: undo that
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class PythonProcess:
    """Start this run's Python interpreter in a new process (see :func:`python_process`).

    Text streams; stdin from /dev/null and stdout and stderr captured unless given; Ctrl-C
    restored to its default action in the child (a shell without job control starts
    background jobs with it ignored) unless ``preexec_fn`` is given."""

    executable = sys.executable

    @staticmethod
    def _defaults(kw: dict) -> dict:
        kw.setdefault("text", True)
        kw.setdefault("preexec_fn", _default_sigint)
        kw.setdefault("stdin", subprocess.DEVNULL)
        if not kw.get("capture_output"):
            kw.setdefault("stdout", subprocess.PIPE)
            kw.setdefault("stderr", subprocess.PIPE)
        return kw

    def run(self, *args, **kw) -> subprocess.CompletedProcess:
        """``subprocess.run([python, *args], ...)``."""
        return subprocess.run([self.executable, *map(str, args)], **self._defaults(kw))

    def popen(self, *args, **kw) -> subprocess.Popen:
        """``subprocess.Popen([python, *args], ...)``."""
        return subprocess.Popen([self.executable, *map(str, args)], **self._defaults(kw))

    def kofs(self, *args, **kw) -> subprocess.CompletedProcess:
        """``python -m kofs *args``: the CLI as users start it."""
        return self.run("-m", "kofs", *args, **kw)


@pytest.fixture(scope="session")
def python_process() -> PythonProcess:
    """Runs Python in a fresh process; the tests using it are ``subprocess`` (full tier)."""
    return PythonProcess()


@pytest.fixture(scope="session")
def browser() -> str:
    """Path of a headless Chromium (``chromium`` or Debian's ``chromium-headless-shell``);
    skips the test, saying why, when there is none. Its tests are ``browser`` (full tier)."""
    for name in ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless-browser check needs Debian's chromium (apt-get install -y chromium)")


@pytest.fixture(scope="session")
def faiss():
    """The faiss module (approximate kNN search, the ``sc`` extra); skips without it."""
    return pytest.importorskip("faiss")


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
