"""The package's layers have no back-edges and its modules no import cycle (STYLE.md habit 11).

base -> io -> knowledge -> rankers / aggregate -> pipeline -> evaluate -> cli: a module may
import its own layer or lower ones, never a higher one (every import counts, at module level or
inside a function); nothing outside ``kofs/cli`` imports click or ``kofs.cli``; the module-level
imports of the whole package form no cycle, and all imports no circle but the known one; the
package root keeps only the contract and the infrastructure; docs/design-notes.md's layer table
names the same folders.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "kofs"

#: lowest first; a module's layer is the first prefix that matches its dotted name. The same
#: table is in docs/design-notes.md ("The structure"), checked by test_design_notes_table.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "kofs.errors",
            "kofs.progress",
            "kofs.types",
            "kofs.registry",
            "kofs.options",
            "kofs._compute",
        ),
    ),
    ("io", ("kofs.io", "kofs.resources", "kofs.cache", "kofs.datasets", "kofs.report")),
    ("knowledge", ("kofs.knowledge",)),
    ("methods", ("kofs.rankers", "kofs.aggregate")),
    ("pipeline", ("kofs.context", "kofs.sources", "kofs.pipeline")),
    ("evaluate", ("kofs.evaluate",)),
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


def _imported(node: ast.stmt, package: str) -> set[str]:
    """What an import statement names: the modules, and ``module.name`` for each name of a
    ``from`` import (relative imports resolved against ``package``); empty for other nodes."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return {mod} | {f"{mod}.{a.name}" for a in node.names}


def imports_of(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= _imported(node, package)
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


def module_level_imports(module: str, path: Path) -> set[str]:
    """The kofs modules ``module`` imports when it is imported: statements at module level
    (also inside ``if``/``try``), not inside functions, not under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update(_imported(node, package))
            elif isinstance(node, ast.If):
                test = node.test
                if not (
                    (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
                    or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
                ):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, (ast.Try, ast.With)):
                walk(node.body)
                for h in getattr(node, "handlers", []):
                    walk(h.body)
                walk(getattr(node, "orelse", []))
                walk(getattr(node, "finalbody", []))

    walk(tree.body)
    out = set()
    for imp in found:
        target = imp if imp in MODULES else imp.rpartition(".")[0]
        if target in MODULES and target != module:
            # a package and its own submodules are one unit (the parent is in sys.modules first)
            if not target.startswith(module + ".") and not module.startswith(target + "."):
                out.add(target)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                path = [*stack, node]
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt, [*stack, node])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def test_no_import_cycle_in_the_package():
    graph = {m: module_level_imports(m, MODULES[m]) for m in MODULES}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_bites(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    f = tmp_path / "m.py"
    f.write_text(
        "from typing import TYPE_CHECKING\n"
        "from kofs.errors import KofsError\n"
        "if TYPE_CHECKING:\n    from kofs.types import Expression\n"
        "def f():\n    from kofs.registry import RANKERS\n"
    )
    assert module_level_imports("kofs.io.m", f) == {"kofs.errors"}


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The import circles: components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(part)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_even_inside_functions():
    graph = {}
    for m in MODULES:
        deps = set()
        for imp in imports_of(m, MODULES[m]):
            target = imp if imp in MODULES else imp.rpartition(".")[0]
            if target in MODULES and target != m:
                if not target.startswith(m + ".") and not m.startswith(target + "."):
                    deps.add(target)
        graph[m] = deps
    circles = strongly_connected(graph)
    assert circles == [], f"import circles: {circles}"
    assert strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]


#: the package root: the contract (types, errors, the registry, option declarations, progress)
#: and the infrastructure every layer shares (cache, per-run context, memory resources)
ROOT_MODULES = {
    "kofs.__main__",
    "kofs.types",
    "kofs.errors",
    "kofs.registry",
    "kofs.options",
    "kofs.progress",
    "kofs.cache",
    "kofs.context",
    "kofs.resources",
}


def test_the_root_keeps_only_contract_and_infrastructure():
    root = {m for m, path in MODULES.items() if path.parent == ROOT and path.name != "__init__.py"}
    assert root == ROOT_MODULES, (
        f"put {sorted(root - ROOT_MODULES)} into the package of its layer (docs/design-notes.md)"
    )


def test_design_notes_table_names_the_layers():
    """Each row of the table in docs/design-notes.md ("The structure") names its layer's folders
    and root modules, and no row names a module of another layer."""
    text = (ROOT.parent / "docs" / "design-notes.md").read_text(encoding="utf-8")
    block = text.split("### The structure", 1)[1].split("```", 2)[1]
    rows: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        first = line.split()[0] if line.strip() else ""
        if first in RANK:
            current = first
            rows[current] = ""
        if current is not None and not set(line.strip()) <= {"─", " "}:
            rows[current] += " " + line[13:]
    assert list(rows) == [name for name, _ in LAYERS]
    for name, prefixes in LAYERS:
        for p in prefixes:
            short = p.removeprefix("kofs.")
            path = ROOT / short.replace(".", "/")
            shown = f"{short}/" if path.is_dir() else short
            assert shown in rows[name].split() or shown in rows[name].replace(",", " ").split(), (
                f"docs/design-notes.md: the {name} row should name {shown}"
            )


def test_the_check_catches_a_back_edge(tmp_path):
    """The AST walk sees imports inside functions (a back-edge hidden there still counts)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from kofs.cli._group import main\n    return main\n")
    assert "kofs.cli._group" in imports_of("kofs.io.m", f)
    assert layer_of("kofs.io.m") == "io" and RANK["cli"] > RANK["io"]
