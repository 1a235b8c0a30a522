"""Split-half known genes (issue 20): knowledge built from a seed part of a known set is scored
on the held-out part, against the reference list and a random-seed null; nothing built or
fitted ever sees a held-out gene."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from _report_check import check_report
from click.testing import CliRunner
from conftest import needs_shared
from scipy.stats import rankdata

from kofs.cli import main
from kofs.context import Context
from kofs.errors import ParameterError
from kofs.evaluate import Aggregation, KofsRanking, SplitHalf, read_known_genes, split_half
from kofs.evaluate.reproduce import run_experiment
from kofs.evaluate.split import check_split, null_gene_sets, resolve_reference, split_known
from kofs.types import Expression

REPO = Path(__file__).resolve().parents[1]
M = 400
GENES = [f"g{i:03d}" for i in range(M)]
KNOWN = GENES[:60]
#: the first 30 known genes and the other 30 come in pairs: knowledge of one names the other
PARTNER = {GENES[i]: GENES[i + 30] for i in range(30)} | {
    GENES[i + 30]: GENES[i] for i in range(30)
}
LISTS = {"Fisher": ("data", "fisher"), "KN": ("knowledge", None), "FUSED": ("aggregation", None)}


def _world(informative: bool = True):
    """A data list with a weak known-gene signal, a knowledge list that puts its seeds and
    (when informative) their partners on top, their sum; records every gene set it gets."""
    noise = np.random.default_rng(7).normal(size=M)
    data = noise + 0.8 * np.isin(GENES, KNOWN)
    seen = []

    def build(sets, null):
        seen.append((null, {k: tuple(v) for k, v in sets.items()}))
        kn = np.random.default_rng(len(seen)).normal(scale=0.1, size=M)
        for g in sets["seeds"]:
            kn[GENES.index(g)] += 5
            if informative and g in PARTNER:
                kn[GENES.index(PARTNER[g])] += 3
        return {"Fisher": rankdata(-data), "KN": rankdata(-kn), "FUSED": rankdata(-(data + kn))}

    return build, seen


def _run(build, **kw):
    settings = SplitHalf("known", **{"repeats": 4, "null_repeats": 9, **kw})
    return split_half(
        build, KNOWN, genes=GENES, gene_sets={"seeds": KNOWN}, settings=settings, lists=LISTS
    )


def test_split_known_partitions_the_set_and_ignores_its_order():
    seed, held = split_known(KNOWN, fraction=0.5, seed=3, repeat=0)
    assert sorted(seed + held) == sorted(KNOWN) and len(held) == 30 and not set(seed) & set(held)
    assert split_known(KNOWN[::-1], fraction=0.5, seed=3, repeat=0) == (seed, held)
    assert split_known(KNOWN, fraction=0.5, seed=3, repeat=1) != (seed, held)
    assert split_known(KNOWN, fraction=0.5, seed=4, repeat=0) != (seed, held)
    assert len(split_known(KNOWN, fraction=0.2, seed=0, repeat=0)[1]) == 12
    # at least one gene on each side
    assert [len(p) for p in split_known(KNOWN[:2], fraction=0.01, seed=0, repeat=0)] == [1, 1]
    with pytest.raises(ParameterError, match="at least 2"):
        split_known(KNOWN[:1], fraction=0.5, seed=0, repeat=0)


def test_null_gene_sets_keep_sizes_and_overlaps_and_avoid_the_known_set():
    held = KNOWN[:30]
    sets = {"seeds": KNOWN + GENES[100:110], "supervision": KNOWN[40:50]}
    pool = [g for g in GENES if g not in KNOWN]
    a = null_gene_sets(sets, held, pool=pool, seed=0, draw=0)
    assert len(a["seeds"]) == 40 and len(a["supervision"]) == 10
    assert set(a["supervision"]) <= set(a["seeds"])  # nested sets stay nested
    assert not (set(a["seeds"]) & set(KNOWN))
    assert a == null_gene_sets(sets, held, pool=pool[::-1], seed=0, draw=0)
    assert a != null_gene_sets(sets, held, pool=pool, seed=0, draw=1)
    with pytest.raises(ParameterError, match="only 5 genes"):
        null_gene_sets(sets, held, pool=pool[:5], seed=0, draw=0)


def test_build_never_gets_a_held_out_gene_and_the_null_nothing_of_the_known_set():
    build, seen = _world()
    res = _run(build)
    helds = [split_known(KNOWN, fraction=0.5, seed=0, repeat=r)[1] for r in range(4)]
    splits = [s for null, s in seen if not null]
    nulls = [s for null, s in seen if null]
    assert len(splits) == 4 and len(nulls) == 9
    for s, held in zip(splits, helds, strict=True):
        assert sorted(s["seeds"]) == sorted(set(KNOWN) - set(held))
    for s in nulls:
        assert len(s["seeds"]) == 30 and not set(s["seeds"]) & set(KNOWN)
    draws = res.draws
    null = draws[draws["draw"] == "null"]
    assert sorted(set(null["split"])) == [0, 1, 2, 3]  # draw j scored on repeat j mod R
    assert res.settings["n_seed"] == 30 and res.settings["n_held_out"] == 30


def test_informative_knowledge_beats_reference_and_null_uninformative_does_not():
    res = _run(_world(informative=True)[0]).at(50).set_index("list")
    assert res.loc["KN", "recovered"] > res.loc["Fisher", "recovered"] + 5
    assert res.loc["KN", "diff_null"] > 10 and res.loc["KN", "p_null"] == pytest.approx(0.1)
    assert res.loc["Fisher", "diff_reference"] == 0 and res.loc["Fisher", "reference"] == "Fisher"
    assert res.loc["KN", "best_data"] == "Fisher"
    assert res.loc["KN", "diff_reference"] == pytest.approx(
        res.loc["KN", "recovered"] - res.loc["Fisher", "recovered"]
    )
    # a data list ignores the seeds: the null is itself
    assert res.loc["Fisher", "null"] == pytest.approx(res.loc["Fisher", "recovered"], abs=1)
    flat = _run(_world(informative=False)[0]).at(50).set_index("list")
    # its seeds fill its top 30 and nothing else of the known set follows them
    assert flat.loc["KN", "recovered"] < 3 and flat.loc["KN", "p_null"] >= 0.2
    assert flat.loc["KN", "fraction"] == pytest.approx(flat.loc["KN", "recovered"] / 30)


def test_split_half_is_deterministic_and_seeded():
    a, b = _run(_world()[0]), _run(_world()[0])
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.draws, b.draws)
    c = _run(_world()[0], seed=1)
    assert not c.draws["recovered"].equals(a.draws["recovered"])


def test_tied_genes_enter_a_top_k_by_id_not_by_position():
    """A list of ties (a knowledge list whose seeds and the rest share ranks): the held-out
    genes it recovers do not depend on the order of ``genes`` (they followed the position)."""

    def run(genes):
        def build(sets, null):
            seeds = set(sets["seeds"])
            return {n: np.array([1.0 if g in seeds else 200.0 for g in genes]) for n in LISTS}

        settings = SplitHalf("known", repeats=2, null_repeats=2)
        return split_half(
            build, KNOWN, genes=genes, gene_sets={"seeds": KNOWN}, settings=settings, lists=LISTS
        ).draws

    a = run(GENES)
    pd.testing.assert_frame_equal(a, run(GENES[::-1]))
    pd.testing.assert_frame_equal(a, run(list(np.random.default_rng(1).permutation(GENES))))


def test_a_list_the_null_cannot_build_is_counted_not_fatal():
    build, _ = _world()

    def partial(sets, null):
        out = dict(build(sets, null))
        if null:
            out.pop("KN")
        return out

    t = _run(partial).at(50).set_index("list")
    assert t.loc["KN", "null_draws"] == 0 and np.isnan(t.loc["KN", "p_null"])
    assert t.loc["FUSED", "null_draws"] == 9


def test_settings_are_checked_in_one_line():
    for kw, match in (
        ({"fraction": 1.0}, "between 0 and 1"),
        ({"fraction": 0}, "between 0 and 1"),
        ({"repeats": 0}, "repeats"),
        ({"null_repeats": -1}, "null repeats"),
        ({"top": (0, 10)}, "positive"),
    ):
        with pytest.raises(ParameterError, match=match) as exc:
            SplitHalf("x", **kw)
        assert "\n" not in str(exc.value)
    assert SplitHalf("x", top=(50, 10, 10)).top == (10, 50)
    with pytest.raises(ParameterError, match="1 genes in the matrix"):
        check_split(SplitHalf("x"), ["g1"], 100)
    with pytest.raises(ParameterError, match="matrix has 50"):
        check_split(SplitHalf("x"), ["g1", "g2"], 50)
    with pytest.raises(ParameterError, match="not an evaluated list; choose from Fisher, KN"):
        resolve_reference(SplitHalf("x", reference="fisher"), LISTS)
    assert resolve_reference(SplitHalf("x"), LISTS) == "Fisher"
    assert resolve_reference(SplitHalf("x"), {"KN": ("knowledge", None)}) is None


def test_shared_knowledge_built_from_known_genes_stays_seeded_when_reused():
    expr = Expression(np.zeros((3, 4)), GENES[:4], ["s1", "s2", "s3"])
    shared: dict = {}

    def build(ctx):
        def make():
            ctx.note_relevant_use()
            return ctx.relevant_genes

        return ctx.cached("rel", make, gene_level=True)

    first = Context(expression=expr, relevant_genes=("g000",), shared=shared)
    build(first)
    again = Context(expression=expr, relevant_genes=("g000",), shared=shared)
    assert build(again) == ("g000",) and "rel" in again.seeded_keys
    assert "rel" not in again.reseeded(()).cache  # a fold of the cross-fit rebuilds it
    # knowledge that never used the known genes is reused with other known genes
    calls = []
    plain = Context(expression=expr, relevant_genes=("g000",), shared=shared)
    plain.cached("graph", lambda: calls.append(1) or "G", gene_level=True)
    other = Context(expression=expr, relevant_genes=("g001",), shared=shared)
    assert other.cached("graph", lambda: calls.append(1) or "H", gene_level=True) == "G"
    assert build(other) == ("g001",) and calls == [1]
    # ... but not by a run without known genes (its builders may take another path)
    none = Context(expression=expr, shared=shared)
    assert none.cached("graph", lambda: "N", gene_level=True) == "N"


# --- the catalogue: KofsRanking, kofs reproduce and kofs evaluate on a small planted world ----


def _files(tmp_path: Path) -> dict[str, str]:
    """200 genes x 24 samples (2 classes), 16 pathways: 4 made of known genes, 12 of others;
    10 known genes and 10 others carry the class signal."""
    rng = np.random.default_rng(1)
    m, n = 200, 24
    genes = [f"G{i:03d}" for i in range(m)]
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, m))
    X[:, list(range(0, 10)) + list(range(100, 110))] += 1.5 * (y == "b")[:, None]
    samples = [f"s{i:02d}" for i in range(n)]
    expr = pd.DataFrame(X.T, index=pd.Index(genes, name="gene"), columns=samples)
    expr.to_csv(tmp_path / "expr.tsv", sep="\t", float_format="%.5f")
    pd.DataFrame({"sample": samples, "class": y}).to_csv(
        tmp_path / "labels.tsv", sep="\t", index=False
    )
    known = genes[:40]
    sets = [genes[i : i + 10] for i in range(0, 40, 10)]
    sets += [list(rng.choice(genes[40:], 10, replace=False)) for _ in range(12)]
    (tmp_path / "paths.gmt").write_text(
        "".join(f"P{i}\tna\t" + "\t".join(s) + "\n" for i, s in enumerate(sets))
    )
    (tmp_path / "known.txt").write_text("\n".join(known) + "\n")
    return {k: str(tmp_path / f) for k, f in (("expression", "expr.tsv"),
            ("labels", "labels.tsv"), ("pathways", "paths.gmt"), ("known", "known.txt"))}  # fmt: skip


def test_kofs_ranking_split_half_on_planted_pathways(tmp_path):
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels
    from kofs.sources import read_sources

    f = _files(tmp_path)
    lab = read_labels(f["labels"])
    expr, lab = align_labels(read_expression(f["expression"]), lab)
    known = read_known_genes("known", f["known"])
    kofs = KofsRanking(
        read_sources(pathways=f["pathways"]),
        ["SPEC", "Fisher", "Pathway-FILT", "Pathway-REL-VOTE"],
        [Aggregation("Sup", "em", known.genes), Aggregation("Borda", "borda")],
        known.genes,
        cross_fit=0,
    )
    assert kofs.origins() == {
        "SPEC": ("data", "spec-phi2"),
        "Fisher": ("data", "fisher"),
        "Pathway-FILT": ("knowledge", "spec-phi2"),
        "Pathway-REL-VOTE": ("knowledge", "relevance-vote"),
        "Sup": ("aggregation", None),
        "Borda": ("aggregation", None),
    }
    assert set(kofs.gene_sets(expr)) == {"list seeds", "supervision of Sup"}
    other = kofs.with_gene_sets({"list seeds": ("G000",), "supervision of Sup": ("G001",)})
    assert other.list_relevant_genes == ("G000",) and other._shared is kofs._shared
    assert [a.relevant_genes for a in other.aggregations] == [("G001",), None]
    res = kofs.split_half(
        expr, lab, known=known, settings=SplitHalf("known", repeats=3, null_repeats=3)
    )
    t = res.at(50).set_index("list")
    assert res.settings["reference"] == "Fisher" and res.settings["n_held_out"] == 20
    # pathways made of known genes: the seed half's pathways name the held-out half
    assert t.loc["Pathway-REL-VOTE", "recovered"] >= 15
    assert t.loc["Pathway-REL-VOTE", "diff_null"] >= 10
    assert t.loc["Pathway-REL-VOTE", "recovered"] > t.loc["Fisher", "recovered"] + 8
    assert t.loc["Fisher", "null"] == t.loc["Fisher", "recovered"]  # no seeds, no change


def test_an_aggregation_row_is_the_fusion_kofs_rank_makes(tmp_path):
    """The default fusion of a catalogue row has the prior of ``kofs rank``'s: the study-bias
    covariate of the run's sources (reproduce's rows had none)."""
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels
    from kofs.pipeline.supervision import _study_bias
    from kofs.sources import read_sources

    f = _files(tmp_path)
    expr, lab = align_labels(read_expression(f["expression"]), read_labels(f["labels"]))
    sources = read_sources(pathways=f["pathways"])
    known = read_known_genes("known", f["known"])
    kofs = KofsRanking(
        sources, ["SPEC", "Fisher", "Pathway-REL-VOTE"], [Aggregation("Post", "posterior")],
        known.genes, cross_fit=0,
    )  # fmt: skip
    fused = kofs.run(expr, lab)["Post"]
    effects = {r["covariate"] for r in fused.diagnostics["prior_effects"]}
    assert "study bias" in effects
    bias = _study_bias(Context(expression=expr, sources=sources))
    assert bias is not None and len(set(bias["study bias"].values())) > 1


def _config(tmp_path: Path, **extra) -> Path:
    f = _files(tmp_path)
    cfg = {
        "expression": f["expression"],
        "labels": f["labels"],
        "pathways": f["pathways"],
        "lists": ["SPEC", "Fisher", "Pathway-REL-VOTE"],
        "known_genes": {"known": {"file": f["known"]}},
        "list_relevant_genes": "known",
        "aggregations": [{"name": "Fused", "method": "borda"}, {"name": "Default"}],
        "evaluation": {"top": [10], "classifiers": ["1nn"], "folds": 2, "repeats": 1},
        "split_known": {"set": "known", "repeats": 2, "null_repeats": 2, "top": [10, 50]},
        "cross_fit": 0,
        "output": str(tmp_path / "out"),
        **extra,
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


@pytest.mark.slow
def test_reproduce_writes_the_split_half_section(tmp_path):
    run_experiment(_config(tmp_path))
    out = tmp_path / "out"
    assert check_report(out / "report.html") == []
    html = (out / "report.html").read_text()
    assert "Split-half known genes" in html and "split_half.tsv" in html
    t = pd.read_csv(out / "split_half.tsv", sep="\t")
    assert set(t["list"]) == {"SPEC", "Fisher", "Pathway-REL-VOTE", "Fused", "Default"}
    assert sorted(set(t["k"])) == [10, 50]
    d = pd.read_csv(out / "split_half_draws.tsv", sep="\t")
    assert len(d) == 5 * 2 * 4
    import json

    rec = json.loads((out / "evaluation.json").read_text())
    assert rec["split_half"]["repeats"] == 2 and rec["split_half"]["seed"] == 0
    assert "split_half" in rec["settings"]["timings_seconds"]


@pytest.mark.parametrize(
    "split, match",
    [
        ({"set": "known", "fraction": 1.5}, "'split_known.fraction': 1.5 is not in the range"),
        ({"set": "known", "fraction": 1}, "between 0 and 1"),
        ({"set": "cancer"}, "'cancer' is not a known_genes set"),
        ({"repeats": 2}, "needs 'set'"),
        ({"set": "known", "repeat": 2}, "did you mean split_known.'repeats'"),
        ({"set": "known", "reference": "Fisher score"}, "not an evaluated list"),
        ({"set": "known", "top": [10, 500]}, "matrix has 200"),
    ],
)
def test_reproduce_split_config_errors_are_one_line_before_any_work(tmp_path, split, match):
    p = _config(tmp_path, split_known=split)
    with pytest.raises(ParameterError, match=match) as exc:
        run_experiment(p)
    assert "\n" not in str(exc.value) and not (tmp_path / "out").exists()


def _rank_output(tmp_path: Path) -> tuple[dict[str, str], Path]:
    f = _files(tmp_path)
    out = tmp_path / "run"
    r = CliRunner().invoke(
        main,
        ["rank", f["expression"], "--labels", f["labels"], "--pathways", f["pathways"],
         "--relevant-genes", f["known"], "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return f, out


@pytest.mark.slow
def test_cli_evaluate_split_known(tmp_path):
    f, run = _rank_output(tmp_path)
    out = tmp_path / "eval"
    args = ["evaluate", str(run), f["expression"], "--labels", f["labels"], "--known-genes",
            f"known={f['known']}", "--classifiers", "1nn", "--folds", "2", "--repeats", "1",
            "--top", "10", "--split-known", "known", "--split-repeats", "1", "--split-null", "1",
            "-o", str(out)]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    t = pd.read_csv(out / "split_half.tsv", sep="\t")
    kinds = dict(zip(t["list"], t["kind"], strict=False))
    assert kinds["final"] == "aggregation" and kinds["Fisher"] == "data"
    assert kinds["Pathway-REL-VOTE"] == "knowledge"
    assert set(t["reference"]) == {"Fisher"}
    assert check_report(out / "report.html") == []


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--split-repeats", "3"], "--split-repeats needs --split-known"),
        (["--split-known", "cancer"], "'cancer' is not a --known-genes set"),
        (["--split-known", "known", "--split-fraction", "1"], "between 0 and 1"),
        (["--split-known", "known", "--split-top", "10,x"], "whole numbers"),
    ],
)
def test_cli_evaluate_split_errors_are_one_line(tmp_path, extra, match):
    f = _files(tmp_path)
    (tmp_path / "r.tsv").write_text("gene\trank\tscore\nG000\t1\t1\n")
    args = ["evaluate", str(tmp_path / "r.tsv"), f["expression"], "--labels", f["labels"],
            "--known-genes", f"known={f['known']}", "-o", str(tmp_path / "e"), *extra]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and match in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "e").exists()


@needs_shared
@pytest.mark.slow
def test_split_half_on_all_lineage_reduced(shared_data, tmp_path):
    """The shipped split-half config, reduced: 1,500 genes of largest variance, the bundled GO
    extract, 2 repeats and 2 null draws."""
    cfg = yaml.safe_load((REPO / "configs" / "all_lineage_split.yaml").read_text())
    example = REPO / "kofs" / "data" / "example"
    cfg.update(
        shared=str(shared_data),
        max_genes=1500,
        output=str(tmp_path / "out"),
        go=str(example / "go.obo.gz"),
        go_annotations=str(example / "go_annotations.tsv.gz"),
    )
    cfg["split_known"].update(repeats=2, null_repeats=2)
    cfg["evaluation"].update(folds=2)
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    run_experiment(p)
    t = pd.read_csv(tmp_path / "out" / "split_half.tsv", sep="\t")
    t = t[t["k"] == 50].set_index("list")
    assert t.loc["Fisher", "kind"] == "data" and t.loc["Default", "kind"] == "aggregation"
    # the data lists do not use the seeds: the null changes nothing for them
    assert (t.loc[["SPEC", "Fisher"], "diff_null"] == 0).all()
    # pathway relevance voting from half the cancer genes finds the other half beyond the data
    # lists and beyond random seeds (measured 19 vs Fisher 5 and null 8)
    row = t.loc["Pathway-REL-VOTE"]
    assert row["diff_best_data"] > 5 and row["diff_null"] > 5
    # propagation puts its seeds first: none of the held-out genes reaches its top 50
    assert t.loc["GO-REL-PROP", "recovered"] <= 1


@pytest.mark.parametrize("name", ["all_lineage_split", "all_bcell_molbio_disjoint_split"])
def test_shipped_split_configs_are_valid_and_use_the_default_aggregator(name):
    from kofs.evaluate.reproduce import read_config

    cfg = read_config(REPO / "configs" / f"{name}.yaml")
    assert cfg["split_known"]["set"] in cfg["known_genes"]
    methods = [a.get("method") for a in cfg["aggregations"]]
    assert None in methods and "reliability" not in methods  # the default, by omission
