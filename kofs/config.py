"""Run configuration files (``kofs run CONFIG.yaml``): load, validate, resolve, dump.

A config is a YAML mapping whose keys are the long option names of ``kofs rank`` (dashes or
underscores), plus ``expression``. Only ``yaml.safe_load`` is used: object tags are refused.
Relative paths are taken relative to the config file's folder.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from kofs.errors import InputError, ParameterError, short_repr


def key_name(key: str) -> str:
    """Config key -> Python option name (``label-column`` -> ``label_column``)."""
    return str(key).strip().replace("-", "_")


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read a YAML config into a dict with normalised keys.

    Raises
    ------
    InputError
        Missing/unreadable file, invalid YAML (with line), a tag such as ``!!python/object``,
        or a top level that is not a mapping.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("config file not found", path=p) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read config: {exc}", path=p) from None
    try:
        data = yaml.safe_load(text)
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError(
            f"YAML tags are not allowed in a config ({exc.problem})", path=p, line=line
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"invalid YAML: {getattr(exc, 'problem', exc)}",
            path=p,
            line=mark.line + 1 if mark else None,
        ) from None
    if data is None:
        raise InputError("config is empty; expected a mapping of option names to values", path=p)
    if not isinstance(data, Mapping):
        raise InputError(
            f"config must be a mapping of option names to values, got {type(data).__name__}", path=p
        )
    out: dict[str, Any] = {}
    for k, v in data.items():
        name = key_name(k)
        if name in out:
            raise InputError(
                f"key {short_repr(k)} given twice (dash and underscore spellings are the same key)",
                path=p,
            )
        out[name] = v
    return out


def check_keys(config: Mapping[str, Any], known: Iterable[str], *, path: str | os.PathLike) -> None:
    """Unknown keys fail with a did-you-mean hint (keys shown with dashes)."""
    known = list(known)
    known_dash = [k.replace("_", "-") for k in known]
    for k in config:
        if k not in known:
            key = k.replace("_", "-")
            close = difflib.get_close_matches(key, known_dash, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "see `kofs rank --help` for the keys"
            raise ParameterError(
                f"unknown config key {short_repr(key)} ({hint}); keys are the long options of kofs rank",
                path=path,
            )


def resolve_paths(
    config: Mapping[str, Any], path_keys: Iterable[str], *, base: str | os.PathLike
) -> dict[str, Any]:
    """Make the values of ``path_keys`` absolute relative to ``base`` (``-`` and None kept)."""
    out = dict(config)
    base = Path(base)
    for k in path_keys:
        v = out.get(k)
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            out[k] = [_abs(x, base) for x in v]
        else:
            out[k] = _abs(v, base)
    return out


def _abs(value: Any, base: Path) -> Any:
    s = str(value)
    if s == "-" or os.path.isabs(s):
        return s
    return str((base / s).resolve())


def dump_config(config: Mapping[str, Any]) -> str:
    """YAML text of a resolved config (dash keys, sorted, plain types only)."""
    plain = {
        k.replace("_", "-"): (list(v) if isinstance(v, tuple) else v)
        for k, v in sorted(config.items())
    }
    return "# kofs resolved configuration: `kofs run THIS_FILE` repeats the run\n" + yaml.safe_dump(
        plain, sort_keys=True, default_flow_style=False, allow_unicode=True
    )
