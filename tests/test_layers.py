"""The package's layers have no back-edges (STYLE.md habit 11).

io -> knowledge -> rankers / aggregate -> pipeline -> evaluate, reproduce -> cli: a module may
import its own layer or lower ones, never a higher one; nothing outside ``kofs/cli`` imports
click or ``kofs.cli``; within the pipeline layer the module graph has no cycle. Every import
counts, at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "kofs"

#: lowest first; a module's layer is the first prefix that matches its dotted name
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "kofs.errors",
            "kofs.types",
            "kofs._ranks",
            "kofs.canonical",
            "kofs.registry",
            "kofs.options",
            "kofs.progress",
            "kofs._matrix",
            "kofs._chunked",
            "kofs._numba_kernels",
            "kofs._knn_exact",
            "kofs._jit",
            "kofs._counts",
        ),
    ),
    (
        "io",
        ("kofs.io", "kofs.resources", "kofs.example", "kofs.cache", "kofs.datasets", "kofs.report"),
    ),
    ("knowledge", ("kofs.knowledge", "kofs.evidence")),
    ("methods", ("kofs.rankers", "kofs.aggregate")),
    (
        "pipeline",
        (
            "kofs.context",
            "kofs.sources",
            "kofs.config",
            "kofs.plans",
            "kofs.reseeding",
            "kofs.pipeline",
            "kofs.workflow",
            "kofs.outputs",
            "kofs.list_aggregation",
            "kofs.selector",
            "kofs.methods",
        ),
    ),
    ("evaluate", ("kofs.evaluate", "kofs.reproduce")),
    ("cli", ("kofs.cli", "kofs.__main__")),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str | None:
    best = None
    for name, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (
                best is None or len(p) > len(best[1])
            ):
                best = (name, p)
    return None if best is None else best[0]


def modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


MODULES = modules()
KOFS_MODULES = {m for m in MODULES if m != "kofs"}


def test_every_module_has_a_layer():
    missing = sorted(m for m in KOFS_MODULES if layer_of(m) is None)
    assert not missing, f"give these modules a layer in tests/test_layers.py: {missing}"


@pytest.mark.parametrize("module", sorted(KOFS_MODULES))
def test_no_import_of_a_higher_layer(module):
    mine = RANK[layer_of(module)]
    bad = []
    for imp in imports_of(module, MODULES[module]):
        if imp == "kofs" or not imp.startswith("kofs."):
            continue
        target = imp if imp in MODULES else imp.rpartition(".")[0]
        if target not in MODULES or target == "kofs":
            continue
        layer = layer_of(target)
        if layer is not None and RANK[layer] > mine:
            bad.append(f"{imp} ({layer})")
    assert not bad, f"{module} ({layer_of(module)}) imports a higher layer: {bad}"


@pytest.mark.parametrize("module", sorted(m for m in KOFS_MODULES if layer_of(m) != "cli"))
def test_library_never_imports_click(module):
    imps = imports_of(module, MODULES[module])
    assert not any(i == "click" or i.startswith("click.") for i in imps), module
    assert not any(i.startswith("kofs.cli") for i in imps), module


def test_pipeline_layer_has_no_cycle():
    graph = {}
    for m in KOFS_MODULES:
        if layer_of(m) != "pipeline":
            continue
        deps = set()
        for imp in imports_of(m, MODULES[m]):
            target = imp if imp in MODULES else imp.rpartition(".")[0]
            if target != m and target in MODULES and layer_of(target) == "pipeline":
                # a package's own submodules are part of it
                if not target.startswith(m + ".") and not m.startswith(target + "."):
                    deps.add(target)
        graph[m] = deps
    seen: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join([*stack, node, nxt]))
            if nxt not in seen:
                visit(nxt, [*stack, node])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [])


def test_the_check_catches_a_back_edge(tmp_path):
    """The AST walk sees imports inside functions (a back-edge hidden there still counts)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from kofs.cli._group import main\n    return main\n")
    assert "kofs.cli._group" in imports_of("kofs.io.m", f)
    assert layer_of("kofs.io.m") == "io" and RANK["cli"] > RANK["io"]
