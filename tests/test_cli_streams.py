"""The ``kofs`` process and its streams and signals (real subprocesses, Linux devices).

A closed or full stdout and an unwritable or full ``--log-file`` are one line and exit 2; a
closed or full stderr never turns a success into a failure; Ctrl-C and SIGTERM while kofs is
still importing are one line (exit 130 / 143).
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from _lines import one_line

from kofs.io.output_folder import check_complete

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("streams")
    rng = np.random.default_rng(0)
    n, m = 12, 30
    v = rng.normal(size=(m, n))
    rows = ["gene\t" + "\t".join(f"S{i}" for i in range(n))]
    rows += [f"G{j}\t" + "\t".join(f"{x:.4f}" for x in v[j]) for j in range(m)]
    (d / "x.tsv").write_text("\n".join(rows) + "\n")
    # one class of a single sample: the run succeeds with a WARNING line on stderr
    (d / "labels.tsv").write_text(
        "sample\tgroup\n" + "".join(f"S{i}\t{'b' if i == 0 else 'a'}\n" for i in range(n))
    )
    return d


@pytest.fixture
def kofs(python_process):
    """``kofs(*args, **subprocess_options)``: ``python -m kofs`` in a new process."""
    return python_process.kofs


def rank(data, *extra):
    return ["rank", data / "x.tsv", "--rankers", "variance", *extra]


def one_error_line(stderr: str, says: str) -> None:
    assert stderr.splitlines() == [stderr.rstrip("\n")], stderr
    assert stderr.startswith("kofs: error: ") and says in stderr, stderr


def _close_fd(fd):
    return lambda: os.close(fd)


def test_the_process_ends_with_everything_written(kofs, data, tmp_path):
    # the process leaves without the interpreter's teardown: the ranking piped to stdout, the
    # log file and the exit status are complete all the same
    log = tmp_path / "log.txt"
    r = kofs("-v", "--log-file", log, *rank(data, "-o", "-"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("gene\trank") and len(lines) == 31  # header + 30 genes
    assert r.stdout.endswith("\n")
    said = [line.split("INFO: ", 1)[1] for line in r.stderr.splitlines() if "INFO: " in line]
    logged = log.read_text().splitlines()
    assert said and len(logged) == len(said) and logged[-1].endswith(said[-1])
    r = kofs(*rank(data, "--rankers", "no-such-ranker", "-o", "-"))
    assert r.returncode == 2 and r.stdout == ""


def test_worker_processes_end_with_the_command(kofs, data, tmp_path):
    # sparsity-score and fssi solve their problems in joblib (loky) worker processes; they
    # outlived the command (loky keeps them 300 s for reuse; os._exit skipped their shutdown)
    # holding its stdout and stderr, so a caller reading the output waited five minutes, then
    # read loky's warnings about leaked semaphores and memory-mapping folders
    r = kofs(*rank(data, "--rankers", "sparsity-score,fssi", "--threads", "2", "-o", "-"),
             timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 31
    assert "leaked" not in r.stderr and "UserWarning" not in r.stderr, r.stderr


def test_full_stdout(kofs, data):
    with open("/dev/full", "w") as full:
        r = kofs(*rank(data, "-o", "-"), stdout=full)
    assert r.returncode == 2
    one_error_line(r.stderr, "cannot write to standard output (disk full)")
    with open("/dev/full", "w") as full:  # any command printing to stdout
        r = kofs("methods", stdout=full)
    assert r.returncode == 2
    one_error_line(r.stderr, "cannot write to standard output (disk full)")


def test_closed_stdout(kofs, data, tmp_path):
    r = kofs(*rank(data, "-o", "-"), stdout=None, preexec_fn=_close_fd(1))
    assert r.returncode == 2
    one_error_line(r.stderr, "standard output is closed")
    # a run that does not write to stdout is not disturbed by it
    r = kofs(*rank(data, "-o", tmp_path / "out"), stdout=None, preexec_fn=_close_fd(1))
    assert r.returncode == 0, r.stderr
    check_complete(tmp_path / "out")


@pytest.mark.parametrize("how", ["closed", "full"])
def test_stderr_closed_or_full_never_fails_a_run(kofs, data, tmp_path, how):
    out = tmp_path / "out"
    args = rank(data, "--labels", data / "labels.tsv", "-o", out)
    if how == "closed":
        r = kofs(*args, stderr=None, preexec_fn=_close_fd(2))
    else:
        with open("/dev/full", "w") as full:
            r = kofs(*args, stderr=full)
    assert r.returncode == 0
    check_complete(out)


def test_log_file_unwritable_or_full(kofs, data, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = kofs("--log-file", afile / "log.txt", *rank(data, "-o", tmp_path / "out"))
    assert r.returncode == 2
    one_error_line(r.stderr, f"{afile / 'log.txt'}: cannot be written (Not a directory)")
    r = kofs("--log-file", "/dev/full", *rank(data, "-o", tmp_path / "out"))
    assert r.returncode == 2
    one_error_line(r.stderr, "/dev/full: cannot write the log (disk full)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_log_file_never_appends_to_another_file(kofs, data, tmp_path):
    # `--log-file x.tsv` (the input, by mistake) appended the run's log to the expression file
    before = (data / "x.tsv").read_bytes()
    r = kofs("--log-file", data / "x.tsv", *rank(data, "-o", tmp_path / "out"))
    assert r.returncode == 2
    one_error_line(r.stderr, "x.tsv: exists and is not a kofs log (an input file?)")
    assert (data / "x.tsv").read_bytes() == before and not (tmp_path / "out").exists()
    log = tmp_path / "run.log"  # a kofs log is appended to, run after run
    for k in (1, 2):
        r = kofs("--log-file", log, *rank(data, "-o", tmp_path / f"out{k}"))
        assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.count("list variance built") == 2


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])  # fmt: skip
def test_signal_while_importing_is_one_line(sig, code, word, python_process):
    # says "ready" when entry() starts importing the command line (click, numpy, pandas,
    # ... a second or more): the signal arrives among those imports
    starter = (
        "import sys\nimport kofs.__main__ as m\n"
        "class Hook:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kofs.cli':\n"
        "            sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "sys.meta_path.insert(0, Hook())\n"
        "sys.argv = ['kofs', '--version']\nm.entry()"
    )
    proc = python_process.popen("-c", starter)  # with Ctrl-C's default action
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(sig)
    out, err = proc.communicate()
    assert proc.returncode == code, (proc.returncode, err)
    one_line(err, word, "nothing was written")
    assert "kofs, version" not in out  # it did stop during the imports


def test_ctrl_c_inside_a_compiled_module_while_importing_is_one_line(python_process):
    # Ctrl-C landing while a compiled extension initialises surfaces as its ImportError
    # ("initialization failed") raised from the KeyboardInterrupt (pybind11): the interrupt's
    # one line and 130, not a traceback
    starter = (
        "import sys\nimport kofs.__main__ as m\n"
        "class Hook:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kofs.cli':\n"
        "            try:\n"
        "                raise KeyboardInterrupt\n"
        "            except KeyboardInterrupt as exc:\n"
        "                raise ImportError('initialization failed') from exc\n"
        "sys.meta_path.insert(0, Hook())\n"
        "sys.argv = ['kofs', '--version']\nm.entry()"
    )
    r = python_process.run("-c", starter)
    assert r.returncode == 130, r.stderr
    one_line(r.stderr, "interrupted", "nothing was written")
