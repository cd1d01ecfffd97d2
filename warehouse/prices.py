"""The versioned price table: ``warehouse/prices.csv`` loaded into ``prices`` (USD per million tokens).

Costs are never stored; the views of migration ``m002_prices_and_costs`` compute them from ``llm_calls`` and
``prices``, so re-pricing is: edit the CSV (add a row with a later ``effective_date`` for a price change, or a
new ``price_version``), run :func:`load_prices`, query again. No pipeline rerun.

Rows of note: ``rules`` / ``rules-v1``, ``extractive`` and ``replay`` cost 0 (offline providers' model names;
replays spend nothing); a model with no row gets a NULL cost (``llm_costs_by_run_stage.unpriced_attempts``);
``reference`` is priced like gpt-4o-mini and feeds ``llm_call_costs.reference_cost_usd``: what an offline run
would cost if its (locally counted) tokens were sent to that model. Change the ``reference`` row to cost offline
runs as if sent to another model, or query ``llm_call_costs_at('<model>')``.
"""

from __future__ import annotations

import csv
from dataclasses import astuple, dataclass
from datetime import date
from pathlib import Path

from warehouse.db import Warehouse, WarehouseError

PRICES_CSV = Path(__file__).with_name("prices.csv")
COLUMNS = (
    "price_version",
    "model",
    "effective_date",
    "input_per_mtok",
    "cached_input_per_mtok",
    "output_per_mtok",
    "batch_input_per_mtok",
    "batch_output_per_mtok",
)


class PriceFileError(WarehouseError):
    """The price CSV is malformed; the message names the file, line and column to fix."""


@dataclass(frozen=True)
class Price:
    price_version: str
    model: str
    effective_date: date
    input_per_mtok: float
    cached_input_per_mtok: float
    output_per_mtok: float
    batch_input_per_mtok: float
    batch_output_per_mtok: float


def read_price_file(path: Path | str = PRICES_CSV) -> list[Price]:
    """Parse and check the CSV: exact header, ISO dates, non-negative prices, one row per (model, date)."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise PriceFileError(f"{path}: header must be {','.join(COLUMNS)}; found {header}")
        prices: list[Price] = []
        seen: dict[tuple[str, date], int] = {}
        for line_no, row in enumerate(reader, start=2):
            if not row or all(not cell.strip() for cell in row):
                continue
            if len(row) != len(COLUMNS):
                raise PriceFileError(f"{path}:{line_no}: expected {len(COLUMNS)} columns, found {len(row)}")
            version, model, eff = (cell.strip() for cell in row[:3])
            if not version or not model:
                raise PriceFileError(f"{path}:{line_no}: price_version and model must not be empty")
            try:
                eff_date = date.fromisoformat(eff)
            except ValueError:
                raise PriceFileError(f"{path}:{line_no}: effective_date {eff!r} is not an ISO date (YYYY-MM-DD)") from None
            amounts = []
            for name, cell in zip(COLUMNS[3:], row[3:]):
                try:
                    value = float(cell)
                except ValueError:
                    raise PriceFileError(f"{path}:{line_no}: {name} {cell!r} is not a number") from None
                if value < 0:
                    raise PriceFileError(f"{path}:{line_no}: {name} is negative ({value})")
                amounts.append(value)
            key = (model, eff_date)
            if key in seen:
                raise PriceFileError(
                    f"{path}:{line_no}: {model} already has a price effective {eff_date} (line {seen[key]}); "
                    "give the new price a later effective_date"
                )
            seen[key] = line_no
            prices.append(Price(version, model, eff_date, *amounts))
    if not prices:
        raise PriceFileError(f"{path}: no price rows")
    return prices


def load_prices(wh: Warehouse, path: Path | str = PRICES_CSV) -> int:
    """Upsert the CSV into ``prices`` (idempotent: same key -> row replaced); returns the number of rows read."""
    prices = read_price_file(path)
    placeholders = ", ".join("?" for _ in COLUMNS)
    with wh.transaction():
        wh.con.executemany(
            f"INSERT OR REPLACE INTO prices ({', '.join(COLUMNS)}) VALUES ({placeholders})",
            [list(astuple(p)) for p in prices],
        )
    return len(prices)


def list_prices(wh: Warehouse) -> list[dict]:
    return wh.query(f"SELECT {', '.join(COLUMNS)} FROM prices ORDER BY model, effective_date")
