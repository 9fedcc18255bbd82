# SPDX-License-Identifier: Apache-2.0
"""The hot set of HDB++ on MariaDB/InnoDB (hdbbench.backends.abilities.memory), from the family's own
table model (tables.py: `data_table`, `config_tables`) and InnoDB's page geometry.

Geometry (InnoDB, 16 KiB pages, DYNAMIC rows): a page has 16,384 bytes less its FIL header (38) and
trailer (8), page header (56) and the infimum/supremum records (26): 16,256 for records, and a page
directory slot (2 bytes) per 4-8 records (≈ 0.33 byte a record). A record has a 5-byte header, a null
bitmap (a bit per nullable column) and its non-NULL columns at their storage widths (DATETIME(6) 8
bytes). The primary key IS the table: its leaves hold whole rows with the transaction id (6) and roll
pointer (7), so the clustered index's insertion point per attribute is the table's; a secondary entry
holds its key and the primary-key columns it lacks. Fills, from the MySQL manual ("The Physical
Structure of an InnoDB Index"): records inserted in sequential order, ascending or descending, leave
pages about 15/16 full; in random order 1/2 to 15/16. Each attribute's rows arrive in time order, so
the leaves behind its insertion point are sequential (15/16) in every index whose key starts with
att_conf_id (the primary key, `att_conf_id` whose entries are (att_conf_id, data_time), the DESC
one); leaves several attributes share are taken as random (ln 2). Secondary leaves are as hot as the
clustered ones: MariaDB 10.11 does not buffer changes by default (innodb_change_buffering=none).

The cache is the buffer pool alone (O_DIRECT: data pages bypass the page cache), sized by the stack's
rule. A partitioned table's current partition has its own B-trees, the hot ones; a database given by
size is taken as one partition (a growth trial's is). Assumed where the key (type, format) does not
say: READ attributes (the `_ro` tables), valid events, strings of 20 characters, arrays of 100 elements
(one row each), attribute names of 50.
"""

from __future__ import annotations

from collections.abc import Mapping

from hdbbench.backends.abilities.memory import (
    MIXED_FILL,
    BTreeMemoryModel,
    HotSetPart,
    IndexShape,
    TableShape,
    whole_tables,
)
from hdbbench.backends.model import SchemaVariant, TableDef
from hdbbench.backends.mysql.tables import config_tables, data_table
from hdbbench.model.hdbtypes import AttrFormat, TangoType, WriteType
from hdbbench.stack.servers.mariadb import buffers_for

PAGE = 16384
USABLE = PAGE - 38 - 8 - 56 - 26
DIRECTORY = 2 / 6                  # a 2-byte slot per 4-8 records
HEADER = 5
SYSTEM = 6 + 7                     # DB_TRX_ID, DB_ROLL_PTR in clustered leaf records
SEQUENTIAL_FILL = 15 / 16
STRING_CHARS, ARRAY_ELEMENTS, NAME_CHARS = 20, 100, 50

_FIXED = {"tinyint(1) unsigned": 1, "tinyint(3) unsigned": 1, "tinyint(1)": 1, "smallint(6)": 2,
          "smallint(5) unsigned": 2, "int(11)": 4, "int(10) unsigned": 4, "bigint(20)": 8,
          "bigint(20) unsigned": 8, "float": 4, "double": 8, "datetime(6)": 8}


def _width(type_: str) -> float:
    if type_ in _FIXED:
        return _FIXED[type_]
    if type_.startswith("varchar("):
        return 1 + STRING_CHARS
    return 2 + STRING_CHARS  # mediumtext, blob, longtext (JSON): a length byte or two and the value


def record_bytes(table: TableDef, columns: list[str], null: frozenset[str], clustered: bool) -> float:
    """One record of these columns (NULL ones take no bytes), its header, null bitmap, directory share."""
    nullable = sum(1 for c in table.columns if c.name in columns and c.nullable)
    body = sum(_width(table.column(c).type) for c in columns if c not in null)
    return HEADER + -(-nullable // 8) + body + (SYSTEM if clustered else 0) + DIRECTORY


def index_shapes(table: TableDef) -> tuple[IndexShape, ...]:
    null = frozenset({"value_w", "att_error_desc_id", "format_r", "format_w"})
    row = record_bytes(table, [c.name for c in table.columns], null, clustered=True)
    pk = list(table.primary_key)
    pivot = record_bytes(table, pk, frozenset(), clustered=False) + 4  # node pointer: key + child page
    elements = ARRAY_ELEMENTS if "idx" in pk else 1
    shapes = [IndexShape(f"{table.name} PRIMARY (the rows)", True, row, SEQUENTIAL_FILL, pivot, MIXED_FILL,
                         "rows in time order, 15/16 full behind", USABLE, per_entry=elements)]
    for index in table.indexes:
        key = [c.split()[0] for c in index.columns.split(",")]
        entry = record_bytes(table, key + [c for c in pk if c not in key], frozenset(), clustered=False)
        shapes.append(IndexShape(index.name, key[0] == "att_conf_id", entry, SEQUENTIAL_FILL, pivot, MIXED_FILL,
                                 "entries in time order, 15/16 full behind", USABLE, per_entry=elements))
    return tuple(shapes)


class MySQLMemoryModel(BTreeMemoryModel):
    """The hot set of HDB++ on MariaDB (InnoDB)."""

    page_bytes = PAGE
    default_indexes = "pk"

    def cache_bytes(self, budget_bytes: float) -> float:
        """The buffer pool the stack's rule gives this budget (InnoDB's only cache of data pages)."""
        return float(int(buffers_for(int(budget_bytes))["innodb_buffer_pool_size"].rstrip("M")) * 2**20)

    def tables(self, attributes: Mapping[tuple[TangoType, AttrFormat], int], variant: SchemaVariant) -> list[TableShape]:
        shapes = []
        for (tango_type, fmt), count in sorted(attributes.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value)):
            if count <= 0:
                continue
            table = data_table(tango_type, fmt, WriteType.READ, variant)
            shapes.append(TableShape(table.name, count, 0.0, USABLE, 0.0, index_shapes(table)))
        return shapes

    def config_parts(self, attributes: int) -> list[HotSetPart]:
        """att_conf, att_parameter, att_history and the lookup tables with their indexes, whole."""
        big = {"att_conf": 1, "att_parameter": 1, "att_history": 2}  # rows per attribute
        sizes: list[tuple[str, float, float]] = []
        for table in config_tables():
            rows = big.get(table.name, 0) * attributes
            if not rows:
                sizes.append((f"{table.name} and its {1 + len(table.indexes)} indexes", (1 + len(table.indexes)) * PAGE, 1.0))
                continue
            columns = [c.name for c in table.columns]
            row = record_bytes(table, columns, frozenset(), clustered=True) + (NAME_CHARS - STRING_CHARS) * ("att_name" in columns)
            sizes.append((f"{table.name} PRIMARY (the rows)", rows * row, SEQUENTIAL_FILL))
            for index in table.indexes:
                key = [c.split()[0] for c in index.columns.split(",")]
                entry = record_bytes(table, key + [c for c in table.primary_key if c not in key], frozenset(), False)
                if "att_name" in key:  # names arrive in no order: random fill
                    sizes.append((f"{table.name} ({index.columns})", rows * (entry + NAME_CHARS - STRING_CHARS), MIXED_FILL))
                else:
                    sizes.append((f"{table.name} ({index.columns})", rows * entry, SEQUENTIAL_FILL))
        return whole_tables(sizes, PAGE)
