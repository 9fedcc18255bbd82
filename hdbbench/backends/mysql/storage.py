# SPDX-License-Identifier: Apache-2.0
"""Storage facts of InnoDB (and MyRocks) tables: sizes split into data / index / free extents,
allocated blocks of sparse files, the documented per-row minimum, storage options (row formats,
page compression, MyRocks), log positions and the server settings that change sizes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from hdbbench.backends.model import ColumnDef, TableDef, TableSize
from hdbbench.backends.mysql.tables import quote_ident
from hdbbench.model.errors import SchemaError


def table_size(cur: Any, database: str, table: str) -> TableSize:
    cur.execute("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", (database, table))
    row = cur.fetchone()
    if row is None:
        raise SchemaError(f"no table {table!r} in database {database!r}")
    engine = str(row[0])
    if engine.upper() == "ROCKSDB":
        cur.execute("SET GLOBAL rocksdb_force_flush_memtable_now = 1")
    cur.execute(f"ANALYZE TABLE {quote_ident(table)}")
    cur.fetchall()
    cur.execute("SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (database, table))
    data, index = (int(v or 0) for v in cur.fetchone())
    if engine.upper() != "INNODB":
        return TableSize(table, data, index, 0, 0, data + index, engine=engine.lower())
    # Write the table's dirty pages out, so that ALLOCATED_SIZE (sparse, page-compressed files) is current.
    cur.execute(f"FLUSH TABLES {quote_ident(table)} FOR EXPORT")
    cur.execute("UNLOCK TABLES")
    cur.execute("SELECT COUNT(*), COALESCE(SUM(FILE_SIZE), 0), COALESCE(SUM(ALLOCATED_SIZE), 0) "
                "FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ? OR NAME LIKE ?",
                (f"{database}/{table}", f"{database}/{table}#P#%"))
    parts, file_size, allocated = (int(v) for v in cur.fetchone())
    sparse = 0 < allocated < file_size - 16384 * parts  # more than a page per file below the apparent size
    data, index = _leaf_bytes(cur, database, table, data, index)
    return TableSize(table, data, index, 0, file_size - data - index, file_size,
                     allocated if sparse else None, "innodb", parts)


def _leaf_bytes(cur: Any, database: str, table: str, data_length: int, index_length: int) -> tuple[int, int]:
    """Bytes of the leaf pages in use of the clustered index and of the secondary indexes.

    DATA_LENGTH / INDEX_LENGTH count the pages *reserved* by each index's segments: the first 32
    pages one by one, then whole extents (64 pages) ahead of need, so at small sizes they jump by a
    megabyte at a time. The persistent statistics (after ANALYZE TABLE) hold `n_leaf_pages`, the
    leaf pages in use, from the segment headers. (A tree of fewer leaf pages than its sample size
    is scanned instead and then reads 1 leaf page: `prepare_sizes` sets the sample to one page.)
    The page size on disk is DATA_LENGTH over `size` (KEY_BLOCK_SIZE for compressed rows). What is
    reserved but unused, and the internal pages, stay in the tablespace's free part, the slack.
    Without statistics the lengths are kept. Partitions are summed; so are secondary indexes."""
    cur.execute("SELECT index_name = 'PRIMARY', stat_name, SUM(stat_value) FROM mysql.innodb_index_stats "
                "WHERE database_name = ? AND (table_name = ? OR table_name LIKE ?) "
                "AND stat_name IN ('size', 'n_leaf_pages') GROUP BY 1, 2", (database, table, f"{table}#P#%"))
    stats = {(bool(primary), name): int(value) for primary, name, value in cur.fetchall()}
    reserved = stats.get((True, "size"))
    if not reserved or (True, "n_leaf_pages") not in stats:
        return data_length, index_length
    page = data_length / reserved
    return (int(stats[(True, "n_leaf_pages")] * page),
            int(stats.get((False, "n_leaf_pages"), 0) * page) if index_length else 0)


def prepare_sizes(cur: Any, tables: Sequence[str]) -> None:
    """Let ANALYZE TABLE sample rather than scan small trees, whose scan leaves n_leaf_pages at 1:
    a one-page sample (the statistic is only read for sizes here; done on empty tables)."""
    for table in tables:
        cur.execute(f"ALTER TABLE {quote_ident(table)} STATS_SAMPLE_PAGES=1")


# Storage options of `hdbbench size measure` (variant `pk,compressed` etc.): the ALTER TABLE clause each applies.
STORAGE_CLAUSES = {
    "compressed": "ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8",
    "page_compressed": "PAGE_COMPRESSED=1",
    "myrocks": "ENGINE=ROCKSDB",
}


def storage_unavailable(cur: Any, option: str) -> str | None:
    """Why a storage option cannot run on this server (MyRocks not loaded), or None when it can."""
    if option != "myrocks":
        return None
    cur.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
    row = cur.fetchone()
    if row is not None and str(row[0]).upper() in ("YES", "DEFAULT"):
        return None
    cur.execute("SELECT @@plugin_dir")
    plugin = os.path.join(str(cur.fetchone()[0]), "ha_rocksdb.so")
    where = ("the plugin file is installed: start MariaDB with --set mariadb.plugin_load_add=ha_rocksdb"
             if os.path.exists(plugin) else "Debian package mariadb-plugin-rocksdb is not installed")
    return f"MyRocks: the ROCKSDB engine is not loaded in this server ({where})"


class MySQLStorageOptions:
    """The storage options of MariaDB (hdbbench.backends.abilities.storage.StorageOptions)."""

    clauses = STORAGE_CLAUSES

    def unavailable(self, backend: Any, option: str) -> str | None:
        if option not in self.clauses:
            return f"unknown storage option {option!r} (known: {', '.join(self.clauses)})"
        return backend._with_cursor(lambda cur: storage_unavailable(cur, option), database=None)  # type: ignore[no-any-return]

    def apply(self, backend: Any, tables: Sequence[str], option: str) -> None:
        """`ALTER TABLE <t> <clause>` for each table (ROW_FORMAT, PAGE_COMPRESSED, ENGINE)."""
        def alter(cur: Any) -> None:
            for table in tables:
                cur.execute(f"ALTER TABLE {quote_ident(table)} {self.clauses[option]}")
        backend._with_cursor(alter)


def log_positions(cur: Any) -> dict[str, int | None]:
    """Binary log bytes (None when off) and the InnoDB redo LSN."""
    cur.execute("SELECT @@global.log_bin")
    binlog: int | None = None
    if int(cur.fetchone()[0]):
        cur.execute("SHOW BINARY LOGS")
        binlog = sum(int(row[1]) for row in cur.fetchall())
    cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'")
    row = cur.fetchone()
    return {"binlog": binlog, "redo": int(row[1]) if row else None}


_INNODB_FIXED = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8, "datetime": 8}


def _innodb_column_expr(col: ColumnDef) -> str:
    name = quote_ident(col.name)
    base = col.type.split("(")[0].split()[0]
    if base in _INNODB_FIXED:
        size = 5 + 3 if base == "datetime" else _INNODB_FIXED[base]  # datetime(6): 5 + 3 fractional bytes
        return f"IF({name} IS NULL, 0, {size})"
    return f"IF({name} IS NULL, 0, LENGTH({name}) + IF(LENGTH({name}) > 127, 2, 1))"


def documented_row_minimum(cur: Any, database: str, table: TableDef, att_prefix: str) -> tuple[int, float] | None:
    """InnoDB (COMPACT/DYNAMIC): 5-byte record header + 6-byte transaction id + 7-byte roll pointer +
    null bitmap + 1-2 length bytes per non-NULL variable-length column + the column bytes."""
    cur.execute("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (database, table.name))
    if str(cur.fetchone()[0]).upper() != "INNODB":
        return None  # MyRocks rows are key-value pairs in SST files: no InnoDB record format
    nullable = sum(1 for c in table.columns if c.nullable)
    fixed = 5 + 6 + 7 + math.ceil(nullable / 8)
    cols = " + ".join(_innodb_column_expr(c) for c in table.columns)
    cur.execute(f"SELECT COUNT(*), COALESCE(AVG({cols}), 0) FROM {quote_ident(table.name)} WHERE att_conf_id IN "
                "(SELECT att_conf_id FROM att_conf WHERE att_name LIKE ?)", (att_prefix + "%",))
    rows, avg = cur.fetchone()
    return (int(rows), fixed + float(avg)) if rows else None


def server_facts(endpoint: Any) -> dict[str, Any]:
    """Server version, binary log, page size, compression and row format, MyRocks availability."""
    conn = endpoint.connect()
    try:
        cur = conn.cursor()
        cur.execute("SELECT VERSION(), @@log_bin, @@binlog_format, @@innodb_page_size, "
                    "@@innodb_compression_algorithm, @@innodb_default_row_format")
        keys = ("version", "log_bin", "binlog_format", "innodb_page_size", "innodb_compression_algorithm",
                "innodb_default_row_format")
        facts: dict[str, Any] = dict(zip(keys, (str(v) for v in cur.fetchone())))
        cur.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
        row = cur.fetchone()
        facts["rocksdb"] = str(row[0]) if row else "not loaded"
        return facts
    finally:
        conn.close()
