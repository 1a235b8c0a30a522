"""The bundled example data set: a real subset of the ALL leukemia study with GO, KEGG and
STRING knowledge (see ``kofs/data/example/PROVENANCE.md``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

FILES = {
    "expression": "expression.tsv.gz",
    "labels": "labels.tsv",
    "relevant_genes": "relevant_genes.txt",
    "go": "go.obo.gz",
    "go_annotations": "go_annotations.tsv.gz",
    "pathways": "kegg.gmt",
    "interactions": "interactions.tsv",
}


def example_dir() -> Path:
    """Folder holding the bundled example files."""
    return Path(str(resources.files("kofs") / "data" / "example"))


def example_paths() -> dict[str, str]:
    """Role -> path of every bundled example file."""
    root = example_dir()
    return {role: str(root / name) for role, name in FILES.items()}


def example_config() -> dict[str, str]:
    """The options of ``kofs demo``: the example's matrix, B/T labels, GO, KEGG and STRING."""
    p = example_paths()
    return {
        "expression": p["expression"],
        "labels": p["labels"],
        "label_column": "lineage",
        "go": p["go"],
        "go_annotations": p["go_annotations"],
        "pathways": p["pathways"],
        "interactions": p["interactions"],
        "title": "kofs demo: adult ALL (1,549 genes, 128 samples), genes that separate B and T "
        "lineage",
    }
