"""Module layout: every ``__all__`` is importable, the format dispatch tables reach the
readers, every module logs under its own name, and no module re-exports another's names.
"""

from __future__ import annotations

import importlib
import logging

import pytest


@pytest.mark.parametrize(
    "module, names",
    [
        ("kofs.io.ids", ["match_gene_ids", "CoverageReport"]),
        ("kofs.io.id_map", ["IdMap", "read_id_map"]),
        ("kofs.io.interaction_dbs", ["read_string_links", "read_string_aliases", "read_biogrid"]),
        ("kofs.io.interactions", ["Interactions", "read_interactions", "INTERACTION_FORMATS"]),
        ("kofs.io.pathways", ["GeneSets", "read_pathways", "PATHWAY_FORMATS"]),
        ("kofs.io.annotations", ["GOAnnotations", "read_go_annotations", "parse_evidence_codes"]),
        ("kofs.rankers._sparse_kernels", ["l1_graph", "sparsity_score_from_graph"]),
        ("kofs.knowledge.go", ["gene_similarity", "go_relation", "go_functions"]),
        ("kofs.knowledge.go_semantics", ["MODES", "GOSemantics", "go_semantics"]),
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


def test_every_library_logger_is_named_by_its_module():
    """``logging.getLogger(__name__)`` everywhere: users filter on the module's own name."""
    import pkgutil

    import kofs

    wrong = []
    for info in pkgutil.walk_packages(kofs.__path__, "kofs."):
        if info.name.startswith("kofs.cli"):
            continue  # the CLI configures the "kofs" logger itself
        log = getattr(importlib.import_module(info.name), "log", None)
        if isinstance(log, logging.Logger) and log.name != info.name:
            wrong.append(f"{info.name} logs as {log.name}")
    assert not wrong, wrong


def test_id_map_warns_about_ambiguous_ids(tmp_path, caplog):
    from kofs.io.id_map import read_id_map

    p = tmp_path / "map.tsv"
    p.write_text("a\tx\na\ty\nb\tz\n")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        m = read_id_map(p)
    assert m.ambiguous == 1 and dict(m) == {"b": "z"}
    assert any("several targets" in r.getMessage() for r in caplog.records)


def test_no_module_reexports_names_of_another():
    """No compatibility re-exports: a (non-package) module's ``__all__`` lists only what it
    defines, so every name has one import path (packages' ``__init__`` may gather)."""
    import pkgutil

    import kofs

    found = []
    for info in pkgutil.walk_packages(kofs.__path__, "kofs."):
        if info.ispkg or info.name.startswith("kofs.cli"):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", []):
            home = getattr(getattr(mod, name), "__module__", info.name)
            if callable(getattr(mod, name)) and home != info.name:
                found.append(f"{info.name}.{name} (from {home})")
    assert not found, "re-exported: " + ", ".join(found)
