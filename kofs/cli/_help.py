"""What ``--help`` shows besides the options themselves: the option groups of the generated
options (from the run schema's sections), the sections of ``kofs --help`` and one example per
command. Kept in one place so that the command modules stay a parse, a call and a write."""

from __future__ import annotations

#: Option group title of each section of the run schema (:func:`kofs.pipeline.config.all_options`), in
#: the order ``--help`` shows them; a knowledge plug-in's section is ``knowledge.<name>``.
OPTION_GROUPS: dict[str, str] = {
    "inputs": "Input data",
    "output": "Output",
    "knowledge.go": "Knowledge: Gene Ontology",
    "knowledge.pathways": "Knowledge: pathways and gene sets",
    "knowledge.interactions": "Knowledge: interaction networks",
    "knowledge.graphs": "Knowledge: gene graph files",
    "knowledge.aux": "Knowledge: auxiliary data of the same samples",
    "knowledge.term_relevance": "Knowledge: term relevance",
    "ranking": "Lists and rankers",
    "aggregation": "Fusion of the lists",
    "resources": "Seed, threads, memory and cache",
}


def group_title(section: str) -> str:
    """The option group title of a schema section (a new plug-in gets ``Knowledge: <name>``)."""
    if section in OPTION_GROUPS:
        return OPTION_GROUPS[section]
    top, _, rest = section.partition(".")
    return f"Knowledge: {rest}" if top == "knowledge" else top.capitalize()


def group_order(section: str) -> int:
    """Position of a section's group in ``--help`` (unknown knowledge plug-ins after the known
    ones, before the lists)."""
    order = list(OPTION_GROUPS)
    if section in OPTION_GROUPS:
        return order.index(section)
    return order.index("ranking") - 1 if section.startswith("knowledge.") else len(order)


#: Sections of ``kofs --help``: title -> commands.
COMMAND_SECTIONS: dict[str, tuple[str, ...]] = {
    "Rank genes": ("rank", "run", "demo", "aggregate"),
    "Inspect inputs and methods": ("sources", "methods"),
    "Evaluate": ("evaluate", "reproduce"),
    "Knowledge files": ("fetch", "gosim"),
}

#: Examples shown at the end of each command's ``--help``.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "rank": (
        "kofs rank expression.tsv --labels labels.tsv -o out",
        "kofs rank expression.tsv --labels labels.tsv --go go-basic.obo \\\n"
        "    --go-annotations goa_human.gaf --pathways kegg.gmt --interactions string.tsv -o out",
        "kofs rank cells.h5ad --labels obs:cell_type -o out",
        "kofs rank expression.tsv --rankers laplacian -o - | head",
    ),
    "run": (
        "kofs run run.yaml",
        "kofs run out/config.resolved.yaml -o again   # repeat a run",
    ),
    "demo": ("kofs demo -o kofs-demo",),
    "aggregate": (
        "kofs aggregate deseq2.csv limma.tsv top100.txt -o fused",
        "kofs aggregate a.tsv b.tsv --aggregate rra --universe 20000 -o -",
    ),
    "sources": (
        "kofs sources expression.tsv --go go-basic.obo --go-annotations goa_human.gaf \\\n"
        "    --pathways kegg.gmt",
    ),
    "methods": ("kofs methods", "kofs methods --format markdown --params"),
    "evaluate": ("kofs evaluate out/ranking.tsv expression.tsv --labels labels.tsv -o eval",),
    "reproduce": ("kofs reproduce configs/all_lineage.yaml -o reproduction",),
    "fetch": ("kofs fetch go-basic", "kofs fetch goa --species human"),
    "gosim": (
        "kofs gosim --go go-basic.obo --go-annotations goa_human.gaf --genes genes.txt \\\n"
        "    -o sim.tsv",
    ),
}


def examples_text(command: str) -> str | None:
    """The examples of ``command`` as an epilog (lines kept as they are), or None."""
    lines = EXAMPLES.get(command)
    if not lines:
        return None
    body = "\n".join(f"  {line}" for entry in lines for line in entry.split("\n"))
    return "Examples:\n\n\b\n" + body
