"""Fuzz every reader: random bytes, truncated and mutated real fixtures.

The only exceptions allowed out of a reader are :class:`kofs.errors.KofsError` subclasses
(one-line message naming the file); a reader may also accept the input. Example counts are
bounded (seeded, no hypothesis database) so the file runs in well under a minute.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from kofs.datasets.example import example_paths
from kofs.errors import KofsError
from kofs.io.annotations import read_go_annotations
from kofs.io.expression import read_expression
from kofs.io.gene_lists import read_ranked_lists
from kofs.io.genes import read_gene_list
from kofs.io.id_map import read_id_map
from kofs.io.interactions import read_interactions
from kofs.io.labels import read_labels
from kofs.io.ontology import read_obo
from kofs.io.pathways import read_pathways
from kofs.pipeline.yaml_files import load_config
from kofs.sources.term_relevance import read_term_relevance

DATA = Path(__file__).parent / "data"
EXAMPLE = example_paths()


def _head(path: str | Path, n_bytes: int) -> bytes:
    """The first bytes of a (possibly gzipped) fixture, decompressed."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as fh:
            raw = fh.read(n_bytes)
    return raw[:n_bytes]


# reader name -> (function, seed fixtures as bytes, file suffix)
READERS = {
    "expression": (
        read_expression,
        [_head(EXAMPLE["expression"], 6000), (DATA / "io" / "tiny.tsv").read_bytes()],
        ".tsv",
    ),
    "labels": (
        read_labels,
        [Path(EXAMPLE["labels"]).read_bytes(), (DATA / "io" / "labels.tsv").read_bytes()],
        ".tsv",
    ),
    "genes": (
        read_gene_list,
        [Path(EXAMPLE["relevant_genes"]).read_bytes(), (DATA / "io" / "genes.txt").read_bytes()],
        ".txt",
    ),
    "obo": (read_obo, [(DATA / "go" / "tiny.obo").read_bytes()], ".obo"),
    "go_annotations": (
        read_go_annotations,
        [
            (DATA / "go" / "tiny.gaf").read_bytes(),
            (DATA / "go" / "tiny_annotations.tsv").read_bytes(),
            (DATA / "go" / "tiny_gene2go.tsv").read_bytes(),
        ],
        ".txt",
    ),
    "pathways": (read_pathways, [Path(EXAMPLE["pathways"]).read_bytes()[:3000]], ".gmt"),
    "interactions": (
        read_interactions,
        [
            Path(EXAMPLE["interactions"]).read_bytes()[:2000],
            (DATA / "interactions" / "string_links.txt").read_bytes(),
            (DATA / "interactions" / "biogrid_tab2.txt").read_bytes(),
        ],
        ".txt",
    ),
    "id_map": (read_id_map, [b"symbol\tentrez\nTP53\t7157\nMYC\t4609\n"], ".tsv"),
    "term_relevance": (
        read_term_relevance,
        [b"term\trelevance\nGO:0000001\t0.5\nGO:0000002\t1\n"],
        ".tsv",
    ),
    "config": (load_config, [b"expression: x.tsv\nrankers: variance\nseed: 3\n"], ".yaml"),
    "ranked_list_csv": (
        read_ranked_lists,
        [_head(DATA / "golden" / "gene_lists" / "deseq2_sim.csv.gz", 3000)],
        ".csv",
    ),
    "ranked_list_tsv": (
        read_ranked_lists,
        [
            _head(DATA / "golden" / "gene_lists" / "limma_ALL_BvsT_top300.tsv.gz", 3000),
            _head(DATA / "golden" / "gene_lists" / "edger_sim.tsv.gz", 3000),
            b"id\tnum\tneg|score\tneg|p-value\tneg|fdr\tneg|rank\tpos|score\tpos|rank\n"
            b"A\t4\t0.1\t0.2\t0.3\t2\t0.01\t1\nB\t4\t0.01\t0.02\t0.03\t1\t0.1\t2\n",
            b"# top genes\ngene\nTP53\nMYC\nEGFR\n",
        ],
        ".tsv",
    ),
    "ranked_list_rnk": (read_ranked_lists, [b"TP53\t3.2\nEGFR\t-1\nKRAS\t5\n"], ".rnk"),
    "ranked_list_gmt": (read_ranked_lists, [Path(EXAMPLE["pathways"]).read_bytes()[:3000]], ".gmt"),
}


def _call(reader, path: Path, failures: list) -> None:
    """Run ``reader``; record anything but a clean one-line KofsError naming the file."""
    try:
        reader(path)
    except KofsError as exc:
        msg = str(exc)
        if "\n" in msg or not msg.strip() or path.name not in msg:
            failures.append((path.name, f"unclear message: {msg!r}"))
    except Exception as exc:  # noqa: BLE001 - this is what the test looks for
        failures.append((path.name, f"{type(exc).__name__}: {exc}"[:300]))


def _mutations(seed: bytes, rng: np.random.Generator, count: int):
    """Truncations, byte flips, deletions, duplications, delimiter swaps and gzip variants."""
    n = len(seed)
    yield seed
    for cut in (0, 1, n // 7, n // 2, n - 1):
        yield seed[:cut]
    yield gzip.compress(seed)
    gz = gzip.compress(seed)
    yield gz[: max(10, len(gz) // 2)]  # truncated gzip
    yield seed.replace(b"\t", b";").replace(b",", b";")
    yield seed.replace(b"\n", b"\r\n")
    yield b"\xef\xbb\xbf" + seed
    for _ in range(count):
        buf = bytearray(seed)
        kind = rng.integers(4)
        if not buf:
            buf = bytearray(b"x")
        pos = int(rng.integers(len(buf)))
        if kind == 0:  # flip bytes
            for p in rng.integers(len(buf), size=int(rng.integers(1, 6))):
                buf[int(p)] = int(rng.integers(256))
        elif kind == 1:  # delete a slice
            del buf[pos : pos + int(rng.integers(1, 50))]
        elif kind == 2:  # duplicate a slice
            buf[pos:pos] = buf[pos : pos + int(rng.integers(1, 80))]
        else:  # insert special tokens
            token = [
                b"NaN",
                b"inf",
                b"-1e400",
                b"\t\t",
                b'"',
                b"\x00",
                b"[Term]\n",
                b"!",
                b"\n\n",
                b"GO:",
                b"-",
            ][int(rng.integers(11))]
            buf[pos:pos] = token
        yield bytes(buf)


@pytest.mark.parametrize("name", sorted(READERS))
def test_random_bytes(tmp_path, name):
    reader, _, suffix = READERS[name]
    failures: list = []
    rng = np.random.default_rng(sum(map(ord, name)))
    for i in range(12):
        path = tmp_path / f"random{i}{suffix}"
        size = int(rng.choice([1, 7, 100, 2000]))
        data = rng.bytes(size)
        if i % 3 == 1:  # printable noise: exercises the text parsers, not just the decoder
            data = bytes(
                rng.choice(
                    np.frombuffer(b'abcGO:0123456789\t,;.\n -e"#!', dtype=np.uint8), size=size
                )
            )
        path.write_bytes(data)
        _call(reader, path, failures)
    assert not failures, failures


@pytest.mark.parametrize("name", sorted(READERS))
def test_mutated_fixtures(tmp_path, name):
    reader, seeds, suffix = READERS[name]
    failures: list = []
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    k = 0
    for seed in seeds:
        for data in _mutations(seed, rng, count=25):
            path = tmp_path / f"m{k}{suffix}"
            k += 1
            path.write_bytes(data)
            _call(reader, path, failures)
    assert not failures, failures


@pytest.mark.parametrize("name", sorted(READERS))
def test_named_gz_but_not_gzip(tmp_path, name):
    reader, seeds, suffix = READERS[name]
    failures: list = []
    path = tmp_path / f"plain{suffix}.gz"
    path.write_bytes(seeds[0])
    _call(reader, path, failures)
    assert not failures, failures


@pytest.mark.parametrize("name", sorted(READERS))
def test_directory_and_missing(tmp_path, name):
    reader, _, suffix = READERS[name]
    failures: list = []
    d = tmp_path / f"adir{suffix}"
    d.mkdir()
    _call(reader, d, failures)
    _call(reader, tmp_path / f"missing{suffix}", failures)
    assert not failures, failures


# --- the same through the CLI: every input option of `kofs rank`, and `kofs run` -----------------

CLI_INPUTS = [
    "expression",
    "--labels",
    "--relevant-genes",
    "--pathways",
    "--interactions",
    "--go",
    pytest.param("--go-annotations", marks=pytest.mark.slow),  # reads the GO ontology (~9 s)
    "--id-map",
    "--term-relevance",
    "--aux",
    "config",
]


def _payloads(rng: np.random.Generator, valid: bytes) -> list[bytes]:
    noise = np.frombuffer(b'abcG0123456789\t,;.\n -e"#!:', dtype=np.uint8)
    return [
        rng.bytes(400),
        bytes(rng.choice(noise, size=600)),
        valid[: len(valid) // 3],
        gzip.compress(valid)[:40],
    ]


@pytest.mark.parametrize("option", CLI_INPUTS)
def test_cli_random_inputs_fail_cleanly(tmp_path, option):
    from click.testing import CliRunner

    from kofs.cli import main

    p = EXAMPLE
    expr = tmp_path / "expr.tsv"
    expr.write_bytes(_head(p["expression"], 20000).rsplit(b"\n", 1)[0] + b"\n")
    valid = {"expression": expr.read_bytes(), "config": f"expression: {expr}\n".encode()}
    rng = np.random.default_rng(sum(map(ord, option)))
    for k, data in enumerate(_payloads(rng, valid.get(option, Path(p["labels"]).read_bytes()))):
        bad = tmp_path / f"input{k}.txt"
        bad.write_bytes(data)
        out = tmp_path / f"out{k}"
        if option == "config":
            args = ["run", str(bad), "-o", str(out)]
        elif option == "expression":
            args = ["rank", str(bad), "-o", str(out), "--rankers", "variance"]
        else:
            args = ["rank", str(expr), option, str(bad), "-o", str(out), "--rankers", "variance"]
            if option == "--go":
                args += ["--go-annotations", p["go_annotations"]]
            if option == "--go-annotations":
                args += ["--go", p["go"]]
        r = CliRunner().invoke(main, args)
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kofs: error:")]
        assert r.exit_code in (0, 2), (option, k, r.stderr, r.exception)
        assert "Traceback" not in r.stderr
        if r.exit_code == 2:
            assert len(errors) == 1, (option, k, r.stderr)
            assert not out.exists()
