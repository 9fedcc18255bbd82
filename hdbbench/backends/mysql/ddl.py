# SPDX-License-Identifier: Apache-2.0
"""DDL of the libhdbpp-mysql layout rendered from the table model, the lookup rows and the users.
"""

from __future__ import annotations

from datetime import date

from hdbbench.backends.accounts import account_password
from hdbbench.backends.model import TableDef
from hdbbench.backends.mysql.tables import (
    HISTORY_EVENTS_MYSQL,
    RO_USER,
    RW_USER,
    TYPE_ORDER,
    data_type_name,
    quote_ident,
)
from hdbbench.model.hdbtypes import AttrFormat, WriteType


def _render_table(t: TableDef) -> str:
    lines = []
    for c in t.columns:
        line = f"    {quote_ident(c.name)} {c.ddl or c.type}"
        line += "" if c.nullable else " NOT NULL"
        line += f" DEFAULT {c.default}" if c.default is not None else ""
        lines.append(line)
    lines.append(f"    PRIMARY KEY ({', '.join(map(quote_ident, t.primary_key))})")
    for i in t.indexes:
        kind = "UNIQUE KEY" if i.unique else "KEY"
        lines.append(f"    {kind} {quote_ident(i.name)} ({i.columns})")
    out = f"CREATE TABLE {quote_ident(t.name)} (\n" + ",\n".join(lines) + f"\n) ENGINE=InnoDB COMMENT='{t.comment}'"
    if "partitions" in t.options:
        bounds = t.options["partitions"]
        parts = [f"    PARTITION p000 VALUES LESS THAN ('{_first_bound(bounds)}')"]
        parts += [f"    PARTITION {name} VALUES LESS THAN ('{hi}')" for name, hi in bounds]
        parts.append("    PARTITION future VALUES LESS THAN MAXVALUE")
        out += "\nPARTITION BY RANGE COLUMNS(data_time) (\n" + ",\n".join(parts) + "\n)"
    return out + ";"


def _first_bound(bounds: list[tuple[str, date]]) -> date:
    name = bounds[0][0]
    return date(int(name[1:5]), int(name[5:7]), int(name[7:9]))


def render_schema(tables: list[TableDef]) -> str:
    parts = ["-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md"]
    parts += [_render_table(t) for t in tables]
    kinds = ", ".join(
        f"('{data_type_name(t, fmt, w)}', {int(t)})"
        for t in TYPE_ORDER
        for fmt in (AttrFormat.SCALAR, AttrFormat.SPECTRUM)
        for w in (WriteType.READ, WriteType.READ_WRITE)
    )
    parts.append(f"INSERT INTO att_conf_data_type (data_type, tango_data_type) VALUES {kinds};")
    parts.append(f"INSERT INTO att_history_event (event) VALUES {', '.join(f'({e!r})' for e in HISTORY_EVENTS_MYSQL)};")
    return "\n\n".join(parts) + "\n"


def users_sql(database: str, admin_password: str | None = None) -> list[str]:
    """HDB++'s users and grants: the event subscriber (hdbpprw) inserts, reads and updates att_conf's
    ttl, never deletes or drops; hdbppro reads. With the server's administrator password each user
    gets its derived password (hdbbench.backends.accounts); without one (the script shipped in
    schemas/) the users are created without a password, to be set by whoever runs it."""
    db = quote_ident(database)
    stmts = []
    for user in (RW_USER, RO_USER):
        if admin_password is None:
            stmts.append(f"CREATE USER IF NOT EXISTS '{user}'@'%'")
        else:
            password = account_password(admin_password, user)
            stmts += [f"CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{password}'",
                      f"ALTER USER '{user}'@'%' IDENTIFIED BY '{password}'"]
    return stmts + [
        f"GRANT SELECT, INSERT ON {db}.* TO '{RW_USER}'@'%'",
        f"GRANT UPDATE (att_ttl) ON {db}.att_conf TO '{RW_USER}'@'%'",
        f"GRANT SELECT ON {db}.* TO '{RO_USER}'@'%'",
    ]


def statements(script: str) -> list[str]:
    """Split a rendered script (no ';' inside literals or comments) into statements."""
    body = "\n".join(line for line in script.splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";")]
