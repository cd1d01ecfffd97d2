"""The one door to the DuckDB file: connection, migrations, serialized writes, typed errors.

Tasks never open connections; they receive a :class:`Warehouse` (or call the store functions in ``warehouse/``).
One process holds the file at a time (DuckDB's own lock); a second run gets :class:`WarehouseBusyError`.
Threads inside a process share one connection; every statement takes the same lock, so writes are serialized.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from schemas.settings import get_settings
from warehouse.errors import WarehouseBusyError, WarehouseError  # noqa: F401 (importers take them from here too)
from warehouse.llm_log import close_calls, journal_files, recover_journal
from warehouse.migrations import MIGRATIONS

log = logging.getLogger("arbiter.warehouse")


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class Warehouse:
    def __init__(self, path: Path | str, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise WarehouseError(f"no warehouse at {self.path}: run `arbiter ingest` or `arbiter demo` first")
        else:
            self._recover_for_reader()
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise WarehouseBusyError(
                    f"warehouse {self.path} is in use by another process (another arbiter run?); "
                    f"wait for it to finish or point ARBITER_HOME elsewhere. DuckDB said: {exc}"
                ) from exc
            raise
        self._lock = threading.RLock()
        if not read_only:
            try:
                self.migrate()
                recover_journal(self)  # llm_calls rows a killed process journaled but never inserted
            except BaseException:
                self.con.close()  # release the file: the caller gets no warehouse to close
                raise

    def _recover_for_reader(self) -> None:
        """Before a read-only open: a brief read-write open recovers the llm_calls rows a killed writer journaled,
        so that readers see every call that returned. If it cannot (other readers hold the file), read without."""
        if not journal_files(self.path):
            return
        try:
            Warehouse(self.path).close()
        except (WarehouseError, duckdb.Error, OSError) as exc:
            log.warning("%s has llm_calls rows in its journal that are not in the table yet, and could not be "
                        "opened read-write to insert them (%s); they are inserted by the next read-write open",
                        self.path, exc)

    # -- schema -----------------------------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        with self._lock:
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
            )
            done = {r[0] for r in self.con.execute("SELECT name FROM _migrations").fetchall()}
            applied = []
            for name, fn in MIGRATIONS:
                if name in done:
                    continue
                self.con.execute("BEGIN TRANSACTION")
                try:
                    fn(self.con)
                    self.con.execute("INSERT INTO _migrations VALUES (?, ?)", [name, utcnow()])
                    self.con.execute("COMMIT")
                except Exception:
                    self.con.execute("ROLLBACK")
                    raise
                applied.append(name)
            return applied

    # -- statements -------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Run one statement and fetch everything (an unfinished result would block the connection)."""
        with self._lock:
            cur = self.con.execute(sql, params or [])
            return cur.fetchall() if cur.description else []

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            cur = self.con.execute(sql, params or [])
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

    def query_where(self, select: str, where: dict[str, Any], order_by: str, *,
                    optional: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """``select`` (``SELECT ... FROM table``) restricted to ``column = value`` for every ``where`` item and for
        every ``optional`` item whose value is not None, then ``ORDER BY order_by``."""
        used = {**where, **{column: value for column, value in (optional or {}).items() if value is not None}}
        return self.query(f"{select} WHERE {' AND '.join(f'{column} = ?' for column in used)} ORDER BY {order_by}",
                          list(used.values()))

    def query_df(self, sql: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
        with self._lock:
            return self.con.sql(sql, params=list(params) if params else None).pl()  # DuckDB 2: results lack .pl()

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        rows = self.execute(sql, params)
        return rows[0][0] if rows else None

    def insert_df(self, table: str, df: pl.DataFrame) -> int:
        """Insert a polars frame by column name (extra table columns get their defaults / NULL)."""
        if df.height == 0:
            return 0
        with self._lock:
            self.con.register("_arbiter_insert", df.to_arrow())
            try:
                cols = ", ".join(f'"{c}"' for c in df.columns)
                self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _arbiter_insert")
            finally:
                self.con.unregister("_arbiter_insert")
        return df.height

    def insert_rows(self, table: str, rows: list[dict[str, Any]]) -> int:
        """Insert dict rows by column name through Arrow (``executemany`` costs ~10 ms a row in DuckDB)."""
        if not rows:
            return 0
        cols = list(rows[0].keys())
        data = pa.table({c: pa.array([r[c] for r in rows], from_pandas=True) for c in cols})
        collist = ", ".join(f'"{c}"' for c in cols)
        with self._lock:
            self.con.register("_arbiter_rows", data)
            try:
                self.con.execute(f"INSERT INTO {table} ({collist}) SELECT {collist} FROM _arbiter_rows")
            finally:
                self.con.unregister("_arbiter_rows")
        return len(rows)

    @contextmanager
    def registered(self, name: str, data: pa.Table) -> Iterator["Warehouse"]:
        """``data`` visible to statements as the view ``name`` for the block (write lock held)."""
        with self._lock:
            self.con.register(name, data)
            try:
                yield self
            finally:
                self.con.unregister(name)

    @contextmanager
    def transaction(self) -> Iterator["Warehouse"]:
        """All-or-nothing block; holds the write lock for its duration."""
        with self._lock:
            self.con.execute("BEGIN TRANSACTION")
            try:
                yield self
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
            else:
                self.con.execute("COMMIT")

    def close(self) -> None:
        if not self.read_only:
            close_calls(self)  # queued llm_calls rows land, the journal goes, before closing
        with self._lock:
            self.con.close()

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_warehouse(settings=None, read_only: bool = False) -> Warehouse:
    settings = settings or get_settings()
    return Warehouse(settings.duckdb_path, read_only=read_only)
