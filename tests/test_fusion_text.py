"""Plain words for a fusion (kofs.report.fusion): read generically from the result, with one
entry per method for what only that method says."""

from __future__ import annotations

import numpy as np
import pytest

from kofs.report.fusion import METHOD_TEXT, describe_fusion, statistic_label
from kofs.report.run import run_report_html
from kofs.types import AggregateRanking

GENES = tuple(f"g{j}" for j in range(6))
R = np.column_stack([np.arange(1.0, 7), np.arange(6.0, 0, -1), np.arange(1.0, 7)])


def _final(method="newmodel", weights=(0.6, 0.4, 0.0), **kw):
    return AggregateRanking(
        method, GENES, -np.arange(6.0), ("a", "b", "c"), R, np.array(weights), **kw
    )


def test_a_new_method_is_described_from_its_result_alone():
    final = _final(
        statistics={
            "lfdr": np.linspace(0, 1, 6),
            "q_value": np.linspace(0, 0.5, 6),
            "posterior": np.linspace(1, 0, 6),
            "my_stat": np.zeros(6),
        },
        diagnostics={
            "supervision": "none",
            "list_reliability": {"a": "reliable", "b": "weakly reliable", "c": "unreliable"},
            "list_notes": {"c": "ranks the genes at random"},
            "notices": ["Two lists disagree; check their inputs."],
            "weight_ci": [[0.5, 0.7], [0.3, 0.5], [0.0, 0.05]],
        },
    )
    assert "newmodel" not in METHOD_TEXT
    text = describe_fusion(final)
    assert [k for k, *_ in text.statistics] == ["q_value", "lfdr", "posterior", "my_stat"]
    assert statistic_label("my_stat") == "my stat"
    assert text.reliability["b"] == "weakly reliable" and text.list_notes["c"].startswith("ranks")
    assert text.notices == ["Two lists disagree; check their inputs."]
    assert "agrees with the other lists" in text.supervision
    page = run_report_html_from(final)
    assert "<th>q-value</th>" in page and "<th>local fdr</th>" in page
    assert page.index("Two lists disagree") < page.index("id='top-genes'")
    assert "weakly reliable" in page and "0.500 – 0.700" in page


def run_report_html_from(final):
    from kofs.pipeline.result import RunResult
    from kofs.types import Expression

    rng = np.random.default_rng(0)
    expr = Expression(rng.normal(size=(5, 6)), GENES, [f"s{i}" for i in range(5)])
    return run_report_html(RunResult(expr, final, (), (), {}, {}))


def test_a_method_without_weights_is_not_said_to_weigh_lists():
    """borda and rra read 'Unsupervised: a list weighs more when it agrees with the other
    lists.' above 'The aggregation borda gives the lists no weights: each counts the same.'"""
    final = AggregateRanking(
        "borda", GENES, -np.arange(6.0), ("a", "b", "c"), R, None,
        diagnostics={"supervision": "none"},
    )  # fmt: skip
    assert describe_fusion(final).supervision == ""
    page = run_report_html_from(final)
    assert "Unsupervised" not in page and "gives the lists no weights" in page


def test_a_list_without_weight_gets_a_reason():
    text = describe_fusion(_final("borda"))
    assert text.list_notes["c"].startswith("no say in the fused ranking")
    # a weight shown as 0.008 is not 'no say' (ALL with every source: GO-REL-VOTE, 0.009)
    text = describe_fusion(_final("borda", weights=(0.6, 0.392, 0.008)))
    assert text.list_notes["c"].startswith("almost no say in the fused ranking (weight below 0.01)")
    rule = {
        "reliability": {"a": 1.0, "b": 0.98, "c": 0.6},
        "p_best": {"a": 0.6, "b": 0.4, "c": 0.0},
    }
    text = describe_fusion(_final("posterior", diagnostics={"label_reliability": rule}))
    assert "0.60 on a scale from chance (0) to perfect (1)" in text.reliability["c"]
    assert "most predictive list in 40 % of resamples" in text.reliability["b"]
    assert text.list_notes["c"].startswith("no say")


@pytest.mark.slow
def test_the_demo_explains_itself_in_plain_words(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    r = CliRunner().invoke(main, ["demo", "-o", str(tmp_path / "demo")])
    assert r.exit_code == 0, r.output
    warnings = [ln for ln in r.output.splitlines() if "WARNING" in ln]
    assert len(warnings) <= 1, warnings
    for line in warnings:  # one plain sentence, with what to do; no test statistics
        assert "nats" not in line and "chi2" not in line and line.count(". ") == 0


def test_a_reliable_list_without_weight_is_told_why_when_the_fit_says_so():
    """Pathway-FILT of the demo ranks relevant genes above the others with probability 0.78,
    yet has weight 0, and read 'no say in the fused ranking' with no reason. The fit's reason:
    given Fisher and GO-MAH, whose scores its own are correlated with, its coefficient in the
    fused evidence (S^-1 mu) is negative. The demo's fit (mu, S) gives that note; independent
    lists give none (the reason is not invented)."""
    from types import SimpleNamespace

    from kofs.aggregate.relevance import _explained_note

    names = ["Fisher", "GO-MAH", "Pathway-FILT"]
    S = np.array([[1.0, 0.551, 0.588], [0.551, 1.0, 0.924], [0.588, 0.924, 1.0]])
    fit = SimpleNamespace(mu=np.array([4.87, 0.913, 1.07]), correlation=S, tempering=np.ones(3))
    weights = np.array([0.97, 0.0, 0.0])
    note = _explained_note(fit, 2, names, weights)
    assert note.startswith("no say: alone it separates the relevant genes")
    assert "GO-MAH (0.92), Fisher (0.59)" in note and "the weight goes to Fisher" in note
    assert _explained_note(fit, 0, names, weights) == ""  # Fisher's coefficient is positive
    independent = SimpleNamespace(mu=fit.mu, correlation=np.eye(3), tempering=np.ones(3))
    assert _explained_note(independent, 2, names, weights) == ""
    # the note reaches the report's words, where the generic 'no say' gave no reason
    final = _final("posterior", weights=(0.97, 0.03, 0.0), diagnostics={"list_notes": {"c": note}})
    assert describe_fusion(final).list_notes["c"] == note
