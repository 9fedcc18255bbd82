# SPDX-License-Identifier: Apache-2.0
"""The bulk writers round-trip every type x format x write type, with edge values, on real servers.

The schema is created once per backend x variant (module-scoped fixture) and every attribute's
events are written in one batch; the tests then read back and inspect the tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.registry import DEFAULT_BACKENDS
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import (
    AttParameter,
    AttrFormat,
    AttributeInfo,
    Event,
    Quality,
    TangoType,
    WriteType,
)
from tests.harness.databases import fresh_backend
from tests.harness.values import (
    BACKEND_VARIANTS,
    ENUM_LABELS,
    ERROR_DESC,
    VARIANTS,
    all_attributes,
    events_for,
    expected,
    now_ms,
    same_event,
)


@dataclass
class Written:
    backend: Backend
    backend_name: str
    variant: str
    attributes: list[AttributeInfo]
    events: dict[str, list[Event]]
    t0: datetime


def _big_arrays(backend: str, variant: str, info: AttributeInfo) -> bool:
    """10,000-element arrays on each backend's default variant, READ and READ_WRITE (keeps MySQL rows modest)."""
    return variant == VARIANTS[backend][0] and info.write_type in (WriteType.READ, WriteType.READ_WRITE)


@pytest.fixture(scope="module", params=BACKEND_VARIANTS, ids=[f"{b}-{v}" for b, v in BACKEND_VARIANTS])
def written(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[Written]:
    backend_name, variant = request.param
    endpoint = endpoint_of(backend_name)
    with fresh_backend(backend_name, endpoint, variant) as backend:
        t0 = now_ms()
        attributes = all_attributes()
        events: dict[str, list[Event]] = {}
        with backend.bulk_writer() as writer:
            for info in attributes:
                writer.register_attribute(info, t0 - timedelta(seconds=2))
                writer.write_history(info.name, "start", t0 - timedelta(seconds=1))
                if info.type == TangoType.DEV_ENUM:
                    writer.write_parameter(AttParameter(info.name, t0 - timedelta(seconds=1), label="e", enum_labels=ENUM_LABELS))
                events[info.name] = events_for(info, t0, _big_arrays(backend_name, variant, info))
            batch = [e for evs in events.values() for e in evs]
            assert writer.write(batch) == len(batch)
        yield Written(backend, backend_name, variant, attributes, events, t0)


def test_every_type_format_write_type_round_trips(written: Written) -> None:
    failures = []
    for info in written.attributes:
        got = written.backend.fetch_events(info.name)
        want = [expected(written.backend_name, info, e) for e in written.events[info.name]]
        if len(got) != len(want):
            failures.append(f"{info.name}: {len(got)} events read, {len(want)} written")
            continue
        for g, w in zip(got, want):
            if not same_event(g, w):
                failures.append(f"{info.name} @ {w.data_time}: read {_short(g)}, expected {_short(w)}")
    assert not failures, "\n".join(failures[:20])


def _short(e: Event) -> str:
    return repr(e)[:300]


def test_schema_still_verifies_after_writing(written: Written) -> None:
    assert written.backend.verify_schema(written.variant) == []


def test_clustering_runs_on_written_data(written: Written) -> None:
    done = written.backend.cluster()
    assert done  # PostgreSQL/TimescaleDB list their CLUSTER commands; InnoDB says why there is nothing to do
    if written.backend_name == "timescaledb":
        assert any("_timescaledb_internal" in d for d in done)


def test_att_conf_registration_and_history(written: Written) -> None:
    info = next(i for i in written.attributes if i.type == TangoType.DEV_DOUBLE and i.format == AttrFormat.IMAGE)
    rows = _att_conf_and_history(written, info.name)
    assert rows["parts"] == ("testhost:10000", "test", "devdouble", "image", info.write_type.name.lower())
    assert rows["history"] == ["add", "start"]


def test_enum_labels_stored_with_the_attribute(written: Written) -> None:
    info = AttributeInfo(
        "tango://testhost:10000/test/devenum/spectrum/read", TangoType.DEV_ENUM, AttrFormat.SPECTRUM, WriteType.READ
    )
    if written.backend_name == "mysql":
        conn = written.backend.connect(written.backend.database)
        cur = conn.cursor()
        cur.execute("SELECT p.enum_labels FROM att_parameter p JOIN att_conf c USING (att_conf_id) WHERE c.att_name = ?", (info.name,))
        assert json.loads(cur.fetchone()[0]) == list(ENUM_LABELS)
        conn.close()
        return
    query = (
        "SELECT value_r_label, value_w_label FROM {} d JOIN att_conf c USING (att_conf_id) "
        "WHERE c.att_name = %s ORDER BY data_time LIMIT 1"
    )
    with written.backend.connect() as conn:  # type: ignore[attr-defined]
        for table, name, want in (
            ("att_scalar_devenum", "scalar/read_write", ("zero", ENUM_LABELS[2])),  # value_r 0, value_w 2
            ("att_array_devenum", "spectrum/read", (list(ENUM_LABELS), None)),
            ("att_image_devenum", "image/read", ([list(ENUM_LABELS), list(reversed(ENUM_LABELS))], None)),
        ):
            row = conn.execute(query.format(table), (f"tango://testhost:10000/test/devenum/{name}",)).fetchone()
            assert row == want, table


def test_error_event_has_its_att_error_desc_row(written: Written) -> None:
    info = written.attributes[0]
    got = written.backend.fetch_events(info.name)
    errors = [e for e in got if e.error_desc is not None]
    assert len(errors) == 1
    assert errors[0].error_desc == ERROR_DESC and errors[0].value_r is None and errors[0].quality == Quality.INVALID


def test_unregistered_attribute_is_refused(written: Written) -> None:
    with written.backend.bulk_writer() as writer:
        with pytest.raises(SchemaError, match="not registered"):
            writer.write([Event("tango://nowhere:1/a/b/c/d", written.t0, 1.0)])


def test_reregistering_with_another_type_is_refused(written: Written) -> None:
    info = written.attributes[0]
    with written.backend.bulk_writer() as writer:
        assert writer.register_attribute(info) > 0  # idempotent
        with pytest.raises(SchemaError, match="another type"):
            writer.register_attribute(AttributeInfo(info.name, TangoType.DEV_DOUBLE, AttrFormat.IMAGE, WriteType.READ_WRITE))


HOSTILE_NAMES = [
    "tango://h'ost:10000/sys/tg'test/1/\"double\"; DROP TABLE att_conf; --",
    "tango://host:10000/select/from/where/`drop` table;",
    "tango://host:10000/" + "dös/✓/𝄞/\\x00\\'",
]


@pytest.mark.parametrize("backend_name", DEFAULT_BACKENDS)
def test_hostile_attribute_names_are_stored_intact(endpoint_of: Callable[[str], Any], backend_name: str) -> None:
    endpoint = endpoint_of(backend_name)
    t0 = now_ms()
    with fresh_backend(backend_name, endpoint, None) as backend:
        with backend.bulk_writer() as writer:
            for k, name in enumerate(HOSTILE_NAMES):
                writer.register_attribute(AttributeInfo(name, TangoType.DEV_STRING, AttrFormat.SCALAR, WriteType.READ_WRITE))
                writer.write([Event(name, t0 + timedelta(milliseconds=k), name, name[::-1])])
        for k, name in enumerate(HOSTILE_NAMES):
            (event,) = backend.fetch_events(name)
            assert (event.att_name, event.value_r, event.value_w) == (name, name, name[::-1])
            assert _att_conf_and_history(_W(backend, backend_name), name)["name"] == name
        assert backend.verify_schema(None) == []


@dataclass
class _W:
    backend: Backend
    backend_name: str


def _att_conf_and_history(w: Any, name: str) -> dict[str, Any]:
    if w.backend_name == "mysql":
        conn = w.backend.connect(w.backend.database)
        cur = conn.cursor()
        cur.execute("SELECT att_conf_id, att_name, facility, domain, family, member, name FROM att_conf WHERE att_name = ?", (name,))
        row = cur.fetchone()
        cur.execute(
            "SELECT e.event FROM att_history h JOIN att_history_event e USING (att_history_event_id) "
            "WHERE h.att_conf_id = ? ORDER BY h.time",
            (row[0],),
        )
        history = [r[0] for r in cur.fetchall()]
        conn.close()
    else:
        with w.backend.connect() as conn:
            row = conn.execute(
                "SELECT att_conf_id, att_name, cs_name, domain, family, member, name FROM att_conf WHERE att_name = %s", (name,)
            ).fetchone()
            history = [
                r[0]
                for r in conn.execute(
                    "SELECT e.event FROM att_history h JOIN att_history_event e USING (att_history_event_id) "
                    "WHERE h.att_conf_id = %s ORDER BY h.event_time",
                    (row[0],),
                )
            ]
    return {"name": row[1], "parts": tuple(row[2:]), "history": history}
