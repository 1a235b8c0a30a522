"""YAML configs: the one loader (``yaml.safe_load`` semantics, no tags, unique keys, bounded
nesting and alias expansion) and key names (dashes or underscores). The resolved config
written beside every run is :func:`kofs.pipeline.config.dump_config`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kofs.errors import InputError


def key_name(key: Any) -> str:
    """Config key -> option name (``label-column`` -> ``label_column``)."""
    return str(key).strip().replace("-", "_")


#: deepest nesting of lists and mappings a YAML config may have (the longest real config
#: nests 3 deep; Python's parser recurses per level)
YAML_MAX_DEPTH = 50


#: most values a YAML config may hold once its aliases are expanded (a 550-byte "billion
#: laughs" config expands to 10^9); real configs hold a few hundred
YAML_MAX_VALUES = 100_000


_TOO_MANY = (
    f"it holds more than {YAML_MAX_VALUES:,} values, where a run's settings are a few dozen; "
    "give long gene lists as files"
)


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load that refuses a key given twice in one mapping, nesting deeper than
    :data:`YAML_MAX_DEPTH` and aliases expanding to more than :data:`YAML_MAX_VALUES` values
    (both checked on the node graph, before any Python object is built)."""

    _depth = 0
    _nodes = 0

    def compose_node(self, parent, index):
        self._depth += 1
        self._nodes += 1
        try:
            if self._nodes > YAML_MAX_VALUES:  # written out (aliases: _check_expansion)
                raise yaml.composer.ComposerError(
                    None, None, _TOO_MANY, self.peek_event().start_mark
                )
            if self._depth > YAML_MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {YAML_MAX_DEPTH} levels", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        node = super().compose_document()
        _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a node graph whose aliases expand to more than :data:`YAML_MAX_VALUES` values
    or refer to themselves (each shared node counted as often as it is referred to)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    shared = [False]  # a node met twice: an alias

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            shared[0] = True
            return sizes[key]
        if key in active:
            raise yaml.composer.ComposerError(
                None, None, "an alias refers to a value that contains it", node.start_mark
            )
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            active.add(key)
            children = (
                node.value
                if isinstance(node, yaml.SequenceNode)
                else [n for pair in node.value for n in pair]
            )
            for child in children:
                total += size(child)
                if total > YAML_MAX_VALUES:
                    why = (
                        f"its aliases expand to more than {YAML_MAX_VALUES:,} values (an "
                        "alias bomb?); write the values out"
                        if shared[0]
                        else _TOO_MANY
                    )
                    raise yaml.composer.ComposerError(None, None, why, node.start_mark)
            active.discard(key)
        sizes[key] = total
        return total

    if root is not None:
        size(root)


class _Refused(yaml.constructor.ConstructorError):
    """A mapping key kofs refuses (given twice, or not a single value); its problem is the
    message as it is."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):  # `? [a, b]`: a list or mapping as key
            kind = "list" if isinstance(key_node, yaml.SequenceNode) else "mapping"
            raise _Refused(
                None,
                None,
                f"a key is a {kind}; keys are names (write `name: value`)",
                key_node.start_mark,
            )
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise _Refused(
                None,
                None,
                f"key {key!r} given twice (lines {seen[key]} and {key_node.start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


#: YAML 1.1 reads some plain words as values a config never means (PyYAML's safe_load): ``no``,
#: ``off``, ``yes``, ``on`` as booleans, ``0123`` and KEGG's ``04110`` as octal numbers (83,
#: 2120), ``1:30`` as a base-60 number (90), ``2001-01-01`` as a date, so a column, a pathway
#: or a seed was silently another one. A config keeps these as written (text); every value
#: is then read by its option's kind (``no-report: no`` is still false, ``seed: 010`` is 10).
#: ``true``/``false``, decimal (and ``0x``) integers and decimal floats (``0.5``, ``1.0e-3``) stay
#: typed.
_PLAIN_TYPED = {
    "tag:yaml.org,2002:bool": (
        r"^(?:true|True|TRUE|false|False|FALSE)$",
        "tTfF",
    ),
    "tag:yaml.org,2002:int": (r"^[-+]?(?:0|[1-9][0-9_]*|0x[0-9a-fA-F_]+)$", "-+0123456789"),
    "tag:yaml.org,2002:float": (
        r"^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
}
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [
        (tag, rx)
        for tag, rx in resolvers
        if tag not in _PLAIN_TYPED and tag != "tag:yaml.org,2002:timestamp"
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, (_rx, _first) in _PLAIN_TYPED.items():
    _UniqueKeyLoader.add_implicit_resolver(_tag, re.compile(_rx), list(_first))


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """A YAML mapping (safe subset, unique keys) with its keys as written.

    Raises
    ------
    InputError
        Missing/unreadable file, invalid YAML (with line), a tag such as ``!!python/object``,
        a key given twice, or a top level that is not a mapping.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError("config file not found", path=p) from None
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror or exc}", path=p) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        from kofs.io._table import not_utf8  # here: the table reader imports NumPy (kofs --help)

        raise not_utf8(raw, exc, p) from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except _Refused as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError(str(exc.problem), path=p, line=line) from None
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        problem = f"YAML tags are not allowed in a config ({exc.problem})"
        raise InputError(problem, path=p, line=line) from None
    except yaml.composer.ComposerError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        if exc.context == "expected a single document in the stream":
            raise InputError(
                "holds more than one YAML document (a '---' line starts a second one); "
                "a config is one mapping of option names to values",
                path=p,
                line=line,
            ) from None
        raise InputError(f"config refused: {exc.problem}", path=p, line=line) from None
    except RecursionError:
        raise InputError(f"config nested deeper than {YAML_MAX_DEPTH} levels", path=p) from None
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
            f"config must be a mapping of option names to values, got {type(data).__name__}",
            path=p,
        )
    return dict(data)


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """A YAML config as a dict with normalised keys (``label-column`` -> ``label_column``)."""
    out: dict[str, Any] = {}
    for k, v in read_yaml(path).items():
        name = key_name(k)
        if name in out:
            raise InputError(
                f"key {k!r} given twice (dash and underscore spellings are the same key)", path=path
            )
        out[name] = v
    return out
