"""``kofs run CONFIG.yaml``: a run from a config file; command-line flags override it."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from kofs.cli._group import main
from kofs.cli.rank import PATH_KEYS, config_keys, rank_options, run_rank
from kofs.config import check_keys, load_config, resolve_paths
from kofs.errors import ParameterError, short_repr


def _scalar(value, param: click.Parameter) -> None:
    """YAML scalars of the wrong kind (a mapping, a list, true for a number, 1.5 for an
    integer) are refused instead of being turned into strings or truncated."""
    if isinstance(value, (list, dict)):
        raise click.BadParameter(f"expected a single value, got a {type(value).__name__}")
    kind = getattr(param.type, "name", "")
    if kind in ("integer", "integer range", "float", "float range") and isinstance(value, bool):
        raise click.BadParameter(f"expected a number, got {str(value).lower()}")
    if kind in ("integer", "integer range") and isinstance(value, float) and not value.is_integer():
        raise click.BadParameter(f"expected an integer, got {value!r}")


def _convert(key: str, value, param: click.Parameter, ctx: click.Context, path: str):
    try:
        if getattr(param, "multiple", False):
            items = value if isinstance(value, list) else [value]
            for v in items:
                _scalar(v, param)
            return tuple(param.type.convert(v, param, ctx) for v in items)
        if value is not None:
            _scalar(value, param)
        return param.type.convert(value, param, ctx) if value is not None else None
    except click.BadParameter as exc:
        raise ParameterError(
            f"config key {short_repr(key.replace('_', '-'))}: {exc.format_message()}", path=path
        ) from None


def config_to_options(config_path: str, ctx: click.Context) -> dict:
    """Validated, type-converted options of a config file (paths made absolute)."""
    from kofs.io.output_folder import verify_output_file

    verify_output_file(config_path)  # OUT/config.resolved.yaml: as the run wrote it
    cfg = load_config(config_path)
    params = config_keys()
    check_keys(cfg, params, path=config_path)
    if "expression" not in cfg:
        raise ParameterError(
            "config has no 'expression' key (the expression matrix to rank)", path=config_path
        )
    for key in ("expression", *PATH_KEYS):
        value = cfg.get(key)
        values = value if isinstance(value, list) and key == "aux" else [value]
        if value is not None and not all(isinstance(v, str) for v in values):
            raise ParameterError(
                f"config key {key.replace('_', '-')!r}: expected a file path, got "
                f"{short_repr(value)}",
                path=config_path,
            )
    cfg = resolve_paths(cfg, PATH_KEYS, base=Path(config_path).resolve().parent)
    out = {"expression": str(cfg.pop("expression"))}
    for key, value in cfg.items():
        out[params[key].name] = _convert(key, value, params[key], ctx, config_path)
    return out


@main.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--expression", default=None, help="Override the config's expression matrix.")
@rank_options
@click.pass_context
def run_cmd(ctx: click.Context, config: str, expression: str | None, **opts) -> None:
    """Run `kofs rank` from CONFIG (YAML; keys = the long options of `kofs rank`).

    Options given on the command line override the file. The output folder receives
    config.resolved.yaml, with which `kofs run` repeats the run exactly.
    """
    merged = {name: opts[name] for name in opts}  # defaults
    merged.update(config_to_options(config, ctx))
    for name, value in opts.items():
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            merged[name] = value
    if expression is not None:
        merged["expression"] = expression
    run_rank(merged.pop("expression"), **merged)
