"""data_fetchers and `kofs fetch`: every download goes to a local HTTP server on 127.0.0.1
started by the fixture below (no other network). Covers success + .source.json, cache hit,
--force, resume of a .part (206, 200 restart, If-Range), published and given checksums,
404, truncated body, corrupt gzip, malicious tar/zip, --offline, GEO / KEGG / STRING / GMT /
gene2go / BioGRID post-processing and the CLI contract (paths on stdout, one-line errors)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from data_fetchers import SOURCES, fetch, parse_series_matrix, read_source_json, safe_extract
from data_fetchers._archive import check_member_name
from data_fetchers._download import parse_checksum
from kofs.cli import main
from kofs.errors import InputError, ParameterError

OBO = b"format-version: 1.2\ndata-version: releases/2026-01-01\n\n[Term]\nid: GO:0008150\n" * 50
T = 5.0  # seconds: every request of these tests is bounded


# --------------------------------------------------------------------------- local server
class Server:
    """Routes path -> body with optional faults; records every request (path, headers)."""

    def __init__(self) -> None:
        self.routes: dict[str, dict] = {}
        self.requests: list[tuple[str, dict]] = []
        self.httpd: ThreadingHTTPServer | None = None

    def add(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        truncate: int | None = None,
        ignore_range: bool = False,
        etag: str = '"v1"',
    ) -> str:
        self.routes[path] = dict(
            body=body, status=status, truncate=truncate, ignore_range=ignore_range, etag=etag
        )
        return self.url(path)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def hits(self, path: str) -> list[dict]:
        return [h for p, h in self.requests if p == path]


def _handler(state: Server):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep pytest output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            state.requests.append((self.path, dict(self.headers)))
            route = state.routes.get(self.path)
            if route is None or route["status"] == 404:
                self.send_error(404, "Not Found")
                return
            body, start = route["body"], 0
            rng = self.headers.get("Range")
            if_range = self.headers.get("If-Range")
            use_range = rng and not route["ignore_range"] and (if_range in (None, route["etag"]))
            if use_range:
                start = int(re.match(r"bytes=(\d+)-", rng).group(1))
                if start >= len(body):
                    self.send_error(416, "Range Not Satisfiable")
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(route["status"])
            part = body[start:]
            self.send_header("Content-Length", str(len(part)))
            self.send_header("ETag", route["etag"])
            self.end_headers()
            if route["truncate"] is not None:
                part = part[: route["truncate"]]
            self.wfile.write(part)
            self.wfile.flush()

    return Handler


@pytest.fixture
def server():
    state = Server()
    state.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.httpd.timeout = T
    thread = threading.Thread(
        target=state.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield state
    state.httpd.shutdown()
    state.httpd.server_close()
    thread.join(T)


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _leftovers(folder: Path) -> list[str]:
    """Every name under ``folder`` (hidden temp files too), except the download locks."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.rglob("*") if not p.name.endswith(".lock"))


# --------------------------------------------------------------------------- download core
def test_success_writes_file_and_source_json(server, cache):
    url = server.add("/go-basic.obo", OBO)
    res = fetch("go-basic", cache=cache, source_url=url, timeout=T)
    path = cache / "go-basic" / "current" / "go-basic.obo"
    assert res.paths == [path] and res.downloaded == [path] and res.cached == []
    assert path.read_bytes() == OBO
    rec = read_source_json(path)
    assert rec["url"] == url and rec["size"] == len(OBO)
    assert rec["sha256"] == hashlib.sha256(OBO).hexdigest()
    assert rec["md5"] == hashlib.md5(OBO).hexdigest()
    assert rec["source"] == "go-basic" and re.match(r"\d{4}-\d\d-\d\dT", rec["date"])
    assert _leftovers(path.parent) == ["go-basic.obo", "go-basic.obo.source.json"]


def test_cache_hit_makes_no_request_and_force_refetches(server, cache):
    url = server.add("/go-basic.obo", OBO)
    fetch("go-basic", cache=cache, source_url=url, timeout=T)
    res = fetch("go-basic", cache=cache, source_url=url, timeout=T)
    assert len(server.hits("/go-basic.obo")) == 1 and res.downloaded == [] and len(res.cached) == 1
    server.add("/go-basic.obo", OBO + b"! changed\n")
    res = fetch("go-basic", cache=cache, source_url=url, force=True, timeout=T)
    assert len(server.hits("/go-basic.obo")) == 2 and res.downloaded == res.paths
    assert res.paths[0].read_bytes().endswith(b"! changed\n")


def _seed_part(cache: Path, url: str, data: bytes, etag: str = '"v1"') -> Path:
    folder = cache / "go-basic" / "current"
    folder.mkdir(parents=True)
    (folder / "go-basic.obo.part").write_bytes(data)
    (folder / "go-basic.obo.part.json").write_text(json.dumps({"url": url, "etag": etag}))
    return folder


def test_resume_part_with_range(server, cache):
    url = server.add("/go-basic.obo", OBO)
    folder = _seed_part(cache, url, OBO[:1000])
    res = fetch("go-basic", cache=cache, source_url=url, timeout=T)
    (hdr,) = server.hits("/go-basic.obo")
    assert hdr["Range"] == "bytes=1000-" and hdr["If-Range"] == '"v1"'
    assert res.paths[0].read_bytes() == OBO
    assert read_source_json(res.paths[0])["resumed_from"] == 1000
    assert _leftovers(folder) == ["go-basic.obo", "go-basic.obo.source.json"]


@pytest.mark.parametrize("case", ["server_ignores_range", "file_changed", "part_too_long"])
def test_resume_restarts_safely(server, cache, case):
    url = server.add("/go-basic.obo", OBO, ignore_range=case == "server_ignores_range")
    stale = b"X" * (len(OBO) + 10 if case == "part_too_long" else 700)
    _seed_part(cache, url, stale, etag='"old"' if case == "file_changed" else '"v1"')
    res = fetch("go-basic", cache=cache, source_url=url, timeout=T)
    assert res.paths[0].read_bytes() == OBO  # never stale bytes + tail


def test_parallel_fetch_waits_for_lock_then_uses_cache(server, cache):
    import logging

    from data_fetchers._cache import file_lock, write_source_json

    url = server.add("/go-basic.obo", OBO)
    dest = cache / "go-basic" / "current" / "go-basic.obo"
    dest.parent.mkdir(parents=True)
    waiting, results = threading.Event(), []

    class Spy(logging.Handler):
        def emit(self, record):
            if "waiting for another kofs fetch" in record.getMessage():
                waiting.set()

    spy = Spy()
    logging.getLogger("data_fetchers").addHandler(spy)
    try:
        with file_lock(dest):  # "another process" is downloading dest
            t = threading.Thread(
                target=lambda: results.append(
                    fetch("go-basic", cache=cache, source_url=url, timeout=T)
                )
            )
            t.start()
            assert waiting.wait(T), "the second fetch did not wait for the lock"
            dest.write_bytes(OBO)
            write_source_json(dest, {"url": "elsewhere"})
        t.join(T)
    finally:
        logging.getLogger("data_fetchers").removeHandler(spy)
    assert results[0].cached == [dest] and server.requests == []


def test_given_checksum_mismatch_deletes_download(server, cache):
    url = server.add("/go-basic.obo", OBO)
    with pytest.raises(InputError, match=r"checksum mismatch .* expected 0{64} \(--sha256\)"):
        fetch("go-basic", cache=cache, source_url=url, sha256="0" * 64, timeout=T)
    assert _leftovers(cache / "go-basic" / "current") == []
    good = hashlib.sha256(OBO).hexdigest()
    res = fetch("go-basic", cache=cache, source_url=url, sha256=good, timeout=T)
    assert read_source_json(res.paths[0])["verified"] == ["sha256 (--sha256)"]
    # a cached file is checked against a given digest too
    with pytest.raises(InputError, match="--force"):
        fetch("go-basic", cache=cache, source_url=url, md5="f" * 32, timeout=T)


def test_404_is_one_line_input_error_and_leaves_nothing(server, cache):
    with pytest.raises(InputError) as err:
        fetch("go-basic", cache=cache, source_url=server.url("/missing.obo"), timeout=T)
    msg = str(err.value)
    assert "HTTP 404" in msg and server.url("/missing.obo") in msg and "\n" not in msg
    assert _leftovers(cache / "go-basic") == ["current"]


def test_truncated_body_keeps_only_part_then_resumes(server, cache):
    url = server.add("/go-basic.obo", OBO, truncate=600)
    with pytest.raises(InputError, match=r"truncated: received 600 of \d+ bytes"):
        fetch("go-basic", cache=cache, source_url=url, timeout=T)
    folder = cache / "go-basic" / "current"
    assert not (folder / "go-basic.obo").exists()
    assert (folder / "go-basic.obo.part").stat().st_size == 600
    server.add("/go-basic.obo", OBO)
    res = fetch("go-basic", cache=cache, source_url=url, timeout=T)
    assert server.requests[-1][1]["Range"] == "bytes=600-"
    assert res.paths[0].read_bytes() == OBO


def test_corrupt_gzip_is_deleted(server, cache):
    bad = bytearray(_gz(b"GSE\n" * 500))
    bad[-8] ^= 0xFF  # CRC32 of the gzip trailer
    url = server.add("/x.gz", bytes(bad))
    with pytest.raises(InputError, match="corrupt.*gzip"):
        fetch("geo", params={"accession": "GSE9999"}, cache=cache, source_url=url, timeout=T)
    assert _leftovers(cache / "geo" / "GSE9999") == []


def test_network_error_names_url(cache):
    # a port nobody listens on: refused at once on 127.0.0.1
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as tmp:
        port = tmp.server_address[1]
    url = f"http://127.0.0.1:{port}/go-basic.obo"
    with pytest.raises(InputError, match=f"cannot download {re.escape(url)}: .*--offline"):
        fetch("go-basic", cache=cache, source_url=url, timeout=T)


# --------------------------------------------------------------------------- archives
def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            info.size = len(data) if data is not None else 0
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _info(name: str, kind=tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname = kind, link
    return ti


MALICIOUS_TAR = {
    "absolute": [(_info("/tmp/evil.txt"), b"x")],
    "dotdot": [(_info("ok/../../evil.txt"), b"x")],
    "symlink_out": [(_info("data/link", tarfile.SYMTYPE, "../../outside"), None)],
    "symlink_abs": [(_info("link", tarfile.SYMTYPE, "/etc/passwd"), None)],
    "hardlink_out": [(_info("h", tarfile.LNKTYPE, "../outside"), None)],
    "device": [(_info("dev", tarfile.CHRTYPE), None)],
}


@pytest.mark.parametrize("case", sorted(MALICIOUS_TAR))
def test_malicious_tar_is_refused_before_writing(tmp_path, case):
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(_tar([(_info("good.txt"), b"fine"), *MALICIOUS_TAR[case]]))
    box = tmp_path / "box"
    box.mkdir()
    with pytest.raises(InputError, match="refusing to extract"):
        safe_extract(archive, box / "out")
    assert list(box.iterdir()) == []  # not even good.txt, no temp folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "box"]


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in entries:
            zi = zipfile.ZipInfo(name)
            zi.external_attr = mode << 16
            zf.writestr(zi, data)
    return buf.getvalue()


@pytest.mark.parametrize(
    "name,mode",
    [
        ("/abs.txt", 0o100644),
        ("a/../../up.txt", 0o100644),
        ("C:/win.txt", 0o100644),
        ("link", 0o120777),
    ],
)
def test_malicious_zip_is_refused(tmp_path, name, mode):
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip([("good.txt", b"fine", 0o100644), (name, b"../../x", mode)]))
    (tmp_path / "box").mkdir()
    with pytest.raises(InputError, match="refusing to extract"):
        safe_extract(archive, tmp_path / "box" / "out")
    assert list((tmp_path / "box").iterdir()) == []


def test_benign_tar_with_inner_link_extracts(tmp_path):
    archive = tmp_path / "a.tar"
    archive.write_bytes(
        _tar(
            [
                (_info("d", tarfile.DIRTYPE), None),
                (_info("d/f.txt"), b"abc"),
                (_info("d/l", tarfile.SYMTYPE, "f.txt"), None),
            ]
        )
    )
    files = safe_extract(archive, tmp_path / "out")
    assert files == [tmp_path / "out" / "d" / "f.txt"]
    assert (tmp_path / "out" / "d" / "l").read_bytes() == b"abc"


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "", "/", "\\", "C:"]), max_size=6))
def test_member_names_never_escape(parts):
    name = "/".join(parts)
    try:
        rel = check_member_name(name, Path("x.tar"))
    except InputError:
        return
    root = Path("/root/box")
    assert os.path.normpath(root / rel).startswith(str(root) + os.sep)


def test_biogrid_extracts_zip_and_refuses_malicious(server, cache):
    tab3 = b"#BioGRID Interaction ID\tEntrez Gene Interactor A\n1\t7157\n"
    url = server.add(
        "/BIOGRID-ALL-4.4.230.tab3.zip", _zip([("BIOGRID-ALL-4.4.230.tab3.txt", tab3, 0o100644)])
    )
    res = fetch("biogrid", params={"release": "4.4.230"}, cache=cache, source_url=url, timeout=T)
    (txt,) = res.paths
    assert txt.read_bytes() == tab3 and txt.parent.name == "BIOGRID-ALL-4.4.230.tab3"
    assert read_source_json(txt)["derived_from"][0]["file"] == "BIOGRID-ALL-4.4.230.tab3.zip"
    assert fetch("biogrid", params={"release": "4.4.230"}, cache=cache, offline=True).paths == [txt]
    evil = server.add("/evil.zip", _zip([("../../evil.txt", b"x", 0o100644)]))
    with pytest.raises(InputError, match="contains '..'"):
        fetch("biogrid", params={"release": "4.4.231"}, cache=cache, source_url=evil, timeout=T)
    assert not (cache.parent / "evil.txt").exists() and not (cache / "evil.txt").exists()


# --------------------------------------------------------------------------- offline
def test_offline_lists_missing_files_and_uses_cache(server, cache):
    with pytest.raises(InputError) as err:
        fetch("string", params={"species": "9606"}, cache=cache, offline=True)
    msg = str(err.value)
    assert "--offline: 3 file(s)" in msg and "9606.protein.links.v12.0.txt.gz" in msg
    assert "https://stringdb-downloads.org/download/protein.links.v12.0/" in msg
    assert server.requests == [] and not cache.exists()
    url = server.add("/go-basic.obo", OBO)
    fetch("go-basic", cache=cache, source_url=url, timeout=T)
    res = fetch("go-basic", cache=cache, offline=True)
    assert res.cached == res.paths and len(server.requests) == 1


# --------------------------------------------------------------------------- sources
def test_gene2go_published_md5_and_taxon_filter(server, cache):
    raw = (
        b"#tax_id\tGeneID\tGO_ID\tEvidence\tQualifier\tGO_term\tPubMed\tCategory\n"
        b"9606\t1\tGO:0003674\tND\tenables\tmolecular_function\t-\tFunction\n"
        b"10090\t11287\tGO:0005576\tIDA\tlocated_in\textracellular region\t-\tComponent\n"
        b"9606\t2\tGO:0005576\tIEA\tlocated_in\textracellular region\t-\tComponent\n"
    )
    body = _gz(raw)
    server.add("/gene/gene2go.gz", body)
    server.add(
        "/gene/gene2go.gz.md5", f"MD5 (gene2go.gz) = {hashlib.md5(body).hexdigest()}\n".encode()
    )
    res = fetch(
        "gene2go", params={"taxon": "9606"}, cache=cache, source_url=server.url("/gene/"), timeout=T
    )
    (out,) = res.paths
    assert out.name == "gene2go.9606.gz"
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert [ln.split("\t")[1] for ln in lines[1:]] == ["1", "2"] and lines[0].startswith("#tax_id")
    assert read_source_json(cache / "gene2go" / "current" / "gene2go.gz")["verified"] == [
        f"md5 ({server.url('/gene/gene2go.gz.md5')})"
    ]
    server.add("/bad/gene2go.gz", body)
    server.add("/bad/gene2go.gz.md5", b"0123456789abcdef0123456789abcdef  gene2go.gz\n")
    with pytest.raises(InputError, match="checksum mismatch.*md5"):
        fetch("gene2go", cache=cache, source_url=server.url("/bad/"), force=True, timeout=T)
    assert not (cache / "gene2go" / "current" / "gene2go.gz.part").exists()
    with pytest.raises(InputError, match="no row for taxon 7227"):
        fetch("gene2go", params={"taxon": "7227"}, cache=cache, offline=True)


def test_kegg_list_link_and_kgml(server, cache, testdata):
    d = testdata / "fetch"
    server.add("/kegg/list/pathway/hsa", (d / "list_pathway_hsa.tsv").read_bytes())
    server.add("/kegg/link/pathway/hsa", (d / "link_pathway_hsa.tsv").read_bytes())
    server.add("/kegg/get/hsa00010/kgml", (d / "hsa00010.xml").read_bytes())
    server.add(
        "/kegg/get/hsa00020/kgml", (d / "hsa00010.xml").read_bytes().replace(b"00010", b"00020")
    )
    res = fetch(
        "kegg-pathways",
        params={"organism": "hsa", "kgml": True},
        cache=cache,
        source_url=server.url("/kegg/"),
        timeout=T,
    )
    folder = cache / "kegg-pathways" / "current"
    assert res.paths == [
        folder / "link_pathway_hsa.tsv",
        folder / "list_pathway_hsa.tsv",
        folder / "kgml",
    ]
    # hsa01100 (a global map) has no KGML: 404 -> skipped with a warning
    assert sorted(p.name for p in (folder / "kgml").glob("*.xml")) == [
        "hsa00010.xml",
        "hsa00020.xml",
    ]
    assert len(server.requests) == 5
    # offline afterwards: the pathway missing upstream is not reported as missing
    assert (
        fetch(
            "kegg-pathways", params={"organism": "hsa", "kgml": True}, cache=cache, offline=True
        ).paths
        == res.paths
    )
    assert len(server.requests) == 5
    from kofs.io.kgml import read_kgml
    from kofs.io.pathways import read_kegg_link

    sets = read_kegg_link(res.paths[0], names=res.paths[1])
    assert sets.ids == ("hsa00010", "hsa00020", "hsa01100")
    assert sets.names[1] == "Citrate cycle (TCA cycle)" and sets.members[0] == ("10327", "124")
    assert len(read_kgml(res.paths[2]).ids) == 2


def test_string_three_files_from_a_mirror_base(server, cache):
    for t in ("links", "aliases", "info"):
        server.add(f"/m/protein.{t}.v11.5/10090.protein.{t}.v11.5.txt.gz", _gz(t.encode()))
    res = fetch(
        "string",
        params={"species": "10090", "version": "11.5"},
        cache=cache,
        source_url=server.url("/m/"),
        timeout=T,
    )
    assert [p.name for p in res.paths] == [
        f"10090.protein.{t}.v11.5.txt.gz" for t in ("links", "aliases", "info")
    ]
    assert res.paths[0].parent == cache / "string" / "v11.5"


def test_gmt_from_url_and_html_is_rejected(server, cache, testdata):
    body = (testdata / "fetch" / "sets.gmt").read_bytes()
    url = server.add("/msigdb/sets.gmt", body)
    (path,) = fetch("gmt", params={"url": url}, cache=cache, timeout=T).paths
    assert path.read_bytes() == body and path.name == "sets.gmt"
    html = server.add("/login.gmt", b"<html>\n<body>please log in</body>\n</html>\n")
    with pytest.raises(InputError, match="not GMT"):
        fetch("gmt", params={"url": html}, cache=cache, timeout=T)
    assert not any(p.name == "login.gmt" for p in cache.rglob("*"))


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"<html><body>Service Unavailable</body></html>\n", "is not an OBO file"),
        (bytes(range(256)) * 4, "is not an OBO file"),
        (OBO[:-7], "ends in the middle of a line"),
        (b"format-version: 1.2\n\n[Typedef]\nid: part_of\n", "no \\[Term\\] stanza"),
    ],
)
def test_an_ontology_download_that_is_not_obo_is_refused_and_not_cached(server, cache, body, match):
    url = server.add("/go-basic.obo", body)
    with pytest.raises(InputError, match=match):
        fetch("go-basic", cache=cache, source_url=url, timeout=T)
    assert not any(p.name.startswith("go-basic.obo") for p in cache.rglob("*"))


def test_kgml_all_missing_is_an_error(server, cache, testdata):
    d = testdata / "fetch"
    server.add("/k/list/pathway/hsa", (d / "list_pathway_hsa.tsv").read_bytes())
    server.add("/k/link/pathway/hsa", (d / "link_pathway_hsa.tsv").read_bytes())
    with pytest.raises(InputError, match="no KGML file could be fetched for the 3 pathways"):
        fetch(
            "kegg-pathways",
            params={"organism": "hsa", "kgml": True},
            cache=cache,
            source_url=server.url("/k/"),
            timeout=T,
        )


def test_missing_local_file_is_not_found(tmp_path, cache):
    with pytest.raises(InputError, match=r"file://.*nope\.obo does not exist; check --source-url"):
        fetch("go-basic", cache=cache, source_url=(tmp_path / "nope.obo").as_uri())


def test_local_path_as_source_url(tmp_path, cache, testdata):
    res = fetch("gmt", params={"url": str(testdata / "fetch" / "sets.gmt")}, cache=cache)
    assert res.paths[0].read_bytes() == (testdata / "fetch" / "sets.gmt").read_bytes()
    assert read_source_json(res.paths[0])["url"].startswith("file://")


# --------------------------------------------------------------------------- GEO
def test_geo_series_matrix_to_expression_and_samples(server, cache, testdata):
    raw = (testdata / "fetch" / "GSE9999_series_matrix.txt").read_bytes()
    server.add("/geo/GSE9nnn/GSE9999/matrix/GSE9999_series_matrix.txt.gz", _gz(raw))
    res = fetch(
        "geo",
        params={"accession": "GSE9999"},
        cache=cache,
        source_url=server.url("/geo/"),
        timeout=T,
    )
    expr, samples = res.paths
    assert expr.name == "GSE9999.expression.tsv.gz" and samples.name == "GSE9999.samples.tsv"
    rows = [ln.split("\t") for ln in gzip.decompress(expr.read_bytes()).decode().splitlines()]
    assert rows[0] == ["ID_REF", "GSM1001", "GSM1002", "GSM1003"]
    assert rows[2] == ["1053_at", "5.5", "", "4.75"] and rows[3] == ["117_at", "3", "3.5", ""]
    assert len(rows) == 5
    tab = [ln.split("\t") for ln in samples.read_text().splitlines()]
    assert tab[0] == [
        "sample_id",
        "title",
        "source_name_ch1",
        "organism_ch1",
        "platform_id",
        "tissue",
        "grade",
        "er status",
        "characteristics_ch1",
    ]
    assert tab[1] == [
        "GSM1001",
        "tumour A",
        "breast tumour",
        "Homo sapiens",
        "GPL96",
        "tumour",
        "2",
        "",
        "batch 1",
    ]
    assert tab[2][5:] == ["tumour", "3", "positive", ""]
    assert tab[3][5:] == ["normal", "1", "", ""]
    from kofs.io.expression import read_expression

    e = read_expression(expr, missing="drop-gene")
    assert list(e.samples) == ["GSM1001", "GSM1002", "GSM1003"] and len(e.genes) == 2
    # cache hit: no second request, same outputs
    assert fetch(
        "geo",
        params={"accession": "GSE9999"},
        cache=cache,
        source_url=server.url("/geo/"),
        timeout=T,
    ).paths == [expr, samples]
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "cut,match",
    [
        (lambda t: t.replace("!series_matrix_table_end\n", ""), "truncated"),
        (lambda t: t.replace("\t9.25\t9.5", "\t9.25"), "row has 3 fields"),
        (
            lambda t: re.sub(
                r'"ID_REF".*?!series_matrix_table_end',
                '"ID_REF"\t"GSM1001"\t"GSM1002"\t"GSM1003"\n!series_matrix_table_end',
                t,
                flags=re.S,
            ),
            "no expression rows",
        ),
        (lambda t: t.replace('"GSM1003"\n"1007', '"GSM1004"\n"1007'), "differ from"),
        (lambda t: t.split("!series_matrix_table_begin")[0], "not a GEO series matrix"),
    ],
)
def test_geo_parse_errors(tmp_path, testdata, cut, match):
    src = tmp_path / "s.txt"
    src.write_text(cut((testdata / "fetch" / "GSE9999_series_matrix.txt").read_text()))
    with pytest.raises(InputError, match=match):
        parse_series_matrix(src, tmp_path / "e.tsv.gz", tmp_path / "s.tsv")


@given(
    st.lists(
        st.lists(
            st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), min_size=2, max_size=2
        ),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.sampled_from(["tissue: liver", "sex: F", "plain", ""]), min_size=2, max_size=2),
)
def test_geo_round_trip_property(tmp_path_factory, values, chars):
    tmp = tmp_path_factory.mktemp("geo")
    lines = [
        '!Sample_geo_accession\t"GSM1"\t"GSM2"',
        "!Sample_characteristics_ch1\t" + "\t".join(f'"{c}"' for c in chars),
        "!series_matrix_table_begin",
        '"ID_REF"\t"GSM1"\t"GSM2"',
    ]
    for i, row in enumerate(values):
        lines.append("\t".join([f'"p{i}"', *("null" if v is None else repr(v) for v in row)]))
    lines.append("!series_matrix_table_end")
    src = tmp / "s.txt"
    src.write_text("\n".join(lines) + "\n")
    n = parse_series_matrix(src, tmp / "e.tsv.gz", tmp / "s.tsv")
    assert n == (len(values), 2)
    rows = [
        r.split("\t")
        for r in gzip.decompress((tmp / "e.tsv.gz").read_bytes()).decode().splitlines()[1:]
    ]
    got = [[None if c == "" else float(c) for c in r[1:]] for r in rows]
    assert got == values
    samples = [r.split("\t") for r in (tmp / "s.tsv").read_text().splitlines()]
    assert [r[0] for r in samples[1:]] == ["GSM1", "GSM2"]
    for key, val in (("tissue", "liver"), ("sex", "F"), ("characteristics_ch1", "plain")):
        if any(c.startswith(key) or c == val for c in chars):
            col = samples[0].index(key)
            assert [r[col] for r in samples[1:]] == [val if val in c else "" for c in chars]


def test_geo_url_layout():
    urls = {
        a: SOURCES["geo"].files({"accession": a, "platform": p})[0].path
        for a, p in (("GSE2604", ""), ("GSE123", ""), ("GSE12345", "GPL96"))
    }
    assert urls == {
        "GSE2604": "GSE2nnn/GSE2604/matrix/GSE2604_series_matrix.txt.gz",
        "GSE123": "GSEnnn/GSE123/matrix/GSE123_series_matrix.txt.gz",
        "GSE12345": "GSE12nnn/GSE12345/matrix/GSE12345-GPL96_series_matrix.txt.gz",
    }


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(source="gos"), "unknown source 'gos'; did you mean 'go'"),
        (dict(source="go-basic", params={"taxon": "9606"}), "does not take --taxon"),
        (dict(source="goa"), "needs --species"),
        (dict(source="goa", params={"species": "../etc"}), "--species '../etc' is not valid"),
        (dict(source="go", params={"release": "latest"}), "--release 'latest' is not valid"),
        (dict(source="go", sha256="abc"), "--sha256 'abc' is not a sha256"),
        (dict(source="go", source_url="gopher://x/y"), "scheme 'gopher'"),
        (dict(source="go", timeout=0), "--timeout"),
    ],
)
def test_parameter_errors(cache, kwargs, match):
    with pytest.raises(ParameterError, match=re.escape(match) if "'" in match else match):
        fetch(**{"cache": cache, **kwargs})


def test_parse_checksum_formats():
    h = "d41d8cd98f00b204e9800998ecf8427e"
    assert parse_checksum(f"MD5(gene2go.gz)= {h}\n", algorithm="md5") == h
    assert (
        parse_checksum(
            f"{'a' * 32}  other.gz\n{h.upper()}  gene2go.gz\n",
            algorithm="md5",
            filename="gene2go.gz",
        )
        == h
    )
    assert parse_checksum("no digest here", algorithm="sha256") is None


def test_every_source_lists_https_or_http_urls():
    for spec in SOURCES.values():
        assert all(u.startswith(("http://", "https://")) for u in spec.default_urls()), spec.name


# --------------------------------------------------------------------------- CLI
def _cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_prints_paths_on_stdout(server, cache, testdata):
    raw = (testdata / "fetch" / "GSE9999_series_matrix.txt").read_bytes()
    url = server.add("/GSE9999_series_matrix.txt.gz", _gz(raw))
    r = _cli(
        "fetch", "geo", "GSE9999", "--source-url", url, "--cache", str(cache), "--timeout", "5"
    )
    assert r.exit_code == 0, r.output
    folder = cache / "geo" / "GSE9999"
    assert r.stdout.splitlines() == [
        str(folder / "GSE9999.expression.tsv.gz"),
        str(folder / "GSE9999.samples.tsv"),
    ]
    assert "1 file(s) downloaded" in r.stderr


def test_cli_errors_are_one_line_exit_2(server, cache):
    r = _cli("fetch", "go-basic", "--source-url", server.url("/nope.obo"), "--cache", str(cache))
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("kofs: error: download of ")
    r = _cli("fetch", "go-basic", "GSE1")
    assert r.exit_code == 2 and "takes no argument" in r.stderr
    r = _cli("fetch", "goa", "--species", "human", "--offline", "--cache", str(cache))
    assert r.exit_code == 2 and "goa_human.gaf.gz" in r.stderr


def test_cli_list():
    r = _cli("fetch", "list")
    assert r.exit_code == 0
    for name in ("go-basic", "goa", "gene2go", "kegg-pathways", "gmt", "string", "biogrid", "geo"):
        assert re.search(rf"^{re.escape(name)}\s", r.stdout, re.M), name
    assert "http://purl.obolibrary.org/obo/go/go-basic.obo" in r.stdout
    rows = json.loads(_cli("fetch", "list", "--json").stdout)
    assert {r["name"] for r in rows} == set(SOURCES)
