# SPDX-License-Identifier: Apache-2.0
"""Schemas: variants parse, every backend x variant is created and verified on the real servers,
verify reports differences, and drop leaves nothing behind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from hdbbench.backends import BACKENDS, Backend, backend_class, get_backend
from hdbbench.backends.base import SQL_SCHEMA, SchemaVariant
from hdbbench.cli.schema import schema, schema_files
from hdbbench.model.errors import ConfigError
from tests.harness import REPO
from tests.harness.databases import fresh_backend, unique_db_name
from tests.harness.values import BACKEND_VARIANTS

# ------------------------------------------------------------------------------ no server needed


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("pk", SchemaVariant("pk")),
        ("pk+2", SchemaVariant("pk+2")),
        ("pk+2,partitioned", SchemaVariant("pk+2", True)),
        (" partitioned , interval=7d ", SchemaVariant(None, True, 7)),
        ("chunk=14", SchemaVariant(None, False, 14)),
        ("pk+2,nofk", SchemaVariant("pk+2", foreign_keys=False)),
        ("", SchemaVariant()),
        (None, SchemaVariant()),
    ],
)
def test_variant_parses(text: str | None, want: SchemaVariant) -> None:
    assert SchemaVariant.parse(text) == want


@pytest.mark.parametrize("text", ["pk+3", "clustered", "interval=0d", "interval=x"])
def test_unknown_variant_parts_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="variant"):
        SchemaVariant.parse(text)


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown backend 'oracle'"):
        get_backend("oracle", None, "hdbpp")


def test_timescaledb_refuses_native_partitioning() -> None:
    with pytest.raises(ConfigError, match="hypertables"):
        get_backend("timescaledb", None, "hdbpp").resolve_variant("partitioned")


def test_nofk_drops_the_data_tables_foreign_keys_only() -> None:
    backend = get_backend("timescaledb", None, "x")
    with_fk = {t.name: t for t in backend.expected_tables("pk+2")}
    without = {t.name: t for t in backend.expected_tables("pk+2,nofk")}
    assert str(backend.resolve_variant("nofk")) == "pk+2,nofk"
    assert with_fk["att_scalar_devdouble"].foreign_keys and not without["att_scalar_devdouble"].foreign_keys
    assert without["att_scalar_devdouble"].indexes == with_fk["att_scalar_devdouble"].indexes
    assert without["att_history"].foreign_keys == with_fk["att_history"].foreign_keys  # configuration tables keep theirs
    with pytest.raises(ConfigError, match="no foreign keys"):
        get_backend("mysql", None, "x").resolve_variant("nofk")


def test_backend_defaults_are_the_published_index_sets() -> None:
    assert str(get_backend("timescaledb", None, "x").resolve_variant(None)) == "pk+2"
    assert str(get_backend("mysql", None, "x").resolve_variant(None)) == "pk"


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_checked_in_sql_files_match_the_model(backend_name: str) -> None:
    if (refusal := backend_class(backend_name).refusal(SQL_SCHEMA)) is not None:
        pytest.skip(refusal)
    for name, text in schema_files(backend_name).items():
        path = REPO / "schemas" / backend_name / name
        assert path.read_text() == text, f"{path} is stale: run `hdbbench schema files`"


def test_expected_schema_has_every_data_table() -> None:
    ts = {t.name for t in get_backend("timescaledb", None, "x").expected_tables()}
    my = {t.name for t in get_backend("mysql", None, "x").expected_tables()}
    assert len([n for n in ts if n.startswith(("att_scalar_", "att_array_", "att_image_"))]) == 14 * 3
    assert len([n for n in my if n.startswith(("att_scalar_", "att_array_"))]) == 14 * 2 * 2
    assert {"att_scalar_devdouble", "att_image_devenum", "att_parameter", "att_error_desc"} <= ts
    assert {"att_scalar_devdouble_ro", "att_array_devencoded_rw", "att_conf_data_type"} <= my


def test_cli_prints_sql_without_a_server() -> None:
    result = CliRunner().invoke(schema, ["sql", "--backend", "postgresql", "--variant", "pk"])
    assert result.exit_code == 0, result.output
    assert "CREATE TABLE att_scalar_devdouble" in result.output
    assert "att_scalar_devdouble_att_conf_id_idx" not in result.output


# ------------------------------------------------------------------------------ real servers


@pytest.mark.parametrize(("backend_name", "variant"), BACKEND_VARIANTS, ids=[f"{b}-{v}" for b, v in BACKEND_VARIANTS])
def test_create_verify_drop(endpoint_of: Callable[[str], Any], backend_name: str, variant: str) -> None:
    endpoint = endpoint_of(backend_name)
    backend = get_backend(backend_name, endpoint, unique_db_name(backend_name))
    try:
        backend.create_schema(variant)
        assert backend.verify_schema(variant) == []
        other = "pk" if backend.resolve_variant(variant).indexes == "pk+2" else "pk+2"
        assert any("index" in d for d in backend.verify_schema(variant.replace(variant.split(",")[0], other)))
        _tamper(backend)
        diffs = backend.verify_schema(variant)
        assert any("missing table att_error_desc" in d for d in diffs), diffs
        assert any("unexpected column surprise" in d for d in diffs), diffs
        done = backend.cluster()  # TimescaleDB: no chunks yet, so nothing to cluster
        assert done if backend.name != "timescaledb" else done == []
    finally:
        backend.drop_schema()
    assert _leftovers(backend) == []


def _tamper(backend: Backend) -> None:
    stmts = ["DROP TABLE att_error_desc CASCADE", "ALTER TABLE att_conf ADD COLUMN surprise integer"]
    if backend.name == "mysql":
        conn = backend.connect(backend.database)  # type: ignore[attr-defined]
        cur = conn.cursor()
        for s in stmts:
            cur.execute(s.replace(" CASCADE", ""))
        conn.close()
    else:
        with backend.connect(autocommit=True) as conn:  # type: ignore[attr-defined]
            for s in stmts:
                conn.execute(s)


def _leftovers(backend: Backend) -> list[str]:
    """What a dropped schema left behind: the database, its grants, unused roles/users."""
    if backend.name == "mysql":
        from hdbbench.backends.mysql import RO_USER, RW_USER

        conn = backend.connect()  # type: ignore[attr-defined]
        cur = conn.cursor()
        cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", (backend.database,))
        left = [f"database {r[0]}" for r in cur.fetchall()]
        cur.execute("SELECT Db, User FROM mysql.db WHERE Db = ?", (backend.database,))
        left += [f"grant on {r[0]} to {r[1]}" for r in cur.fetchall()]
        cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User IN (?, ?)", (RW_USER, RO_USER))
        if cur.fetchone()[0] == 0:  # no other database uses them: they must be gone
            cur.execute("SELECT User FROM mysql.user WHERE User IN (?, ?)", (RW_USER, RO_USER))
            left += [f"user {r[0]}" for r in cur.fetchall()]
        conn.close()
        return left
    from hdbbench.backends.postgres.tables import ROLES

    with backend.endpoint.connect(autocommit=True) as conn:
        left = [f"database {r[0]}" for r in conn.execute("SELECT datname FROM pg_database WHERE datname = %s", (backend.database,))]
        used = conn.execute(
            "SELECT count(*) FROM pg_shdepend d JOIN pg_roles r ON r.oid = d.refobjid "
            "WHERE d.refclassid = 'pg_authid'::regclass AND r.rolname = ANY(%s)",
            (list(ROLES),),
        ).fetchone()[0]
        if not used:  # no other database uses them: they must be gone
            left += [f"role {r[0]}" for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (list(ROLES),))]
    return left


def test_create_refuses_an_existing_database(endpoint_of: Callable[[str], Any]) -> None:
    with fresh_backend("postgresql", endpoint_of("postgresql"), "pk") as backend:
        from hdbbench.model.errors import SchemaError

        with pytest.raises(SchemaError, match="already exists"):
            backend.create_schema("pk")


def test_roles_survive_drop_while_another_database_uses_them(endpoint_of: Callable[[str], Any]) -> None:
    # Two backends on one PostgreSQL server share its roles.
    with fresh_backend("timescaledb", endpoint_of("timescaledb"), "pk") as first:
        with fresh_backend("postgresql", endpoint_of("postgresql"), "pk") as second:
            second_name = second.database
        with first.endpoint.connect(autocommit=True) as conn:
            assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'hdb_event_sub'").fetchone()
            assert not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (second_name,)).fetchone()
        assert first.verify_schema("pk") == []
    assert _leftovers(first) == []
