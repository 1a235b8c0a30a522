"""Gene sets in MSigDB GMT format from any URL (``gmt --url URL``).

The release folder is the first 12 hex digits of the URL's sha256 (one folder per URL); the
file keeps the URL's base name. A download that does not look like GMT (an HTML login page,
say) is deleted and reported. GMT sites publish no checksums: give ``--sha256``/``--md5``.
"""

from __future__ import annotations

import gzip
import hashlib
import posixpath
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from kofs.errors import InputError

from ._cache import kept_if_valid
from ._registry import FetchContext, Remote, SourceParam, SourceSpec, register


def _url(v: Mapping[str, str]) -> str:
    from ._fetch import normalise_url

    return normalise_url(v["url"], option="--url")


def _name(v: Mapping[str, str]) -> str:
    base = posixpath.basename(urllib.parse.urlsplit(_url(v)).path)
    base = re.sub(r"[^A-Za-z0-9._+-]", "_", base).lstrip(".")
    return base or "genesets.gmt"


def _check_gmt(path: Path) -> None:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                if line.count("\t") >= 2:
                    return
                raise InputError(
                    f"line {n} has fewer than 3 tab-separated fields, so this is not GMT "
                    "(set id, description, genes...); the download was deleted; check --url",
                    path=path,
                )
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the download ({exc}); check --url", path=path) from None
    raise InputError("the download is empty; check --url", path=path)


def _post(ctx: FetchContext) -> list[Path]:
    return kept_if_valid(next(iter(ctx.files.values())), _check_gmt)


register(
    SourceSpec(
        name="gmt",
        description="MSigDB-style gene sets (GMT) from a URL",
        base=_url,
        files=lambda v: [Remote("", _name(v))],
        release=lambda v: hashlib.sha256(_url(v).encode()).hexdigest()[:12],
        params=(
            SourceParam(
                "url",
                "URL (or local path) of the GMT file",
                required=True,
                pattern=r"\S+",
                example="https://example.org/sets.gmt",
            ),
        ),
        post=_post,
        checksums="none published (give --sha256 or --md5)",
    )
)
