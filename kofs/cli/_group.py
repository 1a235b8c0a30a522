"""The ``kofs`` click group and the error policy of every command.

Exit status: 0 success; 2 bad input or usage (one line on stderr, no traceback; click's usage
errors of a subcommand too); 1 internal error (traceback only with ``--debug``). A broken pipe
(``kofs rank ... -o - | head``) exits quietly.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from typing import Any

import click

from kofs import __version__
from kofs.errors import KofsError

log = logging.getLogger("kofs")


class LazyParamsCommand(click.Command):
    """A command whose generated options are made on first use.

    A callback carrying ``__kofs_lazy_params__`` (a zero-argument callable returning click
    parameters, set by :func:`kofs.cli._config_options.config_options`) gets them appended to
    its parameters when help is shown or arguments are parsed, not when the command is
    defined: generating them loads the knowledge-source plug-ins (numpy, scipy, pandas), which
    ``kofs --version`` and ``kofs --help`` do not need.
    """

    @property
    def params(self) -> list[click.Parameter]:  # type: ignore[override]
        make = getattr(self.callback, "__kofs_lazy_params__", None)
        if make is not None and not self._lazy_done:
            self._lazy_done = True
            self._params = self._params + list(make())
        return self._params

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._params = list(value)
        self._lazy_done = False


class KofsGroup(click.Group):
    """A click group that turns errors into one-line messages and exit codes."""

    command_class = LazyParamsCommand

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug")) or os.environ.get("KOFS_DEBUG") == "1"
        try:
            return super().invoke(ctx)
        except KofsError as exc:
            if debug:
                raise
            click.echo(f"kofs: error: {exc.format()}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:
            # stdout closed by the reader (| head): leave quietly, without a second error
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            finally:
                ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("kofs: interrupted; nothing was written", err=True)
            ctx.exit(130)
        except MemoryError:
            click.echo(
                "kofs: error: out of memory; use a sparser graph (smaller --param *.k), fewer "
                "genes, or set --max-memory to fail early",
                err=True,
            )
            ctx.exit(2)
        except click.ClickException as exc:
            # usage errors (bad option value, missing argument, unknown command) in one line
            if debug:
                raise
            where = exc.ctx.command_path if getattr(exc, "ctx", None) else ctx.command_path
            click.echo(
                f"kofs: error: {exc.format_message()} (see '{where} --help')".replace("\n", " "),
                err=True,
            )
            ctx.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - last line of defence
            if debug:
                raise
            click.echo(
                f"kofs: internal error: {type(exc).__name__}: {exc}".replace("\n", " ")
                + " (run again with --debug for the traceback and please report it)",
                err=True,
            )
            ctx.exit(1)


def setup_logging(verbosity: int, log_file: str | None = None) -> None:
    """Library logs go to stderr (warnings by default; -v info, -vv debug; -q errors only)."""
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    root = logging.getLogger("kofs")
    root.handlers.clear()
    root.setLevel(logging.DEBUG if log_file else level)
    h = logging.StreamHandler(sys.stderr)
    h.setLevel(level)
    h.setFormatter(logging.Formatter("kofs: %(levelname)s: %(message)s"))
    root.addHandler(h)
    if log_file:
        fh = logging.FileHandler(log_file)
        fh.setLevel(logging.DEBUG)
        fh.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
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
