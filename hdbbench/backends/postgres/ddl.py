# SPDX-License-Identifier: Apache-2.0
"""DDL of the PostgreSQL/TimescaleDB layout: tables, partitions, hypertables, domains, the devenum label
triggers, lookup rows, roles and grants, rendered from the table model.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from psycopg import sql

from hdbbench.backends.accounts import account_password
from hdbbench.backends.model import TableDef
from hdbbench.backends.postgres.tables import (
    DOMAINS,
    PARTITIONS_EACH_SIDE,
    READONLY_ROLE,
    READWRITE_ROLE,
    USERS,
)
from hdbbench.model.hdbtypes import HISTORY_EVENTS, AttrFormat, TangoType, WriteType

_ENUM_TRIGGER_SQL = """
-- devenum labels, as HDB++ does: looked up in the latest att_parameter.enum_labels of the attribute.
-- Unlike the published array trigger, images keep their 2-D shape and empty arrays give '{}'.
CREATE OR REPLACE FUNCTION hdb_enum_labels(att integer) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT enum_labels FROM att_parameter WHERE att_conf_id = att ORDER BY recv_time DESC LIMIT 1
$$;

CREATE OR REPLACE FUNCTION hdb_label_array(labels text[], v smallint[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v IS NULL THEN NULL
        WHEN array_ndims(v) = 2 THEN (
            SELECT array_agg(ARRAY(SELECT labels[v[i][j] + 1] FROM generate_subscripts(v, 2) AS j ORDER BY j) ORDER BY i)
            FROM generate_subscripts(v, 1) AS i)
        ELSE coalesce((SELECT array_agg(labels[x + 1] ORDER BY n) FROM unnest(v) WITH ORDINALITY AS u(x, n)), '{}')
    END
$$;

CREATE OR REPLACE FUNCTION set_enum_label() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := labels[NEW.value_r + 1];
    NEW.value_w_label := labels[NEW.value_w + 1];
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION set_enum_label_array() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := hdb_label_array(labels, NEW.value_r);
    NEW.value_w_label := hdb_label_array(labels, NEW.value_w);
    RETURN NEW;
END $$;

CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_scalar_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_array_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_image_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
"""

ENUM_TRIGGER_TABLES = ("att_scalar_devenum", "att_array_devenum", "att_image_devenum")


def _render_table(t: TableDef) -> str:
    lines = []
    for c in t.columns:
        line = f"    {c.name} {c.ddl or c.type}"
        if not c.nullable:
            line += " NOT NULL"
        if c.default is not None:
            line += f" DEFAULT {c.default}"
        lines.append(line)
    if t.primary_key:
        lines.append(f"    PRIMARY KEY ({', '.join(t.primary_key)})")
    lines += [f"    UNIQUE ({i.columns})" for i in t.indexes if i.unique]
    lines += [f"    FOREIGN KEY ({f.columns}) REFERENCES {f.ref_table} ({f.ref_columns})" for f in t.foreign_keys]
    partition = " PARTITION BY RANGE (data_time)" if "partition_days" in t.options else ""
    out = [f"CREATE TABLE {t.name} (\n" + ",\n".join(lines) + f"\n){partition};"]
    if t.comment:
        out.append(f"COMMENT ON TABLE {t.name} IS '{t.comment}';")
    out += [f"CREATE INDEX {i.name} ON {t.name} ({i.columns});" for i in t.indexes if not i.unique]
    if "hypertable" in t.options:
        col, days = t.options["hypertable"]
        out.append(
            f"SELECT create_hypertable('{t.name}', '{col}', chunk_time_interval => interval '{days} days', "
            "create_default_indexes => false);"
        )
    if "partition_days" in t.options:
        out += _render_partitions(t.name, t.options["partition_days"])
    return "\n".join(out)


def partition_bounds(days: int, today: date | None = None) -> list[tuple[date, date]]:
    """Ranges of `days` days aligned on the Unix epoch, PARTITIONS_EACH_SIDE before and after today."""
    today = today or datetime.now(timezone.utc).date()
    epoch = date(1970, 1, 1)
    start = epoch + timedelta(days=((today - epoch).days // days - PARTITIONS_EACH_SIDE) * days)
    return [(start + timedelta(days=k * days), start + timedelta(days=(k + 1) * days)) for k in range(2 * PARTITIONS_EACH_SIDE + 1)]


def _render_partitions(table: str, days: int) -> list[str]:
    out = [
        f"CREATE TABLE {table}_p{lo:%Y%m%d} PARTITION OF {table} FOR VALUES FROM ('{lo} 00:00:00+00') TO ('{hi} 00:00:00+00');"
        for lo, hi in partition_bounds(days)
    ]
    out.append(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT;")
    return out


def render_schema(tables: list[TableDef], timescale: bool) -> str:
    parts = ["-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md"]
    if timescale:
        parts.append("CREATE EXTENSION IF NOT EXISTS timescaledb;")
    for name, (base, top) in DOMAINS.items():
        parts.append(f"CREATE DOMAIN {name} AS {base} CHECK (VALUE >= 0 AND VALUE <= {top});")
    parts += [_render_table(t) for t in tables]
    parts.append(_render_lookup_rows())
    parts.append(_ENUM_TRIGGER_SQL.strip())
    return "\n\n".join(parts) + "\n"


def _render_lookup_rows() -> str:
    types = ", ".join(f"('{t.name}', {t.value})" for t in TangoType)
    formats = ", ".join(f"('{f.name}', {f.value})" for f in AttrFormat)
    writes = ", ".join(f"('{w.name}', {w.value})" for w in WriteType)
    events = ", ".join(f"('{e}')" for e in HISTORY_EVENTS)
    return "\n".join(
        [
            f"INSERT INTO att_conf_type (type, type_num) VALUES {types};",
            f"INSERT INTO att_conf_format (format, format_num) VALUES {formats};",
            f"INSERT INTO att_conf_write (write, write_num) VALUES {writes};",
            f"INSERT INTO att_history_event (event) VALUES {events};",
        ]
    )


def roles_sql(admin_password: str | None = None) -> str:
    """Cluster-global roles and users, created idempotently (safe to run concurrently and repeatedly).

    With the server's administrator password each user gets its derived password
    (hdbbench.backends.accounts), set again when the user exists; without one (the script shipped in
    schemas/) the users are created without a password, to be set by whoever runs it."""
    stmts = []
    for role in (READONLY_ROLE, READWRITE_ROLE):
        stmts.append(f"CREATE ROLE {role} NOLOGIN")
    for user, role in USERS.items():
        stmts.append(f"CREATE ROLE {user} LOGIN IN ROLE {role}")
    lines = [f"DO $$ BEGIN {s}; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;" for s in stmts]
    if admin_password is not None:
        lines += [f"ALTER ROLE {user} PASSWORD '{account_password(admin_password, user)}';" for user in USERS]
    return "\n".join(lines)


def grants_sql(database: str) -> sql.Composed:
    db = sql.Identifier(database)
    ro, rw = sql.Identifier(READONLY_ROLE), sql.Identifier(READWRITE_ROLE)
    stmts = [
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(db, ro, rw),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}, {}").format(ro, rw),
        sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(ro),
        # The event subscriber inserts, reads the configuration and updates att_conf's ttl only:
        # no DELETE, TRUNCATE or UPDATE of data (HDB++'s event-subscriber role).
        sql.SQL("GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {}").format(rw),
        sql.SQL("GRANT UPDATE (ttl) ON att_conf TO {}").format(rw),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(rw),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {}").format(ro),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT ON TABLES TO {}").format(rw),
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {}").format(rw),
    ]
    return sql.SQL(";\n").join(stmts) + sql.SQL(";")
