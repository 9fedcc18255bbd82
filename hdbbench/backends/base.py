# SPDX-License-Identifier: Apache-2.0
"""The small interfaces every database backend implements.

`Backend` owns one HDB++ database on one server: it creates the schema for a `SchemaVariant`,
verifies a live database against the same definition, drops it, clusters the data tables, counts
and sizes what is stored and hands out a `BulkWriter`. `ExtractionBackend` is what data generation,
dumps and extraction need on top. Abilities only some backends have are protocols of
`hdbbench.backends.abilities`, each declared by one class method of `Backend` that returns the
backend's implementation or None (`aging_layout()`, `maintenance()`, `aggregates()`,
`inventory_reader()`, `faults()`, `storage_options()`, `cold_restart()`, `outside_figures()`,
`memory_model()`); the parts a backend cannot serve at all (a backend without a database has no extraction) it lists in
`lacks`, which scenario validation asks before anything starts.

The schema model (`SchemaVariant`, `TableDef`, `TableSize`, ...) lives in `model` and is re-exported
here; the list of backends lives in `registry`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Protocol, runtime_checkable

from hdbbench.backends.abilities import (
    Aggregates,
    AgingLayout,
    ColdRestart,
    InventoryReader,
    MaintenanceJobs,
    MemoryModel,
    OutsideFigures,
    StorageOptions,
    TableFaults,
)
from hdbbench.backends.model import (
    INDEX_VARIANTS,
    ColumnDef,
    ForeignKeyDef,
    IndexDef,
    SchemaVariant,
    TableDef,
    TableSize,
    compare_tables,
)
from hdbbench.model.errors import ConfigError
from hdbbench.model.hdbtypes import AttParameter, AttrFormat, AttributeInfo, Event, TangoType

__all__ = [
    "ABILITIES", "DATABASE_FAULTS", "DISK", "EXTRACTION", "INDEX_VARIANTS", "SQL_SCHEMA",
    "Backend", "BulkWriter", "ColumnDef", "ExtractionBackend", "ForeignKeyDef", "IndexDef", "SchemaVariant",
    "TableDef", "TableSize", "compare_tables",
]

# Abilities a backend may lack (`Backend.lacks`). Scenario validation and the commands that need one
# ask the backend class before anything starts; nothing outside a backend's folder names a backend.
EXTRACTION = "extraction"            # [extraction], `extract`, `data generate/dump/load`: values read back
DISK = "disk"                        # [disk], `size measure`: tables whose size is measured
DATABASE_FAULTS = "database faults"  # [faults] kinds that stop, lock or fill the database server
SQL_SCHEMA = "sql schema"            # schemas/<name>/: the DDL `hdbbench schema files` writes
ABILITIES = (EXTRACTION, DISK, DATABASE_FAULTS, SQL_SCHEMA)


class BulkWriter(abc.ABC):
    """Stores HDB++ rows the way a subscriber does, in batches.

    register_attribute() must be called before events of that attribute are written; it is
    idempotent and returns the att_conf_id. write() stores a batch in one transaction and returns
    the number of events stored; a failing batch raises and stores nothing.
    """

    @abc.abstractmethod
    def register_attribute(self, info: AttributeInfo, event_time: datetime | None = None) -> int:
        """Insert att_conf (+ an `add` history event) if new; return att_conf_id."""

    @abc.abstractmethod
    def write_parameter(self, param: AttParameter) -> None:
        """Insert one att_parameter row (+ an `insert_param` history event)."""

    @abc.abstractmethod
    def write_history(self, att_name: str, event: str, event_time: datetime) -> None:
        """Insert one att_history row (event is one of hdbtypes.HISTORY_EVENTS)."""

    @abc.abstractmethod
    def write(self, events: Iterable[Event]) -> int:
        """Store a batch of events of registered attributes (any mix of tables)."""

    def write_recorded(self, events: Iterable[Event]) -> tuple[int, Any]:
        """write(), and what it sent, for `replay` to send unchanged to another database of the same
        layout whose attributes were registered with the same ids (the disk measurement loads the
        same events into every variant). Default: nothing recorded (None)."""
        return self.write(events), None

    def replay(self, recorded: Any) -> int:
        """Send again, in one transaction, what `write_recorded` sent; return the events stored."""
        raise NotImplementedError(f"{type(self).__name__} records nothing to replay")

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> BulkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Backend(abc.ABC):
    """One HDB++ database (`database`) on one server endpoint."""

    name: str = ""
    default_indexes: str = "pk+2"
    # Disk measurement: the variants measured by default; whether CLUSTER changes the layout (then
    # each variant is measured again after it); whether an array event is stored as one row per element.
    disk_variants: ClassVar[tuple[str, ...]] = ("pk", "pk+2")
    separate_clustering: ClassVar[bool] = True
    row_per_element: ClassVar[bool] = False
    # How published studies (hdbbench.parts.disk.reference) name this engine; "" when none does.
    published_as: ClassVar[str] = ""
    # What a cold restart of its server leaves warm (said with cold extraction results); "" when nothing.
    cold_note: ClassVar[str] = ""
    # A run's environment facts (hdbbench.results.document): the Python packages of the backend's client, whose
    # versions are recorded, and the facts of this machine's build of its server (`build_facts`), each
    # environment key with the words the report shows it under.
    client_packages: ClassVar[tuple[str, ...]] = ()
    build_fact_labels: ClassVar[dict[str, str]] = {}
    # The abilities (ABILITIES) this backend does not have, each with the reason in a few words.
    lacks: ClassVar[Mapping[str, str]] = {}
    # A what-if engine: no HDB++ library writes it, only our subscriber's writer does. Never a default
    # backend (it runs where a scenario names it), and the report marks its figures with this text.
    what_if: ClassVar[str] = ""

    @classmethod
    def cannot_hold(cls, tango_type: TangoType, fmt: AttrFormat) -> str | None:
        """Why this backend cannot store attributes of this type and format, in a few words, or None.
        Every HDB++ backend holds them all; a what-if engine says what its layout or version lacks, and
        scenario validation refuses a device mix that has such an attribute before anything starts."""
        return None

    @classmethod
    def refusal(cls, ability: str) -> str | None:
        """The one line that refuses `ability` on this backend, or None when it has it."""
        why = cls.lacks.get(ability)
        return None if why is None else f"backend {cls.name} has no {ability} ({why})"

    def __init__(self, endpoint: Any, database: str) -> None:
        if not database:
            raise ConfigError("a database name is required")
        self.endpoint = endpoint
        self.database = database

    def resolve_variant(self, variant: SchemaVariant | str | None) -> SchemaVariant:
        """Parse, check against this backend and fill in the backend's default index set."""
        if not isinstance(variant, SchemaVariant):
            variant = SchemaVariant.parse(variant)
        self.check_variant(variant)
        return variant.with_default_indexes(self.default_indexes)

    @classmethod
    def check_variant(cls, variant: SchemaVariant) -> None:
        """Raise ConfigError when the variant makes no sense on this backend."""

    @abc.abstractmethod
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]: ...

    @abc.abstractmethod
    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        """The DDL of the schema (without database creation and roles), as a script."""

    @abc.abstractmethod
    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        """Create the database (if missing), the schema, and the roles/users with their grants."""

    @abc.abstractmethod
    def drop_schema(self) -> None:
        """Drop the database and its grants; drop the roles/users unless another database uses them."""

    @abc.abstractmethod
    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        """Every difference between the live database and the expected definition ([] = identical)."""

    @abc.abstractmethod
    def cluster(self) -> list[str]:
        """Physically order every data table by (att_conf_id, data_time); return what was done."""

    @abc.abstractmethod
    def bulk_writer(self) -> BulkWriter: ...

    @abc.abstractmethod
    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        """Stored events per attribute name (every data table; array elements count once per event),
        only those with since <= data_time < until where given."""

    @abc.abstractmethod
    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        """Stored error events (rows with an att_error_desc_id) per attribute name and error description,
        since <= data_time < until: what a subscriber stored of the error events it received."""

    @abc.abstractmethod
    def size_bytes(self) -> int:
        """Bytes the HDB++ database occupies on disk (data, indexes, TOAST), as the server reports it."""

    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]:
        """Sizes of the named data tables (with their chunks/partitions), one TableSize each, in order."""
        raise NotImplementedError(f"{self.name}: table sizes are not implemented")

    def log_positions(self) -> dict[str, int | None]:
        """Write-ahead / binary log positions in bytes (server-wide): PostgreSQL {"wal"}, MariaDB
        {"binlog", "redo"}; None when that log is off. Differences of two calls are log growth."""
        raise NotImplementedError(f"{self.name}: log positions are not implemented")

    @abc.abstractmethod
    def fetch_events(self, att_name: str) -> list[Event]:
        """Read back every stored event of one attribute, ordered by data_time (for checks, not speed)."""

    @abc.abstractmethod
    def table_for(self, info: AttributeInfo) -> str:
        """The data table that stores the events of an attribute."""

    def parts_for(self, table: str, variant: SchemaVariant | str | None, days: float) -> int | None:
        """Chunks / partitions `days` of data of `table` occupy in `variant`; None when not partitioned."""
        return None

    def prepare_sizes(self, tables: Sequence[str]) -> None:
        """Called on empty data tables before their sizes are measured as they grow (disk measurement)."""

    def documented_row_minimum(self, table: TableDef, att_prefix: str) -> tuple[int, float] | None:
        """(rows, average bytes per row the engine cannot store a row in less than) over the rows of
        attributes named `att_prefix...` in `table`; None where the engine has no such record format."""
        return None

    @classmethod
    @abc.abstractmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """The HDB++ LibConfiguration keys that point a subscriber at `database` on `endpoint`."""

    @classmethod
    def lib_configuration_problem(cls, lines: Mapping[str, str]) -> str | None:
        """What the backend's real HDB++ library would refuse or crash on in these LibConfiguration
        keys (one line naming the key), or None."""
        return None

    @classmethod
    def build_facts(cls) -> dict[str, Any]:
        """This machine's build of the backend's server, as environment facts (keys of `build_fact_labels`)."""
        return {}

    @staticmethod
    @abc.abstractmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        """Server version and the settings that change sizes (recorded with disk results)."""

    def account_files(self) -> dict[str, str]:
        """Scripts beside schema.sql in schemas/<backend>/ (roles, users, grants), by file name."""
        return {}

    # --- optional abilities (hdbbench.backends.abilities): the implementation, or None without it.
    # Class methods: a scenario asks them of a backend's name before any server runs.
    @classmethod
    def aging_layout(cls) -> AgingLayout | None:
        """An aged history's layout (hdbbench.parts.aging); None: it holds no history."""
        return None

    @classmethod
    def maintenance(cls) -> MaintenanceJobs | None:
        """The maintenance jobs facilities run on it (hdbbench.parts.maintenance); None: it has none."""
        return None

    @classmethod
    def aggregates(cls) -> Aggregates | None:
        """HDB++'s aggregates as tables (the maintenance part's `aggregates` job); None: it has none."""
        return None

    @classmethod
    def inventory_reader(cls) -> InventoryReader | None:
        """Read-only sessions on live archives of its server kind (`inventory from-hdb`); None: it reads none."""
        return None

    @classmethod
    def faults(cls) -> TableFaults | None:
        """A held table lock, tables on a filesystem that fills (`table_lock`, `database_full`); None: neither."""
        return None

    @classmethod
    def storage_options(cls) -> StorageOptions | None:
        """Table storage options measured by `size measure` (row formats, engines); None: it has none."""
        return None

    @classmethod
    def cold_restart(cls) -> ColdRestart | None:
        """What to drop around a cold restart of its server; None: a restart leaves nothing warm to drop."""
        return None

    @classmethod
    def memory_model(cls) -> MemoryModel | None:
        """The hot set of a steady insert stream from its own table and index geometry, and the knee it
        predicts under a memory budget (the facility planner); None: its geometry is not modelled."""
        return None

    @classmethod
    def outside_figures(cls) -> OutsideFigures | None:
        """Stored rows and visibility read from outside the subscriber; None: only the subscriber tells."""
        return None


@runtime_checkable
class ExtractionBackend(Protocol):
    """What extraction, dumps and data generation need from a backend (besides `Backend`)."""

    name: str
    database: str
    placeholder: str

    def table_for(self, info: AttributeInfo) -> str: ...
    def attribute_catalog(self) -> list[tuple[int, AttributeInfo]]: ...
    def attribute_spans(self, table: str) -> dict[int, tuple[int, datetime, datetime]]: ...
    def range_sql(self, table: str, array: bool) -> str: ...
    def aggregate_sql(self, table: str, bucket_s: int) -> str: ...
    def reader(self) -> Any: ...
    def stream(self, conn: Any, query: str, params: tuple[Any, ...], fetch_rows: int,
               consume: Callable[[list[Any]], None]) -> int: ...
    def explain(self, conn: Any, query: str, params: tuple[Any, ...]) -> dict[str, Any]: ...
    def column_loader(self) -> Any: ...
    def dump_type(self, tango_type: TangoType, order: str, out: Any) -> None: ...
    def refresh_statistics(self) -> None: ...
    def load_csv(self, table: str, path: str) -> None: ...
    def size_bytes(self) -> int: ...
    def table_sizes(self, tables: Sequence[str]) -> list[TableSize]: ...
    def cluster(self) -> list[str]: ...
    def bulk_writer(self) -> BulkWriter: ...


def extraction_of(backend: Backend) -> ExtractionBackend:
    """The backend seen through `ExtractionBackend`; refused when it lacks those methods."""
    if not isinstance(backend, ExtractionBackend):
        raise ConfigError(f"backend {backend.name} does not implement extraction (data generation, dumps, queries)")
    return backend
