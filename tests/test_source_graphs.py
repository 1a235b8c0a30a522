"""The graph-file knowledge source (kofs/sources/graphs.py): GraphML, GML, SIF and adjacency
lists read with networkx become the GRAPH-PROP list, from the CLI and the Python API."""

from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.datasets.example import example_paths
from kofs.errors import InputError
from kofs.io.expression import read_expression
from kofs.io.graph_files import read_graph
from kofs.pipeline.rank import rank
from kofs.sources import read_sources

EDGES = [("CCND1", "CCND2", 0.5), ("ELANE", "GZMA", 0.2), ("ABL1", "CCND1", 0.9)]


def _graph(directed: bool = False) -> nx.Graph:
    g = nx.DiGraph() if directed else nx.Graph()
    for a, b, w in EDGES:
        g.add_edge(a, b, weight=w)
    return g


@pytest.fixture
def graph_files(tmp_path):
    g = _graph()
    files = {}
    files["graphml"] = tmp_path / "g.graphml"
    nx.write_graphml(g, files["graphml"])
    files["gml"] = tmp_path / "g.gml"
    nx.write_gml(g, files["gml"])
    files["sif"] = tmp_path / "g.sif"
    files["sif"].write_text("CCND1\tpp\tCCND2\tABL1\nELANE\tpp\tGZMA\nLONELY\n")
    files["adjlist"] = tmp_path / "g.adjlist"
    files["adjlist"].write_text("# adjacency list\nCCND1 CCND2 ABL1\nELANE GZMA\n")
    return files


@pytest.mark.parametrize("fmt", ["graphml", "gml", "sif", "adjlist"])
def test_each_format_gives_the_same_edges(graph_files, fmt):
    inter = read_graph(str(graph_files[fmt]))
    pairs = {frozenset((a, b)) for a, b in zip(inter.source, inter.target, strict=True)}
    assert pairs == {frozenset(e[:2]) for e in EDGES}
    assert inter.info["format"] == fmt
    if fmt in ("graphml", "gml"):
        w = {
            frozenset((a, b)): x
            for a, b, x in zip(inter.source, inter.target, inter.weight, strict=True)
        }
        assert w[frozenset(("ABL1", "CCND1"))] == pytest.approx(0.9)
    else:
        assert np.all(inter.weight == 1.0)


def test_directed_graphml_keeps_directions_and_gzip_is_read(tmp_path):
    path = tmp_path / "d.graphml"
    nx.write_graphml(_graph(directed=True), path)
    gz = tmp_path / "d.graphml.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    inter = read_graph(str(gz))
    assert inter.is_directed and inter.n_edges == 3


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("bad.graphml", "<graphml><graph><node id='a'/>", "not a valid GRAPHML graph"),
        ("x.graphml", "<!DOCTYPE x [<!ENTITY a 'b'>]><graphml/>", "entity"),
        ("bad.gml", "graph [ node [ id 1 ", "not a valid GML graph"),
        ("short.sif", "A\tpp\n", "needs a source, an interaction type and a target"),
        ("empty.sif", "LONELY\n", "has no edges"),
        ("g.txt", "A B\n", "--graph-format"),
    ],
)
def test_bad_graph_files_are_input_errors(tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=needle) as exc:
        read_graph(str(path))
    assert str(path) in str(exc.value)


def test_negative_weights_are_refused(tmp_path):
    g = nx.Graph()
    g.add_edge("A", "B", weight=-1.0)
    path = tmp_path / "neg.graphml"
    nx.write_graphml(g, path)
    with pytest.raises(InputError, match="non-negative"):
        read_graph(str(path))


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [
        ("graphml", "no edge of {path} has an attribute 'score' (its edge attributes: weight)"),
        ("adjlist", "no edge of {path} has an attribute 'score' (its edges have none)"),
        ("sif", "{path} is a SIF file, whose edges carry no attributes"),
    ],
)
def test_a_weight_attribute_no_edge_has_warns_once(graph_files, fmt, needle, caplog):
    import logging

    path = graph_files[fmt]
    with caplog.at_level(logging.WARNING, logger="kofs"):
        inter = read_graph(str(path), weight="score")
    assert np.all(inter.weight == 1.0)
    (line,) = [ln for ln in caplog.text.splitlines() if "no effect" in ln]
    assert "--graph-weight score has no effect: " + needle.format(path=path) in line
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_graph(str(path))  # the default attribute, absent: every edge weighs 1, as documented
    assert "no effect" not in caplog.text


def test_graph_prop_list_from_python(graph_files):
    p = example_paths()
    expr = read_expression(p["expression"])
    sources = read_sources(graph=str(graph_files["graphml"]), pathways=p["pathways"])
    res = rank(expr, sources=sources, lists=["GRAPH-PROP"])
    (lst,) = res.lists
    assert lst.name == "GRAPH-PROP"
    # propagation from pathway votes reaches the graph's genes; genes off the graph get none
    assert any(c.source.endswith("g.graphml") for c in res.coverage)
    assert "graph neighbours" in " ".join(res.evidence.values())


def test_graph_option_from_the_cli_and_config(graph_files, tmp_path):
    p = example_paths()
    out = tmp_path / "out"
    args = [
        "rank",
        p["expression"],
        "--graph",
        str(graph_files["sif"]),
        "--pathways",
        p["pathways"],
    ]
    r = CliRunner().invoke(main, [*args, "--lists", "SPEC,GRAPH-PROP", "-o", str(out)])
    assert r.exit_code == 0, r.output
    table = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert "rank:GRAPH-PROP" in table.columns
    again = tmp_path / "again"
    r = CliRunner().invoke(main, ["run", str(out / "config.resolved.yaml"), "-o", str(again)])
    assert r.exit_code == 0, r.output
    assert (again / "ranking.tsv").read_bytes() == (out / "ranking.tsv").read_bytes()


def test_graph_prop_needs_the_graph(tmp_path):
    p = example_paths()
    r = CliRunner().invoke(
        main, ["rank", p["expression"], "--lists", "GRAPH-PROP", "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 2 and "--graph" in r.stderr and not (tmp_path / "o").exists()


def test_a_graph_alone_says_propagation_needs_a_start(graph_files, tmp_path):
    """A network without a starting relevance: the run goes on without GRAPH-PROP and says
    why and what to give (it stopped the run, which had other lists); asked for by name, the
    list is refused with the same words. (The message named PPI-PROP and GO-REL-PROP once.)"""
    p = example_paths()
    args = ["rank", p["expression"], "--graph", str(graph_files["sif"])]
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "GRAPH-PROP not built: relevance propagation over a network" in r.stderr
    assert "--relevant-genes, --go with --go-annotations, or --pathways" in r.stderr
    assert "GRAPH-PROP" not in (tmp_path / "o" / "weights.tsv").read_text()
    r = CliRunner().invoke(main, [*args, "--lists", "GRAPH-PROP", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and not (tmp_path / "x").exists()
    assert "--lists GRAPH-PROP: relevance propagation over a network (PPI-PROP, GRAPH-PROP)" in (
        r.stderr
    )


def test_a_graph_of_self_loops_only_is_one_plain_line(tmp_path):
    """Every edge a self-loop: nothing is left, and the message says what was read and dropped
    in words (it showed a Python dict)."""
    from kofs.io.graph_files import read_graph

    p = tmp_path / "loops.sif"
    p.write_text("A pp A\nB pp B\n")
    with pytest.raises(InputError) as err:
        read_graph(p)
    text = str(err.value)
    assert "no graph left" in text and "self loops dropped 2" in text
    assert "{" not in text and "\n" not in text
