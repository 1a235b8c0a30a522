"""The GOSemSim term tables shipped with kofs (``kofs/data/gosemsim/``), picked by GO release.

R GOSemSim gives information content only to the terms of its internal table ``gotbl``; the
live terms of an OBO that the table lacks must get none for ``mode="gosemsim"`` to reproduce
``mgeneSim`` exactly (see ``kofs/data/gosemsim/README.md``). :func:`gosemsim_unknown_terms`
returns the shipped list for an ontology's release, or ``None`` with one warning when kofs ships
none for it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

from kofs.errors import ParameterError
from kofs.io.ontology import Ontology

log = logging.getLogger(__name__)

__all__ = ["TermList", "gosemsim_term_lists", "go_release", "gosemsim_unknown_terms"]


@dataclass(frozen=True)
class TermList:
    """One shipped list: GOSemSim version, GO release (``YYYY-MM-DD``) and file name."""

    gosemsim_version: str
    go_release: str
    file: str

    def terms(self) -> tuple[str, ...]:
        text = (resources.files("kofs") / "data" / "gosemsim" / self.file).read_text("utf-8")
        ids = (line.split("#", 1)[0].strip() for line in text.splitlines())
        return tuple(i for i in ids if i)


def gosemsim_term_lists() -> list[TermList]:
    """Every shipped list (``kofs/data/gosemsim/index.tsv``), newest GOSemSim version first."""
    text = (resources.files("kofs") / "data" / "gosemsim" / "index.tsv").read_text("utf-8")
    rows = [line.split("\t") for line in text.splitlines()[1:] if line.strip()]
    out = [TermList(r[0].strip(), r[1].strip(), r[3].strip()) for r in rows]
    return sorted(out, key=lambda t: [int(x) for x in t.gosemsim_version.split(".")], reverse=True)


def go_release(ontology: Ontology) -> str | None:
    """``YYYY-MM-DD`` of the ontology's ``data-version`` (``releases/2022-07-01``) or, failing
    that, of its ``date`` header (``01:07:2022 12:00``); None if neither says."""
    m = re.search(r"(\d{4})-(\d{2})-(\d{2})", ontology.data_version or "")
    if m:
        return m.group(0)
    m = re.match(r"\s*(\d{2}):(\d{2}):(\d{4})", ontology.date or "")
    if m:
        return f"{m.group(3)}-{m.group(2)}-{m.group(1)}"
    return None


def gosemsim_unknown_terms(
    ontology: Ontology, version: str | None = None
) -> tuple[str, ...] | None:
    """The terms GOSemSim's table lacks for this ontology's release, or None (one warning).

    Parameters
    ----------
    ontology : Ontology
    version : str, optional
        GOSemSim version (e.g. ``"2.24"``); default the newest shipped for the release.

    Raises
    ------
    ParameterError
        ``version`` is not one kofs ships a list for.
    """
    lists = gosemsim_term_lists()
    shipped = ", ".join(f"{t.gosemsim_version} for GO {t.go_release}" for t in lists)
    if version is not None:
        lists = [t for t in lists if t.gosemsim_version == str(version).strip()]
        if not lists:
            raise ParameterError(
                f"--gosemsim-version {version!r}: kofs ships term tables of GOSemSim {shipped}"
            )
    release = go_release(ontology)
    hit = next((t for t in lists if t.go_release == release), None)
    if hit is None:
        log.warning(
            "no GOSemSim term table for GO release %s (kofs ships %s): --mode gosemsim may "
            "differ from R GOSemSim on terms its table lacks; give them with --unknown-terms",
            release or "unknown", shipped,
        )  # fmt: skip
        return None
    log.info(
        "GOSemSim %s term table for GO %s: %d terms without IC",
        hit.gosemsim_version, hit.go_release, len(hit.terms()),
    )  # fmt: skip
    return hit.terms()
