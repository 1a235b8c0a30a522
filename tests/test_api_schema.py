"""``kofs.rank`` takes the options of the one schema (RunConfig): the same names as the YAML
keys and the long options, checked by their declarations, from keywords or ``config=``."""

from __future__ import annotations

import inspect
import logging

import numpy as np
import pytest

import kofs
from kofs.errors import ParameterError
from kofs.pipeline.config import all_options
from kofs.pipeline.rank import RANK_KEYWORDS

FAST = {"rankers": ["fisher", "variance"], "bootstrap": 0}


@pytest.fixture(scope="module")
def example():
    paths = kofs.example_paths()
    labels = kofs.read_labels(paths["labels"], label_column="lineage")
    expr = kofs.read_expression(paths["expression"], sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    return paths, expr, labels


def test_rank_declares_no_keyword_of_its_own():
    params = list(inspect.signature(kofs.rank).parameters.values())
    assert params[0].name == "data" and params[-1].kind is inspect.Parameter.VAR_KEYWORD
    named = {p.name for p in params[1:-1]}
    assert named == set(RANK_KEYWORDS)
    # every named keyword but the in-memory objects and the callback is an option of the schema
    assert named - {"sources", "config", "progress"} <= set(all_options())


@pytest.mark.parametrize(
    ("keyword", "hint"),
    [("params", "did you mean 'param'?"), ("aggregate_params", "did you mean 'aggregate_param'?"),
     ("bootstrp", "did you mean 'bootstrap'?"), ("key_added", "the keywords are")],
)  # fmt: skip
def test_an_unknown_keyword_is_one_error_naming_it(example, keyword, hint):
    _, expr, labels = example
    with pytest.raises(ParameterError) as err:
        kofs.rank(expr, labels=labels, **{keyword: 1})
    assert f"unknown keyword {keyword!r}" in str(err.value) and hint in str(err.value)
    assert "\n" not in str(err.value)


def test_values_are_checked_by_the_declarations(example):
    _, expr, labels = example
    for bad, what in [({"cross_fit": -1}, "--cross-fit"), ({"supervision": "gene"}, "none"),
                      ({"markers": "anova"}, "--markers"), ({"seed": "x"}, "--seed"),
                      ({"aggregate": "emm"}, "did you mean 'em'")]:  # fmt: skip
        with pytest.raises(ParameterError, match=what):
            kofs.rank(expr, labels=labels, **FAST, **bad)


@pytest.mark.slow
def test_config_and_overrides_mean_one_run(example, tmp_path):
    _, expr, labels = example
    ref = kofs.rank(expr, labels=labels, **FAST, aggregate="borda", seed=3)
    yaml = tmp_path / "run.yaml"
    yaml.write_text("rankers: fisher, variance\nbootstrap: 0\naggregate: em\nseed: 3\n")
    for config in (
        yaml,
        str(yaml),
        {"rankers": "fisher,variance", "bootstrap": 0, "seed": 3},
        kofs.RunConfig.from_mapping({"rankers": ["fisher", "variance"], "seed": 3}),
    ):
        got = kofs.rank(expr, labels=labels, config=config, aggregate="borda", bootstrap=0)
        np.testing.assert_array_equal(got.final.scores, ref.final.scores)
        assert got.settings == ref.settings
    # dash spellings are the same keys
    got = kofs.rank(expr, labels=labels, config={"aggregate-param": {"n_bins": 17}}, **FAST)
    assert got.settings["aggregate_params"]["n_bins"] == 17


def test_defaults_version_decides_the_aggregator(example):
    _, expr, labels = example
    assert (
        kofs.rank(expr, labels=labels, **FAST).final.method
        == kofs.RunConfig().aggregation.aggregate
    )
    assert kofs.rank(expr, labels=labels, **FAST, defaults="1").final.method == "em"
    with pytest.raises(ParameterError, match="defaults version '4' is retired"):
        kofs.rank(expr, labels=labels, **FAST, defaults="4")
    with pytest.raises(ParameterError, match="resolved under defaults version"):
        kofs.rank(expr, labels=labels, config=kofs.RunConfig(), defaults="1")


@pytest.mark.slow
def test_knowledge_files_as_options_equal_sources_read_first(example):
    paths, expr, labels = example
    files = {"go": paths["go"], "go_annotations": paths["go_annotations"]}
    opts = {"lists": ["GO-REL-VOTE", "Fisher"], "bootstrap": 0, "cross_fit": 0}
    by_files = kofs.rank(expr, labels=labels, relevant_genes=paths["relevant_genes"],
                         **files, **opts)  # fmt: skip
    sources = kofs.read_sources(**files)
    genes = kofs.read_gene_list(paths["relevant_genes"])
    read = kofs.rank(expr, labels=labels, sources=sources, relevant_genes=genes, **opts)
    assert [r.name for r in by_files.lists] == [r.name for r in read.lists]
    np.testing.assert_array_equal(by_files.final.scores, read.final.scores)
    assert by_files.settings["relevant_genes"] == len(set(genes) & set(expr.genes))
    with pytest.raises(ParameterError, match="knowledge given twice"):
        kofs.rank(expr, labels=labels, sources=sources, pathways=paths["pathways"], **opts)


@pytest.mark.slow
def test_rank_equals_run_of_the_same_config(example, tmp_path):
    paths, expr, labels = example
    cfg = {"expression": paths["expression"], "labels": paths["labels"],
           "label_column": "lineage", **FAST}  # fmt: skip
    ran = kofs.run(cfg)
    # the labels file of the config is read (its label column applies)
    ranked = kofs.rank(ran.expression, config=cfg)
    np.testing.assert_array_equal(ranked.final.scores, ran.final.scores)
    assert ranked.labels.labels == ran.labels.labels


def test_options_a_matrix_in_memory_cannot_use_are_named(example, caplog):
    _, expr, labels = example
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(expr, labels=labels, **FAST, aggregate="borda")
    assert "ignored" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(expr, labels=labels, **FAST, aggregate="borda", output="x", decimal=",")
    (line,) = [ln for ln in caplog.text.splitlines() if "ignored" in ln]
    assert "decimal, output ignored" in line


def test_one_default_aggregator_under_one_key_everywhere():
    from kofs.aggregate import aggregate
    from kofs.options import options_of
    from kofs.pipeline.user_lists import aggregate_lists
    from kofs.pipeline.user_lists_config import AggregateListsConfig
    from kofs.registry import DEFAULT_AGGREGATOR

    rank_option = all_options()["aggregate"][1]
    list_option = {o.name: o for o in options_of(AggregateListsConfig)}["aggregate"]
    assert rank_option.default == list_option.default == DEFAULT_AGGREGATOR
    assert kofs.RunConfig().aggregation.aggregate == AggregateListsConfig().aggregate
    assert inspect.signature(aggregate).parameters["method"].default == DEFAULT_AGGREGATOR
    signature = inspect.signature(aggregate_lists).parameters
    assert signature["aggregate"].default == DEFAULT_AGGREGATOR and "aggregate_param" in signature
    assert {o.name for o in options_of(AggregateListsConfig)} >= {"aggregate", "aggregate_param"}
