"""Gene Ontology sources: ``go-basic``, ``go`` (OBO), ``goa`` (GAF per species), ``gene2go``.

Without ``--release`` the current files are fetched into the release folder ``current`` (and
kept until ``--force``); ``--release YYYY-MM-DD`` fetches a dated GO release from
release.geneontology.org, ``--release N`` an archived GOA release. NCBI's gene2go is
verified against the ``gene2go.gz.md5`` published beside it (a warning when a mirror lacks it),
and ``--taxon`` writes the rows of one NCBI taxon to ``gene2go.<taxon>.gz``.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from pathlib import Path

from kofs.errors import InputError

from ._cache import kept_if_valid
from ._registry import FetchContext, Remote, SourceParam, SourceSpec, derive, register

GO_RELEASES = "http://release.geneontology.org"
_GO_RELEASE = SourceParam(
    "release",
    "'current' or a dated GO release YYYY-MM-DD",
    default="current",
    pattern=r"current|\d{4}-\d{2}-\d{2}",
    example="2024-01-17",
)


def _check_obo(path: Path) -> None:
    """A downloaded ontology is OBO (a ``format-version:`` header and a ``[Term]`` stanza in
    its first 64 KiB) and whole (:func:`kofs.io.ontology.check_obo_complete`): an error page,
    random bytes or a download cut off mid-line is refused."""
    from kofs.io.ontology import check_obo_complete

    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        raise InputError(f"cannot read the download ({exc}); check the source", path=path) from None
    first = next((ln for ln in head.splitlines() if ln.strip()), b"").strip()
    if not first.startswith(b"format-version:") or b"[Term]" not in head:
        raise InputError(
            "is not an OBO file (no 'format-version:' header line, or no [Term] stanza); the "
            "download was deleted; check --source-url or try again later",
            path=path,
        )
    check_obo_complete(path, str(path))  # empty, or cut off mid-line


def _obo_post(ctx: FetchContext) -> list[Path]:
    return kept_if_valid(next(iter(ctx.files.values())), _check_obo)


def _go_base(path_current: str) -> object:
    def base(v: Mapping[str, str]) -> str:
        if v["release"] == "current":
            return path_current
        return f"{GO_RELEASES}/{v['release']}/ontology"

    return base


for _name, _file, _current, _what in (
    (
        "go-basic",
        "go-basic.obo",
        "http://purl.obolibrary.org/obo/go",
        "Gene Ontology, acyclic 'basic' version (is_a/part_of/regulates only), OBO",
    ),
    (
        "go",
        "go.obo",
        "http://purl.obolibrary.org/obo",
        "Gene Ontology, full version with every relation, OBO",
    ),
):
    register(
        SourceSpec(
            name=_name,
            description=_what,
            base=_go_base(_current),
            files=lambda v, f=_file: [Remote(f, f)],
            release="{release}",
            params=(_GO_RELEASE,),
            post=_obo_post,
        )
    )


def _goa_file(v: Mapping[str, str]) -> list[Remote]:
    sp = v["species"].lower()
    if v["release"] == "current":
        return [Remote(f"{sp.upper()}/goa_{sp}.gaf.gz", f"goa_{sp}.gaf.gz")]
    return [
        Remote(
            f"old/{sp.upper()}/goa_{sp}.gaf.{v['release']}.gz", f"goa_{sp}.gaf.{v['release']}.gz"
        )
    ]


register(
    SourceSpec(
        name="goa",
        description="GO annotations (GAF 2.2) of one species from EBI GOA",
        base="https://ftp.ebi.ac.uk/pub/databases/GO/goa",
        files=_goa_file,
        release="{release}",
        params=(
            SourceParam(
                "species",
                "EBI GOA species folder in lower case: human, mouse, rat, "
                "chicken, cow, dog, pig, zebrafish, fly, worm, yeast, arabidopsis, ...",
                required=True,
                pattern=r"[a-z][a-z_]*",
                example="human",
            ),
            SourceParam(
                "release",
                "'current' or an archived GOA release number",
                default="current",
                pattern=r"current|\d+",
                example="220",
            ),
        ),
        not_found_hint="check --species (an EBI GOA folder name such as human or mouse) and --release",
    )
)


def _gene2go_post(ctx: FetchContext) -> list[Path]:
    raw = ctx.files["gene2go.gz"]
    taxon = ctx.params["taxon"]
    if not taxon:
        return [raw]
    out = ctx.folder / f"gene2go.{taxon}.gz"

    def write(tmp: Path) -> None:
        kept = 0
        with (
            gzip.open(raw, "rt", encoding="utf-8", errors="replace") as src,
            open(tmp, "wb") as fh,
            gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz,
        ):
            header = src.readline()
            if not header.startswith("#tax_id") and not header.startswith("#Format: tax_id"):
                raise InputError(
                    "is not an NCBI gene2go file (no '#tax_id' header); delete it "
                    "and fetch again with --force",
                    path=raw,
                )
            gz.write(header.encode())
            prefix = taxon + "\t"
            for line in src:
                if line.startswith(prefix):
                    gz.write(line.encode())
                    kept += 1
        if kept == 0:
            raise InputError(
                f"gene2go has no row for taxon {taxon}; check --taxon (human 9606, "
                "mouse 10090, rat 10116)",
                path=raw,
            )

    return [derive(ctx, out, [raw], write, how=f"rows of gene2go.gz with tax_id {taxon}")]


register(
    SourceSpec(
        name="gene2go",
        description="NCBI Gene -> GO annotations (all taxa; --taxon keeps one)",
        base="https://ftp.ncbi.nlm.nih.gov/gene/DATA",
        files=lambda v: [Remote("gene2go.gz", "gene2go.gz", checksum=("md5", "gene2go.gz.md5"))],
        release="current",
        params=(
            SourceParam(
                "taxon",
                "NCBI taxonomy id whose rows are written to gene2go.<taxon>.gz",
                pattern=r"\d+",
                example="9606",
            ),
        ),
        post=_gene2go_post,
        checksums="md5 (gene2go.gz.md5)",
    )
)
