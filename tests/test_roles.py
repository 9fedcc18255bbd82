# SPDX-License-Identifier: Apache-2.0
"""HDB++'s accounts on every backend: the event subscriber inserts but cannot delete or drop; the reader
only reads. Both log in with their generated passwords (hdbbench.backends.accounts), never a constant."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.accounts import account_password, as_account
from hdbbench.backends.registry import DEFAULT_BACKENDS, lib_configuration
from tests.harness.databases import fresh_backend

ACCOUNTS = {"mysql": ("hdbpprw", "hdbppro")}  # (writer, reader); PostgreSQL flavours below
PG_ACCOUNTS = ("hdb_event_sub", "hdb_data_reporter")
INSERT_CONF = ("INSERT INTO att_history_event (event) VALUES ('role-test')")


def _accounts(backend: str) -> tuple[str, str]:
    return ACCOUNTS.get(backend, PG_ACCOUNTS)


@pytest.fixture(scope="module", params=DEFAULT_BACKENDS)
def backend(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[Backend]:
    with fresh_backend(request.param, endpoint_of(request.param), None) as b:
        yield b


def _connect(backend: Backend, account: str) -> Any:
    login = as_account(backend.endpoint, account)
    conn = login.connect(backend.database)
    if backend.name == "mysql":
        conn.autocommit = True
    else:
        conn.autocommit = True
    return conn


def _refused(backend: Backend, account: str, statement: str) -> str:
    """The database's refusal of `statement` run as `account` (fails the test when it is allowed)."""
    conn = _connect(backend, account)
    try:
        cur = conn.cursor()
        try:
            cur.execute(statement)
        except Exception as exc:  # the driver's permission error
            return str(exc)
        pytest.fail(f"{account} may run {statement!r} on {backend.name}")
    finally:
        conn.close()


def _data_table(backend: Backend) -> str:
    return "att_scalar_devdouble" if backend.name != "mysql" else "att_scalar_devdouble_ro"


def test_passwords_are_generated_per_server_and_account() -> None:
    assert account_password("a", "hdb_event_sub") != account_password("b", "hdb_event_sub")
    assert account_password("a", "hdb_event_sub") != account_password("a", "hdb_data_reporter")
    assert len(account_password("a", "x")) == 32 and account_password("a", "x").isalnum()


def test_the_writer_inserts_and_reads_the_configuration(backend: Backend) -> None:
    writer, _ = _accounts(backend.name)
    conn = _connect(backend, writer)
    try:
        cur = conn.cursor()
        cur.execute(INSERT_CONF)
        cur.execute("SELECT count(*) FROM att_history_event WHERE event = 'role-test'")
        assert cur.fetchone()[0] == 1
    finally:
        conn.close()


@pytest.mark.parametrize("statement", ["DELETE FROM att_conf", "DELETE FROM {data}", "DROP TABLE {data}",
                                       "DROP TABLE att_conf", "TRUNCATE TABLE att_history_event"])
@pytest.mark.parametrize("duty", [0, 1], ids=["writer", "reader"])
def test_neither_account_deletes_or_drops(backend: Backend, duty: int, statement: str) -> None:
    account = _accounts(backend.name)[duty]
    message = _refused(backend, account, statement.format(data=_data_table(backend)))
    assert "denied" in message.lower() or "must be owner" in message.lower(), message


def test_the_reader_cannot_insert_or_update(backend: Backend) -> None:
    _, reader = _accounts(backend.name)
    for statement in (INSERT_CONF, "UPDATE att_conf SET att_name = 'x'"):
        message = _refused(backend, reader, statement)
        assert "denied" in message.lower(), message


def test_the_writer_cannot_rewrite_data(backend: Backend) -> None:
    writer, _ = _accounts(backend.name)
    message = _refused(backend, writer, "UPDATE att_conf SET att_name = 'x'")
    assert "denied" in message.lower(), message


def test_the_subscriber_is_configured_with_the_writer_account(backend: Backend) -> None:
    server = "mariadb" if backend.name == "mysql" else "postgres"
    lines = lib_configuration(backend.name, backend.database, {server: backend.endpoint})
    writer, _ = _accounts(backend.name)
    text = "\n".join(lines)
    assert writer in text
    assert backend.endpoint.password not in text  # the administrator's password never goes to the subscriber
    assert account_password(backend.endpoint.password, writer) in text
