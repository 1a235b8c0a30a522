"""KEGG pathways through the KEGG REST API (``kegg-pathways``).

Fetches ``list/pathway/<org>`` (pathway ids and names) and ``link/pathway/<org>`` (gene ->
pathway pairs) -- together what :func:`kofs.io.pathways.read_kegg_link` reads -- and with
``--kgml`` one ``get/<pathway>/kgml`` per listed pathway into ``kgml/`` (read by
:func:`kofs.io.kgml.read_kgml` given the folder). KEGG publishes no checksums. Requests to
rest.kegg.jp are spaced by 0.35 s (KEGG asks for at most 3 per second); pathways without a
KGML (global maps, 404) are skipped with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from kofs.errors import InputError

from ._registry import FetchContext, Remote, SourceParam, SourceSpec, register

_PATHWAY_ID = re.compile(r"^(?:path:)?([a-z]{2,4}\d{5})$")


def _files(v: Mapping[str, str]) -> list[Remote]:
    org = v["organism"]
    return [
        Remote(f"link/pathway/{org}", f"link_pathway_{org}.tsv"),
        Remote(f"list/pathway/{org}", f"list_pathway_{org}.tsv"),
    ]


def pathway_ids(list_file: Path, organism: str) -> list[str]:
    """Pathway ids (``hsa00010``) of a KEGG ``list/pathway/<org>`` answer, in file order."""
    ids = []
    with open(list_file, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            m = _PATHWAY_ID.match(line.split("\t", 1)[0].strip())
            if not m:
                raise InputError(
                    f"not a KEGG pathway list line ({line.strip()[:60]!r}); delete the file and "
                    "fetch again with --force",
                    path=list_file,
                    line=n,
                )
            pid = m.group(1)
            if not pid.startswith(organism):
                pid = organism + pid[-5:]  # 'map00010' style ids of reference lists
            ids.append(pid)
    return ids


def _expand(ctx: FetchContext) -> list[Remote]:
    if not ctx.params["kgml"]:
        return []
    org = ctx.params["organism"]
    ids = pathway_ids(ctx.files[f"list_pathway_{org}.tsv"], org)
    return [Remote(f"get/{pid}/kgml", f"kgml/{pid}.xml", optional=True) for pid in ids]


def _post(ctx: FetchContext) -> list[Path]:
    org = ctx.params["organism"]
    out = [ctx.files[f"link_pathway_{org}.tsv"], ctx.files[f"list_pathway_{org}.tsv"]]
    if ctx.params["kgml"]:
        kgml = ctx.folder / "kgml"
        if not any(kgml.glob("*.xml")):
            raise InputError(
                f"no KGML file could be fetched for the {len(_expand(ctx))} pathways of "
                f"{org!r} (see the warnings); check --organism and --source-url",
                path=kgml,
            )
        out.append(kgml)
    return out


register(
    SourceSpec(
        name="kegg-pathways",
        description="KEGG gene-pathway links and pathway names (REST), optional KGML per pathway",
        base="https://rest.kegg.jp",
        files=_files,
        release="current",
        params=(
            SourceParam(
                "organism",
                "KEGG organism code (hsa human, mmu mouse, rno rat, ...)",
                required=True,
                pattern=r"[a-z]{3,4}",
                example="hsa",
            ),
            SourceParam("kgml", "also fetch the KGML of every pathway into kgml/", flag=True),
        ),
        expand=_expand,
        post=_post,
        not_found_hint="check --organism (a KEGG organism code such as hsa)",
        request_interval=0.35,
    )
)
