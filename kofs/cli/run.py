"""``kofs run CONFIG.yaml``: a run from a config file; command-line flags override it."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from kofs.cli._config_options import config_error, config_options, given
from kofs.cli._group import main
from kofs.errors import InputError, ParameterError
from kofs.pipeline.config import RunConfig, absolute_paths, read_run_config, with_overrides
from kofs.pipeline.yaml_files import key_name, load_config


@main.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@config_options(exclude=())
@click.pass_context
def run_cmd(ctx: click.Context, config: str, **opts) -> None:
    """Run `kofs rank` from CONFIG (YAML; keys = the long options of `kofs rank`).

    Options given on the command line override the file. The output folder receives
    config.resolved.yaml, with which `kofs run` repeats the run exactly. A config with
    `command: aggregate` (written by `kofs aggregate`) repeats `kofs aggregate`; `command: rank`
    (or none) `kofs rank`.
    """
    from kofs.cli.rank import execute
    from kofs.io.output_folder import MARKER, verify_output_file

    try:  # OUT/config.resolved.yaml: as the run wrote it, or edited on purpose?
        verify_output_file(config)
    except InputError:
        logging.getLogger("kofs").warning(
            "%s was changed after the run that wrote it (see %s); running it as it is now",
            config,
            MARKER,
        )
    values = load_config(config)
    if values.get("command") == "aggregate":
        from kofs.cli.aggregate import run_config

        run_config(config, given(ctx, opts))
        return
    cfg = read_run_config(config)  # `command: rank` allowed, any other command refused
    typed = given(ctx, opts)
    if typed:
        typed = absolute_paths({key_name(k): v for k, v in typed.items()}, Path.cwd())
        cfg = RunConfig.from_mapping(with_overrides(cfg.to_mapping(), typed), where=config)
    if cfg.inputs.expression is None:
        raise ParameterError(
            "config has no 'expression' key (the expression matrix to rank)", path=config
        )
    try:
        execute(cfg, named=values.get("output") is not None or "output" in typed)
    except ParameterError as exc:
        raise config_error(exc, config) from None
