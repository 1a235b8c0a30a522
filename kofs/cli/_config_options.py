"""Click options generated from the run specification (:mod:`kofs.pipeline.config`).

Every option of ``kofs rank`` (and the subsets used by ``kofs run``, ``kofs sources``) is one
declared :class:`kofs.options.Option`: its flag, type, help and default come from there. Click
passes only what the user typed; the library applies defaults, so command line, YAML and
Python share one set of defaults.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from kofs.errors import ParameterError
from kofs.options import Option
from kofs.pipeline.config import RunConfig, all_options


def _click_type(o: Option) -> Any:
    if o.kind == "choice":
        return click.Choice(list(o.choices or ()))
    if o.kind == "int":
        if o.low is None and o.high is None:  # an unbounded range shows "[x<=None]"
            return click.INT
        return click.IntRange(
            min=None if o.low is None else int(o.low), max=None if o.high is None else int(o.high)
        )
    if o.kind == "float":
        if o.low is None and o.high is None:
            return click.FLOAT
        return click.FloatRange(min=o.low, max=o.high)
    if o.kind in ("path", "paths"):
        return click.Path(dir_okay=o.folder, allow_dash=o.stdin)
    return str


def _help(o: Option) -> str:
    text = o.help
    if o.default is not None and o.default is not False and o.default not in ({}, ()):
        shown = ",".join(map(str, o.default)) if isinstance(o.default, tuple) else o.default
        text += f"  [default: {shown}]"
    return text


def click_option(o: Option) -> Callable[[Any], Any]:
    """The click option of one declared option (no click default: see the module doc)."""
    decls = [o.flag] + ([o.short] if o.short else [])
    kw: dict[str, Any] = {"help": _help(o)}
    if o.kind == "bool":
        return click.option(*decls, o.name, is_flag=True, default=None, **kw)
    kw["type"] = _click_type(o)
    if o.required:
        kw["required"] = True
    if o.metavar:
        kw["metavar"] = o.metavar
    # repeatable; a list option given twice adds to it ('--rankers fisher --rankers spec' =
    # '--rankers fisher,spec': the last one alone was kept, the others dropped without a word)
    if o.kind in ("paths", "params", "flat_params", "names", "ints", "floats"):
        kw["multiple"] = True
    else:  # one value: the last one typed wins, and the others are said to have no effect
        kw["multiple"] = True
        kw["callback"] = lambda ctx, param, values: _last_value(o, values)
    return click.option(*decls, o.name, default=None, **kw)


def _last_value(o: Option, values: tuple[Any, ...]) -> Any:
    """The value of a single-valued option (None when not given): the last one typed, as
    shells' conventions have it (a script's option overridden by a later one), with one
    warning naming the values it overrode (``--pathways a.gmt --pathways b.gmt`` read b.gmt
    alone, without a word)."""
    if not values:
        return None
    last = values[-1]
    earlier = [v for v in dict.fromkeys(values[:-1]) if v != last]
    if earlier:
        from kofs.options import warn_no_effect

        warn_no_effect(
            [o.shown(v) for v in earlier],
            f"{o.flag} takes one value and is given again: {o.shown(last)} is used",
        )
    return last


def options_for(
    sections: Iterable[str] | None = None, *, exclude: Iterable[str] = ("expression",)
) -> list[Option]:
    """The declared options of some sections (``knowledge`` = every plug-in), in order."""
    want = None if sections is None else set(sections)
    skip = set(exclude)
    out = []
    for name, (section, o) in all_options().items():
        top = section.split(".", 1)[0]
        if name in skip or (want is not None and top not in want and name not in want):
            continue
        out.append(o)
    return out


def config_options(
    sections: Iterable[str] | None = None, *, exclude: Iterable[str] = ("expression",)
) -> Callable[[Any], Any]:
    """Decorator adding the options of ``sections`` (names of sections or single options).

    The options are made on first use (:class:`kofs.cli._group.LazyParamsCommand`, the command
    class of ``kofs``'s group), after the command's own parameters, and shown in ``--help`` in
    one group per section of the schema (:mod:`kofs.cli._help`).
    """

    def make() -> list[click.Parameter]:
        from cloup import OptionGroup

        from kofs.cli._help import group_order, group_title

        section = {name: sec for name, (sec, _) in all_options().items()}
        chosen = sorted(  # grouped by section, in the groups' order (stable within a group)
            options_for(sections, exclude=exclude), key=lambda o: group_order(section[o.name])
        )

        def stub() -> None:
            pass

        for o in reversed(chosen):
            stub = click_option(o)(stub)
        params = list(reversed(getattr(stub, "__click_params__", [])))
        groups: dict[str, OptionGroup] = {}
        for o, p in zip(chosen, params, strict=True):
            title = group_title(section[o.name])
            p.group = groups.setdefault(title, OptionGroup(title))  # type: ignore[attr-defined]
        return params

    def deco(func: Any) -> Any:
        func.__kofs_lazy_params__ = make
        return func

    return deco


def given(ctx: click.Context, values: Mapping[str, Any]) -> dict[str, Any]:
    """The declared options the user typed (empty repeatable options count as not given)."""
    known = all_options()
    out = {}
    for name, value in values.items():
        if name not in known:
            continue
        if ctx.get_parameter_source(name) != ParameterSource.COMMANDLINE:
            continue
        if isinstance(value, tuple) and not value:
            continue
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def command_config(ctx: click.Context, values: Mapping[str, Any], **extra: Any) -> RunConfig:
    """A RunConfig from a command's typed options (paths relative to the working folder)."""
    return RunConfig.from_mapping({**extra, **given(ctx, values)}, base=Path.cwd())


def declared_options(
    options: Callable[[], Iterable[Option]], *, exclude: Iterable[str] = ()
) -> Callable[[Any], Any]:
    """Decorator adding the click options of a command whose settings are an :func:`opt`
    dataclass other than the run's (``kofs aggregate``, ``evaluate``, ``gosim``, ``fetch``):
    ``options`` returns them (called on first use, so that defining the command imports no
    library module); ``exclude`` names those given as arguments instead."""
    skip = set(exclude)

    def make() -> list[click.Parameter]:
        def stub() -> None:
            pass

        chosen = [o for o in options() if o.name not in skip]
        for o in reversed(chosen):
            stub = click_option(o)(stub)
        return list(reversed(getattr(stub, "__click_params__", [])))

    def deco(func: Any) -> Any:
        func.__kofs_lazy_params__ = make
        return func

    return deco


def typed(ctx: click.Context, values: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``values`` the user typed (empty repeatable options count as not
    given; tuples become lists), for the library to apply its own defaults."""
    out = {}
    for name, value in values.items():
        if ctx.get_parameter_source(name) != ParameterSource.COMMANDLINE:
            continue
        if isinstance(value, tuple):
            if not value:
                continue
            value = list(value)
        out[name] = value
    return out


def config_error(exc: ParameterError, config: str) -> ParameterError:
    """A run's ParameterError about a value of its config, naming the config file and, for a
    message that names an option (``--param: ...``), the config key it is (``config key
    'param': ...``); an error that names its own file is left as it is."""
    if exc.path is not None:
        return exc
    message = re.sub(r"^--([a-z][a-z-]*): ", r"config key '\1': ", exc.message)
    return ParameterError(message, path=config)
