# SPDX-License-Identifier: Apache-2.0
"""The null backend: the subscribers count events and store none (TSBS's null target).

A run on it measures Tango's delivery and the subscriber alone: the reference for "subscriber CPU per
event" against a bare client, with no database to wait for. Its "database" is a directory of the
local server, ``<local>/<database>.counts/``, where each subscriber process's null writer keeps its
counts (hdbbench.backends.null.counts); creating, verifying and dropping the schema are file
operations. What needs stored values or a database server it lacks (`lacks`): scenario validation
refuses those parts before anything starts, and the commands refuse them in one line.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from hdbbench.backends.base import DATABASE_FAULTS, DISK, EXTRACTION, SQL_SCHEMA, Backend, BulkWriter
from hdbbench.backends.model import SchemaVariant, TableDef, TableSize
from hdbbench.backends.null.counts import (
    COUNTS,
    JOURNAL,
    CountsFile,
    JournalReader,
    count_by_attribute,
    count_errors,
)
from hdbbench.backends.null.outside import NullOutsideFigures
from hdbbench.model.errors import ConfigError, SchemaError
from hdbbench.model.hdbtypes import AttributeInfo, Event
from hdbbench.stack.servers.endpoints import (
    LocalEndpoint,  # the `local` server: <state_dir>/local/, made by `stack up`
)

DIRECTORY_SUFFIX = ".counts"


class NullBackend(Backend):
    name = "null"
    default_indexes = "pk"
    disk_variants: ClassVar[tuple[str, ...]] = ()
    lacks: ClassVar[dict[str, str]] = {
        EXTRACTION: "it keeps no values to read back",
        DISK: "it stores no tables to measure",
        DATABASE_FAULTS: "there is no database server to stop, lock or fill",
        SQL_SCHEMA: "it has no tables",
    }

    def __init__(self, endpoint: Any, database: str) -> None:
        super().__init__(endpoint, database)
        if "/" in database or database.startswith("."):
            raise ConfigError(f"null backend: database {database!r} must be a plain name (it names a directory)")

    @classmethod
    def directory_of(cls, endpoint: LocalEndpoint, database: str) -> Path:
        return Path(endpoint.path) / f"{database}{DIRECTORY_SUFFIX}"

    @property
    def directory(self) -> Path:
        return self.directory_of(self.endpoint, self.database)

    # --- schema: a directory
    def expected_tables(self, variant: SchemaVariant | str | None = None) -> list[TableDef]:
        return []

    def schema_sql(self, variant: SchemaVariant | str | None = None) -> str:
        return f"-- the null backend has no tables: its database is the directory {self.directory}\n"

    def create_schema(self, variant: SchemaVariant | str | None = None) -> None:
        self.resolve_variant(variant)  # a bad variant is refused here as on every backend
        try:
            self.directory.mkdir(parents=True)
        except FileExistsError:
            raise SchemaError(f"database {self.database!r} already exists ({self.directory}); drop it first") from None

    def drop_schema(self) -> None:
        if self.directory.exists():
            shutil.rmtree(self.directory)

    def verify_schema(self, variant: SchemaVariant | str | None = None) -> list[str]:
        """The directory exists and every file in it is the null writer's."""
        if not self.directory.is_dir():
            return [f"missing database {self.database} ({self.directory})"]
        diffs = [f"unexpected file {p.name}" for p in sorted(self.directory.iterdir())
                 if not p.name.endswith((JOURNAL, COUNTS, f"{COUNTS}.tmp"))]
        for path in sorted(self.directory.iterdir()):
            try:
                if path.name.endswith(JOURNAL):
                    JournalReader(path).read()
                elif path.name.endswith(COUNTS):
                    CountsFile.read(path)
            except (SchemaError, ValueError, KeyError) as exc:
                diffs.append(f"{path.name}: unreadable ({exc})")
        return diffs

    def cluster(self) -> list[str]:
        return ["nothing to do: the null backend stores no rows"]

    # --- what it cannot do
    def bulk_writer(self) -> BulkWriter:
        raise ConfigError("backend null has no bulk writer: it stores no rows (data generation needs a database)")

    def table_sizes(self, tables: Any) -> list[TableSize]:
        raise ConfigError(self.refusal(DISK) or "")

    def fetch_events(self, att_name: str) -> list[Event]:
        raise ConfigError(self.refusal(EXTRACTION) or "")

    def table_for(self, info: AttributeInfo) -> str:
        raise ConfigError(self.refusal(EXTRACTION) or "")

    # --- counts
    def count_rows_by_attribute(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        """Events per attribute counted with since <= source time < until, to the millisecond."""
        return count_by_attribute(self._existing(), since, until)

    def count_error_events(self, since: datetime, until: datetime | None = None) -> dict[str, dict[str, int]]:
        return count_errors(self._existing(), since, until)

    def _existing(self) -> Path:
        if not self.directory.is_dir():
            raise SchemaError(f"cannot read database {self.database!r}: {self.directory} does not exist")
        return self.directory

    def size_bytes(self) -> int:
        return 0  # no table stores an event: the count files are the backend's bookkeeping

    @classmethod
    def outside_figures(cls) -> NullOutsideFigures:
        """Inserted and visible events read from outside the subscribers, from their count files (the
        one optional ability it has: hdbbench.backends.abilities)."""
        return NullOutsideFigures()

    # --- the subscriber and the server
    @classmethod
    def subscriber_configuration(cls, endpoint: Any, database: str) -> dict[str, str]:
        """Our subscriber's writer registry key and the null writer's one key (subscriber/src/null_writer.h);
        there is no HDB++ library to name in `libname`."""
        return {"backend": cls.name, "counts_dir": str(cls.directory_of(endpoint, database).resolve())}

    @staticmethod
    def server_facts(endpoint: Any) -> dict[str, Any]:
        return {"version": None, "stores": "event counts only (no database)", "path": str(endpoint.path)}
