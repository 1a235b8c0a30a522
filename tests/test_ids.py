"""Gene id harmonisation: normalisation, best-column matching, aliases, --id-map, reports."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import CoverageError, InputError
from kofs.io.id_map import read_id_map
from kofs.io.ids import (
    CoverageReport,
    coverage_rows,
    coverage_table,
    guess_namespace,
    match_gene_ids,
    match_id_lists,
    normalise_id,
)
from kofs.types import Expression

SYMBOLS = ["TP53", "MDM2", "BRCA1", "CHEK2", "MAPK1", "MAPK3", "ELK1", "BCL2"]
ENTREZ = ["7157", "4193", "672", "11200", "5594", "5595", "2002", "596"]


def toy(genes=SYMBOLS, **annotations) -> Expression:
    ann = annotations or {"entrez": ENTREZ}
    values = np.arange(3 * len(genes), dtype=float).reshape(3, len(genes))
    return Expression(values, genes, ["s1", "s2", "s3"], annotations=ann)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ENSG00000141510.17", "ENSG00000141510"),
        ("ENSMUSG00000059552.3", "ENSMUSG00000059552"),
        ("ENSP00000269305.4", "ENSP00000269305"),
        ("P04637-2", "P04637"),
        ("A0A024R161-1", "A0A024R161"),
        ("UniProtKB:P04637", "P04637"),
        ("NCBIGene:7157", "7157"),
        ("7157.0", "7157"),  # an Entrez id column read as floating point
        ("NCBIGene:7157.00", "7157"),
        ("7157.5", "7157.5"),  # not a whole number: left as written
        ("UniProtKB:UniProtKB:P04637-3", "P04637"),
        (" tp53 ", "TP53"),
        ("NKX2-1", "NKX2-1"),  # a symbol with a hyphen-number stays intact
        ("HLA-A", "HLA-A"),
        ("HGNC:11998", "HGNC:11998"),  # HGNC ids keep the prefix (would collide with Entrez)
    ],
)
def test_normalise_id(raw, expected):
    assert normalise_id(raw) == expected


def test_guess_namespace():
    assert guess_namespace(["7157", "672"]) == "entrez"
    assert guess_namespace(["ENSG00000141510.3", "ENSG00000012048"]) == "ensembl_gene"
    assert guess_namespace(["ENSP00000269305"]) == "ensembl_protein"
    assert guess_namespace(["P04637", "Q00987-2"]) == "uniprot"
    assert guess_namespace(["TP53", "MDM2"]) == "symbol"
    assert guess_namespace(["NA", ""]) is None


def test_best_column_wins_and_report_counts():
    mapping, rep = match_gene_ids(["7157", "672", "999999", "7157"], toy(), source="s")
    assert mapping == {"7157": 0, "672": 2}
    assert rep.id_column == "entrez" and rep.source_namespace == "primary"
    assert (rep.input_genes, rep.matched, rep.dropped, rep.ambiguous) == (3, 2, 1, 0)
    assert rep.matrix_genes == 8 and rep.matrix_genes_covered == 2
    assert rep.examples_dropped == ("999999",)
    assert rep.fraction == pytest.approx(2 / 3)


def test_symbols_case_insensitive_and_versions_ignored():
    e = toy(["ENSG00000141510.5", "ENSG00000135679"], symbol=["TP53", "MDM2"])
    mapping, rep = match_gene_ids(["tp53", "ENSG00000135679.2"], e, source="s", require=False)
    # each column matches one id; the tie goes to the matrix's own ids
    assert rep.id_column == "gene" and mapping == {"ENSG00000135679.2": 1}
    mapping, _ = match_gene_ids(["tp53", "Mdm2"], e, source="s")
    assert mapping == {"tp53": 0, "Mdm2": 1}


def test_entrez_ids_written_as_floats_match_integers():
    """A matrix whose Entrez ids went through pandas as floats (``7157.0``) matched no
    annotation written ``7157``: every GO/pathway source failed with zero overlap."""
    e = toy([g + ".0" for g in ENTREZ], symbol=SYMBOLS)
    mapping, rep = match_gene_ids(["7157", "672", "999999"], e, source="s")
    assert mapping == {"7157": 0, "672": 2} and rep.id_column == "gene"
    mapping, _ = match_gene_ids(["4193.0"], toy(), source="s")  # and the other way round
    assert mapping == {"4193.0": 1}


def test_ambiguous_ids_are_counted_not_guessed():
    # (gene ids are distinct in an Expression: the ambiguity is in an annotation column)
    e = toy(["7157", "7157b", "4193"], symbol=["TP53", "TP53", "MDM2"])
    mapping, rep = match_gene_ids(["TP53", "MDM2"], e, source="s")
    assert mapping == {"MDM2": 2}
    assert rep.ambiguous == 1 and rep.dropped == 0


def test_id_map_is_applied_first():
    mapping, rep = match_gene_ids(
        ["probe_1", "probe_2", "probe_3"],
        toy(),
        source="s",
        id_map={"probe_1": "TP53", "probe_2": "672"},
    )
    assert rep.matched == 1  # the two mapped ids live in different matrix columns
    mapping, rep = match_gene_ids(
        ["probe_1", "probe_2"], toy(), source="s", id_map={"probe_1": "TP53", "probe_2": "MDM2"}
    )
    assert mapping == {"probe_1": 0, "probe_2": 1}


def test_an_id_map_that_renames_every_id_away_is_named(tmp_path):
    """An id map of the wrong columns (an expression matrix given as --id-map) renamed ids
    that matched the matrix, and the source was blamed: "none of its gene ids (e.g. TP53)
    matches the expression matrix's genes (e.g. TP53, MDM2, BRCA1)"."""
    p = tmp_path / "map.tsv"
    p.write_text("TP53\t1.5\t2\nMDM2\t0.3\t1\n")
    with pytest.raises(CoverageError) as err:
        match_gene_ids(["TP53", "MDM2"], toy(), source="s", id_map=read_id_map(p), path="s.gmt")
    msg = str(err.value)
    assert f"after the id map {p} renamed 2 of them (TP53 -> 1.5, MDM2 -> 0.3)" in msg, msg
    assert msg.startswith("s.gmt: s: ") and "\n" not in msg
    with pytest.raises(CoverageError, match="after the id map renamed 1 of them"):
        match_id_lists({"primary": ["TP53"]}, toy(), source="s", id_map={"TP53": "X1"})
    # an id map that renames none of the ids: the source's ids are at fault, as before
    with pytest.raises(CoverageError, match="use the same identifier type in both"):
        match_gene_ids(["Q1"], toy(), source="s", id_map={"TP53": "X1"})


def test_aliases_compete_with_primary_ids():
    aliases = {"symbol": {"ENSP1": ("TP53",), "ENSP2": ("MDM2", "Mdm2"), "ENSP3": ("TP53", "BCL2")}}
    mapping, rep = match_gene_ids(
        ["ENSP1", "ENSP2", "ENSP3", "ENSP4"], toy(), source="s", aliases=aliases
    )
    assert mapping == {"ENSP1": 0, "ENSP2": 1}
    assert rep.source_namespace == "symbol" and rep.id_column == "gene"
    assert rep.ambiguous == 1 and rep.dropped == 1  # ENSP3 hits two genes; ENSP4 none
    assert "(source symbol)" in rep.line()


def test_match_id_lists_keeps_best_list():
    kind, mapping, rep = match_id_lists(
        {"primary": ["1", "2", "7157"], "symbol": ["TP53", "MDM2", "BRCA1"]}, toy(), source="s"
    )
    assert kind == "symbol" and rep.matched == 3 and mapping["BRCA1"] == 2


def test_zero_overlap_is_a_coverage_error():
    with pytest.raises(CoverageError) as err:
        match_gene_ids(["XYZ1", "XYZ2"], toy(), source="my pathways", path="p.gmt")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("p.gmt: my pathways: none of its 2 gene ids")
    assert "--id-map" in msg
    _, rep = match_gene_ids(["XYZ1"], toy(), source="s", require=False)
    assert rep.matched == 0 and rep.id_column is None


def test_low_overlap_warns(caplog):
    ids = ["TP53"] + [f"G{i}" for i in range(40)]
    with caplog.at_level(logging.WARNING, logger="kofs"):
        match_gene_ids(ids, toy(), source="s")
    assert any("low gene overlap" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        match_gene_ids(["TP53", "MDM2"], toy(), source="s")
    assert not caplog.records


def test_read_id_map_header_and_ambiguity(tmp_path, caplog):
    p = tmp_path / "map.tsv"
    p.write_text("probe_id\tsymbol\np1\tTP53\np2\tMDM2\np3\tBRCA1\np3\tCHEK2\n\np4\tNA\np2\tMDM2\n")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        m = read_id_map(p)
    assert dict(m) == {"p1": "TP53", "p2": "MDM2"}
    assert m.ambiguous == 1 and m.path == str(p)
    assert any("several targets" in r.message for r in caplog.records)
    q = tmp_path / "map.csv"
    q.write_text("p1,TP53\np2,7157\n")
    assert dict(read_id_map(q)) == {"p1": "TP53", "p2": "7157"}
    mapping, _ = match_gene_ids(["p1"], toy(), source="s", id_map=read_id_map(q))
    assert mapping == {"p1": 0}


def test_read_id_map_errors(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("p1\tTP53\np2\n")
    with pytest.raises(InputError) as err:
        read_id_map(p)
    assert err.value.line == 2 and str(p) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError, match="not found"):
        read_id_map(tmp_path / "missing.tsv")
    empty = tmp_path / "only_header.tsv"
    empty.write_text("symbol\tentrez\n")
    with pytest.raises(InputError, match="no id pairs"):
        read_id_map(empty)


def test_coverage_table_for_kofs_sources():
    _, r1 = match_gene_ids(["TP53", "X"], toy(), source="pathways a.gmt")
    r2 = CoverageReport("b", 4, 1, 2, 1, 8, 1, "entrez")
    rows = coverage_rows([r1, r2])
    assert rows[0]["source"] == "pathways a.gmt" and rows[0]["fraction"] == 0.5
    assert rows[1]["source_namespace"] is None
    text = coverage_table([r1, r2]).splitlines()
    assert text[0].split("\t")[:3] == ["source", "input_genes", "matched"]
    assert text[2].split("\t")[:5] == ["b", "4", "1", "0.25", "2"]
    assert r1.as_dict()["examples_dropped"] == ["X"]


@given(st.lists(st.sampled_from(SYMBOLS + ENTREZ + ["x1", "x2", "tp53", "mdm2"]), max_size=25))
def test_report_counts_add_up(ids):
    e = toy()
    mapping, rep = match_gene_ids(ids, e, source="s", require=False)
    assert rep.matched + rep.dropped + rep.ambiguous == rep.input_genes == len(set(ids))
    col = e.genes if rep.id_column == "gene" else e.annotations.get(rep.id_column, ())
    for s, i in mapping.items():
        assert normalise_id(col[i]) == normalise_id(s)


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgP0123456789.-_: ", max_size=20))
def test_normalise_id_is_idempotent(raw):
    once = normalise_id(raw)
    assert normalise_id(once) == once
