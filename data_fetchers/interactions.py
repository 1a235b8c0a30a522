"""Interaction networks: ``string`` (STRING protein links, aliases, info) and ``biogrid``
(BioGRID TAB3 release, zip extracted safely inside the cache).

Neither publishes checksums for these files; give ``--sha256``/``--md5`` to pin the main file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ._archive import safe_extract
from ._cache import is_cached, source_json_path, write_source_json
from ._download import _now, file_digests
from ._registry import FetchContext, Remote, SourceParam, SourceSpec, register

STRING_TABLES = ("protein.links", "protein.aliases", "protein.info")


def _string_base(v: Mapping[str, str]) -> str:
    major = int(v["version"].split(".")[0])
    host = "stringdb-downloads.org" if major >= 12 else "stringdb-static.org"
    return f"https://{host}/download"


def _string_files(v: Mapping[str, str]) -> list[Remote]:
    sp, ver = v["species"], v["version"]
    return [
        Remote(f"{t}.v{ver}/{sp}.{t}.v{ver}.txt.gz", f"{sp}.{t}.v{ver}.txt.gz")
        for t in STRING_TABLES
    ]


register(
    SourceSpec(
        name="string",
        description="STRING protein links (combined score), aliases and info of one species",
        base=_string_base,
        files=_string_files,
        release="v{version}",
        params=(
            SourceParam(
                "species",
                "NCBI taxonomy id (9606 human, 10090 mouse)",
                required=True,
                pattern=r"\d+",
                example="9606",
            ),
            SourceParam("version", "STRING version", default="12.0", pattern=r"\d+\.\d+"),
        ),
        not_found_hint="check --species (an NCBI taxon id in STRING) and --version",
    )
)


def _biogrid_files(v: Mapping[str, str]) -> list[Remote]:
    rel = v["release"]
    if rel == "latest":
        return [Remote("Latest-Release/BIOGRID-ALL-LATEST.tab3.zip", "BIOGRID-ALL-LATEST.tab3.zip")]
    name = f"BIOGRID-ALL-{rel}.tab3.zip"
    return [Remote(f"Release-Archive/BIOGRID-{rel}/{name}", name)]


def _extracted(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".source.json")
    )


def _biogrid_post(ctx: FetchContext) -> list[Path]:
    archive = next(iter(ctx.files.values()))
    out_dir = ctx.folder / archive.name.removesuffix(".zip")
    done = out_dir.is_dir() and _extracted(out_dir)
    if done and not ctx.fresh and all(is_cached(p) for p in done):
        return done
    files = safe_extract(archive, out_dir)
    origin = {"file": archive.name, "sha256": file_digests(archive)["sha256"]}
    for f in files:
        write_source_json(
            f,
            {
                "derived_from": [origin],
                "how": "extracted from the zip",
                "date": _now(),
                **file_digests(f),
            },
        )
    return [
        f for f in files if not f.name.endswith(".source.json") and source_json_path(f).is_file()
    ]


register(
    SourceSpec(
        name="biogrid",
        description="BioGRID interactions, all organisms, TAB3 (zip, extracted in the cache)",
        base="https://downloads.thebiogrid.org/Download/BioGRID",
        files=_biogrid_files,
        release="{release}",
        params=(
            SourceParam(
                "release",
                "BioGRID release such as 4.4.230, or 'latest'",
                default="latest",
                pattern=r"latest|\d+\.\d+\.\d+",
                example="4.4.230",
            ),
        ),
        post=_biogrid_post,
        not_found_hint="check --release (see https://downloads.thebiogrid.org/BioGRID/Release-Archive/)",
    )
)
