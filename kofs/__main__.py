"""The ``kofs`` command (console script) and ``python -m kofs``.

:func:`entry` prepares the process before the heavy imports (click, numpy, pandas, ... take a
second or more): Ctrl-C, SIGTERM or SIGHUP while importing is one line, not a traceback; a closed
standard stream is reopened on ``/dev/null`` (so the first file opened cannot take its place);
a closed or full stderr never turns a success into a failure. When the command has finished, the
process ends without the interpreter's teardown (:func:`_leave`).
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import sys
from typing import NoReturn

from kofs.errors import OutputError, Terminated, stop_behind


class _TolerantStream:
    """stderr that never fails: messages to a closed or full stderr are lost, silently."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _CheckedStdout(_TolerantStream):
    """stdout whose failures (full disk, closed, I/O error) are a user-facing
    :class:`~kofs.errors.OutputError` (one line, exit 2) whoever writes; a reader that closed
    the pipe (``| head``) still raises :class:`BrokenPipeError` (a quiet exit)."""

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            self._fail(exc)
            raise  # pragma: no cover - _fail raises

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        # raised again on every later write (a writer may swallow one); the CLI points the
        # descriptor at /dev/null once the error is reported, so the exit's flush is quiet
        full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
        why = "disk full" if full else getattr(exc, "strerror", None) or str(exc)
        raise OutputError(f"cannot write to standard output ({why}); redirect it elsewhere")


class _ClosedStdout:
    """Stands for a stdout that was closed when kofs started (``>&-``): writing is an error."""

    encoding = "utf-8"
    errors = "strict"
    closed = False

    def write(self, text) -> int:
        if not text:
            return 0
        raise OutputError(
            "standard output is closed; redirect it to a file (> FILE) or, for a ranking, "
            "write an output folder (-o DIR)"
        )

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _reopen_closed_std_fds() -> None:
    for fd in (0, 1, 2):  # in order: os.open returns the lowest free descriptor
        try:
            os.fstat(fd)
        except OSError:
            try:
                new = os.open(os.devnull, os.O_RDWR)
                if new != fd:
                    os.dup2(new, fd)
                    os.close(new)
            except OSError:
                pass


_STOPS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _stop(signum, frame) -> None:
    for s in _STOPS:
        signal.signal(s, signal.SIG_IGN)
    raise Terminated(signum)


def _command_allocators() -> None:
    """The allocators' settings of the command, made before numpy is imported. glibc: reuse
    freed large blocks instead of returning them to the system at once (mmap threshold 1 GB,
    trim threshold 2 GB, top pad 256 MB). Every large temporary of a run
    otherwise costs fresh page faults: on 20,000 cells x 15,000 genes (bench/
    bench_single_cell_speed.py) system time 2.7 s instead of 3.7-5.2 s, peak RSS +150 MB
    (1.92 GB instead of 1.77). The command only (a library call leaves the host's allocator
    alone); nothing on other C libraries."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 2**31 - 1)  # M_TRIM_THRESHOLD
        libc.mallopt(-2, 256 << 20)  # M_TOP_PAD
    except (OSError, AttributeError):
        pass
    # no transparent huge pages for NumPy's arrays (read when numpy is imported; an explicit
    # setting is kept): with the kernel's THP in "madvise" mode a fresh 100 MB array cost
    # 0.01-0.3 s (compaction) instead of a steady 0.05 s. Measured side by side, alternating:
    # read_expression of 271 x 47,192 genes 0.52-0.58 s (median 0.55) instead of 0.46-0.79 s
    # (0.63); the whole 20,000-cell run 9.3-9.7 s instead of 10.6-14.2 s; the bulk run of
    # bench_bulk.py 2.34-2.85 s (median 2.58) instead of 2.58-2.90 s (2.68).
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def entry() -> None:
    """Run the ``kofs`` command line (exit status as documented in docs/guarantees.md) and
    end the process."""
    _leave(run())


def run() -> object:
    """Run the ``kofs`` command line in this process: the code of its ``SystemExit`` (the
    exit status, or a message), for :func:`entry` to end the process with."""
    _command_allocators()
    _reopen_closed_std_fds()  # Python set sys.stdout/sys.stderr to None if they were closed
    sys.stdout = _ClosedStdout() if sys.stdout is None else _CheckedStdout(sys.stdout)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    sys.stderr = _TolerantStream(sys.stderr)
    for s in _STOPS:  # SIGHUP stays ignored under nohup
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _stop)
    try:
        from kofs.cli import main
    except (KeyboardInterrupt, ImportError) as error:
        # a stop that lands while a compiled module initialises surfaces as its ImportError
        exc = stop_behind(error)
        if exc is None:
            raise
        stopped = isinstance(exc, Terminated)
        sys.stderr.write(f"kofs: {exc.word if stopped else 'interrupted'}; nothing was written\n")
        sys.stderr.flush()
        raise SystemExit(128 + exc.signum if stopped else 130) from None
    try:
        main(prog_name="kofs")
    except SystemExit as exc:
        return exc.code
    return 0


def _leave(code: object) -> NoReturn:
    """End the process with ``SystemExit(code)``'s status, without the interpreter's teardown:
    freeing every object of a run (a 271 x 47,192 run: 0.10-0.15 s of its 2.7) is work the
    system does anyway. The command has finished: its files are complete (written atomically,
    flushed and renamed), the thread pools it used are joined; the standard streams are flushed
    and logging shut down here. Should a stream fail to flush, the interpreter's own exit takes
    over (it reports that as before)."""
    status = 0 if code is None else code if isinstance(code, int) else 1
    try:
        if not isinstance(code, int | None):
            sys.stderr.write(f"{code}\n")  # as the interpreter prints SystemExit("text")
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the interpreter's exit reports it
        raise SystemExit(code) from None
    _end_worker_processes()
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    # the exit handlers libraries registered (joblib's removal of its memory-mapping folders,
    # multiprocessing's, ...) run as at the interpreter's exit; only the freeing is skipped
    atexit._run_exitfuncs()
    os._exit(status)


def _end_worker_processes() -> None:
    """End the worker processes joblib's loky backend keeps for reuse (the rankers
    sparsity-score and fssi start them). The interpreter's exit would shut them down; skipped
    by ``os._exit``, they lived on for loky's idle timeout (300 s) holding the command's
    stdout and stderr, so a pipe or a caller reading them waited five minutes after kofs had
    finished, and loky's resource tracker then printed warnings about leaked semaphores."""
    loky = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(loky, "_executor", None)
    if executor is not None:
        try:
            executor.shutdown(wait=True, kill_workers=True)
        except Exception:  # noqa: BLE001 - the command has finished; its status stands
            pass


if __name__ == "__main__":
    entry()
