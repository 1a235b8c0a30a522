"""The ``kofs`` click group and the error policy of every command.

Exit status: 0 success; 2 bad input or usage (one line on stderr, no traceback; click's usage
errors of a subcommand too); 1 internal error (traceback only with ``--debug``); 130 Ctrl-C,
143 SIGTERM, 129 SIGHUP (one line; temporary files and locks removed). A broken pipe (``kofs rank ... -o - | head``)
exits quietly. Warnings are held until the command ends and dropped when it fails, so that an
error is exactly one line (``-v`` streams every message as it comes).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import stat
import sys
import threading
import traceback
import warnings
from collections.abc import Iterable
from typing import Any

import click
import cloup

from kofs import __version__
from kofs.errors import KofsError, OutputError, Terminated, one_line, printable, stop_behind

log = logging.getLogger("kofs")

#: signals that stop a run cleanly (like Ctrl-C): a scheduler's stop, a closed terminal
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


#: the stop this invocation received (Ctrl-C, SIGTERM, SIGHUP), if any: a compiled extension
#: that is loading when it lands may raise an ImportError of its own without the interrupt as
#: its cause (pandas' "PyCapsule_Import could not import module"), which is then reported as
#: the stop it is, not as an internal error
_RECEIVED: list[KeyboardInterrupt] = []


def _terminate(signum, frame) -> None:
    """SIGTERM or SIGHUP -> :class:`Terminated` in the main thread (once; a second stop signal
    while cleaning up is ignored)."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    exc = Terminated(signum)
    _RECEIVED.append(exc)
    raise exc


def _interrupt(signum, frame) -> None:
    """Ctrl-C -> KeyboardInterrupt, as Python's own handler does, remembered (:data:`_RECEIVED`)."""
    exc = KeyboardInterrupt()
    _RECEIVED.append(exc)
    raise exc


def install_stop_handlers(handler=_terminate) -> dict[int, Any]:
    """Make SIGTERM and SIGHUP raise :class:`Terminated`, and Ctrl-C a remembered
    KeyboardInterrupt; a signal the parent set to be ignored (``nohup`` ignores SIGHUP) or
    handled otherwise stays so. Returns the previous handlers."""
    _RECEIVED.clear()
    old = {}
    for s in STOP_SIGNALS:
        prev = signal.getsignal(s)
        old[s] = prev
        if prev is not signal.SIG_IGN:
            signal.signal(s, handler)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        old[signal.SIGINT] = signal.default_int_handler
        signal.signal(signal.SIGINT, _interrupt)
    return old


def echo(text: str) -> None:
    """A status line on stderr (``kofs: ...``), control characters of names escaped; nothing
    with ``-q`` (errors only)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    if root is not None and (root.obj or {}).get("quiet"):
        return
    click.echo(printable(text).replace("\n", "\\n"), err=True)


def _stderr_handler() -> _HeldStderr | None:
    return next((h for h in log.handlers if isinstance(h, _HeldStderr)), None)


def show_warnings(
    reworded: dict[str, list[str]] | None = None, *, said: Iterable[str] = ()
) -> None:
    """Show the warnings held so far (a command calls it once its files are written, before
    its summary, so that they are read before the results rather than after them).

    ``reworded`` maps a held message to the plain sentences that replace it (a fusion's own
    warning, worded for the reader by :mod:`kofs.report.fusion`). ``said``: sentences the
    summary prints (the fusion's notices, when it is shown): their held lines are dropped, so
    each is read once. A sentence is shown once either way."""
    h = _stderr_handler()
    if h is not None:
        if reworded:
            h.reword(reworded)
        h.keep_once(set(said))
    _finish_warnings(True)


def _finish_warnings(show: bool) -> None:
    h = _stderr_handler()
    if h is not None:
        h.show_held() if show else h.drop_held()


def _mute_stdout() -> None:
    """After stdout failed, point it at /dev/null so the exit's flush cannot fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        sys.stdout = None  # type: ignore[assignment]


def _flush_stdout() -> None:
    """Flush stdout now, so a full or closed stdout is an error of the command (exit 2)
    rather than of the interpreter's exit (status 120)."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except KofsError:
        raise
    except (OSError, ValueError) as exc:
        _mute_stdout()
        full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
        why = "disk full" if full else getattr(exc, "strerror", None) or str(exc)
        raise OutputError(
            f"cannot write to standard output ({why}); redirect it elsewhere"
        ) from None


def hold_output(out: str, inputs: Any = (), *, named: bool = True) -> None:
    """Check and claim the output folder ``out`` for the running command, before its work
    (:func:`kofs.io.output_folder.claim_output`; ``named=False``: a default folder, never
    replaced); released when the command ends. ``-`` (standard output) is refused: a command
    that claims a folder writes several files (a command that can stream, ``kofs rank -o -``,
    does not claim one)."""
    from kofs.io.output_folder import claim_output

    ctx = click.get_current_context()
    if os.fspath(out) == "-":
        raise OutputError(
            f"-o -: kofs {ctx.command.name} writes a folder of several files, not one stream; "
            "give a folder"
        )
    claim = ctx.with_resource(claim_output(out, inputs=inputs, named=named))
    ctx.find_root().meta.setdefault("kofs_claims", []).append(claim)


def option_given(name: str) -> bool:
    """Whether the running command's option ``name`` was typed (not its default)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)


def report_written(out: str, written: Any) -> None:
    """The one stderr line saying where the files went (always, unless ``-q``): in a pipeline
    or a batch job it is the only trace of where the results are."""
    if out == "-":
        return
    base = os.path.normpath(str(out))
    names = sorted(
        {os.path.relpath(os.path.normpath(str(w)), base).split(os.sep)[0] for w in written}
    )
    shown = str(out)
    try:  # as typed: a config's absolute path inside the working folder is shown relative
        rel = os.path.relpath(shown)
        if os.path.isabs(shown) and not rel.startswith(os.pardir):
            shown = rel
    except ValueError:  # another drive (Windows)
        pass
    line = f"kofs: wrote {shown} ({', '.join(names)})"
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        echo(line)
    else:  # last, after the warnings held until the command ends
        ctx.find_root().meta.setdefault("kofs_last_lines", []).append(line)


def _report_interrupt(exc: KeyboardInterrupt, ctx: click.Context | None = None) -> int:
    """The one line of Ctrl-C (exit 130), SIGTERM (143) or SIGHUP (129); returns the exit
    status."""
    written = getattr(exc, "kofs_written", None) or [
        str(c.path) for c in (ctx.meta.get("kofs_claims", []) if ctx else []) if c.committed
    ]
    tail = f"{', '.join(written)} had been written completely" if written else "nothing was written"
    word = exc.word if isinstance(exc, Terminated) else "interrupted"
    click.echo(printable(f"kofs: {word}; {tail}"), err=True)
    return 128 + exc.signum if isinstance(exc, Terminated) else 130


class LazyParamsCommand(cloup.OptionGroupMixin, click.Command):
    """A command whose generated options are made on first use, shown in option groups, with
    its examples at the end of ``--help``.

    A callback carrying ``__kofs_lazy_params__`` (a zero-argument callable returning click
    parameters, set by :func:`kofs.cli._config_options.config_options`) gets them appended to
    its parameters when help is shown or arguments are parsed, not when the command is
    defined: generating them loads the knowledge-source plug-ins (numpy, scipy, pandas), which
    ``kofs --version`` and ``kofs --help`` do not need. The examples and the one-line summary
    of ``kofs --help`` come from :mod:`kofs.cli._help` and the docstring's first sentence.
    (cloup's constraint support is left out: it reads the parameters when the command is made.)
    """

    context_class = cloup.Context  # its help formatter lays out the option groups

    @property
    def params(self) -> list[click.Parameter]:  # type: ignore[override]
        make = getattr(self.callback, "__kofs_lazy_params__", None)
        if make is not None and not self._lazy_done:
            self._lazy_done = True
            self._params = self._params + list(make())
            # cloup's option groups, recomputed with the generated options
            self.arguments, self.option_groups, self.ungrouped_options = self._group_params(
                self._params
            )
        return self._params

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._params = list(value)
        self._lazy_done = False

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_params(ctx, formatter)  # the option groups (cloup)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from kofs.cli._help import examples_text

        if self.epilog is None:
            self.epilog = examples_text(self.name or "")
        super().format_epilog(ctx, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        """The first sentence of the help, whole (``kofs --help`` wraps it, never cuts it)."""
        if self.short_help:
            return self.short_help
        text = " ".join((self.help or "").split("\n\n")[0].split())
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]


class KofsGroup(cloup.Group):
    """A click group that turns errors into one-line messages and exit codes; ``--help`` lists
    its commands in sections (:data:`kofs.cli._help.COMMAND_SECTIONS`)."""

    command_class = LazyParamsCommand

    def list_sections(
        self, ctx: click.Context, include_default_section: bool = True
    ) -> list[cloup.Section]:
        from kofs.cli._help import COMMAND_SECTIONS

        out, placed = [], set()
        for title, names in COMMAND_SECTIONS.items():
            cmds = [self.commands[n] for n in names if n in self.commands]
            placed.update(names)
            if cmds:
                out.append(cloup.Section(title, cmds))
        rest = [c for n, c in sorted(self.commands.items()) if n not in placed]
        if rest and include_default_section:
            out.append(cloup.Section("Other commands", rest))
        return out

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # parsing the command line: click alone would print "Aborted!" (exit 1)
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt as exc:
            sys.exit(_report_interrupt(exc))
        except click.exceptions.NoArgsIsHelpError:
            raise  # `kofs` alone: click shows the help
        except click.UsageError as exc:
            # a bad option of kofs itself (`kofs --log-file DIR rank ...`): one line, as a
            # subcommand's usage errors (click would print the usage, a hint and the error)
            where = exc.ctx.command_path if exc.ctx is not None else "kofs"
            click.echo(
                f"kofs: error: {one_line(exc.format_message())} (see '{where} --help')", err=True
            )
            sys.exit(2)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return super().main(*args, **kwargs)
        old = install_stop_handlers()
        try:
            return super().main(*args, **kwargs)
        finally:
            for s, prev in old.items():
                signal.signal(s, prev if prev is not None else signal.SIG_DFL)

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug")) or os.environ.get("KOFS_DEBUG") == "1"
        try:
            rv = super().invoke(ctx)
            _flush_stdout()
            _finish_warnings(True)
            for line in ctx.meta.pop("kofs_last_lines", ()):
                echo(line)
            return rv
        except KofsError as exc:
            _finish_warnings(False)
            if debug:  # the traceback asked for, and the exit status of the user's error
                traceback.print_exc()
            click.echo(f"kofs: error: {exc.format()}", err=True)
            if sys.stdout is not None:
                try:
                    sys.stdout.flush()
                except (OSError, ValueError, KofsError):
                    _mute_stdout()
            ctx.exit(exc.exit_code)
        except BrokenPipeError:
            # stdout closed by the reader (| head): leave quietly, without a second error
            _finish_warnings(True)
            try:
                _mute_stdout()
            finally:
                ctx.exit(0)
        except KeyboardInterrupt as exc:
            _finish_warnings(False)
            ctx.exit(_report_interrupt(exc, ctx))
        except MemoryError:
            _finish_warnings(False)
            click.echo(
                "kofs: error: out of memory; use a sparser graph (smaller --param *.k), fewer "
                "genes, or set --max-memory to fail early",
                err=True,
            )
            ctx.exit(2)
        except PermissionError as exc:
            # the user's file, or a folder on its way, is closed to this user: their
            # environment, not a fault of kofs
            from kofs.io._fsops import closed_folder

            _finish_warnings(False)
            if debug:
                raise
            if exc.filename is None:
                line = f"permission denied ({one_line(str(exc))})"
            else:
                name = os.fspath(exc.filename)
                blocked = closed_folder(name)
                because = "" if blocked == name else f" ({blocked} may not be entered)"
                line = f"{name}: permission denied{because}"
            click.echo(f"kofs: error: {line}", err=True)
            ctx.exit(2)
        except click.ClickException as exc:
            # usage errors (bad option value, missing argument, unknown command) in one line
            _finish_warnings(False)
            if debug:
                raise
            where = exc.ctx.command_path if getattr(exc, "ctx", None) else ctx.command_path
            click.echo(
                f"kofs: error: {one_line(exc.format_message())} (see '{where} --help')", err=True
            )
            ctx.exit(2)
        except click.exceptions.Exit as exc:
            _finish_warnings(exc.exit_code == 0)
            raise
        except click.exceptions.Abort:
            _finish_warnings(False)
            raise
        except Exception as exc:  # noqa: BLE001 - last line of defence
            _finish_warnings(False)
            stopped = stop_behind(exc) or (_RECEIVED[-1] if _RECEIVED else None)
            if stopped is not None:  # Ctrl-C while an extension module was loading
                ctx.exit(_report_interrupt(stopped, ctx))
            if debug:
                raise
            click.echo(
                f"kofs: internal error: {type(exc).__name__}: {one_line(str(exc))}"
                " (run again with --debug for the traceback and please report it)",
                err=True,
            )
            ctx.exit(1)


class _PrintableFormatter(logging.Formatter):
    """Log lines with the control characters of names escaped (a file or gene named with a
    terminal escape sequence cannot recolour or retitle the user's terminal), one line each."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record)).replace("\n", "\\n")  # one line each


class _HeldStderr(logging.StreamHandler):
    """Log lines for stderr; with ``hold`` they are kept until the command ends, then shown
    (:meth:`show_held`, success) or dropped (:meth:`drop_held`, failure: the error line stays
    alone; the --log-file still has them)."""

    def __init__(self, stream, *, hold: bool) -> None:
        super().__init__(stream)
        self.hold = hold
        self._held: list[logging.LogRecord] = []
        self._seen: set[tuple[int, str]] = set()

    def emit(self, record: logging.LogRecord) -> None:
        key = (record.levelno, record.getMessage())
        if record.levelno >= logging.WARNING:  # a warning is said once per command
            if key in self._seen:
                return
            self._seen.add(key)
        if self.hold:
            self._held.append(record)
        else:
            super().emit(record)

    def show_held(self) -> None:
        held, self._held = self._held, []
        for record in held:
            super().emit(record)

    def reword(self, reworded: dict[str, list[str]]) -> None:
        """Replace held records whose message is a key of ``reworded`` by its sentences."""
        out: list[logging.LogRecord] = []
        for record in self._held:
            plain = reworded.get(record.getMessage())
            if plain is None:
                out.append(record)
                continue
            for sentence in plain:
                out.append(
                    logging.LogRecord(
                        record.name,
                        record.levelno,
                        record.pathname,
                        record.lineno,
                        sentence,
                        None,
                        None,
                    )  # fmt: skip
                )
        self._held = out

    def keep_once(self, said: set[str]) -> None:
        """Drop held records whose message is in ``said`` (printed elsewhere) or repeats an
        earlier held one of the same level (a reworded warning can repeat a notice logged on
        its own)."""
        out: list[logging.LogRecord] = []
        seen: set[tuple[int, str]] = set()
        for record in self._held:
            key = (record.levelno, record.getMessage())
            if key[1] in said or key in seen:
                continue
            seen.add(key)
            out.append(record)
        self._held = out

    def drop_held(self) -> None:
        self._held = []


class _LogFile(logging.FileHandler):
    """The --log-file: a write that fails (full disk, ...) ends the command with one line,
    instead of a logging traceback per record."""

    def __init__(self, path: str) -> None:
        self.user_path = path
        super().__init__(path, encoding="utf-8")

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            return super().handleError(record)
        log.removeHandler(self)
        try:
            self.close()
        except (OSError, ValueError):
            pass
        full = exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
        why = "disk full" if full else exc.strerror or str(exc)
        raise OutputError(
            f"cannot write the log ({why}); free space or choose another --log-file",
            path=self.user_path,
        ) from None


#: the first line of a log kofs wrote (``_LOG_FORMAT``): the time, then a kofs logger
_LOG_START = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} kofs[\w.]* [A-Z]+: ")
_LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s: %(message)s"


def _check_log_target(path: str) -> None:
    """Refuse a --log-file that is an existing file other than a kofs log: the log is appended
    to, so an input given there by mistake (``--log-file expr.tsv``) would gain log lines."""
    try:
        st = os.stat(path)
    except OSError:
        return  # a new file (or one that cannot be opened: said when opening it)
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return  # /dev/stderr, a pipe, an empty file
    try:
        with open(path, "rb") as fh:
            head = fh.read(200)
    except OSError:
        return
    if not _LOG_START.match(head):
        raise OutputError(
            "exists and is not a kofs log (an input file?); the log is appended to the file: "
            "choose another --log-file",
            path=path,
        )


def setup_logging(verbosity: int, log_file: str | None = None) -> None:
    """Library logs go to stderr (warnings by default; -v info, -vv debug; -q errors only).

    At the default verbosity and with ``-q`` the stderr lines are held until the command ends
    (see :class:`KofsGroup`); ``--log-file`` gets every record at once.

    Raises
    ------
    OutputError
        ``log_file`` cannot be opened for writing.
    """
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    root = logging.getLogger("kofs")
    for old in list(root.handlers):
        root.removeHandler(old)
        if isinstance(old, _LogFile):
            old.close()
    if log_file is not None and not str(log_file).strip():  # was no log, without a word
        raise OutputError("--log-file: an empty path was given")
    root.setLevel(logging.DEBUG if log_file else level)
    h = _HeldStderr(sys.stderr, hold=verbosity <= 0)
    h.setLevel(level)
    h.setFormatter(_PrintableFormatter("kofs: %(levelname)s: %(message)s"))
    root.addHandler(h)
    if log_file:
        _check_log_target(log_file)
        try:
            fh = _LogFile(log_file)
        except OSError as exc:
            raise OutputError(
                f"cannot be written ({exc.strerror or exc}); choose another --log-file",
                path=log_file,
            ) from None
        fh.setLevel(logging.DEBUG)
        fh.setFormatter(logging.Formatter(_LOG_FORMAT))
        root.addHandler(fh)
    root.propagate = True  # library records still reach any root handler (e.g. pytest caplog)
    warnings.showwarning = _log_warning


def _log_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings of libraries (numpy overflow, scikit-learn convergence, ...) become one
    log line each at INFO level (shown with -v) instead of two raw lines on stderr."""
    text = (str(message).strip().splitlines() or [""])[0]
    logging.getLogger("kofs.warnings").info(
        "%s from %s:%d: %s", category.__name__, os.path.basename(filename), lineno, text
    )


@click.group(cls=KofsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kofs")
@click.option("-v", "--verbose", count=True, help="More messages on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.option(
    "--log-file", type=click.Path(dir_okay=False), default=None, help="Also write a full log here."
)
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool, log_file: str | None, debug: bool) -> None:
    """kofs: select genes from expression data using what biology already knows."""
    setup_logging(-1 if quiet else verbose, log_file)
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["quiet"] = quiet
