"""Gene symbols beside the ids, and the run report (report.html of `kofs rank`)."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _report_check import check_report
from click.testing import CliRunner

from kofs.cli import main
from kofs.io.annotations import GOAnnotations
from kofs.io.interactions import read_interactions
from kofs.io.output import write_ranking
from kofs.io.symbols import gene_symbols, symbol_lookup
from kofs.report.run import run_report_html, weight_intervals
from kofs.types import AggregateRanking, Expression, Ranking

N_GENES, N_SAMPLES = 30, 16


def _data(tmp_path: Path, *, symbol_column: bool = True):
    """Entrez-id matrix (optionally with a symbol column), labels, an interaction file whose
    symbol columns pair the Entrez ids with symbols."""
    rng = np.random.default_rng(1)
    y = np.array(["B", "T"] * (N_SAMPLES // 2))
    X = rng.normal(size=(N_SAMPLES, N_GENES)) + 6
    X[:, :4] += np.where(y == "B", 2.5, -2.5)[:, None]
    entrez = [str(101 + j) for j in range(N_GENES)]
    symbols = [f"SYM{j}" for j in range(N_GENES)]
    samples = [f"s{i}" for i in range(N_SAMPLES)]
    df = pd.DataFrame(X.T, columns=samples)
    df.insert(0, "entrez_id", entrez)
    if symbol_column:
        df.insert(1, "symbol", symbols)
    expr = tmp_path / "expr.tsv"
    df.to_csv(expr, sep="\t", index=False)
    labels = tmp_path / "labels.tsv"
    pd.DataFrame({"sample": samples, "lineage": y}).to_csv(labels, sep="\t", index=False)
    edges = [(0, 1), (1, 2), (2, 3), (0, 3), (4, 5), (5, 6), (7, 8), (1, 9), (10, 11), (0, 12)]
    inter = tmp_path / "edges.tsv"
    pd.DataFrame(
        {
            "entrez_a": [entrez[a] for a, _ in edges],
            "entrez_b": [entrez[b] for _, b in edges],
            "symbol_a": [symbols[a] for a, _ in edges],
            "symbol_b": [symbols[b] for _, b in edges],
            "score": 0.9,
        }
    ).to_csv(inter, sep="\t", index=False)
    (tmp_path / "relevant.txt").write_text("101\n102\n")
    return expr, labels, inter, entrez, symbols


def _rank(tmp_path, args, out="run"):
    expr, labels, inter, *_ = _data(tmp_path, symbol_column="--no-symbols" not in args)
    args = [a for a in args if a != "--no-symbols"]
    r = CliRunner().invoke(
        main,
        [
            "rank",
            str(expr),
            "--labels",
            str(labels),
            "--label-column",
            "lineage",
            "--interactions",
            str(inter),
            "--relevant-genes",
            str(tmp_path / "relevant.txt"),
            "-o",
            str(tmp_path / out),
            *args,
        ],
    )
    assert r.exit_code == 0, r.output
    return tmp_path / out


# --------------------------------------------------------------------------- symbols


def test_symbols_from_the_matrix_column():
    e = Expression(
        np.zeros((2, 3)),
        ["7157", "672", "1"],
        ["a", "b"],
        annotations={"symbol": ["TP53", "", "A1BG"]},
    )
    assert gene_symbols(e) == {"7157": "TP53", "1": "A1BG"}
    # ids that are the symbols themselves: no symbol column
    s = Expression(np.zeros((2, 2)), ["TP53", "BRCA1"], ["a", "b"])
    assert gene_symbols(s) is None


def test_symbols_from_knowledge_sources_never_guess():
    e = Expression(
        np.zeros((2, 4)),
        ["P1", "P2", "P3", "P4"],
        ["a", "b"],
        annotations={"entrez": ["7157", "672", "999", ""]},
    )
    go = GOAnnotations(
        id_columns={
            "entrez": ["7157", "7157", "672", "999", "999"],
            "symbol": ["TP53", "TP53", "BRCA1", "X1", "X2"],  # 999 is ambiguous
        },
        terms=["GO:1"] * 5,
        evidence=[""] * 5,
        aspect=["BP"] * 5,
    )
    assert gene_symbols(e, go_annotations=go) == {"P1": "TP53", "P2": "BRCA1"}
    assert symbol_lookup([(["NCBIGene:5", "5"], ["A", "A"])]) == {"5": "A"}


def test_symbols_from_interaction_aliases(tmp_path):
    *_, inter, entrez, symbols = _data(tmp_path)
    e = Expression(np.zeros((2, 3)), [entrez[0], entrez[9], entrez[29]], ["a", "b"])
    got = gene_symbols(e, interactions=read_interactions(inter))
    assert got == {entrez[0]: symbols[0], entrez[9]: symbols[9]}  # gene 29 has no edge


def test_write_ranking_symbol_column_beside_the_id(capsys):
    r = Ranking("x", ("1", "2"), np.array([1.0, 2.0]), True)
    write_ranking("-", r, symbols={"2": "BBB"})
    out = capsys.readouterr().out
    assert out == "gene\tsymbol\trank\tscore\n2\tBBB\t1\t2\n1\t\t2\t1\n"


@pytest.mark.parametrize("from_matrix", [True, False])
def test_rank_writes_symbols_in_table_evidence_and_report(tmp_path, from_matrix):
    args = [] if from_matrix else ["--no-symbols"]
    out = _rank(tmp_path, args)
    t = pd.read_csv(out / "ranking.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert list(t.columns[:4]) == ["gene", "symbol", "rank", "score"]
    row = t.set_index("gene").loc["101"]  # entrez id 101 = SYM0, neighbours SYM1, SYM3, SYM12
    assert row["symbol"] == "SYM0"
    assert re.search(r"interactors: SYM\d+", row["evidence"]) and "102" not in row["evidence"]
    page = (out / "report.html").read_text()
    assert "gene/101' target='_blank' rel='noopener'>SYM0</a>" in page


# --------------------------------------------------------------------------- the run report


def test_run_report_is_one_self_contained_page(tmp_path):
    out = _rank(tmp_path, [])
    page_path = out / "report.html"
    assert check_report(page_path) == []
    page = page_path.read_text()
    assert "src='http" not in page and "src='figures" not in page  # links only, no loads
    assert "href='https://www.ncbi.nlm.nih.gov/gene/101'" in page  # Entrez ids link to NCBI
    uris = re.findall(r"src='(data:image/png;base64,[^']+)'", page)
    assert len(uris) == 2  # the heatmap and its label bar
    for u in uris:
        assert base64.b64decode(u.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    for ident in (
        "answer",
        "top-genes",
        "evidence",
        "weights",
        "agreement",
        "heatmap",
        "coverage",
        "lists",
        "inputs",
        "software",
    ):
        assert f"id='{ident}'" in page, ident
    # the answer comes first: before any table
    assert page.index("id='answer'") < page.index("<table")
    sha = hashlib.sha256((tmp_path / "expr.tsv").read_bytes()).hexdigest()
    assert sha in page  # provenance from the manifest
    # the time shown is that of the timed steps, said so (it read 'run time', a third to a
    # half of the demo's wall time)
    import json

    timed = sum(json.loads((out / "manifest.json").read_text())["timings_seconds"].values())
    assert (
        f"time of the lists and the fusion</td><td class='long'>{timed:.2f} s (reading the" in page
    )
    assert "run time" not in page
    assert "Labels 'lineage': B 8, T 8" in page
    assert sorted(p.name for p in out.iterdir()) == [
        ".kofs-complete",  # the completion marker of the atomic output folder
        "config.resolved.yaml",
        "manifest.json",
        "ranking.tsv",
        "report.html",
        "weights.tsv",
    ]


def test_no_report_and_stdout_write_no_report(tmp_path):
    out = _rank(tmp_path, ["--no-report"])
    assert not (out / "report.html").exists() and (out / "ranking.tsv").is_file()
    expr, labels, *_ = _data(tmp_path)
    r = CliRunner().invoke(main, ["rank", str(expr), "--rankers", "variance", "-o", "-"])
    assert r.exit_code == 0 and r.output.startswith("gene\tsymbol\trank")


def _result(n_samples=6, info=None, weights=(0.7, 0.3)):
    from kofs.pipeline.result import RunResult

    rng = np.random.default_rng(0)
    genes = tuple(f"G{j}" for j in range(8))
    expr = Expression(rng.normal(size=(n_samples, 8)), genes, [f"s{i}" for i in range(n_samples)])
    ranks = np.column_stack([np.arange(1.0, 9), np.arange(8.0, 0, -1)])
    final = AggregateRanking(
        "em", genes, -np.arange(8.0), ("a", "b"), ranks, np.array(weights), info or {}
    )
    lists = tuple(
        Ranking(n, genes, -ranks[:, k], True, params={"ranker": "x"}) for k, n in enumerate("ab")
    )
    return RunResult(expr, final, lists, (), {}, {}, evidence=None, symbols={"G0": "ZERO"})


def test_weight_intervals_rendered_when_the_aggregation_gives_them():
    res = _result(info={"weight_ci": [[0.5, 0.9], [0.1, 0.5]], "iterations": 3})
    assert weight_intervals(res.final) == [(0.5, 0.9), (0.1, 0.5)]
    page = run_report_html(res)
    assert "0.500 – 0.900" in page and "iterations = 3" in page
    assert "A list&#x27;s weight π is the probability" in page  # what a weight means
    plain = run_report_html(_result())
    assert "reported no intervals" in plain and "interval</th>" not in plain
    assert weight_intervals(_result(info={"weight_ci": [1, 2, 3]}).final) is None
    # weight diagnostics of an aggregation (a diagnostics mapping beside info) come first
    res = _result()
    object.__setattr__(
        res.final,
        "diagnostics",
        {
            "weight_ci": np.array([[0.6, 0.8], [0.2, 0.4]]),
            "loglik_gain": 0.05,
            "n_boot": 50,
            "warning": "em: list weights not identified",
        },
    )
    page = run_report_html(res)
    assert "0.600 – 0.800" in page and "not identified" in page and "50 bootstrap" in page
    # weights the identification test rejects are said so before the results (the warning
    # was folded away under the aggregation's own numbers)
    res.final.diagnostics.update(identified=False, loglik_gain=0.0905)
    page = run_report_html(res)
    notice = page[page.index("id='notices'") : page.index("id='top-genes'")]
    assert "The list weights are not identified" in notice and "0.09 nats" in notice
    res.final.diagnostics["identified"] = True
    assert "id='notices'" not in run_report_html(res)


def test_one_list_has_no_agreement_figure_and_sources_without_coverage_are_named():
    from dataclasses import replace

    from kofs.sources import KnowledgeSources

    res = _result()
    one = replace(
        res,
        final=replace(
            res.final, list_names=("a",), list_ranks=res.final.list_ranks[:, :1], weights=None
        ),
        sources=KnowledgeSources({"pathways": object()}),
    )
    page = run_report_html(one)
    assert "One ranked list" in page and page.count("data:image/png") == 1  # heatmap only
    assert "id='agreement-table'" not in page
    assert "No gene-level coverage was recorded" in page and "(pathways)" in page


def test_one_list_is_not_said_to_be_weighed_against_others():
    """A run of one list (the labelled or single-cell default plan) had 'Unsupervised: a list
    weighs more when it agrees with the other lists' under its weights, with labels given."""
    from dataclasses import replace

    from kofs.report.fusion import describe_fusion

    res = _result()
    final = replace(
        res.final,
        method="posterior",
        list_names=("fisher",),
        list_ranks=res.final.list_ranks[:, :1],
        weights=np.array([1.0]),
        diagnostics={"supervision": "none", "weight_ci": [[1.0, 1.0]]},
    )
    text = describe_fusion(final)
    assert text.supervision == "" and text.weight_meaning == ""
    page = run_report_html(replace(res, final=final, lists=res.lists[:1]))
    assert "Unsupervised" not in page and "agrees with the other lists" not in page
    assert "One ranked list (fisher): the fused ranking is its own" in page
    assert "1.000 – 1.000" in page  # its weight is still shown
    page = run_report_html(replace(res, final=replace(final, weights=None), lists=res.lists[:1]))
    assert "each counts the same" not in page and "no other list to weigh it against" in page


def test_heatmap_skipped_above_the_size_limit_and_said_so():
    res = _result(n_samples=12)
    page = run_report_html(res, max_heatmap_samples=10)
    assert (
        "id='heatmap'>Heatmap of the top genes skipped" in page
        and "12 samples (more than 10)" in page
    )
    assert page.count("data:image/png") == 0  # the agreement is a table
    assert "ZERO" in page and "No knowledge source" in page


def test_report_links_reach_their_sections_when_sections_are_empty(tmp_path):
    # Without a knowledge source and with the heatmap skipped, the page's menu linked
    # '#coverage' and '#heatmap', which no element had (the ids sat on the tables and figures).
    res = _result(n_samples=12)
    page = tmp_path / "report.html"
    page.write_text(run_report_html(res, max_heatmap_samples=10), encoding="utf-8")
    assert check_report(page) == []


@pytest.mark.slow
def test_run_report_does_not_use_matplotlib():
    code = (
        "import sys, numpy as np\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_report import _result\n"
        "from kofs.report.run import run_report_html\n"
        "run_report_html(_result())\n"
        "print('matplotlib' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "False"


def test_no_report_key_of_a_config_and_symbols_cached_per_gene_set(tmp_path):
    from kofs.context import Context
    from kofs.pipeline.config import RunConfig
    from kofs.pipeline.run import run
    from kofs.pipeline.write import write_result

    expr, labels, inter, *_ = _data(tmp_path, symbol_column=False)
    base = {
        "expression": str(expr),
        "labels": str(labels),
        "label_column": "lineage",
        "rankers": "variance,fisher",
        "interactions": str(inter),
        "relevant_genes": str(tmp_path / "relevant.txt"),
    }
    cfg = RunConfig.from_mapping({**base, "output": str(tmp_path / "a"), "no_report": True})
    res = run(cfg)
    assert res.symbols["101"] == "SYM0" and res.labels.name == "lineage"
    assert res.labels.samples == res.expression.samples  # the caller's order, not the canonical
    write_result(res)
    assert not (tmp_path / "a" / "report.html").exists()
    assert "no-report: true" in (tmp_path / "a" / "config.resolved.yaml").read_text()
    ctx = Context(expression=res.expression, shared={})
    first = ctx.cached("gene_symbols", lambda: {"x": "y"}, gene_level=True)
    again = Context(expression=res.expression, shared=ctx.shared)
    assert again.cached("gene_symbols", lambda: None, gene_level=True) is first


@pytest.mark.slow
def test_symbols_of_the_real_all_matrix_from_its_column_and_from_go(shared_data):
    """ALL (Entrez ids + a symbol column): every gene has its symbol; without the column, the
    org.Hs.eg.db GO table gives 8,436 of the 8,562 and every one equals the matrix's own."""
    from kofs.io.annotations import read_go_annotations
    from kofs.io.expression import read_expression

    e = read_expression(shared_data / "ALL" / "ALL_gene_expr.tsv.gz")
    own = gene_symbols(e)
    assert e.namespace == "entrez" and len(own) == e.n_genes == 8562
    assert own["7157"] == "TP53" and own["915"] == "CD3D"
    bare = Expression(
        e.values,
        e.genes,
        e.samples,
        namespace="entrez",
        annotations={"probe": e.annotations["probe_id"]},
    )
    go = read_go_annotations(
        shared_data / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"
    )
    found = gene_symbols(bare, go_annotations=go)
    assert len(found) == 8436 and all(own[g] == s for g, s in found.items())


def test_partial_lists_unranked_genes_tie_last_in_the_agreement():
    from dataclasses import replace

    res = _result()
    R = res.final.list_ranks.copy()
    R[5:, 1] = np.nan  # list b ranks only 5 genes
    page = run_report_html(replace(res, final=replace(res.final, list_ranks=R)))
    assert "id='agreement-table'" in page and "b NA" in page


def test_warnings_of_the_run_come_before_the_results(tmp_path):
    from kofs.pipeline.run import run
    from kofs.pipeline.write import write_result

    expr, labels, inter, *_ = _data(tmp_path)
    (tmp_path / "known.txt").write_text("101\n102\nNOT_A_GENE\n")
    res = run(
        {
            "expression": str(expr),
            "labels": str(labels),
            "label_column": "lineage",
            "rankers": "variance,fisher",
            "relevant_genes": str(tmp_path / "known.txt"),
            "output": str(tmp_path / "out"),
            "title": "My run",
        }
    )
    assert any("not in the matrix" in w for w in res.warnings)
    write_result(res)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<title>My run</title>" in page
    notices = page.index("id='notices'")
    assert page.index("id='answer'") < notices < page.index("id='top-genes'")
    assert "not in the matrix" in page[notices : page.index("id='top-genes'")]


@pytest.mark.parametrize(
    ("gene", "term"),
    [
        ('5"UTR', "5%22UTR"),
        ("a&b", "a%26b"),
        ("it's", "it%27s"),
        ("=X(1)", "%3DX%281%29"),
        ("β 1", "%CE%B2%201"),
    ],
)
def test_gene_links_are_url_encoded_once(gene, term):
    # A symbol holding '"', '&', a quote or a space was HTML-escaped into the URL and then
    # HTML-escaped again by the link: the browser's href read 'term=5&quot;UTR' (a second
    # query parameter), not the gene.
    from html.parser import HTMLParser

    from kofs.report.html import gene_link

    hrefs: list[str] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            hrefs.extend(v for k, v in attrs if k == "href")

    P().feed(str(gene_link("ENSG_NOT", gene)))
    assert hrefs == [f"https://www.ncbi.nlm.nih.gov/gene/?term={term}"]


def test_numbers_that_round_up_to_a_power_of_ten_keep_their_significant_digits():
    """A posterior of 1 - 1e-16 read 'P(relevant) 1.00' beside 1.0 for a posterior of 1
    (two significant digits); 9.996 read 10.00."""
    from kofs.report.html import fmt

    assert fmt(1 - 1e-16, 2) == fmt(1.0, 2) == "1.0"
    assert fmt(9.996) == "10.0" and fmt(999.6) == "1,000" and fmt(-0.99999, 2) == "-1.0"
    assert fmt(0.0642) == "0.0642" and fmt(4.0) == "4.00" and fmt(0.0999, 2) == "0.10"


def test_the_answer_counts_genes_at_both_q_levels_it_names(tmp_path):
    """The answer counted genes at q <= 0.05 while the fusion's notices speak of q <= 0.10:
    it now gives both, each named, and the counts are those of ranking.tsv."""
    out = _rank(tmp_path, [])
    q = pd.read_csv(out / "ranking.tsv", sep="\t")["q_value"]
    page = (out / "report.html").read_text()
    answer = page[page.index("id='answer'") : page.index("</p>", page.index("id='answer'"))]
    n05, n10 = int((q <= 0.05).sum()), int((q <= 0.10).sum())
    assert f"{n05:,} genes have a q-value of at most 0.05, {n10:,} of at most 0.10." in answer
