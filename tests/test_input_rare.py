"""Rarer bad inputs (an audit of unusual files and options): each ends in exit 2 with one
``kofs: error:`` line naming the file and what is wrong, nothing written, or, through the
Python API, in kofs's own error class; never a traceback or a silent wrong result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import KofsError

N_GENES, N_SAMPLES = 30, 10


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(r, path, *fragments) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kofs: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert str(path) in lines[0], lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def base(tmp_path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_GENES, N_SAMPLES))
    expr = tmp_path / "expr.tsv"
    expr.write_text(
        "gene\t"
        + "\t".join(f"S{j}" for j in range(N_SAMPLES))
        + "\n"
        + "".join(
            f"G{i}\t" + "\t".join(f"{v:.4f}" for v in X[i]) + "\n" for i in range(N_GENES)
        )
    )
    labels = tmp_path / "labels.tsv"
    labels.write_text(
        "sample\tclass\n" + "".join(f"S{j}\t{'ab'[j % 2]}\n" for j in range(N_SAMPLES))
    )
    return {"expr": expr, "labels": labels, "dir": tmp_path}


# --- kofs sources converts every source as kofs rank does -----------------------------------


def test_sources_refuses_a_network_matching_no_gene_as_rank_does(base):
    """A network no list uses (no starting relevance for PPI-PROP) still explains genes in a
    run, and `kofs rank` refuses one whose ids match no gene; `kofs sources` (the dry run)
    showed no coverage line and exit 0."""
    edges = base["dir"] / "edges.tsv"
    edges.write_text("source\ttarget\n" + "".join(f"X{i}\tX{i + 1}\n" for i in range(10)))
    for command in ("sources", "rank"):
        r = invoke(command, base["expr"], "--interactions", edges, "-o", base["dir"] / "out")
        if command == "sources":
            r = invoke(command, base["expr"], "--interactions", edges)
        one_error(r, edges, "none of its", "matches the expression matrix's genes")
    assert not (base["dir"] / "out").exists()
    good = base["dir"] / "good.tsv"
    good.write_text("source\ttarget\n" + "".join(f"G{i}\tG{i + 1}\n" for i in range(10)))
    r = invoke("sources", base["expr"], "--interactions", good)
    assert r.exit_code == 0, r.stderr
    assert "interactions good.tsv: 11 genes, 11 matched" in r.stdout
