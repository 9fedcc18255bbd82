# SPDX-License-Identifier: Apache-2.0
"""Disk usage per Tango type: bytes per archived event on each backend and storage variant.

Model
-----
A `Case` is one data table's worth of events: a Tango type, format and write type, an array size,
N events spread over A attributes (one event per attribute every `period_s`, attributes interleaved
in time as a subscriber stores them). Values come from the seeded emitter (`EventStream`): doubles
and longs a random walk, booleans a step, strings `string_chars` characters of noise, states and
enums a cycle; READ_WRITE attributes carry the same value on both sides. Scalar numeric types are
built as numpy columns of the same character instead (`columns`), which load several times faster.

For each backend and `MeasureVariant` (index set `pk` / `pk+2`; PostgreSQL/TimescaleDB also after
`CLUSTER`; MariaDB also `ROW_FORMAT=COMPRESSED`, `PAGE_COMPRESSED=1` and the MyRocks engine), the
cases run in *rounds* — at most one case per table per round, each round in a fresh database — so
every case starts from an empty table. It is loaded in cumulative steps, `Case.sizes` (geometric,
from events/span to events), and its table measured before and after each (`Backend.table_sizes`,
split into data / index / TOAST / free, with the server's own total). The pages in use (allocated
blocks for sparse files) are fitted as bytes = fixed + marginal x events (`fit`): the marginal is
what the table costs per event once it is large, and the headline bytes per event; the fixed part,
the fit's quality and the slack (InnoDB space reserved ahead of need) are reported beside it, and a
case whose sizes lie off the line is flagged (`fit_ok` false) and not planned on. The
write-ahead log (PostgreSQL WAL, InnoDB redo, MariaDB binary log when on) is reported separately,
as log bytes per event; it is server-wide, so other activity on the same server adds to it.

Raw bytes of an event (the denominator of the compression ratio): 8 (timestamp) + 4 (attribute id)
+ 1 (quality) + the value bytes of every side present: per element the Tango type's size (boolean,
uchar 1; short, ushort, enum 2; long, ulong, float, state 4; long64, ulong64, double 8), strings their
UTF-8 length, DevEncoded format + data length. Array dimensions and recv_time are not counted.

Documented per-row minimum (what the engine cannot store a row in less than): PostgreSQL 4-byte item
pointer + MAXALIGN(23-byte tuple header + null bitmap) + the stored column bytes (pg_column_size,
alignment padding excluded); InnoDB (COMPACT/DYNAMIC) 5-byte record header + 6-byte transaction id
+ 7-byte roll pointer + null bitmap + 1–2 length bytes per non-NULL variable-length column + the
column bytes. Measured data bytes per row minus that minimum is the page/alignment/fill overhead.

Events go through the backend's column loader (binary COPY / LOAD DATA, scalar numeric types) or
its bulk writer (`recorded_load`: what the writer sent for the first variant of a server is sent
again, unchanged, to the next ones, which register the attributes with the same ids); any other path — e.g. the real HDB++ subscriber fed by simulated
devices — plugs in as a `Loader` function. `validate` checks the fit against a load of millions of
rows (`hdbbench size validate`).
"""

from hdbbench.parts.disk.cases import (
    RAW_FIXED_BYTES,
    Case,
    Loader,
    Tally,
    array_events,
    bulk_loader,
    case_attributes,
    case_batches,
    default_cases,
    default_span,
    parse_case,
    value_bytes,
)
from hdbbench.parts.disk.inventory import InventoryRun, measure_inventory
from hdbbench.parts.disk.measure import (
    CaseResult,
    VariantOutcome,
    array_fits,
    measure_case,
    measure_variant,
    table_for,
)
from hdbbench.parts.disk.runs import CSV_COLUMNS, run_measure
from hdbbench.parts.disk.variants import DEFAULT_VARIANTS, MeasureVariant, variants_for

__all__ = [
    "CSV_COLUMNS", "DEFAULT_VARIANTS", "RAW_FIXED_BYTES", "Case", "CaseResult", "InventoryRun", "Loader", "MeasureVariant",
    "Tally", "VariantOutcome", "array_events", "array_fits", "bulk_loader", "case_attributes", "case_batches",
    "default_cases", "default_span",
    "measure_case", "measure_inventory", "measure_variant", "parse_case", "run_measure", "table_for",
    "value_bytes", "variants_for",
]
