"""The documentation stays true: the README is a front door opening with its two commands, the
generated reference pages (docs/cli.md, docs/methods.md) are what the code generates, and every
relative link of README.md and docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kofs.aggregate import AGGREGATORS
from kofs.cli import main
from kofs.cli._docs import COMMAND, PAGES
from kofs.pipeline.presets import DEFAULTS_VERSION, default_plan
from kofs.rankers import RANKERS
from kofs.registry import DEFAULT_AGGREGATOR

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _bash_block(text: str, n: int) -> str:
    """The n-th ```bash block (1-based), as ``.ci/run`` reads it."""
    return re.findall(r"^```bash\n(.*?)\n```", text, flags=re.S | re.M)[n - 1]


def test_readme_opens_with_the_two_commands():
    first, second = _bash_block(README, 1), _bash_block(README, 2)
    assert "kofs demo" in first and "pip install" in first
    assert "pytest" in second and "pip install" in second
    assert "--full" in second  # command 2 runs the whole suite, not the fast tier
    # nothing comes before them but the title and their captions
    assert README.index(second) < README.index("\n## ")


def test_ci_runs_the_readmes_second_command():
    """.ci/run takes README command 2 from the README itself (its second ```bash block)."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r'readme_command 2\)"', ci)
    assert "README.md" in ci


def test_readme_is_a_front_door():
    """The README stays short; the reference lives in docs/."""
    lines = README.count("\n")
    assert lines <= 200, f"README.md has {lines} lines; move reference material to docs/"
    for name in PAGES:
        assert f"docs/{name}" in README, name


@pytest.mark.parametrize("name", sorted(PAGES))
def test_generated_pages_are_current(name):
    """docs/cli.md and docs/methods.md are generated from the commands and the registries."""
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is missing: run `{COMMAND}`"
    assert path.read_text(encoding="utf-8") == PAGES[name](), (
        f"docs/{name} is out of date: run `{COMMAND}` and commit the result"
    )


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_its_section_in_cli_md(command):
    assert f"\n## `kofs {command}`\n" in _page("cli.md")


def test_cli_md_lists_every_option_of_kofs_rank():
    """Every long option ``kofs rank --help`` shows is in its section of docs/cli.md."""
    import click

    cmd = main.commands["rank"]
    ctx = click.Context(cmd, info_name="rank")
    options = [o for p in cmd.get_params(ctx) for o in p.opts if o.startswith("--")]
    text = _page("cli.md")
    section = text[text.index("\n## `kofs rank`\n") : text.index("\n## `kofs run`\n")]
    shown = set(re.findall(r"(?<=[`\s])(--[\w-]+)(?=[\s`])", section))
    missing = [o for o in options if o != "--help" and o not in shown]
    assert len(options) > 50 and not missing, missing


@pytest.mark.parametrize("name", RANKERS.names() + AGGREGATORS.names())
def test_every_method_has_its_section_in_methods_md(name):
    assert f"\n### {name}\n" in _page("methods.md")


def _methods_table(heading: str) -> dict[str, list[str]]:
    text = _page("methods.md")
    start = text.index(f"\n## {heading}\n") + 1
    end = text.find("\n## ", start)
    block = text[start : end if end > 0 else len(text)]
    rows = re.findall(r"^\| \[`([\w-]+)`\]\(#[\w-]+\) \|(.*)\|$", block, flags=re.M)
    out: dict[str, list[str]] = {}
    for name, cells in rows:
        out.setdefault(name, [c.strip() for c in cells.split("|")])
    return out


def test_methods_md_says_which_rankers_the_default_plan_runs():
    """With labels or without: fisher is the plan of sparse data with labels, so "yes" (it was
    "dense only"); `kofs methods` says the same (it said "yes" for variance, "single cell")."""
    from kofs.cli._method_table import method_rows

    def plans(**kw):
        return {
            r
            for labels in (False, True)
            for r in default_plan(DEFAULTS_VERSION, labels=labels, **kw)
        }

    dense, sparse = plans(), plans(sparse=True)
    rows = _methods_table("Rankers")
    assert set(rows) == set(RANKERS.names())
    cli = {r["name"]: r["default"] for r in method_rows()}
    for name, cells in rows.items():
        plan = cells[3]  # family, higher score, needs, default plan, summary
        assert (plan in ("yes", "dense only")) == (name in dense), (name, plan)
        assert (plan in ("yes", "sparse only")) == (name in sparse), (name, plan)
        assert cli[name] == plan, (name, cli[name], plan)
    assert rows["fisher"][3] == "yes" and rows["hotspot"][3] == "sparse only"


def test_methods_md_names_the_default_aggregator():
    rows = _methods_table("Aggregators")
    assert set(rows) == set(AGGREGATORS.names())
    assert [n for n, cells in rows.items() if cells[0] == "yes"] == [DEFAULT_AGGREGATOR]


def _anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown page's headings."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md"))]
)
def test_relative_links_lead_somewhere(page):
    """Every relative link of the page names an existing file, and a ``#section`` of a Markdown
    page names one of its headings."""
    path = REPO / page
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text("utf-8")):
            bad.append(target)
    assert not bad, f"{page}: links that lead nowhere: {bad}"


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md"))]
)
def test_python_examples_import_the_modules_they_use(page):
    """``import kofs`` loads no submodule, so a Python example calling ``kofs.progress.X()``
    fails as written unless it imports ``kofs.progress`` (or from it)."""
    import pkgutil

    import kofs

    subs = {m.name for m in pkgutil.iter_modules(kofs.__path__)}
    bad = []
    for block in re.findall(r"^```python\n(.*?)```", _page_text(page), flags=re.S | re.M):
        lines = [line.split("#")[0] for line in block.splitlines()]
        imports = [x for x in lines if x.lstrip().startswith(("from ", "import "))]
        code = "\n".join(x for x in lines if x not in imports)
        for used in sorted(set(re.findall(r"\bkofs\.([a-z_]+)\.", code)) & subs):
            if not any(re.search(rf"(import|from) kofs\.{used}\b", x) for x in imports):
                bad.append(f"kofs.{used}")
    assert not bad, f"{page}: Python examples use modules they do not import: {bad}"


def _page_text(page: str) -> str:
    return (REPO / page).read_text(encoding="utf-8")


def test_api_md_names_every_public_name_and_no_other():
    """docs/api.md mentioned 21 of the 39 exported names (KnowledgeSources nowhere in docs/)."""
    import kofs

    named = set(re.findall(r"`kofs\.([A-Za-z_]\w*)`", _page("api.md")))
    assert set(kofs.__all__) - named == set()
    assert {n for n in named if n not in kofs.__all__ and not _is_module(f"kofs.{n}")} == set()


def _is_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
