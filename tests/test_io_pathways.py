"""Pathway readers: GMT, KEGG link, the shared KEGG tables, KGML (real files and fixtures)."""

from __future__ import annotations

import gzip
import logging

import pytest
from conftest import costly_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kofs.errors import InputError, ParameterError
from kofs.io.kgml import read_kgml
from kofs.io.pathways import (
    GeneSets,
    read_gmt,
    read_gmx,
    read_pathways,
    sniff_pathways,
)


@pytest.fixture
def pw(testdata):
    return testdata / "pathways"


# ---------------------------------------------------------------- real files (README counts)


def test_real_msigdb_gmt(shared_data):
    g = read_pathways(shared_data / "KEGG" / "msigdb_c2_cp_kegg_symbols_qusage.gmt")
    assert len(g) == 186
    assert all(i.startswith("KEGG_") for i in g.ids)
    assert g.namespace == "symbol"
    assert g.ids[0] == "KEGG_GLYCOLYSIS_GLUCONEOGENESIS"
    assert g.members[0][:3] == ("LDHC", "LDHB", "LDHA")
    assert g.descriptions[0].startswith("MSigDB canonical pathways")


def test_real_kegg_table_and_gene2pathway_agree(shared_data):
    table = read_pathways(shared_data / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv")
    long = read_pathways(shared_data / "KEGG" / "kegg_hsa_gene2pathway_2011-Mar15.tsv.gz")
    for g in (table, long):
        assert len(g) == 229
        assert int(g.sizes().sum()) == 16312
        assert len(g.genes()) == 5868
        assert g.namespace == "entrez"
        assert sum(map(len, g.alt_members["symbol"])) == 16312
    assert sum(n != i for n, i in zip(table.names, table.ids, strict=True)) == 184
    names = dict(zip(table.ids, table.names, strict=True))
    assert names["hsa04110"] == "KEGG_CELL_CYCLE"
    assert names["hsa05221"] == "KEGG_ACUTE_MYELOID_LEUKEMIA"
    assert names["hsa01100"] == "hsa01100"  # unnamed (NA) keeps its id
    by_id = dict(zip(long.ids, long.members, strict=True))
    for sid, members in zip(table.ids, table.members, strict=True):
        assert set(members) == set(by_id[sid])


def test_real_formats_are_sniffed(shared_data):
    k = shared_data / "KEGG"
    assert sniff_pathways(k / "msigdb_c2_cp_kegg_symbols_qusage.gmt") == "gmt"
    assert sniff_pathways(k / "kegg_hsa_pathways_2011-Mar15.tsv") == "kegg_table"
    assert sniff_pathways(k / "kegg_hsa_gene2pathway_2011-Mar15.tsv.gz") == "kegg_gene2pathway"


# ---------------------------------------------------------------- GMT fixtures


def test_gmt_skips_empty_sets_and_dedupes(pw, caplog):
    with caplog.at_level(logging.WARNING, logger="kofs"):
        g = read_pathways(pw / "small.gmt")
    assert g.ids == ("SET_A", "SET_B", "SET_C")
    assert g.members[0] == ("TP53", "MDM2", "BRCA1")  # repeated TP53 counted once
    assert g.descriptions[1] == "http://example.org/b"
    assert any("skipped 1 gene set(s) without genes" in r.message for r in caplog.records)


@pytest.mark.parametrize(
    ("name", "line", "text"),
    [("duplicate_id.gmt", 3, "repeats the set of line 1"), ("no_tab.gmt", 2, "found no tab")],
)
def test_gmt_errors_name_file_and_line(pw, name, line, text):
    with pytest.raises(InputError) as err:
        read_gmt(pw / name)
    msg = str(err.value)
    assert err.value.line == line and text in msg
    assert msg.startswith(f"{pw / name}:{line}: ") and "\n" not in msg


def test_gmt_of_enrichr_reads_genes_without_their_weights(tmp_path, caplog):
    # 'CD74,1.0' was read as a gene id that matches no gene
    path = tmp_path / "enrichr.gmt"
    path.write_text("S1\t\tCD74,1.0\tHLA-DRA,1.0\nS2\t\tCD3D, 0.5\tLCK,1e-1\tZAP70,2\n")
    with caplog.at_level(logging.INFO, logger="kofs"):
        sets = read_gmt(path)
    assert sets.members == (("CD74", "HLA-DRA"), ("CD3D", "LCK", "ZAP70"))
    assert "5 genes written GENE,weight (Enrichr's format): weights ignored" in caplog.text
    mixed = tmp_path / "mixed.gmt"  # a comma in one id of a line is no weight format
    mixed.write_text("S1\tdesc\tA,1\tB\n")
    assert read_gmt(mixed).members == (("A,1", "B"),)


def test_gmt_genes_separated_by_spaces_are_refused(tmp_path):
    # one 'gene' 'CD74 HLA-DRA CD3D' per set, which matched no gene of the matrix
    path = tmp_path / "spaces.gmt"
    path.write_text("S1\tdesc\tA\tB\nS2\tdesc\tCD74 HLA-DRA CD3D\n")
    with pytest.raises(InputError, match=r"spaces.gmt:2: the genes of set 'S2' are separated by"):
        read_gmt(path)
    affy = tmp_path / "affy.gmt"  # an array annotation's 'A /// B' among tab-separated genes
    affy.write_text("S1\tdesc\tA\tB\tHLA-DRB1 /// HLA-DRB4\n")
    assert read_gmt(affy).members == (("A", "B", "HLA-DRB1 /// HLA-DRB4"),)


def test_gmt_without_description_column_warns(tmp_path, caplog):
    """``set<TAB>gene<TAB>gene`` (no description) lost every set's first gene, silently."""
    path = tmp_path / "nodesc.gmt"
    path.write_text("S1\tCD3D\tLCK\tZAP70\nS2\tLCK\tCD3D\tCD74\nS3\tCD74\tHLA-DRA\tCD3D\n")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        sets = read_gmt(path)
    assert sets.members[0] == ("LCK", "ZAP70")
    assert "the second field of 3 of 3 lines is a gene of the file's sets" in caplog.text
    assert "'CD3D' on line 1" in caplog.text
    caplog.clear()  # sets named after a gene of theirs (a factor's targets) are no such file
    path.write_text(
        "MYC_TARGETS\tMYC\tCCND2\tTP53\nTP53_TARGETS\tTP53\tMYC\tMDM2\n"
        "E2F1_TARGETS\tE2F1\tMYC\tCCNE1\n"
    )
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_gmt(path)
    assert "second field" not in caplog.text


def test_gmt_gzip_and_missing(tmp_path):
    p = tmp_path / "s.gmt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("S1\tdesc\tA\tB\n")
    assert read_pathways(p).members == (("A", "B"),)
    with pytest.raises(InputError, match="not found"):
        read_pathways(tmp_path / "nope.gmt")
    only_empty = tmp_path / "e.gmt"
    only_empty.write_text("S1\tdesc\n")
    with pytest.raises(InputError, match="no gene set with genes"):
        read_pathways(only_empty)


@settings(max_examples=costly_examples(40))
@given(
    st.dictionaries(
        st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True),
        st.lists(
            st.from_regex(r"[A-Z][A-Z0-9\-]{0,8}", fullmatch=True),
            min_size=1,
            max_size=8,
            unique=True,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_gmt_round_trip(tmp_path_factory, sets):
    p = tmp_path_factory.mktemp("gmt") / "x.gmt"
    p.write_text(
        "".join(f"{k}\tdescription of {k}\t" + "\t".join(v) + "\n" for k, v in sets.items())
    )
    g = read_gmt(p)
    assert dict(zip(g.ids, g.members, strict=True)) == {k: tuple(v) for k, v in sets.items()}


# ---------------------------------------------------------------- KEGG link


def test_kegg_link_with_names(pw):
    g = read_pathways(pw / "kegg_link.tsv", names=pw / "kegg_names.tsv")
    assert sniff_pathways(pw / "kegg_link.tsv") == "kegg_link"
    assert g.ids == ("hsa04115", "hsa04010")
    assert g.names == ("p53 signaling pathway", "MAPK signaling pathway")
    assert g.descriptions[0] == "p53 signaling pathway - Homo sapiens (human)"
    assert g.members == (("7157", "4193", "672", "11200"), ("5594", "5595", "2002", "7157"))
    assert g.namespace == "entrez"


def test_kegg_names_beside_a_file_that_is_not_a_kegg_link_file_is_said_to_be_unused(
    tmp_path, caplog
):
    """--kegg-names applies to KEGG link files: given with a GMT it is not read (a binary file
    there was ignored without a word)."""
    gmt = tmp_path / "sets.gmt"
    gmt.write_text("SET1\tdesc\tA\tB\n")
    names = tmp_path / "names.bin"
    names.write_bytes(b"\x00\x01binary")
    g = read_pathways(gmt, names=names)
    assert g.ids == ("SET1",)
    assert "--kegg-names" in caplog.text and "is not read" in caplog.text


def test_kegg_link_reversed_columns_and_no_names(tmp_path):
    p = tmp_path / "link.txt"
    p.write_text("path:hsa00010\thsa:10327\npath:hsa00010\thsa:124\n")
    g = read_pathways(p)
    assert g.ids == ("hsa00010",) and g.names == ("hsa00010",)
    assert g.members == (("10327", "124"),)


def test_kegg_link_bad_line(pw):
    with pytest.raises(InputError) as err:
        read_pathways(pw / "kegg_link_bad.tsv", fmt="kegg_link")
    assert err.value.line == 2 and "path:" in str(err.value)


# ---------------------------------------------------------------- KGML


def test_kgml_multi_id_and_group_entries(pw):
    g = read_pathways(pw / "kgml" / "hsa04999.xml")
    assert g.ids == ("hsa04999",) and g.names == ("Toy signalling",)
    assert g.members == (("5594", "5595", "2002", "596", "5290", "207"),)
    x = g.interactions
    edges = {(s, t, ty) for s, t, ty in zip(x.source, x.target, x.type, strict=True)}
    assert edges == {
        ("5594", "2002", "PPrel:activation+phosphorylation"),
        ("5595", "2002", "PPrel:activation+phosphorylation"),
        ("5290", "596", "PPrel:inhibition"),  # group {PIK3CA, AKT1} --| BCL2
        ("207", "596", "PPrel:inhibition"),
        ("2002", "596", "GErel:expression"),
    }  # compound and map relations are not gene-gene edges
    assert x.directed.all() and (x.weight == 1).all() and x.namespace == "entrez"


def test_kgml_directory(pw):
    assert sniff_pathways(pw / "kgml") == "kgml"
    g = read_pathways(pw / "kgml")
    assert g.ids == ("hsa04998", "hsa04999")
    assert g.interactions.n_edges == 7
    assert g.summary()["relations"] == 7 and g.summary()["sets"] == 2
    assert g.summary()["pairs"] == 9 and g.summary()["genes"] == 8
    assert ("4193", "7157") in set(zip(g.interactions.source, g.interactions.target, strict=True))


def test_kgml_refuses_entities_and_reports_malformed_line(pw, tmp_path):
    with pytest.raises(InputError, match="declares entities"):
        read_pathways(pw / "kgml_unsafe_entities.xml")
    with pytest.raises(InputError) as err:
        read_kgml(pw / "kgml_malformed.xml")
    assert err.value.line == 4 and "malformed XML" in str(err.value)
    with pytest.raises(InputError, match="no KGML"):
        read_kgml(tmp_path)
    other = tmp_path / "x.xml"
    other.write_text("<?xml version='1.0'?><notkgml/>")
    with pytest.raises(InputError, match="expected <pathway>"):
        read_kgml(other)


# ---------------------------------------------------------------- dispatch / type


def test_unknown_format_is_parameter_error(pw):
    with pytest.raises(ParameterError, match="kegg_link"):
        read_pathways(pw / "small.gmt", fmt="gsea")


def test_genesets_validation():
    with pytest.raises(ValueError, match="unique"):
        GeneSets(("a", "a"), (), (), (("x",), ("y",)))
    g = GeneSets(("a",), (), (), (("x", "x", "y"),))
    assert g.names == ("a",) and g.members == (("x", "y"),) and g.descriptions == ("",)


def test_kegg_tables_edge_cases(tmp_path, caplog):
    t = tmp_path / "table.tsv"
    t.write_text(
        "pathway_id\tmsigdb_name\tentrez_ids\tsymbols\n"
        "hsa1\tNA\t7157,672\tTP53,BRCA1\nhsa2\tKEGG_X\t\t\n"
    )
    with caplog.at_level(logging.WARNING, logger="kofs"):
        g = read_pathways(t)
    assert g.ids == ("hsa1",) and g.names == ("hsa1",) and g.members == (("7157", "672"),)
    assert any("without genes" in r.message for r in caplog.records)
    header_only = tmp_path / "g2p.tsv"
    header_only.write_text("pathway_id\tentrez_id\tsymbol\n")
    with pytest.raises(InputError, match="no pairs"):
        read_pathways(header_only)
    ragged = tmp_path / "ragged.tsv"
    ragged.write_text("pathway_id\tentrez_id\nhsa1\t7157\t9\n")
    with pytest.raises(InputError) as err:
        read_pathways(ragged)
    assert err.value.line == 2


def test_gmt_fields_in_double_quotes_lose_one_layer(tmp_path):
    """R's write.table quotes every field: the set id, description and genes are read without
    the quotes (one layer; a quote inside an id is kept)."""
    path = tmp_path / "quoted.gmt"
    path.write_text(
        '"HALLMARK_X"\t"http://x.org/a"\t"TP53"\t"MDM2"\n'
        '"S2"\t""\t"A"\t"""B"""\t"C"\n'
        'S3\tna\t"D\tE"\n'
    )
    g = read_gmt(path)
    assert g.ids == ("HALLMARK_X", "S2", "S3")
    assert g.descriptions == ("http://x.org/a", "", "na")
    assert g.members == (("TP53", "MDM2"), ("A", '""B""', "C"), ('"D', 'E"'))
    assert read_pathways(path).ids == g.ids


# ---------------------------------------------------------------- GSEA GMX (sets as columns)

_GMX = (
    'SET_A\tSET_B\t"SET_C"\tEMPTY\n'
    'na\thttp://b\t"desc c"\tnone\n'
    "TP53\tEGFR\tA1\t\n"
    "MDM2\t\tA2\n"
    "\t\tA3\t\n"
    "CDKN1A\n"
)


def test_gmx_reads_one_set_per_column(tmp_path, caplog):
    path = tmp_path / "sets.gmx"
    path.write_text(_GMX)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        g = read_gmx(path)
    assert g.ids == ("SET_A", "SET_B", "SET_C")
    assert g.descriptions == ("na", "http://b", "desc c")
    assert g.members == (("TP53", "MDM2", "CDKN1A"), ("EGFR",), ("A1", "A2", "A3"))
    assert "skipped 1 gene set(s) without genes" in caplog.text


@pytest.mark.parametrize("name", ["sets.gmx", "sets.GMX", "sets.gmx.gz"])
def test_gmx_is_recognised_by_its_extension(tmp_path, name):
    path = tmp_path / name
    data = _GMX.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    assert sniff_pathways(path) == "gmx"
    assert read_pathways(path).ids == ("SET_A", "SET_B", "SET_C")
    assert read_pathways(path, "gmx").ids == ("SET_A", "SET_B", "SET_C")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("S1\tS1\nd\td\nA\tB\n", r"x.gmx:1 \(column 2\): set id 'S1' names columns 1 and 2"),
        ("S1\t\nd\t\nA\tB\n", r"x.gmx:1 \(column 2\): column 2 has genes but no set id"),
        ("S1\tS2\n", r"x.gmx: a GMX file needs a row of set ids"),
        ("S1\tS2\nd\td\n", r"x.gmx: GMX file holds no gene set with genes"),
    ],
)
def test_gmx_errors_name_file_and_place(tmp_path, text, message):
    path = tmp_path / "x.gmx"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as exc:
        read_pathways(path)
    assert "\n" not in str(exc.value)


def test_gmx_as_pathways_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    samples = [f"S{i}" for i in range(6)]
    rows = ["gene\t" + "\t".join(samples)]
    rows += [f"G{g}\t" + "\t".join(str((g * 7 + i * 3) % 11) for i in range(6)) for g in range(8)]
    expr = tmp_path / "expr.tsv"
    expr.write_text("\n".join(rows) + "\n")
    gmx = tmp_path / "sets.gmx"
    gmx.write_text("SET1\tSET2\nna\tna\nG1\tG5\nG2\tG6\nG3\tG7\nG4\t\n")
    args = ["sources", str(expr), "--pathways", str(gmx), "--pathway-min-size", "1", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.stderr
    import json

    (cov,) = json.loads(r.stdout)["coverage"]
    assert cov["source"] == "pathways sets.gmx" and cov["input_genes"] == 7
