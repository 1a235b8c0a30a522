"""Options are never silently ignored: --go-taxon on GAF, --string-min-score, --string-aliases
and the BioGRID filters off their formats, --interactions and the summary title under
--method msfs."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from kofs.cli import _summary, main
from kofs.datasets.example import example_paths
from kofs.errors import ParameterError
from kofs.io.annotations import read_go_annotations
from kofs.io.interactions import read_interactions

DATA = Path(__file__).parent / "data"


def test_go_taxon_filters_gaf(tmp_path):
    text = (DATA / "go" / "tiny.gaf").read_text().splitlines()
    mouse = text[3].replace("P00001\tG1", "Q00009\tG9").replace("taxon:9606", "taxon:10090")
    pair = text[4].replace("taxon:9606", "taxon:9606|taxon:11676")  # host|pathogen
    gaf = tmp_path / "mixed.gaf"
    gaf.write_text("\n".join([*text, mouse, pair]) + "\n")
    every = read_go_annotations(gaf)
    human = read_go_annotations(gaf, taxon="9606")
    mice = read_go_annotations(gaf, taxon="taxon:10090")
    assert "G9" in set(every.id_columns["symbol"]) and "G9" not in set(human.id_columns["symbol"])
    assert len(human) == len(every) - 1
    assert list(mice.id_columns["symbol"]) == ["G9"]
    assert human.digest != every.digest


def test_go_taxon_on_a_tsv_is_an_error():
    with pytest.raises(ParameterError, match="--go-taxon 9606 cannot filter .*no taxon column"):
        read_go_annotations(DATA / "go" / "tiny_annotations.tsv", taxon=9606)


def test_go_evidence_filters_on_a_file_without_evidence_are_an_error(tmp_path):
    """--go-exclude-evidence IEA on a TSV without an evidence column dropped nothing, silently
    (and --go-evidence said only that no annotation was left)."""
    tsv = tmp_path / "noev.tsv"
    tsv.write_text("gene\tgo_id\nG1\tGO:0000001\nG2\tGO:0000002\n")
    with pytest.raises(ParameterError, match="--go-exclude-evidence IEA cannot filter .*no evid"):
        read_go_annotations(tsv, exclude_evidence="IEA")
    with pytest.raises(ParameterError, match="--go-evidence IDA,IMP cannot filter"):
        read_go_annotations(tsv, evidence="IDA,IMP")
    assert len(read_go_annotations(tsv)) == 2


def test_string_min_score_off_string_links_warns_once(caplog):
    edges = DATA / "interactions" / "edges_header.tsv"
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_interactions(edges)
    assert "string-min-score" not in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_interactions(edges, string_min_score=900)
    (line,) = [ln for ln in caplog.text.splitlines() if "string-min-score" in ln]
    assert "--string-min-score 900 is ignored" in line and "--interaction-min-weight" in line
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):  # a STRING links file uses it
        read_interactions(DATA / "interactions" / "string_links.txt", string_min_score=900)
    assert "ignored" not in caplog.text


def test_string_and_biogrid_options_off_their_format_warn_once(caplog):
    edges = DATA / "interactions" / "edges_header.tsv"
    aliases = DATA / "interactions" / "string_aliases.txt"
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_interactions(
            edges, string_aliases=aliases, biogrid_taxon="9606", biogrid_system_type=None
        )
    lines = [ln for ln in caplog.text.splitlines() if "no effect" in ln]
    assert len(lines) == 2, caplog.text
    assert f"--string-aliases {aliases} has no effect: {edges} is read as" in lines[0]
    assert "--biogrid-taxon 9606, --biogrid-system-type all have no effect" in lines[1]
    assert "not as a BioGRID TAB2/TAB3 file" in lines[1]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):  # a STRING links file uses them
        read_interactions(DATA / "interactions" / "string_links.txt", string_aliases=aliases)
    assert "no effect" not in caplog.text


def test_msfs_warns_about_interactions_and_titles_its_summary(tmp_path, monkeypatch):
    p = example_paths()
    r = CliRunner().invoke(
        main,
        ["rank", str(p["expression"]), "--labels", str(p["labels"]), "--label-column",
         "lineage", "--interactions", str(p["interactions"]), "--method", "msfs",
         "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    warn = [ln for ln in r.stderr.splitlines() if "--interactions" in ln]
    assert len(warn) == 1 and "not used by --method msfs" in warn[0]

    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels
    from kofs.pipeline.rank import rank

    expr = read_expression(p["expression"])
    expr, labels = align_labels(expr, read_labels(p["labels"], label_column="lineage"))
    res = rank(expr, labels=labels, method="msfs")
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(res, top=3, force=True)
    text = fake.getvalue()
    assert "top 3 genes (msfs)" in text
    assert "(em)" not in text and "weight" not in text


@pytest.mark.parametrize("option", ["--string-aliases", "--kegg-names"])
def test_a_missing_file_of_an_ignored_option_fails_before_any_work(tmp_path, option, monkeypatch):
    # it is checksummed into manifest.json: missing, the run failed after all its work with
    # "cannot be read for its checksum (No such file or directory)"
    import kofs.pipeline.run

    def no_run(*a, **k):
        raise AssertionError("ran before the inputs were checked")

    monkeypatch.setattr(kofs.pipeline.run, "run", no_run)
    p = example_paths()
    missing = tmp_path / "nope.txt"
    args = [
        "rank", p["expression"], "--pathways", p["pathways"],
        "--interactions", p["interactions"], option, str(missing), "-o", str(tmp_path / "out"),
    ]  # fmt: skip
    for output in (["-o", str(tmp_path / "out")], ["-o", "-"]):
        res = CliRunner().invoke(main, args[:-2] + output)
        assert res.exit_code == 2, res.output
        assert f"{missing}: file not found; check the path ({option})" in res.output
    assert not (tmp_path / "out").exists()
