# SPDX-License-Identifier: Apache-2.0
"""DDL of the ClickHouse layout, rendered from its `TableDef`s, and the lookup tables' rows."""

from __future__ import annotations

from hdbbench.backends.clickhouse.tables import lookup_rows, quote_ident, quote_string
from hdbbench.backends.model import TableDef

HEADER = ("-- HDB++'s layout on ClickHouse 18.16, a what-if engine, rendered by hdbbench (hdbbench schema sql); "
          "see schemas/README.md and hdbbench/backends/clickhouse/tables.py\n")


def create_table(table: TableDef) -> str:
    """One CREATE TABLE (in the session's database): engine, partition key and sort key."""
    columns = ",\n".join(f"    {quote_ident(c.name)} {c.type}" for c in table.columns)
    engine = table.options.get("engine", "MergeTree")
    partition = table.options.get("partition_by")
    return (f"CREATE TABLE {quote_ident(table.name)}\n(\n{columns}\n)\nENGINE = {engine}"
            + (f"\nPARTITION BY {partition}" if partition else "")
            + f"\nORDER BY ({', '.join(table.primary_key)})")


def lookup_inserts() -> list[str]:
    return [f"INSERT INTO {quote_ident(table)} VALUES "
            + ", ".join(f"({number}, {quote_string(name)})" for number, name in rows)
            for table, rows in lookup_rows().items()]


def statements(tables: list[TableDef]) -> list[str]:
    """Every statement that creates the schema in an empty database, in order."""
    return [create_table(t) for t in tables] + lookup_inserts()


def render_schema(tables: list[TableDef]) -> str:
    """The schema as a script (schemas/clickhouse/schema.sql): one statement per block, each
    table's comment above it."""
    comments = {t.name: t.comment for t in tables}
    blocks = [HEADER]
    for stmt in statements(tables):
        name = stmt.split("`")[1] if stmt.startswith("CREATE TABLE") else ""
        blocks.append((f"-- {comments[name]}\n" if comments.get(name) else "") + stmt + ";\n")
    return "\n".join(blocks)
