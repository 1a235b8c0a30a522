"""The terminal summary (rich, stderr): top genes, EM weights and coverage; silent in pipes."""

from __future__ import annotations

import io

from kofs.cli import _summary
from kofs.datasets.example import example_paths
from kofs.io.expression import read_expression
from kofs.io.labels import read_labels
from kofs.pipeline.rank import rank
from kofs.sources import read_sources


def test_summary_on_terminal_only(monkeypatch, capsys):
    p = example_paths()
    expr = read_expression(p["expression"])
    src = read_sources(pathways=p["pathways"])
    res = rank(
        expr,
        labels=read_labels(p["labels"], label_column="lineage"),
        sources=src.only("pathways"),
        lists=["SPEC", "Fisher", "Pathway-REL-VOTE"],
    )
    _summary.print_summary(res, top=3)  # stderr is not a terminal under pytest: nothing
    assert capsys.readouterr().err == ""
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(res, top=3, force=True)
    text = fake.getvalue()
    flat = " ".join(text.split())  # rich wraps titles wider than their table
    assert "top 3 genes (posterior of 3 lists)" in flat and "list weights (posterior" in flat
    assert "95% interval" in flat
    assert "coverage: pathways kegg.gmt" in text
    assert res.final.top(1)[0] in text


def test_summary_shows_symbols_beside_the_ids(monkeypatch):
    from dataclasses import replace

    p = example_paths()
    expr = read_expression(p["expression"])
    res = rank(expr, rankers=["variance"])
    top = res.final.top(2)
    res = replace(res, symbols={top[0]: "MYSYMBOL"})
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(res, top=2, force=True)
    text = fake.getvalue()
    assert "symbol" in text and "MYSYMBOL" in text and top[0] in text and top[1] in text


def test_summary_shows_the_fusions_q_value_and_plain_notices(monkeypatch):
    from dataclasses import replace

    import numpy as np

    p = example_paths()
    expr = read_expression(p["expression"])
    res = rank(expr, rankers=["variance", "laplacian"])
    q = np.linspace(0.001, 1, len(res.final.genes))
    final = replace(
        res.final,
        statistics={"q_value": q},
        diagnostics={**res.final.diagnostics, "notices": ["Read the weights with care."]},
    )
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(replace(res, final=final), top=3, force=True)
    text = fake.getvalue()
    assert "q-value" in text and "Read the weights with care." in text
    assert "likelihood gain" not in text


def test_summary_says_why_one_list_has_no_q_values(monkeypatch):
    # the notice sat in the weights block, which one list has not: no word on the terminal
    p = example_paths()
    res = rank(read_expression(p["expression"]), rankers=["laplacian"])
    assert "q_value" not in res.final.statistics
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(res, top=3, force=True)
    assert "Only one list (laplacian) is evidence from the data" in " ".join(
        fake.getvalue().split()
    )


def test_summary_nuisance_shares_below_one_percent_are_not_zero(monkeypatch):
    """'stress 0%' was printed for a share of 1 gene in the top 500 (0.2 %)."""
    from dataclasses import replace

    p = example_paths()
    res = rank(read_expression(p["expression"]), rankers=["variance"])
    info = {"nuisance": {"top": 500, "shares": {"stress": 0.002, "ribosomal": 0.03, "s": 0.0}}}
    res = replace(res, lists=(replace(res.lists[0], info=info),))
    fake = io.StringIO()
    monkeypatch.setattr("sys.stderr", fake)
    _summary.print_summary(res, top=2, force=True)
    line = next(ln for ln in fake.getvalue().splitlines() if "nuisance" in ln)
    assert "stress 0.2%" in line and "ribosomal 3%" in line and " s " not in line
    assert "0%" not in line.replace("0.2%", "")


def test_one_list_with_labels_is_not_told_to_give_labels():
    """laplacian alone with labels: the notice asked for the labels already given; it asks for
    a list computed from them with a known null. Without labels it still asks for labels."""
    p = example_paths()
    expr = read_expression(p["expression"])
    labels = read_labels(p["labels"], label_column="lineage")
    with_labels = rank(expr, labels=labels, rankers=["laplacian"]).final.diagnostics["notices"]
    without = rank(expr, rankers=["laplacian"]).final.diagnostics["notices"]
    said = [n for n in with_labels if n.startswith("Only one list (laplacian)")]
    assert len(said) == 1 and "--labels" not in said[0] and "--rankers fisher" in said[0]
    assert any(n.startswith("Only one list (laplacian)") and "--labels" in n for n in without)
