"""``arbiter corpus``: the documents of a home with what each says it is (registered by ``flows.cli``).

One line a document (its type, issuer, period and date, read from its first pages: ``tasks.corpus.identity``);
``--show`` prints one document's fields with the line each was read from; ``--json`` everything. ``--identify``
reads the identity of documents ingested before identities existed, from their stored lines (no parse, no
embedding). Imports its modules when it runs, like every command (see ``flows.cli``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from flows.cli_common import HomeOpt, echo_json

IDENTITY_FIELDS = ("title", "issuer", "parties", "tickers", "doc_type", "form", "period_end", "period_months",
                   "fiscal_year_end_month", "fiscal_year", "fiscal_period", "period_names", "date")


def _period(ident) -> str:
    if ident is None:
        return ""
    label = ""
    if ident.fiscal_period and ident.fiscal_year:
        label = (f"FY{ident.fiscal_year.value}" if ident.fiscal_period.value == "FY"
                 else f"{ident.fiscal_period.value} FY{ident.fiscal_year.value}")
    if ident.period_end:
        label = f"{label} ({ident.period_end.value})" if label else f"ended {ident.period_end.value}"
    return label


def corpus_rows(wh) -> list[dict[str, Any]]:
    """Every document of the home with its identity (None when not read yet) and one-line description."""
    from tasks.corpus.identity import describe, load_identity  # lazy: see the module docstring
    from warehouse.corpus import list_documents

    rows = []
    for r in list_documents(wh):
        ident = load_identity(r.get("identity"))
        rows.append({"path": r["path"], "doc_id": r["doc_id"], "status": r["status"], "pages": r["pages"],
                     "identity": ident, "describe": describe(ident) if r["status"] == "ok" else r["error"]})
    return rows


def corpus_cmd(home: Optional[Path] = HomeOpt,
               show: Optional[str] = typer.Option(None, "--show", help="one document (a part of its path or its "
                                                                        "doc id): each field with its source line"),
               identify: bool = typer.Option(False, "--identify", help="read the identity of documents that have "
                                                                       "none, from their stored first pages"),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """List the corpus with what each document says it is: type, issuer, period, date (from its first pages)."""
    from duckdb import BinderException  # lazy: see the module docstring

    from schemas.settings import get_settings
    from tasks.corpus.ingest import read_missing_identities
    from warehouse.corpus import list_documents
    from warehouse.db import Warehouse

    settings = get_settings(home)
    if identify:
        with Warehouse(settings.duckdb_path) as wh:
            n = read_missing_identities(wh, [r["path"] for r in list_documents(wh, "ok")])
        typer.echo(f"identity read for {n} document(s) from their stored first pages", err=True)
    try:
        with Warehouse(settings.duckdb_path, read_only=True) as wh:
            rows = corpus_rows(wh)
    except BinderException:
        typer.echo("this home predates document identities: run `arbiter corpus --identify` (or ingest the corpus "
                   "again: unchanged files are not parsed or embedded again)", err=True)
        raise typer.Exit(1) from None
    if show:
        rows = [r for r in rows if show in r["path"] or (r["doc_id"] or "").startswith(show)]
        if not rows:
            raise typer.BadParameter(f"no document whose path or doc id matches {show!r}")
    if as_json:
        echo_json([{**r, "identity": r["identity"].model_dump(exclude_none=True) if r["identity"] else None}
                   for r in rows])
        return
    if show:
        for r in rows:
            _echo_fields(r)
        return
    missing = sum(1 for r in rows if r["status"] == "ok" and r["identity"] is None)
    typer.echo(f"{'doc':<9}{'file':<34}{'type':<20}{'issuer or title':<30}{'period':<26}date")
    for r in rows:
        ident = r["identity"]
        kind = str(ident.doc_type.value).replace("_", " ") if ident and ident.doc_type else ""
        who = ""  # who issued it, else its parties, else its title
        if ident is not None:
            who = str(ident.issuer.value) if ident.issuer else " / ".join(str(p.value) for p in ident.parties)
            who = who or (f'"{ident.title.value}"' if ident.title else "")
        when = str(ident.date.value) if ident and ident.date else ""
        name = Path(r["path"]).name
        typer.echo(f"{(r['doc_id'] or '')[:8]:<9}{name[:33]:<34}{kind[:19]:<20}{who[:29]:<30}{_period(ident)[:25]:<26}"
                   f"{when}" + ("" if r["status"] == "ok" else f"  [{r['status']}]"))
    if missing:
        typer.echo(f"{missing} document(s) without an identity: `arbiter corpus --identify` reads them", err=True)


def _echo_fields(r: dict[str, Any]) -> None:
    typer.echo(f"{r['path']}  ({(r['doc_id'] or '')[:12]}, {r['status']})")
    typer.echo(f"  {r['describe']}")
    ident = r["identity"]
    if ident is None:
        return
    for name in IDENTITY_FIELDS:
        value = getattr(ident, name)
        for f in value if isinstance(value, list) else [value]:
            if f is not None:
                typer.echo(f"  {name:<22}{str(f.value):<32} <- {f.source}")
    if ident.unread:
        typer.echo(f"  not read: {', '.join(ident.unread)}")
