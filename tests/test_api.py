"""The public Python API: every exported name resolves; a run without the CLI."""

from __future__ import annotations

import importlib.metadata
import logging

import numpy as np
import pytest

import kofs


def test_every_public_name_resolves():
    for name in kofs.__all__:
        assert getattr(kofs, name) is not None


def test_registries_are_populated_on_first_access(python_process):
    code = "import kofs; print(len(kofs.RANKERS) > 5, len(kofs.AGGREGATORS) > 1)"
    out = python_process.run("-c", code, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_rank_from_python_on_the_example():
    paths = kofs.example_paths()
    labels = kofs.read_labels(paths["labels"], label_column="lineage")
    expr = kofs.read_expression(paths["expression"], sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    res = kofs.rank(expr, labels=labels, rankers=["fisher", "variance"], aggregate="borda")
    assert [r.name for r in res.lists] == ["fisher", "variance"]
    assert res.final.weights is None
    assert res.final.ranks.min() == 1 and np.isfinite(res.final.scores).all()
    single = kofs.run_ranker("fisher", expr, kofs.RankerInputs(categories=labels))
    assert single.top(1) == [res.lists[0].top(1)[0]]


def test_a_ranker_the_catalogue_runs_on_the_same_data_runs_once(caplog):
    """``--rankers fisher`` beside knowledge sources: the catalogue's Fisher list is that ranker
    on the same labels; a second copy would count its evidence twice in ``borda``."""
    paths = kofs.example_paths()
    labels = kofs.read_labels(paths["labels"], label_column="lineage")
    expr = kofs.read_expression(paths["expression"], sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        res = kofs.rank(
            expr, labels=labels, pathways=paths["pathways"], rankers=["fisher", "variance"],
            aggregate="borda",
        )  # fmt: skip
    names = [r.name for r in res.lists]
    assert "Fisher" in names and "fisher" not in names and "variance" in names
    assert "catalogue list Fisher is that ranker" in caplog.text


def test_aggregation_function_survives_the_subpackage_import():
    kofs.rank  # noqa: B018  (imports kofs.aggregate, the subpackage)
    assert callable(kofs.aggregate_rankings)
    paths = kofs.example_paths()
    expr = kofs.read_expression(paths["expression"])
    fused = kofs.aggregate_rankings(
        [kofs.run_ranker("variance", expr), kofs.run_ranker("laplacian", expr)], "borda"
    )
    assert fused.method == "borda" and len(fused.genes) == expr.n_genes


def test_version_matches_package_metadata():
    meta = importlib.metadata.version("kofs")
    assert meta == kofs.__version__


def test_types_do_not_freeze_the_callers_arrays():
    X = np.arange(12, dtype=np.float64).reshape(3, 4)
    expr = kofs.Expression(X, list("abcd"), ["s1", "s2", "s3"])
    assert X.flags.writeable and not expr.values.flags.writeable
    scores = np.array([1.0, 2.0, np.nan, 0.5])
    r = kofs.Ranking("x", list("abcd"), scores, higher_is_better=True)
    assert scores.flags.writeable and not r.scores.flags.writeable
    assert list(r.ranks) == [2.0, 1.0, 4.0, 3.0]


def test_rank_accepts_labels_as_an_array_like():
    """``kofs.rank(X, labels=...)`` takes a list, an array or a pandas Series (positional, or
    aligned by index), and refuses a wrong length with one clear line."""
    import pandas as pd

    from kofs.errors import ParameterError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 6))
    X[:6, 0] += 4.0  # gene0 separates the classes
    y = ["a"] * 6 + ["b"] * 6
    opts = {"rankers": ["fisher"], "bootstrap": 0}
    ref = kofs.rank(X, labels=y, **opts).final
    assert ref.top(1) == ["gene0"]
    np.testing.assert_array_equal(kofs.rank(X, labels=np.array(y), **opts).final.scores, ref.scores)
    # a Series with sample ids as index is aligned by it, not by position
    df = pd.DataFrame(X, index=[f"s{i}" for i in range(12)])
    df.columns = [f"g{j}" for j in range(6)]
    shuffled = pd.Series(y, index=df.index)[::-1]
    by_index = kofs.rank(df, labels=shuffled, **opts).final
    assert by_index.top(1) == ["g0"]
    with pytest.raises(ParameterError, match="labels have 5 values but the matrix has 12"):
        kofs.rank(X, labels=y[:5], **opts)
    with pytest.raises(ParameterError, match="not in the labels' index"):
        kofs.rank(df, labels=pd.Series(y, index=[f"x{i}" for i in range(12)]), **opts)
    with pytest.raises(ParameterError, match="repeats sample ids"):
        kofs.rank(df, labels=pd.Series(y + ["a"], index=[*df.index, "s0"]), **opts)
    # was "got an array of shape (12, 1)"
    with pytest.raises(ParameterError, match=r"got a DataFrame \(12 x 1\); .* e.g. df\['cls'\]"):
        kofs.rank(df, labels=pd.DataFrame({"cls": y}, index=df.index), **opts)


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        # complex values lost their imaginary part, booleans were counts
        (lambda X: kofs.rank(X.astype(complex)), "InputError", "real numbers, got dtype complex"),
        (lambda X: kofs.rank(X > 0), "InputError", "real numbers, got dtype bool"),
        (
            lambda X: kofs.rank(__import__("pandas").DataFrame(X.astype(complex))),
            "InputError",
            "hold complex128 values, not real numbers",
        ),
        # each was a TypeError or an AttributeError from inside kofs
        (lambda X: kofs.run_ranker("variance", X), "ParameterError", "ranks a kofs.Expression"),
        (lambda X: kofs.rank(X, relevant_genes=5), "ParameterError", "relevant_genes: give"),
        (lambda X: kofs.rank(X, config=[1, 2]), "ParameterError", "config: give a RunConfig"),
        (lambda X: kofs.aggregate_lists(None), "ParameterError", "not a NoneType"),
        (lambda X: kofs.aggregate_rankings(["a", "b"]), "ParameterError", "got a str"),
        (lambda X: kofs.read_labels(None), "ParameterError", "expected a file's path"),
        # the message began "has 1 sample(s)", naming nothing
        (lambda X: kofs.rank(X[:1]), "InputError", "^the matrix has 1 sample\\(s\\); at least 2"),
    ],
)
def test_wrong_types_are_kofs_errors_that_say_what_to_give(call, error, needle):
    X = np.random.default_rng(0).normal(size=(8, 5))
    with pytest.raises(kofs.KofsError, match=needle) as info:
        call(X)
    assert type(info.value).__name__ == error


def test_aggregate_lists_takes_one_file_or_one_table(tmp_path):
    import pandas as pd

    gmt = tmp_path / "sets.gmt"  # one file, two gene sets: two lists
    gmt.write_text("S1\tna\tA\tB\tC\nS2\tna\tB\tA\tD\n")
    fused = kofs.aggregate_lists(str(gmt), aggregate="borda")
    assert [r.name for r in fused.lists] == ["S1", "S2"]
    table = pd.DataFrame({"gene": list("ABCD"), "pvalue": [0.01, 0.2, 0.5, 0.9]})
    one = kofs.aggregate_lists(table, score_column="pvalue", direction="asc", aggregate="borda")
    assert one.final.genes[:1] == ("A",)


def test_ids_with_tabs_or_line_breaks_are_refused():
    """A gene id "A<TAB>B" from an .h5ad or a 10x file broke ranking.tsv into rows of 1 and
    10 fields."""
    X = np.random.default_rng(0).normal(size=(4, 3))
    for bad in ("A\tB", "C\nD", "E\rF"):
        with pytest.raises(kofs.KofsError, match="holds a tab or a line break"):
            kofs.Expression(X, ["g1", bad, "g3"], ["s1", "s2", "s3", "s4"])
    with pytest.raises(kofs.KofsError, match="sample id 's\\\\t2' holds a tab"):
        kofs.Expression(X, ["g1", "g2", "g3"], ["s1", "s\t2", "s3", "s4"])


def test_classes_of_one_sample_each_are_refused():
    """Every Fisher score was infinite and every gene tied at rank 25.5, as a normal result."""
    X = np.random.default_rng(1).normal(size=(20, 50))
    with pytest.raises(kofs.KofsError, match="every class of labels .* has a single sample"):
        kofs.rank(X[:2], labels=["a", "b"])
    with pytest.raises(ValueError, match="has a single sample"):
        kofs.GeneSelector("fisher", n_features=3).fit(X, np.arange(20))


def _two_rankings() -> list:
    g = tuple(f"G{i}" for i in range(30))
    rng = np.random.default_rng(2)
    return [kofs.Ranking(n, g, rng.normal(size=30), True) for n in "ab"]


@pytest.mark.parametrize(
    "weights",
    [{"zzz": 1.0}, {"a": float("nan"), "b": 1.0}, {"a": 0, "b": 0}, {"a": -1.0, "b": 1.0}],
)
def test_list_weights_that_would_be_ignored_are_refused(weights):
    with pytest.raises(kofs.KofsError, match="list_weights"):
        kofs.aggregate_rankings(_two_rankings(), list_weights=weights)


@pytest.mark.parametrize(
    ("value", "ok"), [(2.0, True), ("1e1", True), (0.5, False), (True, False), (10**9, False)]
)
def test_integer_parameters_take_whole_numbers_only(value, ok):
    """resamples=0.5 ran as 0, k=True as 1; resamples=1e9 had no bound (years of refits)."""
    from kofs.registry import resolve_params

    spec = kofs.AGGREGATORS.get("posterior").params
    if ok:
        assert resolve_params("p", spec, {"resamples": value})["resamples"] == int(float(value))
    else:
        with pytest.raises(kofs.KofsError, match="parameter 'resamples' must be an int"):
            resolve_params("p", spec, {"resamples": value})


@pytest.mark.parametrize(
    "reader",
    ["read_obo", "read_go_annotations", "read_pathways", "read_interactions",
     "read_ranked_lists", "read_run_config"],
)  # fmt: skip
def test_readers_given_no_path_say_so(reader):
    """Each was a TypeError from inside pathlib ("expected str, bytes or os.PathLike object,
    not NoneType")."""
    with pytest.raises(kofs.KofsError, match=f"{reader}: expected a file's path"):
        getattr(kofs, reader)(None)


def test_secondary_keywords_of_the_public_functions_are_checked():
    """Each was an AttributeError or a TypeError from inside kofs: a cache or progress that is
    not one, threads given as text, evidence codes given as a number, GO objects swapped."""
    ex = kofs.example_paths()
    ontology, annotations = kofs.read_obo(ex["go"]), kofs.read_go_annotations(ex["go_annotations"])
    X = np.random.default_rng(0).normal(size=(8, 5))
    calls = [
        (lambda: kofs.read_obo(ex["go"], cache="x"), "read_obo: cache must be"),
        (lambda: kofs.read_obo(ex["go"], progress=1), "read_obo: progress must be"),
        (lambda: kofs.read_go_annotations(ex["go_annotations"], cache="x"), "cache must be"),
        (lambda: kofs.read_go_annotations(ex["go_annotations"], evidence=1), "evidence codes"),
        (
            lambda: kofs.read_go_annotations(ex["go_annotations"], ontology=ex["go"]),
            "read_go_annotations: ontology must be what kofs.read_obo",
        ),
        (lambda: kofs.read_expression(ex["expression"], threads="4"), "threads must be"),
        (lambda: kofs.rank(X, progress=1), "rank: progress must be"),
        (lambda: kofs.gene_similarity(annotations, ontology, ["A"]), "ontology must be"),
        (lambda: kofs.gene_similarity(ontology, None, ["A"]), "annotations must be"),
        (lambda: kofs.gene_similarity(ontology, annotations, None), "give a list of gene ids"),
        (lambda: kofs.gene_similarity(ontology, annotations, ["A"], semantics="x"), "GOSemantics"),
        (lambda: kofs.gene_similarity(ontology, annotations, ["A"], dtype="x"), "numpy dtype"),
        (lambda: kofs.gene_similarity(ontology, annotations, ["A"], max_memory="x"), "a size"),
    ]
    for call, needle in calls:
        with pytest.raises(kofs.KofsError, match=needle):
            call()


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        # each was Python's TypeError ("got an unexpected keyword argument", "takes 1
        # positional argument but 2 were given"); kofs.rank's keywords were checked already
        (lambda: kofs.aggregate_lists([["A"]], aggregat="rra"),
         "aggregate_lists: unknown keyword 'aggregat' \\(did you mean 'aggregate'\\?\\)"),
        (lambda: kofs.aggregate_lists([["A"]], "rra"),
         "aggregate_lists: takes 1 argument\\(s\\) by position \\(lists\\), got 2; give the "
         "others by name \\(aggregate=, aggregate_param=, universe=, ...\\)"),
        (lambda: kofs.read_labels("x.tsv", label_col="y"), "did you mean 'label_column'"),
        (lambda: kofs.read_expression("x.tsv", sample_id=["a"]), "did you mean 'sample_ids'"),
        (lambda: kofs.aggregate_rankings(_two_rankings(), "em", param={}),
         "did you mean 'params'"),
        (lambda: kofs.run_ranker("variance", None, seeed=1), "did you mean 'seed'"),
        (lambda: kofs.read_run_config("a.yaml", "b.yaml"), "takes 1 argument\\(s\\) by position"),
        (lambda: kofs.gene_similarity(None, None, ["A"], xyz=1), "keywords: ontology, "),
    ],
)  # fmt: skip
def test_keywords_of_the_public_functions_are_checked_as_kofs_rank_s(call, needle):
    with pytest.raises(kofs.errors.ParameterError, match=needle):
        call()


@pytest.mark.parametrize("kw", [{"seed": -1}, {"bootstrap": "x"}, {"bootstrap": -1}])
def test_aggregate_rankings_checks_its_seed_and_bootstrap(kw):
    """seed=-1 was numpy's "expected non-negative integer"; bootstrap="x" and -1 were taken."""
    with pytest.raises(kofs.KofsError, match="must be an integer in"):
        kofs.aggregate_rankings(_two_rankings(), "em", **kw)


def test_integers_beyond_float_precision_are_named():
    """int64 values near their maximum became one float each: "all 50 genes are constant"."""
    rng = np.random.default_rng(0)
    X = np.iinfo(np.int64).max - rng.integers(0, 1000, (20, 50))
    with pytest.raises(kofs.KofsError, match="lose their differences as floating-point"):
        kofs.rank(X)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        # each was an AttributeError, TypeError or numpy's ValueError from inside kofs
        (lambda: kofs.aggregate_rankings(_two_rankings(), covariates=[1, 2]),
         "covariates: give a mapping"),
        (lambda: kofs.aggregate_rankings(_two_rankings(), covariates={"c": {"G0": "x"}}),
         "'c' holds a value that is not a number"),
        (lambda: kofs.aggregate_rankings(_two_rankings(), built_from={"a": ["G0"]},
                                         held_out={"a": [1, 2]}),
         "held_out\\['a'\\]: give a sequence of"),
        (lambda: kofs.aggregate_rankings(_two_rankings(), list_weights={"a": 1, "b": 1},
                                         list_weight_replicates={"a": [1, 2], "b": [1]}),
         "the same number of replicates"),
        (lambda: kofs.aggregate_lists([["A", "B"], ["B", "A"]], aggregate_param=[1]),
         "give its parameters as a mapping"),
        (lambda: kofs.RunConfig.from_mapping([("expression", "x")]),
         "a run config is a mapping"),
        (lambda: kofs.AggregateListsConfig.from_mapping([("aggregate", "rra")]),
         "aggregate settings are a mapping"),
        (lambda: kofs.AggregateListsConfig.from_mapping({1: 2}), "unknown aggregate setting '1'"),
        (lambda: kofs.write_result(None), "write_result writes the result of kofs.run"),
        (lambda: kofs.read_sources(123), "read_sources takes a RunConfig, a mapping"),
        (lambda: kofs.sample_similarity(np.zeros((3, 3))),
         "sample_similarity takes a kofs.Expression"),
    ],
)  # fmt: skip
def test_low_level_keywords_of_the_wrong_shape_are_parameter_errors(call, needle):
    with pytest.raises(kofs.KofsError, match=needle):
        call()


@pytest.mark.parametrize(
    ("reader", "kw"),
    [("read_expression", {"gene_column": 0}), ("read_labels", {"label_column": 1}),
     ("read_gene_list", {"column": 5}), ("read_ranked_lists", {"gene_column": 0}),
     ("read_ranked_lists", {"column": 2}), ("aggregate_lists", {"score_column": ("padj",)})],
)  # fmt: skip
def test_column_options_name_columns(reader, kw):
    """A column by number was AttributeError: 'int' object has no attribute 'lower' (in
    read_ranked_lists and aggregate_lists once a table was read)."""
    paths = kofs.example_paths()
    path = {"read_expression": "expression", "read_labels": "labels"}.get(reader, "relevant_genes")
    with pytest.raises(kofs.KofsError, match="name the column by its header text"):
        getattr(kofs, reader)(paths[path], **kw)


def test_read_sources_takes_its_options_as_one_mapping():
    """A mapping was an AttributeError (... has no attribute 'knowledge'); kofs.rank's config=
    takes one."""
    paths = kofs.example_paths()
    assert kofs.read_sources({"pathways": paths["pathways"]}).provided() == {"pathways"}


def test_run_refuses_a_missing_input_file_before_any_work(tmp_path, monkeypatch):
    """kofs.run with a missing file that an ignored option names (string_aliases beside an
    edge list) ranked everything, then write_result failed on its checksum; now refused first,
    naming the option, as kofs rank and kofs run do."""
    import kofs.pipeline.run
    from kofs.errors import InputError

    def no_load(*a, **k):
        raise AssertionError("read the inputs before checking that they exist")

    monkeypatch.setattr(kofs.pipeline.run, "load_inputs", no_load)
    p = kofs.example_paths()
    missing = tmp_path / "nope.txt"
    config = {"expression": p["expression"], "pathways": p["pathways"],
              "interactions": p["interactions"], "string_aliases": str(missing),
              "output": str(tmp_path / "out")}  # fmt: skip
    with pytest.raises(InputError, match="nope.txt: file not found; check the path "
                       r"\(--string-aliases\)"):  # fmt: skip
        kofs.run(config)
    assert not (tmp_path / "out").exists()
