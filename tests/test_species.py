"""The species of GO annotations: taxa read from GAF and gene2go, named in errors, and one
warning when the annotations seem to be of another species than the matrix."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from kofs.cache import open_cache
from kofs.errors import InputError
from kofs.io.annotations import read_go_annotations, species_mismatch, taxa_text
from kofs.types import Expression

GO = Path(__file__).parent / "data" / "go"


def _gaf(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """rows: (symbol, GO id, taxon)."""
    lines = ["!gaf-version: 2.2"]
    for i, (sym, go, tax) in enumerate(rows):
        lines.append(
            "\t".join(
                [
                    "UniProtKB",
                    f"Q{i:05d}",
                    sym,
                    "involved_in",
                    go,
                    "PMID:1",
                    "IDA",
                    "",
                    "P",
                    sym,
                    "",
                    "protein",
                    f"taxon:{tax}",
                    "20990101",
                    "kofs",
                    "",
                    "",
                ]
            )  # fmt: skip
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_taxa_are_read_and_named_when_a_filter_leaves_nothing(tmp_path):
    p = _gaf(
        tmp_path / "m.gaf", [("Cd74", "GO:0000003", "10090")] * 3 + [("X", "GO:0000003", "7955")]
    )
    ann = read_go_annotations(p)
    assert ann.taxa == {"10090": 3, "7955": 1}
    with pytest.raises(InputError) as err:
        read_go_annotations(p, taxon=9606)
    text = str(err.value)
    assert "no usable GO annotation left" in text
    assert "taxa 10090 (mouse, 3 rows), 7955 (zebrafish, 1 row)" in text
    g2g = read_go_annotations(GO / "tiny_gene2go.tsv")
    assert g2g.taxa == {"9606": 4, "10090": 1}
    assert taxa_text({"1234": 2}) == "taxon 1234 (2 rows)"


def test_taxa_survive_the_cache(tmp_path):
    p = _gaf(tmp_path / "m.gaf", [("Cd74", "GO:0000003", "10090")] * 2)
    cache = open_cache(tmp_path / "cache")
    read_go_annotations(p, cache=cache)
    again = read_go_annotations(p, cache=cache)
    assert again.taxa == {"10090": 2}


def test_another_species_is_warned_once(tmp_path, caplog):
    human = [f"GENE{i}" for i in range(40)]
    expr = Expression(np.zeros((2, 40)), human, ["a", "b"])
    mouse = _gaf(tmp_path / "m.gaf", [(f"Gene{i}", "GO:0000003", "10090") for i in range(30)])
    text = species_mismatch(read_go_annotations(mouse), expr)
    assert text is not None
    assert "30 of its gene symbols match the matrix only when case is ignored" in text
    assert "Gene0 = GENE0" in text and "taxon 10090 (mouse, 30 rows)" in text
    same = _gaf(tmp_path / "h.gaf", [(f"GENE{i}", "GO:0000003", "9606") for i in range(30)])
    assert species_mismatch(read_go_annotations(same), expr) is None
    few = _gaf(tmp_path / "f.gaf", [(f"Gene{i}", "GO:0000003", "10090") for i in range(5)])
    assert species_mismatch(read_go_annotations(few), expr) is None  # too few to tell


def test_a_run_with_a_mouse_gaf_on_a_human_matrix_warns_once(tmp_path, caplog):
    import kofs
    from kofs.sources import read_sources

    rng = np.random.default_rng(0)
    genes = [f"GENE{i}" for i in range(60)]
    expr = Expression(rng.normal(size=(12, 60)), genes, [f"s{i}" for i in range(12)])
    rows = [(f"Gene{i}", go, "10090") for i in range(40) for go in ("GO:0000003", "GO:0000004")]
    gaf = _gaf(tmp_path / "m.gaf", rows)
    sources = read_sources(go=str(GO / "tiny.obo"), go_annotations=str(gaf))
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(expr, sources=sources, labels=["a", "b"] * 6)
    warned = [r for r in caplog.records if "another species" in r.getMessage()]
    assert len(warned) == 1


def test_annotations_of_several_taxa_read_together_are_warned(tmp_path, caplog):
    # a GAF of human and mouse rows (two files concatenated, a multi-species download): mouse
    # Brca1's annotations went to human BRCA1 (symbols match case ignored) without a word
    from kofs.sources import read_sources

    rows = [(f"GENE{i}", "GO:0000003", "9606") for i in range(30)]
    rows += [(f"Gene{i}", "GO:0000004", "10090") for i in range(5)]
    gaf = _gaf(tmp_path / "two.gaf", rows)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_sources(go=str(GO / "tiny.obo"), go_annotations=str(gaf))
    warned = [r.getMessage() for r in caplog.records if "read together" in r.getMessage()]
    assert len(warned) == 1
    assert "taxa 9606 (human, 30 rows), 10090 (mouse, 5 rows)" in warned[0]
    assert "--go-taxon 9606" in warned[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_sources(go=str(GO / "tiny.obo"), go_annotations=str(gaf), go_taxon="9606")
    assert not [r for r in caplog.records if "read together" in r.getMessage()]
