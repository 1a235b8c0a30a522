"""Command-line interface: one module per subcommand; each parses, makes one library call,
writes. The library never imports click."""

from kofs.cli._group import main

# each import adds one subcommand to `main`
from kofs.cli import demo, fetch, methods, rank, run, sources  # noqa: E402,F401  isort: skip
from kofs.cli import gosim  # noqa: E402,F401  isort: skip
from kofs.cli import evaluate, reproduce  # noqa: E402,F401  isort: skip
from kofs.cli import aggregate  # noqa: E402,F401  isort: skip

__all__ = ["main"]
