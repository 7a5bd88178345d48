"""Traces: what happened inside a run, one record per event.

A traced run (``atmlab run SCENARIO --trace FILE``, ``atmlab.run(...,
trace=FILE)``) writes one record per event of the kinds the scenario's
``[trace]`` table asks for (every kind without it), as the run goes: cells
dropped and why, frames discarded by EPD/PPD, AAL5 frames delivered or lost,
RM cells sent, turned around and received with their fields and the
source's ACR, switch controllers' decisions, TCP sends, retransmissions,
timeouts, fast retransmits and windows. The core writes CSV; a file named
``*.parquet`` is converted to Parquet (the ``parquet`` extra). Every
column and event is described in ``docs/experiments.md``, "Traces".

A traced run runs in the core's reference mode (every slot and every
cell-hop an event), so every record is written at its own time and the
file is in time order; its results are those of the same run untraced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import AtmlabError, require_extra

if TYPE_CHECKING:
    import pandas as pd

# The columns of a trace file, in order, and their types.
COLUMNS: dict[str, str] = {
    "time_ps": "Int64", "time_s": "float64", "kind": "category", "event": "category", "port": "string",
    "host": "string", "vc": "string", "dir": "category", "reason": "category", "queue": "Int64",
    "cells": "Int64", "er_bps": "float64", "ccr_bps": "float64", "ci": "boolean", "ni": "boolean",
    "acr_bps": "float64", "load_factor": "float64", "fair_share_bps": "float64", "abr_capacity_bps": "float64",
    "active_vcs": "float64", "conn": "string", "seq": "Int64", "len": "Int64", "cwnd": "Int64",
    "ssthresh": "Int64",
}


def csv_path_for(path: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """Where the core writes the CSV for a trace asked at `path`: the path
    itself, or (for ``.parquet``) a temporary file beside it, to convert."""
    p = Path(path)
    if p.suffix.lower() != ".parquet":
        return p, None
    require_extra("parquet", "a .parquet trace", "pyarrow")
    import tempfile  # here: it imports random and shutil, which an untraced run does not need (start-up)

    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".csv", dir=p.parent if str(p.parent) else ".")
    os.close(fd)
    return Path(tmp), p


def finish(csv: Path, parquet: Path | None) -> Path:
    """Converts the core's CSV into Parquet if asked (streaming, in
    batches: memory flat however long the trace); the file written."""
    if parquet is None:
        return csv
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    try:
        reader = pacsv.open_csv(csv, convert_options=pacsv.ConvertOptions(column_types=_arrow_types(pa)))
        with pq.ParquetWriter(parquet, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
    except (OSError, pa.ArrowException) as e:
        raise AtmlabError(f"{parquet}: cannot write the trace: {e}") from None
    finally:
        csv.unlink(missing_ok=True)
    return parquet


def _arrow_types(pa: object) -> dict[str, object]:
    kinds = {"Int64": pa.int64(), "float64": pa.float64(), "boolean": pa.bool_()}  # type: ignore[attr-defined]
    return {c: kinds.get(t, pa.string()) for c, t in COLUMNS.items()}  # type: ignore[attr-defined]


def read(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A trace file (CSV or Parquet) as a DataFrame with the documented
    column types (nullable integers and booleans: a column a record has
    nothing for is missing)."""
    import pandas as pd

    p = Path(path)
    if p.suffix.lower() == ".parquet":
        require_extra("parquet", "reading a .parquet trace", "pyarrow")
        df = pd.read_parquet(p)
    else:
        df = pd.read_csv(p, dtype={c: ("string" if t == "category" else t) for c, t in COLUMNS.items()},
                         keep_default_na=False, na_values={c: [""] for c in COLUMNS})
    for c, t in COLUMNS.items():
        if c in df and t == "category":
            df[c] = df[c].astype("string").fillna("").astype("category")
        elif c in df and t == "string":
            df[c] = df[c].astype("string").fillna("")
    return df
