# SPDX-License-Identifier: Apache-2.0
"""The conformance suite: what every backend of the registry does, run on each one.

A backend added to hdbbench/backends/registry.py is tested here without a line changed: its schema is
created, verified and dropped; every Tango type and format it holds (`Backend.cannot_hold`) is written
through its bulk writer and read back; its counts per attribute and of error events are what was
written; its size grows with the data and its tables' split adds up; an extraction range query and an
aggregate read the rows back through its read-only reader. A test that needs an ability the backend
lacks (`Backend.lacks`) skips with the backend's own reason. A backend whose server kind the session
stack does not start (a what-if engine's) gets a private server for this module.

What goes deeper into one backend's tables (schema variants, clustering, enum labels in SQL) stays in
tests/test_bulk_writer.py and tests/test_schemas.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.base import DISK, EXTRACTION, extraction_of
from hdbbench.backends.registry import BACKENDS, backend_class, endpoint_for, server_of
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, TangoType, WriteType
from hdbbench.stack.servers.endpoints import StackEndpoints
from tests.harness.databases import fresh_backend, unique_db_name
from tests.harness.servers import private_stack
from tests.harness.values import all_attributes, events_for, expected, now_ms, same_event


@pytest.fixture(scope="module")
def endpoint_for_backend(stack_endpoints: StackEndpoints) -> Iterator[Any]:
    """backend name -> its server's endpoint: the session stack's, or a private server of this module's
    for a kind the session stack does not start (stopped after the module)."""
    with ExitStack() as extra:
        started: dict[str, StackEndpoints] = {}

        def endpoint(backend: str) -> Any:
            if (found := endpoint_for(backend, stack_endpoints)) is not None:
                return found
            kind = server_of(backend)
            if kind not in started:
                started[kind] = extra.enter_context(private_stack(components=(kind,))).up()
            return endpoint_for(backend, started[kind])

        yield endpoint


def skip_if_lacking(backend: str, ability: str) -> None:
    if (refusal := backend_class(backend).refusal(ability)) is not None:
        pytest.skip(refusal)


def held_attributes(backend: str) -> list[AttributeInfo]:
    """Every type x format x write type of HDB++ the backend holds."""
    cls = backend_class(backend)
    return [info for info in all_attributes() if cls.cannot_hold(info.type, info.format) is None]


@dataclass
class Written:
    backend: Backend
    attributes: list[AttributeInfo]
    events: dict[str, list[Event]]
    t0: datetime
    empty_size: int


@pytest.fixture(scope="module", params=BACKENDS)
def written(request: pytest.FixtureRequest, endpoint_for_backend: Any) -> Iterator[Written]:
    """A fresh database of the backend with events of every type it holds, written in one batch."""
    name = request.param
    skip_if_lacking(name, EXTRACTION)  # values read back: the tests below all need them
    with fresh_backend(name, endpoint_for_backend(name)) as backend:
        empty_size = backend.size_bytes()
        t0 = now_ms()
        attributes = held_attributes(name)
        events: dict[str, list[Event]] = {}
        with backend.bulk_writer() as writer:
            for info in attributes:
                writer.register_attribute(info, t0 - timedelta(seconds=2))
                events[info.name] = events_for(info, t0, big=False)
            batch = [e for evs in events.values() for e in evs]
            assert writer.write(batch) == len(batch)
        yield Written(backend, attributes, events, t0, empty_size)


@pytest.mark.parametrize("name", BACKENDS)
def test_the_schema_is_created_verified_and_dropped(endpoint_for_backend: Any, name: str) -> None:
    backend = backend_class(name)(endpoint_for_backend(name), unique_db_name(name))
    backend.create_schema(None)
    try:
        assert backend.verify_schema(None) == []
        with pytest.raises(SchemaError, match="exists"):  # each backend in its own words, naming it
            backend.create_schema(None)
    finally:
        backend.drop_schema()
    with pytest.raises(Exception):  # noqa: B017 - gone: reading it fails (SchemaError or the driver's)
        backend.count_rows_by_attribute()


def test_every_type_it_holds_round_trips(written: Written) -> None:
    assert written.attributes, f"{written.backend.name} holds no type at all"
    failures = []
    for info in written.attributes:
        got = written.backend.fetch_events(info.name)
        want = [expected(written.backend.name, info, e) for e in written.events[info.name]]
        if len(got) != len(want):
            failures.append(f"{info.name}: {len(got)} events read, {len(want)} written")
        failures += [f"{info.name} @ {w.data_time}: read {g!r:.200}, expected {w!r:.200}"
                     for g, w in zip(got, want) if not same_event(g, w)]
    assert not failures, "\n".join(failures[:20])


def test_counts_per_attribute_and_of_errors_are_what_was_written(written: Written) -> None:
    counts = written.backend.count_rows_by_attribute()
    assert counts == {name: len(evs) for name, evs in written.events.items()}
    errors = written.backend.count_error_events(written.t0 - timedelta(seconds=1))
    written_errors = {name: sum(e.error_desc is not None for e in evs) for name, evs in written.events.items()}
    counted = {name: sum(by_desc.values()) for name, by_desc in errors.items()}
    assert counted == {name: n for name, n in written_errors.items() if n}


def test_the_size_grows_with_the_data_and_its_split_adds_up(written: Written) -> None:
    skip_if_lacking(written.backend.name, DISK)
    assert written.backend.size_bytes() > written.empty_size
    tables = sorted({written.backend.table_for(info) for info in written.attributes})
    sizes = written.backend.table_sizes(tables)
    assert {s.table for s in sizes} == set(tables)
    assert all(s.total_bytes > 0 for s in sizes), sizes


def scalar_long(written: Written) -> AttributeInfo:
    """An integer attribute: the edge values of a double would overflow a server's sum in the aggregate."""
    return next(i for i in written.attributes if (i.type, i.format, i.write_type) ==
                (TangoType.DEV_LONG, AttrFormat.SCALAR, WriteType.READ))


def test_an_extraction_range_and_an_aggregate_read_the_rows_back(written: Written) -> None:
    reader = extraction_of(written.backend)
    info = scalar_long(written)
    att_conf_id = next(i for i, a in reader.attribute_catalog() if a.name == info.name)
    table = reader.table_for(info)
    span = (att_conf_id, written.t0 - timedelta(seconds=1), written.t0 + timedelta(hours=1))
    rows: list[Any] = []
    with closing(reader.reader()) as conn:
        assert reader.stream(conn, reader.range_sql(table, False), span, 100, rows.extend) == len(rows)
        buckets: list[Any] = []
        reader.stream(conn, reader.aggregate_sql(table, 3600), span, 100, buckets.extend)
    assert len(rows) == len(written.events[info.name])
    assert sum(int(b[1]) for b in buckets) == sum(e.value_r is not None for e in written.events[info.name])
