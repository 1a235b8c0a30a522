"""Interaction readers: edge lists, shared STRING/OmniPath tables, STRING links, BioGRID."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import InputError, ParameterError
from kofs.io.interaction_dbs import read_biogrid, read_string_aliases, read_string_links
from kofs.io.interactions import (
    Interactions,
    read_edge_list,
    read_interactions,
    sniff_interactions,
)


@pytest.fixture
def ia(testdata):
    return testdata / "interactions"


def edges(x: Interactions) -> dict:
    return {(s, t): w for s, t, w in zip(x.source, x.target, x.weight, strict=True)}


# ---------------------------------------------------------------- real files (README counts)


def test_real_string_gene_edges(shared_data):
    x = read_interactions(shared_data / "PPI" / "string_example_gene_edges.tsv.gz")
    assert x.n_edges == 8297 and len(x.nodes()) == 1882
    assert x.namespace == "entrez" and not x.is_directed
    assert x.info["self_loops_dropped"] == 0 and x.info["duplicates_merged"] == 0
    assert x.aliases["symbol"]["70"] == ("ACTC1",)
    summary = x.summary()
    assert (summary["edges"], summary["nodes"], summary["directed_edges"]) == (8297, 1882, 0)
    assert edges(x)[("1018", "70")] == pytest.approx(0.182)  # entrez 70 < 1018 as strings
    assert float(x.weight.min()) >= 0.1 and float(x.weight.max()) <= 1.0


def test_real_string_protein_table(shared_data):
    x = read_interactions(shared_data / "PPI" / "string_interactions_example_STRINGdb.tsv.gz")
    assert (
        sniff_interactions(shared_data / "PPI" / "string_interactions_example_STRINGdb.tsv.gz")
        == "paired"
    )
    assert x.n_edges == 70000 and len(x.nodes()) == 12583
    assert x.namespace == "ensembl_protein"
    assert all(s.startswith("ENSP") for s in x.source[:100])  # taxon prefix 9606. removed
    assert set(x.aliases) == {"entrez", "symbol"}
    both = sum(
        1
        for s, t in zip(x.source, x.target, strict=True)
        if s in x.aliases["entrez"] and t in x.aliases["entrez"]
    )
    assert both == 13030  # README: both ends map for 13,030 rows


def test_real_omnipath_is_directed(shared_data):
    x = read_interactions(shared_data / "PPI" / "omnipath_ligand_receptor_consensus_liana.tsv")
    assert x.n_edges == 4620 and x.directed.all()
    assert x.namespace == "uniprot" and "genesymbol" in x.aliases
    assert x.aliases["genesymbol"]["O00182"] == ("LGALS9",)


# ---------------------------------------------------------------- generic edge lists


def test_edge_list_with_header(ia, caplog):
    with caplog.at_level(logging.WARNING, logger="kofs"):
        x = read_interactions(ia / "edges_header.tsv")
    assert edges(x) == {
        ("MDM2", "TP53"): 0.9,
        ("BRCA1", "TP53"): 0.4,
        ("BRCA1", "CHEK2"): 0.7,
        ("AKT1", "NOT_A_GENE"): 0.3,
    }
    assert x.info["self_loops_dropped"] == 1 and x.info["duplicates_merged"] == 1
    assert any("dropped 1 self-loop" in r.message for r in caplog.records)
    assert x.namespace == "symbol" and not x.is_directed


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"string_min_score": "400"}, "string_min_score must be a STRING combined_score"),
        ({"string_min_score": 5000}, r"in \[0, 1000\], got 5000"),
        ({"biogrid_system_type": "both"}, "'both' is not one of physical, genetic"),
        ({"directed": "yes"}, "directed must be True, False or None, got 'yes'"),
    ],
)
def test_options_the_command_line_refuses_are_refused(ia, kw, needle):
    """A text score was a TypeError; 5000, "both" and "yes" (read as directed) were taken."""
    with pytest.raises(ParameterError, match=needle):
        read_interactions(ia / "edges_header.tsv", **kw)


def test_edge_list_without_header_and_blank_lines(ia):
    x = read_interactions(ia / "edges_noheader.csv")
    assert edges(x) == {("MDM2", "TP53"): 1.0, ("BRCA1", "CHEK2"): 1.0}
    assert x.info["rows"] == 3


def test_edge_list_of_string_ids_drops_their_taxon_prefix(tmp_path):
    # '9606.ENSP...' matched neither a matrix of ENSP ids nor an --id-map from ENSP ids
    path = tmp_path / "ensp.tsv"
    path.write_text("9606.ENSP00000269305\t9606.ENSP00000258149\t0.9\n")
    x = read_interactions(path)
    assert edges(x) == {("ENSP00000258149", "ENSP00000269305"): 0.9}
    assert x.namespace == "ensembl_protein"
    mixed = tmp_path / "mixed.tsv"  # a prefix on some ids only is no STRING id
    mixed.write_text("9606.ENSP00000269305\tTP53\t0.9\n")
    assert edges(read_interactions(mixed)) == {("9606.ENSP00000269305", "TP53"): 0.9}


def test_edge_list_directed_column(ia):
    x = read_edge_list(ia / "edges_directed.txt")
    got = {
        (s, t): (w, d) for s, t, w, d in zip(x.source, x.target, x.weight, x.directed, strict=True)
    }
    # directed a->b and b->a are distinct; the undirected pair is merged by max weight
    assert got == {
        ("MAPK1", "ELK1"): (2.0, True),
        ("ELK1", "MAPK1"): (1.0, True),
        ("AKT1", "PIK3CA"): (3.0, False),
    }
    y = read_edge_list(ia / "edges_directed.txt", directed=False)
    assert not y.is_directed and edges(y)[("ELK1", "MAPK1")] == 2.0


@pytest.mark.parametrize(
    ("name", "line", "text"),
    [
        ("bad_weight.tsv", 2, "weight 'abc' is not a finite number"),
        ("nan_weight.tsv", 2, "weight 'NaN' is not a finite number"),
        ("negative_weight.tsv", 3, "negative weight -1"),
        ("ragged.tsv", 2, "Expected 3 fields"),
        ("bad_directed.tsv", 1, "directed flag 'maybe'"),
    ],
)
def test_broken_edge_lists(ia, name, line, text):
    with pytest.raises(InputError) as err:
        read_interactions(ia / name)
    msg = str(err.value)
    assert text in msg and err.value.line == line
    assert msg.startswith(str(ia / name)) and "\n" not in msg


def test_empty_and_missing_files(tmp_path):
    p = tmp_path / "empty.tsv"
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_interactions(p)
    with pytest.raises(InputError, match="not found"):
        read_interactions(tmp_path / "missing.tsv")
    one = tmp_path / "one.tsv"
    one.write_text("TP53\nMDM2\n")
    with pytest.raises(InputError, match="two columns"):
        read_interactions(one)
    loops = tmp_path / "loops.tsv"
    loops.write_text("A\tA\nB\tB\n")
    with pytest.raises(InputError, match="no interactions left"):
        read_interactions(loops)


@given(
    st.lists(
        st.tuples(st.sampled_from("ABCDE"), st.sampled_from("ABCDE"), st.integers(0, 50)),
        min_size=1,
        max_size=30,
    )
)
def test_edge_list_cleaning_property(tmp_path_factory, rows):
    p = tmp_path_factory.mktemp("el") / "e.tsv"
    p.write_text("".join(f"{a}\t{b}\t{w / 10}\n" for a, b, w in rows))
    expected: dict = {}
    for a, b, w in rows:
        if a != b:
            key = (min(a, b), max(a, b))
            expected[key] = max(expected.get(key, -1.0), w / 10)
    if not expected:
        with pytest.raises(InputError):
            read_edge_list(p)
        return
    x = read_edge_list(p)
    assert edges(x) == pytest.approx(expected)
    assert x.info["self_loops_dropped"] == sum(a == b for a, b, _ in rows)
    assert x.info["self_loops_dropped"] + x.info["duplicates_merged"] + x.n_edges == len(rows)


# ---------------------------------------------------------------- STRING


def test_string_links_min_score_and_aliases(ia):
    x = read_interactions(ia / "string_links.txt", string_aliases=ia / "string_aliases.txt")
    assert sniff_interactions(ia / "string_links.txt") == "string"
    assert edges(x) == {
        ("ENSP00000258149", "ENSP00000269305"): 0.999,
        ("ENSP00000269305", "ENSP00000418960"): 0.7,
        ("ENSP00000372023", "ENSP00000418960"): 0.4,  # 400 kept, 399 dropped
        ("ENSP00000269305", "ENSP00000999999"): 0.95,
    }
    assert x.info["rows_below_min_score"] == 2 and x.info["duplicates_merged"] == 4
    assert x.aliases["Ensembl_HGNC_symbol"]["ENSP00000269305"] == ("TP53",)
    assert "ENSP00000000233" not in x.aliases["Ensembl_HGNC_symbol"]  # not in the network
    strict = read_string_links(ia / "string_links.txt", min_score=700)
    assert strict.n_edges == 3 and strict.aliases == {}


@pytest.mark.parametrize("sep", ["\t", ","])
def test_string_links_saved_with_tabs_or_commas_are_read_as_string(ia, tmp_path, sep):
    # read as an edge list: every row kept (no 400 cut), weights 0-1000, the taxon prefix
    # kept and --string-aliases ignored
    path = tmp_path / "links.txt"
    path.write_text((ia / "string_links.txt").read_text().replace(" ", sep))
    assert sniff_interactions(path) == "string"
    x = read_interactions(path, string_aliases=ia / "string_aliases.txt")
    plain = read_interactions(ia / "string_links.txt", string_aliases=ia / "string_aliases.txt")
    assert edges(x) == edges(plain) and x.aliases == plain.aliases
    scaled = tmp_path / "scaled.tsv"  # a 0-1 score under STRING's header: an edge list
    scaled.write_text("protein1\tprotein2\tcombined_score\nTP53\tMDM2\t0.9\n")
    assert sniff_interactions(scaled) == "edgelist"
    assert edges(read_interactions(scaled)) == {("MDM2", "TP53"): 0.9}


def test_string_links_with_a_line_of_spaces(ia, tmp_path):
    # "weight 'nan' is not a finite number" for a line that holds no field
    path = tmp_path / "links.txt"
    path.write_text((ia / "string_links.txt").read_text() + "   \n")
    assert edges(read_interactions(path)) == edges(read_interactions(ia / "string_links.txt"))


def test_string_detailed_and_info_file(ia):
    x = read_interactions(ia / "string_links_detailed.txt", string_aliases=ia / "string_info.txt")
    assert x.n_edges == 2
    assert x.aliases == {
        "preferred_name": {
            "ENSP00000269305": ("TP53",),
            "ENSP00000258149": ("MDM2",),
            "ENSP00000418960": ("BRCA1",),
        }
    }
    al = read_string_aliases(ia / "string_aliases.txt")
    assert al["UniProt_AC"]["ENSP00000372023"] == ("O96017",)
    assert al["Ensembl_EntrezGene_synonym"]["ENSP00000372023"] == ("TP53",)


def test_string_errors(ia):
    with pytest.raises(InputError) as err:
        read_interactions(ia / "string_links_bad_score.txt")
    assert err.value.line == 3 and "outside 0..1000" in str(err.value)
    with pytest.raises(ParameterError, match="0..1000"):
        read_interactions(ia / "string_links.txt", string_min_score=1500)


# ---------------------------------------------------------------- BioGRID


def test_biogrid_tab3_filters(ia):
    x = read_interactions(ia / "biogrid_tab3.txt")
    assert sniff_interactions(ia / "biogrid_tab3.txt") == "biogrid"
    got = {(s, t): ty for s, t, ty in zip(x.source, x.target, x.type, strict=True)}
    assert got == {
        ("4193", "7157"): "Affinity Capture-Western;Two-hybrid",  # two rows, one edge
        ("22059", "4193"): "Reconstituted Complex",  # mouse-human kept without taxon filter
        ("672", "BIOGRID:999001"): "Two-hybrid",  # no Entrez id: BioGRID id, symbol alias
        ("11200", "672"): "Biochemical Activity",
    }  # genetic row filtered, self-loop dropped
    assert x.aliases["symbol"]["BIOGRID:999001"] == ("FOO1",)
    assert x.aliases["uniprot"]["672"] == ("P38398", "E9PFZ0")
    assert (x.weight == 1).all() and not x.is_directed and x.namespace == "entrez"
    human = read_interactions(ia / "biogrid_tab3.txt", biogrid_taxon=9606)
    assert ("22059", "4193") not in edges(human) and human.n_edges == 3
    both = read_biogrid(ia / "biogrid_tab3.txt", system_type=None)
    assert ("672", "7157") in edges(both) and both.n_edges == 5
    genetic = read_biogrid(ia / "biogrid_tab3.txt", system_type="genetic")
    assert list(edges(genetic)) == [("672", "7157")]


def test_biogrid_tab2_and_bad_system_type(ia):
    x = read_interactions(ia / "biogrid_tab2.txt", biogrid_taxon="9606")
    assert set(edges(x)) == {("4193", "7157"), ("2002", "5594")}
    assert "uniprot" not in x.aliases
    with pytest.raises(ParameterError, match="physical, genetic"):
        read_interactions(ia / "biogrid_tab2.txt", biogrid_system_type="chemical")


def test_unknown_format(ia):
    with pytest.raises(ParameterError, match="edgelist"):
        read_interactions(ia / "edges_header.tsv", fmt="xgmml")


def test_interactions_are_read_only(ia):
    x = read_interactions(ia / "edges_header.tsv")
    with pytest.raises(ValueError):
        x.weight[0] = 5.0
    assert isinstance(x.source, np.ndarray)


def test_kgml_relations_through_read_interactions(testdata):
    kgml = testdata / "pathways" / "kgml"
    assert sniff_interactions(kgml) == "kgml"
    x = read_interactions(kgml)
    assert x.n_edges == 7 and x.directed.all()
    assert ("5290", "596") in edges(x)
    assert edges(read_interactions(kgml, fmt="kgml")) == edges(x)


def test_biogrid_missing_columns(tmp_path):
    p = tmp_path / "bg.txt"
    p.write_text("#BioGRID Interaction ID\tEntrez Gene Interactor A\n1\t2\n")
    with pytest.raises(InputError) as err:
        read_interactions(p)
    assert err.value.line == 1 and "Entrez Gene Interactor B" in str(err.value)


def test_bz2_and_zip_archives(ia, tmp_path):
    import bz2
    import zipfile

    data = (ia / "string_links.txt").read_bytes()
    b = tmp_path / "links.txt.bz2"
    b.write_bytes(bz2.compress(data))
    assert read_interactions(b).n_edges == 4
    z = tmp_path / "links.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("links.txt", data)
    assert read_interactions(z).n_edges == 4
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as zf:
        zf.writestr("a.txt", data)
        zf.writestr("b.txt", data)
    with pytest.raises(InputError, match="holds 2 files"):
        read_interactions(tmp_path / "two.zip")


# ---------------------------------------------------------------- Cytoscape SIF


@pytest.mark.parametrize("name", ["net.sif", "net.SIF", "net.sif.gz"])
def test_sif_as_interactions_by_its_extension(tmp_path, name):
    """`node relType node [node ...]`: one line may list several targets; tabs, else spaces;
    undirected, unweighted, the relation type kept."""
    import gzip

    text = "TP53\tpp\tMDM2\tCDKN1A\nEGFR pd GRB2\nLONELY\n\n# comment\nBRCA1\tpp\tBARD1\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    assert sniff_interactions(path) == "sif"
    for x in (read_interactions(path), read_interactions(path, "sif")):
        got = {(s, t, ty) for s, t, ty in zip(x.source, x.target, x.type, strict=True)}
        assert got == {("MDM2", "TP53", "pp"), ("CDKN1A", "TP53", "pp"),
                       ("EGFR", "GRB2", "pd"), ("BARD1", "BRCA1", "pp")}  # fmt: skip
        assert not x.is_directed and set(x.weight) == {1.0}


def test_sif_line_without_a_target_is_named(tmp_path):
    path = tmp_path / "bad.sif"
    path.write_text("A\tpp\tB\nC\tpp\n")
    with pytest.raises(InputError, match=r"bad.sif:2: a SIF line needs a source, an interaction"):
        read_interactions(path)


def test_sif_as_interactions_on_the_command_line(tmp_path):
    import json

    from click.testing import CliRunner

    from kofs.cli import main

    rows = ["gene\t" + "\t".join(f"S{i}" for i in range(6))]
    rows += [f"G{g}\t" + "\t".join(str((g * 7 + i * 3) % 11) for i in range(6)) for g in range(6)]
    expr = tmp_path / "expr.tsv"
    expr.write_text("\n".join(rows) + "\n")
    sif = tmp_path / "net.sif"
    sif.write_text("G1 pp G2 G3\nG4 pp G5\n")
    genes = tmp_path / "genes.txt"
    genes.write_text("G1\n")
    args = ["sources", str(expr), "--interactions", str(sif), "--relevant-genes", str(genes)]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.stderr
    (cov,) = json.loads(r.stdout)["coverage"]
    assert cov["source"].endswith("net.sif") and cov["input_genes"] == cov["matched"] == 5


def test_kgml_as_interactions_format_on_the_command_line(tmp_path, testdata):
    """``--interactions-format kgml`` was no choice although KGML relations are read (found
    by their content): a user naming the format got "'kgml' is not one of ..."."""
    import json

    from click.testing import CliRunner

    from kofs.cli import main

    kgml = testdata / "pathways" / "kgml" / "hsa04998.xml"
    ids = sorted({g for e in edges(read_interactions(kgml)) for g in e})
    rows = ["gene\tS0\tS1\tS2\tS3"] + [f"{g}\t1\t{k % 3}\t2\t{k % 5}" for k, g in enumerate(ids)]
    expr = tmp_path / "expr.tsv"
    expr.write_text("\n".join(rows) + "\n")
    genes = tmp_path / "genes.txt"
    genes.write_text(ids[0] + "\n")
    args = ["sources", str(expr), "--interactions", str(kgml), "--interactions-format", "kgml"]
    r = CliRunner().invoke(main, [*args, "--relevant-genes", str(genes), "--json"])
    assert r.exit_code == 0, r.stderr
    (cov,) = json.loads(r.stdout)["coverage"]
    assert cov["matched"] == len(ids)


# ---------------------------------------------------------------- tabs and spaces mixed


@pytest.mark.parametrize(
    "text",
    [
        "TP53\tMDM2\t0.9\nBRCA1 BARD1 0.8\nEGFR\tGRB2 0.7\n",  # first line tabs
        "TP53 MDM2 0.9\nBRCA1\tBARD1\t0.8\nEGFR GRB2\t0.7\n",  # first line spaces
        "# a comment line\nTP53\tMDM2\t0.9\n\nBRCA1  BARD1\t0.8\nEGFR\tGRB2\t0.7\n",
    ],
)
def test_edge_list_mixing_tabs_and_spaces_reads_by_white_space(tmp_path, text):
    """Lines separated by tabs and lines by spaces: read whitespace-separated when every line
    then has as many columns (before: 'edge with an empty gene id' on the first spaced line)."""
    path = tmp_path / "mixed.txt"
    path.write_text(text)
    x = read_interactions(path)
    assert edges(x) == {("MDM2", "TP53"): 0.9, ("BARD1", "BRCA1"): 0.8, ("EGFR", "GRB2"): 0.7}


def test_edge_list_mixing_tabs_and_spaces_ambiguously_names_the_line(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("gene a\tgene b\tscore\nA\tB\t1\nC D\t0.5\n")
    with pytest.raises(InputError, match=r"mixed.txt:3: this line separates columns with spaces"):
        read_interactions(path)
    spaced_ids = tmp_path / "ids.txt"  # a tab file whose ids hold spaces stays tab-separated
    spaced_ids.write_text("A /// B\tC\t0.5\nD\tE\t1\n")
    assert edges(read_interactions(spaced_ids)) == {("A /// B", "C"): 0.5, ("D", "E"): 1.0}


@pytest.mark.parametrize("sep", ["\t", " ", ","])
def test_edge_list_opening_with_a_comment_line(tmp_path, sep):
    """A comment line of another width above the edges (before: the delimiter and width were
    taken from it: 'directed flag '' is not one of true/false...'); a '#' header is kept."""
    path = tmp_path / "c.txt"
    path.write_text(f"# edges of a test\n\nA{sep}B{sep}0.5\nC{sep}D{sep}0.2\n")
    assert edges(read_interactions(path)) == {("A", "B"): 0.5, ("C", "D"): 0.2}
    path.write_text(f"# edges of a test\n#weight{sep}target{sep}source\n0.5{sep}B{sep}A\n")
    assert edges(read_interactions(path)) == {("A", "B"): 0.5}


def test_paired_table_reads_its_directed_column(tmp_path):
    """A paired table's ``is_directed``/``directed`` column (OmniPath's) was ignored: every
    source_/target_ edge was directed and every _a/_b edge undirected, whatever it said."""
    omni = tmp_path / "omni.tsv"
    omni.write_text(
        "source_uniprot\ttarget_uniprot\tsource_genesymbol\ttarget_genesymbol\tis_directed\n"
        "P1\tP2\tCD3D\tLCK\t1\nP3\tP4\tCD74\tCD3D\t0\n"
    )
    net = read_interactions(omni)
    assert net.directed.tolist() == [True, False]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("symbol_a\tsymbol_b\tscore\tdirected\nA\tB\t0.5\ttrue\nC\tD\t0.4\tmaybe\n")
    with pytest.raises(InputError, match=r"pairs.tsv:3 \(column 4\): directed flag 'maybe'"):
        read_interactions(pairs)


def test_paired_table_rows_without_an_id_are_warned_of(tmp_path, caplog):
    """A paired table's rows without an id at one end (NA, or a line cut short: 'ABL1' alone)
    were dropped without a word, where an edge list refuses the same line."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("symbol_a\tsymbol_b\tscore\nA\tB\t0.5\nABL1\nC\tNA\t0.2\nD\tE\t0.4\n")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        net = read_interactions(pairs)
    assert edges(net) == {("A", "B"): 0.5, ("D", "E"): 0.4}
    assert net.info["rows_missing_id"] == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"{pairs}: dropped 2 row(s) without an id in symbol_a or symbol_b (NA, empty, or a "
        "line with fewer fields than the header; e.g. line 3)"
    ]
    caplog.clear()
    pairs.write_text("symbol_a\tsymbol_b\tscore\nA\tB\t0.5\n")  # every row whole: no word
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_interactions(pairs)
    assert not caplog.records
