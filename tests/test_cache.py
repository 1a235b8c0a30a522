"""The on-disk cache of parsed GO (kofs.cache): hits, misses, keys, corruption, concurrency."""

from __future__ import annotations

import logging
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import kofs.io.ontology as ontology_module
from kofs.cache import Cache, default_cache_dir, open_cache
from kofs.io.annotations import read_go_annotations
from kofs.knowledge.go import gene_similarity
from kofs.knowledge.go_semantics import go_semantics
from kofs.progress import Recorder


def _same_ontology(a, b):
    assert a.terms == b.terms and a.names == b.names and a.namespaces == b.namespaces
    assert a.edges == b.edges and a.alt_ids == b.alt_ids and a.obsolete == b.obsolete
    assert (a.data_version, a.date, a.digest) == (b.data_version, b.date, b.digest)


@pytest.fixture
def go_files(testdata, tmp_path):
    obo = tmp_path / "go.obo"
    shutil.copy(testdata / "go" / "tiny.obo", obo)
    gaf = tmp_path / "tiny.gaf"
    shutil.copy(testdata / "go" / "tiny.gaf", gaf)
    return obo, gaf


def test_cache_miss_then_hit(tmp_path):
    c = Cache(tmp_path / "c", version="1")
    assert c.get("x", ["a", 1]) is None
    c.put("x", ["a", 1], {"v": np.arange(3.0), "s": np.array(["p", "q"])}, {"n": 2})
    arrays, meta = c.get("x", ["a", 1])
    assert np.array_equal(arrays["v"], [0.0, 1.0, 2.0]) and arrays["s"].tolist() == ["p", "q"]
    assert meta == {"n": 2}
    assert c.get("x", ["a", 2]) is None  # another key
    assert Cache(tmp_path / "c", version="2").get("x", ["a", 1]) is None  # another kofs version


def test_read_obo_from_cache_skips_parsing(go_files, tmp_path):
    obo, _ = go_files
    c = Cache(tmp_path / "c")
    parsed, cached = Recorder(), Recorder()
    first = ontology_module.read_obo(obo, cache=c, progress=parsed)
    assert list((tmp_path / "c" / "obo").glob("*.npz"))
    again = ontology_module.read_obo(obo, cache=c, progress=cached)
    assert parsed.tasks() == ["GO parsing"] and cached.tasks() == []  # not parsed again
    _same_ontology(first, again)


def test_key_changes_when_the_file_changes(go_files, tmp_path):
    obo, _ = go_files
    c = Cache(tmp_path / "c")
    before = ontology_module.read_obo(obo, cache=c)
    text = obo.read_text().replace(
        "[Typedef]",
        "[Term]\nid: GO:0099999\nname: new term\n"
        "namespace: biological_process\nis_a: GO:0008150\n\n[Typedef]",
        1,
    )
    obo.write_text(text)
    after = ontology_module.read_obo(obo, cache=c)
    assert "GO:0099999" in after.terms and "GO:0099999" not in before.terms
    assert before.digest != after.digest
    assert len(list((tmp_path / "c" / "obo").glob("*.npz"))) == 2


def test_corrupt_entry_is_recomputed(go_files, tmp_path, caplog):
    obo, gaf = go_files
    c = Cache(tmp_path / "c")
    fresh = ontology_module.read_obo(obo, cache=c)
    (entry,) = (tmp_path / "c" / "obo").glob("*.npz")
    data = entry.read_bytes()
    for broken in (data[: len(data) // 2], b"", b"not a zip file at all"):
        entry.write_bytes(broken)
        with caplog.at_level(logging.INFO, logger="kofs"):
            again = ontology_module.read_obo(obo, cache=c)
        _same_ontology(fresh, again)
        assert "unreadable" in caplog.text
        assert entry.read_bytes() == data  # rewritten whole
    # an entry of another key at this name (hash clash, tampering) is not trusted
    other = tmp_path / "other"
    c2 = Cache(other)
    c2.put("obo", ["x"], {"a": np.zeros(1)}, {})
    (stray,) = (other / "obo").glob("*.npz")
    shutil.copy(stray, entry)
    _same_ontology(fresh, ontology_module.read_obo(obo, cache=c))


def test_concurrent_writers_and_readers(tmp_path):
    c = Cache(tmp_path / "c", version="1")
    payload = {"v": np.arange(200_000, dtype=np.float64)}

    def work(i):
        if i % 2:
            c.put("x", ["k"], payload, {"writer": "any"})
            return None
        return c.get("x", ["k"])

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(64)))
    for r in results:  # a reader sees nothing or a whole entry, never a partial one
        assert r is None or np.array_equal(r[0]["v"], payload["v"])
    assert np.array_equal(c.get("x", ["k"])[0]["v"], payload["v"])
    assert [p.name for p in (tmp_path / "c" / "x").iterdir()] == [c.path("x", ["k"]).name]


def test_semantics_cached_and_keyed_by_settings(go_files, tmp_path):
    obo, gaf = go_files
    c = Cache(tmp_path / "c")
    onto = ontology_module.read_obo(obo, cache=c)
    ann = read_go_annotations(gaf, ontology=onto, cache=c)
    plain = go_semantics(onto, ann, aspect="BP")
    first = go_semantics(onto, ann, aspect="BP", cache=c)
    second = go_semantics(onto, ann, aspect="BP", cache=c)
    for s in (first, second):
        assert s.terms == plain.terms and np.array_equal(s.ic, plain.ic)
        assert (s.closure != plain.closure).nnz == 0
        assert all(np.array_equal(s.rows[k], plain.rows[k]) for k in plain.rows)
    genes = ["G1", "G2", "G6"]
    a, _ = gene_similarity(onto, ann, genes, semantics=plain)
    b, _ = gene_similarity(onto, ann, genes, semantics=second)
    assert np.array_equal(a, b, equal_nan=True)
    go_semantics(onto, ann, aspect="BP", mode="gosemsim", cache=c)
    go_semantics(onto, ann, aspect="BP", unknown_terms=["GO:0000004"], cache=c)
    assert len(list((tmp_path / "c" / "go_semantics").glob("*.npz"))) == 3
    # other evidence filters: another annotation digest, another entry
    ida = read_go_annotations(gaf, ontology=onto, evidence="IDA,IMP", cache=c)
    assert ida.digest != ann.digest
    # a subset made in Python has no digest: never cached under the file's key
    assert ann.select(np.ones(len(ann), bool)).digest is None


def test_unwritable_cache_warns_once_and_runs(go_files, tmp_path, caplog):
    obo, _ = go_files
    blocker = tmp_path / "file"
    blocker.write_text("x")
    c = Cache(blocker / "sub")  # a folder below a file cannot be created
    with caplog.at_level(logging.WARNING, logger="kofs"):
        ontology_module.read_obo(obo, cache=c)
        ontology_module.read_obo(obo, cache=c)
    assert caplog.text.count("not usable") == 1


def test_default_folder_and_switches(tmp_path, monkeypatch):
    monkeypatch.setenv("KOFS_CACHE_DIR", str(tmp_path / "k"))
    assert default_cache_dir() == tmp_path / "k"
    monkeypatch.delenv("KOFS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "kofs"
    assert open_cache(enabled=False) is None
    assert open_cache(tmp_path / "x").folder == tmp_path / "x"


def test_go_relation_cached_per_gene_list(tmp_path):
    import kofs.knowledge.go as go_module
    from kofs.datasets.example import example_paths
    from kofs.io.expression import read_expression

    p = example_paths()
    c = Cache(tmp_path / "c")
    onto = ontology_module.read_obo(p["go"], cache=c)
    ann = read_go_annotations(p["go_annotations"], ontology=onto, cache=c)
    sem = go_semantics(onto, ann, cache=c)
    expr = read_expression(p["expression"]).subset_genes(np.arange(200))
    first, cov1 = go_module.go_relation(expr, onto, ann, semantics=sem, cache=c)

    def computed(expression, **kw) -> bool:
        """Whether go_relation computed the similarities (a cache hit reports no task)."""
        seen = Recorder()
        go_module.go_relation(expression, onto, ann, semantics=sem, cache=c, progress=seen, **kw)
        return "GO similarity" in seen.tasks()

    seen = Recorder()
    again, cov2 = go_module.go_relation(expr, onto, ann, semantics=sem, cache=c, progress=seen)
    assert seen.tasks() == []  # read from the cache
    assert (first.matrix != again.matrix).nnz == 0 and again.genes == first.genes
    assert cov1 == cov2 and again.provenance == first.provenance
    assert computed(expr.subset_genes(np.arange(150)))  # other genes: another key
    assert computed(expr, top_k=5)  # other settings: another key
    assert not computed(expr)


def test_another_reader_version_misses_every_go_cache(go_files, tmp_path, monkeypatch):
    """The kofs version of a development checkout stays the same while its readers change: the
    reader versions are part of the keys, so the parsed OBO, the parsed annotations and the GO
    semantics keyed on their digests are computed afresh under another reader version."""
    import kofs.io._annotation_formats as annotation_formats
    import kofs.io.annotations as annotations_module

    obo, gaf = go_files
    c = Cache(tmp_path / "c")

    def read_all(progress):
        onto = ontology_module.read_obo(obo, cache=c, progress=progress)
        ann = read_go_annotations(gaf, ontology=onto, cache=c, progress=progress)
        go_semantics(onto, ann, aspect="BP", cache=c)
        return onto, ann

    first, again = Recorder(), Recorder()
    onto, ann = read_all(first)
    onto2, ann2 = read_all(again)
    assert first.tasks() == ["GO parsing", "GO annotations"] and again.tasks() == []
    assert (onto.digest, ann.digest) == (onto2.digest, ann2.digest)
    monkeypatch.setattr(
        ontology_module, "OBO_READER_VERSION", ontology_module.OBO_READER_VERSION + 1
    )
    newer = Recorder()
    onto3, ann3 = read_all(newer)
    assert newer.tasks() == ["GO parsing"]  # the annotation file's parse is still good
    assert onto3.digest != onto.digest and ann3.digest != ann.digest
    _same = ["obo", "annotations", "go_semantics"]
    assert [len(list((tmp_path / "c" / k).glob("*.npz"))) for k in _same] == [2, 1, 2]
    reader = annotation_formats.READER_VERSION + 1
    monkeypatch.setattr(annotations_module, "READER_VERSION", reader)
    newest = Recorder()
    _, ann4 = read_all(newest)
    assert newest.tasks() == ["GO annotations"] and ann4.digest != ann3.digest
    assert [len(list((tmp_path / "c" / k).glob("*.npz"))) for k in _same] == [2, 2, 3]
