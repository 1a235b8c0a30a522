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
