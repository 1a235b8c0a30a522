"""The layout of three kinds of report in headless Chromium at 1,280 px: the bundled demo, ALL
with every knowledge source, a single-cell run with ten cell types. Nothing is wider than the
window (no horizontal scrolling, no column behind a scrollbar), no legend covers a figure,
every image loads, the console stays empty, and the answer comes first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _report_check import browser_check, find_browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_browser() is None,
        reason="the layout check needs a headless Chromium (Debian: apt-get install -y "
        "chromium-headless-shell, as .ci/run does)",
    ),
]

WINDOW = (1280, 3000)


def _check(page: Path, tmp_path: Path, *, unit: str) -> dict:
    seen = browser_check(page, profile_dir=tmp_path / "browser", window=WINDOW)
    assert seen is not None
    layout = seen["layout"]
    assert layout["page_width"] <= layout["window_width"] == WINDOW[0], layout
    assert layout["wide"] == [] and layout["beyond_right"] == [], layout
    assert layout["overlaps"] == [] and layout["legends"] >= 1, layout
    assert seen["images"] and all(i["width"] > 0 for i in seen["images"])
    assert seen["console"] == []
    dom = seen["dom"]
    assert dom.index('id="answer"') < dom.index("<table")
    assert f" {unit} " in dom and (unit == "samples" or " samples " not in dom)
    return seen


def _run(config: dict, out: Path) -> Path:
    import kofs
    from kofs.pipeline.write import write_result

    res = kofs.run({**config, "output": str(out)})
    write_result(res)
    return out / "report.html"


def test_demo_report_layout(tmp_path):
    from kofs.datasets.example import example_config

    page = _run(example_config(), tmp_path / "demo")
    _check(page, tmp_path, unit="samples")


def test_all_every_source_report_layout(tmp_path, shared_data):
    page = _run(
        {
            "expression": str(shared_data / "ALL/ALL_gene_expr.tsv.gz"),
            "labels": str(shared_data / "ALL/ALL_samples.tsv"),
            "label_column": "BT_stage",  # 9 classes: a long legend
            "go": str(shared_data / "GO/go-basic_2022-07-01_from_GO.db.obo.gz"),
            "go_annotations": str(
                shared_data / "GO/goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"
            ),
            "pathways": str(shared_data / "KEGG/msigdb_c2_cp_kegg_symbols_qusage.gmt"),
            "interactions": str(shared_data / "PPI/string_example_gene_edges.tsv.gz"),
        },
        tmp_path / "all",
    )
    seen = _check(page, tmp_path, unit="samples")
    assert "amigo.geneontology.org/amigo/term/GO:" in seen["dom"]
    assert "ncbi.nlm.nih.gov/gene/" in seen["dom"]


def test_single_cell_report_layout(tmp_path):
    ad = pytest.importorskip("anndata")
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    types = [f"type {t}" for t in range(10)]
    n, m = 600, 300
    y = np.array([types[i % 10] for i in range(n)])
    lam = np.full((n, m), 0.3)
    for t in range(10):
        lam[y == types[t], t * 10 : t * 10 + 10] = 4.0  # ten markers per type
    X = sp.csr_matrix(rng.poisson(lam).astype(np.float64))
    a = ad.AnnData(X)
    a.obs_names = [f"cell{i}" for i in range(n)]
    a.var_names = [f"GENE{j}" for j in range(m)]
    a.obs["cell_type"] = y
    path = tmp_path / "cells.h5ad"
    a.write_h5ad(path)
    page = _run(
        {"expression": str(path), "labels": "obs:cell_type", "rankers": "fisher,variance"},
        tmp_path / "sc",
    )
    seen = _check(page, tmp_path, unit="cells")
    assert "of cells" in seen["dom"]  # detection fractions of the groups
