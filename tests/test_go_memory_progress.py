"""--max-memory on the GO steps; progress callbacks (kofs.progress); GO knowledge built once per
gene list (evaluation folds); progress bars only on a terminal."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.datasets.example import example_paths
from kofs.errors import ResourceError
from kofs.io.annotations import read_go_annotations
from kofs.io.ontology import read_obo
from kofs.knowledge.go import gene_similarity, go_relation
from kofs.knowledge.go_semantics import go_semantics
from kofs.progress import Recorder, task
from kofs.resources import estimate_expression_file, estimate_obo_file

GO = Path(__file__).parent / "data" / "go"


@pytest.fixture(scope="module")
def example(example_data):
    from kofs.io.expression import read_expression

    p = example_data.paths
    expr = read_expression(p["expression"]).subset_genes(np.arange(300))  # fast enough
    return p, expr, example_data.sources.get("go")


def test_go_readers_fail_early_under_a_tiny_limit():
    with pytest.raises(ResourceError, match=r"step parsing the GO ontology .*tiny.obo needs ~"):
        read_obo(GO / "tiny.obo", max_memory=1000)
    with pytest.raises(ResourceError, match=r"step reading the GO annotations .*tiny.gaf needs"):
        read_go_annotations(GO / "tiny.gaf", max_memory=1000)
    onto = read_obo(GO / "tiny.obo", max_memory=2**30)
    ann = read_go_annotations(GO / "tiny.gaf", ontology=onto, max_memory=2**30)
    with pytest.raises(ResourceError, match=r"step GO BP closure and information content"):
        go_semantics(onto, ann, max_memory=1000)


def test_go_similarity_fails_early_and_shrinks_its_blocks(example):
    _, expr, src = example
    onto, ann = src.ontology, src.annotations
    sem = go_semantics(onto, ann)
    with pytest.raises(ResourceError, match=r"step GO similarity graph of \d+ genes \(BP\)"):
        go_relation(expr, onto, ann, semantics=sem, max_memory=2**20)
    free, _ = go_relation(expr, onto, ann, semantics=sem)
    # a limit that the default 256 MB blocks would break, met with smaller blocks: same graph
    held, _ = go_relation(expr, onto, ann, semantics=sem, max_memory=64 * 2**20)
    assert (free.matrix != held.matrix).nnz == 0
    genes = list(expr.genes[:50])
    with pytest.raises(ResourceError, match=r"step GO similarity of 50 x 50 genes"):
        gene_similarity(onto, ann, genes, semantics=sem, max_memory=10**4)


def test_cli_max_memory_holds_on_the_go_parse(tmp_path):
    p = example_paths()
    need_expr = estimate_expression_file(p["expression"])
    need_obo = estimate_obo_file(p["go"])
    assert need_obo > 2 * need_expr
    limit = str((need_expr + need_obo) // 2)
    r = CliRunner().invoke(
        main,
        ["rank", str(p["expression"]), "--go", str(p["go"]), "--go-annotations",
         str(p["go_annotations"]), "--max-memory", limit, "--no-cache", "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "step parsing the GO ontology" in r.stderr
    assert "raise --max-memory" in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_progress_events_of_a_run(example):
    from kofs.io.labels import read_labels
    from kofs.pipeline.rank import rank
    from kofs.sources import read_sources

    p, expr, _ = example
    rec = Recorder()
    src = read_sources(go=p["go"], go_annotations=p["go_annotations"], progress=rec)
    labels = read_labels(p["labels"], label_column="lineage")
    lists = ["Fisher", "GO-MAH", "GO-REL-VOTE"]
    res = rank(expr, labels=labels, sources=src, lists=lists, progress=rec)
    tasks = rec.tasks()
    assert tasks[:2] == ["GO parsing", "GO annotations"]
    assert {"GO information content", "GO similarity", "lists"} <= set(tasks)
    for name in set(tasks):  # every task that starts also finishes, after its advances
        ev = [e for e in rec.events if e[1] == name]
        assert ev[0][0] == "start" and ev[-1][0] == "finish"
    starts = {t: n for e, t, n in rec.events if e == "start"}
    done = {}
    for e, t, n in rec.events:
        if e == "advance":
            done[t] = done.get(t, 0) + n
    assert starts["lists"] == len(res.lists) == done["lists"]
    assert done["GO similarity"] == starts["GO similarity"] > 0


def test_progress_of_evaluation_folds(example):
    from kofs.evaluate.protocols import accuracy_curves, make_folds

    _, expr, _ = example
    y = np.array(["a", "b"] * (expr.n_samples // 2) + ["a"] * (expr.n_samples % 2))
    folds = make_folds(y, n_splits=3, n_repeats=2, seed=0)
    rec = Recorder()
    order = np.arange(expr.n_genes)
    accuracy_curves(expr, y, folds=folds, ks=[5], orders={"x": order}, progress=rec)
    assert rec.events[0] == ("start", "evaluation folds (book)", 6)
    assert [e for e in rec.events if e[0] == "advance"] == [
        ("advance", "evaluation folds (book)", 1)
    ] * 6


def test_task_helper_without_progress_is_silent():
    with task(None, "x", total=2) as step:
        step(2)
    assert list(task(None, "y").each([1, 2])) == [1, 2]


def test_go_graph_built_once_across_sample_subsets(example, monkeypatch):
    import kofs.knowledge.go as go_module
    import kofs.knowledge.go_semantics as sem_module
    from kofs.pipeline.config import as_config
    from kofs.pipeline.rank import rank_config
    from kofs.sources import KnowledgeSources

    _, expr, src = example
    sources = KnowledgeSources({"go": src})
    calls = {"relation": 0, "semantics": 0}
    real_rel, real_sem = go_module.go_relation, sem_module.go_semantics

    def rel(*a, **k):
        calls["relation"] += 1
        return real_rel(*a, **k)

    def sem(*a, **k):
        calls["semantics"] += 1
        return real_sem(*a, **k)

    monkeypatch.setattr(go_module, "go_relation", rel)
    monkeypatch.setattr(sem_module, "go_semantics", sem)
    shared: dict = {}  # the gene-level cache of the honest protocol's folds
    for fold in (np.arange(0, 100), np.arange(28, 128)):
        rank_config(
            expr.subset_samples(fold), as_config(lists=["GO-MAH"]), sources=sources, shared=shared
        )
    assert calls == {"relation": 1, "semantics": 1}


@pytest.mark.slow
def test_no_progress_bars_when_stderr_is_not_a_terminal(tmp_path, example):
    p, expr, _ = example
    small = tmp_path / "small.tsv"
    small.write_text(
        "gene\t" + "\t".join(expr.samples) + "\n"
        + "".join(g + "\t" + "\t".join(map(str, expr.values[:, j])) + "\n"
                  for j, g in enumerate(expr.genes))
    )  # fmt: skip
    r = CliRunner().invoke(
        main,
        ["rank", str(small), "--go", str(p["go"]), "--go-annotations",
         str(p["go_annotations"]), "--lists", "GO-MAH", "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "GO similarity" not in r.stderr and "━" not in r.stderr


def test_rich_progress_draws_on_a_terminal():
    from rich.console import Console

    from kofs.cli._progress import RichProgress, cli_progress

    buf = io.StringIO()
    with RichProgress(Console(file=buf, force_terminal=True, width=100)) as bars:
        with task(bars, "GO similarity", total=4) as step:
            step(2)
            bars._bars.refresh()
    assert "GO similarity" in buf.getvalue()
    with cli_progress(quiet=True) as none:
        assert none is None
