"""Split modules keep their public import paths and their logger names.

Large modules were split into cohesive parts; every name that was importable from the old
module must still be (the very same object), and log records of moved code keep the logger
name of the module they came from (users filter on it).
"""

from __future__ import annotations

import importlib
import logging

import pytest

# old module -> (new module, names re-exported by the old module)
MOVED = {
    "kofs.io.ids": ("kofs.io._open", ["_open_text", "_stream_text", "_head_lines"]),
    "kofs.io.interactions": (
        "kofs.io.interaction_dbs",
        ["read_string_links", "read_string_aliases", "read_biogrid"],
    ),
    "kofs.io.pathways": ("kofs.io.kgml", ["read_kgml"]),
    "kofs.rankers._sparse_kernels": ("kofs.rankers._fssi_kernel", ["fssi_errors"]),
    "kofs.knowledge.go": ("kofs.knowledge._go_semantics", ["MODES", "GOSemantics", "go_semantics"]),
}
ALIASES = {"_open_text": "open_text", "_stream_text": "stream_text", "_head_lines": "head_lines"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_paths_reexport_the_moved_objects(old):
    new, names = MOVED[old]
    a, b = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(a, name) is getattr(b, ALIASES.get(name, name)), name


@pytest.mark.parametrize(
    "module, names",
    [
        ("kofs.io.ids", ["IdMap", "read_id_map", "match_gene_ids", "CoverageReport"]),
        ("kofs.io.interactions", ["Interactions", "read_interactions", "INTERACTION_FORMATS"]),
        ("kofs.io.pathways", ["GeneSets", "read_pathways", "PATHWAY_FORMATS"]),
        ("kofs.io.annotations", ["GOAnnotations", "read_go_annotations", "parse_evidence_codes"]),
        (
            "kofs.rankers._sparse_kernels",
            [
                "lasso_gram",
                "lasso_active_set",
                "lasso_reconstruction",
                "reconstruction_residual_score",
                "l1_graph",
            ],
        ),
        ("kofs.knowledge.go", ["gene_similarity", "go_relation", "go_functions"]),
    ],
)
def test_all_lists_only_importable_names(module, names):
    mod = importlib.import_module(module)
    for name in [*mod.__all__, *names]:
        assert hasattr(mod, name), f"{module}.{name}"


def test_dispatch_tables_reach_the_moved_readers():
    from kofs.io import interaction_dbs, kgml
    from kofs.io.interactions import INTERACTION_FORMATS
    from kofs.io.pathways import PATHWAY_FORMATS

    assert INTERACTION_FORMATS["string"] is interaction_dbs.read_string_links
    assert INTERACTION_FORMATS["biogrid"] is interaction_dbs.read_biogrid
    assert PATHWAY_FORMATS["kgml"] is kgml.read_kgml


@pytest.mark.parametrize(
    "module, logger",
    [
        ("kofs.io.interaction_dbs", "kofs.io.interactions"),
        ("kofs.io._interactions_core", "kofs.io.interactions"),
        ("kofs.io.kgml", "kofs.io.pathways"),
        ("kofs.io.id_map", "kofs.io.ids"),
        ("kofs.io._annotation_formats", "kofs.io.annotations"),
        ("kofs.knowledge._go_semantics", "kofs.knowledge.go"),
    ],
)
def test_moved_code_logs_under_the_old_name(module, logger):
    assert importlib.import_module(module).log is logging.getLogger(logger)


def test_id_map_warning_still_under_kofs_io_ids(tmp_path, caplog):
    from kofs.io.ids import read_id_map

    p = tmp_path / "map.tsv"
    p.write_text("a\tx\na\ty\nb\tz\n")
    with caplog.at_level(logging.WARNING, logger="kofs.io.ids"):
        m = read_id_map(p)
    assert m.ambiguous == 1 and dict(m) == {"b": "z"}
    assert any(
        r.name == "kofs.io.ids" and "several targets" in r.getMessage() for r in caplog.records
    )
