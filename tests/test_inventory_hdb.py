# SPDX-License-Identifier: Apache-2.0
"""`hdbbench inventory from-hdb`: an inventory read back from a live HDB++ archive of every backend.

Each backend's fresh database gets a small mix written with its bulk writer (the subscriber's way of
writing): exact periodic timestamps over 130 s ending now, errors and INVALID events in one group, an
attribute that stopped an hour ago and one that never stored an event. The inventory read from it
must give the mix back: groups, counts, names, types, formats, write types and array lengths as
written, rates within 5 %, the error and invalid shares and value statistics as written. The read runs
as HDB++'s read-only account and moves no write counter of the server. Bad input gives one line each
and writes nothing.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hdbbench.backends import Backend
from hdbbench.backends.abilities.inventory import EventRow
from hdbbench.backends.accounts import as_account
from hdbbench.backends.registry import DEFAULT_BACKENDS, server_of
from hdbbench.load.inventory import archive as archive_mod
from hdbbench.load.inventory import figures, grouping
from hdbbench.load.inventory import from_hdb as hdb
from hdbbench.load.inventory.model import Group, load_inventory
from hdbbench.model.errors import ConfigError, ServerError
from hdbbench.model.hdbtypes import AttrFormat, AttributeInfo, Event, Quality, TangoType, WriteType
from tests.harness import REPO
from tests.harness.databases import fresh_backend, read_only_account, unique_db_name, url_of
from tests.harness.servers import one_backend_per_server

SPAN_S = 130


# ------------------------------------------------------------------------------ the source mix


@dataclass(frozen=True)
class Source:
    slug: str
    type: TangoType
    write: WriteType
    period_s: float
    count: int
    fmt: AttrFormat = AttrFormat.SCALAR
    elements: int = 0
    ends_before_s: float = 0.0     # its last event this long before the others'

    def names(self) -> list[str]:
        return [f"tango://test:10000/inv/{self.slug}/{k}/value" for k in range(self.count)]

    @property
    def side(self) -> str:
        return "ro" if self.write == WriteType.READ else "rw"


MIX = (
    Source("double-ro", TangoType.DEV_DOUBLE, WriteType.READ, 1.0, 3),
    Source("double-rw", TangoType.DEV_DOUBLE, WriteType.READ_WRITE, 10.0, 2),   # errors and INVALID events
    Source("long", TangoType.DEV_LONG, WriteType.READ, 5.0, 2),
    Source("boolean", TangoType.DEV_BOOLEAN, WriteType.READ, 2.0, 2),
    Source("spectrum", TangoType.DEV_DOUBLE, WriteType.READ, 1.0, 2, AttrFormat.SPECTRUM, 100),
    Source("string", TangoType.DEV_STRING, WriteType.READ, 10.0, 1),
    Source("stopped", TangoType.DEV_SHORT, WriteType.READ, 10.0, 1, ends_before_s=3600.0),
)
SILENT = "tango://test:10000/inv/silent/0/value"     # registered, never an event
ERRORS_AT, INVALID_AT = (3, 9), (5, 11)              # the double-rw events that are errors / INVALID
TEXT = "twelve chars"


def _value(src: Source, k: int) -> Any:
    if src.fmt == AttrFormat.SPECTRUM:
        return [float(k + i) for i in range(src.elements)]
    if src.type == TangoType.DEV_DOUBLE:
        return 0.5 * k                  # value_step 0.5, no repeats
    if src.type in (TangoType.DEV_LONG, TangoType.DEV_SHORT):
        return k // 2                   # 0 0 1 1 2 2 ...: steps of 1 every other event
    if src.type == TangoType.DEV_BOOLEAN:
        return k % 2 == 0
    return TEXT


def _events(src: Source, name: str, end: datetime) -> list[Event]:
    n = int(SPAN_S / src.period_s) + 1
    last = end - timedelta(seconds=src.ends_before_s)
    out = []
    for k in range(n):
        at = last - timedelta(seconds=(n - 1 - k) * src.period_s)
        v = _value(src, k)
        w = v if src.write != WriteType.READ else None
        if src.slug == "double-rw" and k in ERRORS_AT:
            out.append(Event(name, at, error_desc="read failed"))
        elif src.slug == "double-rw" and k in INVALID_AT:
            out.append(Event(name, at, quality=Quality.INVALID))
        else:
            out.append(Event(name, at, v, w))
    return out


def fill(backend: Backend, end: datetime) -> None:
    with backend.bulk_writer() as writer:
        for src in MIX:
            for name in src.names():
                writer.register_attribute(AttributeInfo(name, src.type, src.fmt, src.write))
                writer.write(_events(src, name, end))
        writer.register_attribute(AttributeInfo(SILENT, TangoType.DEV_FLOAT))


@pytest.fixture(scope="module", params=DEFAULT_BACKENDS)
def archive(request: pytest.FixtureRequest, endpoint_of: Callable[[str], Any]) -> Iterator[Backend]:
    """A backend's database holding MIX, written once for the module."""
    with fresh_backend(request.param, endpoint_of(request.param), prefix="h3inv") as backend:
        fill(backend, datetime.now(timezone.utc).replace(microsecond=0))
        if server_of(backend.name) == "postgres":  # so that autovacuum's ANALYZE moves no counter later
            with backend.endpoint.connect(backend.database, autocommit=True) as conn:
                conn.execute("ANALYZE")
        yield backend


def _group_of(groups: tuple[Group, ...], src: Source) -> Group:
    matching = [g for g in groups if set(g.names) == set(src.names())]
    assert len(matching) == 1, f"{src.slug}: no group holds exactly {src.names()}: {[g.names for g in groups]}"
    return matching[0]


# ------------------------------------------------------------------------------------ 1. round trip


def test_the_inventory_gives_the_mix_back(archive: Backend, tmp_path: Path) -> None:
    output = tmp_path / "facility.toml"
    done = hdb.from_hdb(url_of(archive.endpoint, archive.database), output)
    assert done.read.backend == archive.name
    groups = done.inventory.groups
    assert len(groups) == len(MIX), [g.label for g in groups]
    for src in MIX:
        g = _group_of(groups, src)
        assert (g.type, g.format, g.write, g.count) == (src.type, src.fmt, src.side, src.count), g
        assert g.names == tuple(sorted(src.names()))
        assert g.rate_hz == pytest.approx(1.0 / src.period_s, rel=0.05), g
        if src.fmt == AttrFormat.SPECTRUM:
            assert (g.dim_x, g.elements) == (src.elements, src.elements)
        errors = len(ERRORS_AT) if src.slug == "double-rw" else 0
        invalid = len(INVALID_AT) if src.slug == "double-rw" else 0
        n = int(SPAN_S / src.period_s) + 1
        assert g.error_share == pytest.approx(errors / n, abs=1e-6), g
        assert g.invalid_share == pytest.approx(invalid / n, abs=1e-6), g
    double, long_ = _group_of(groups, MIX[0]), _group_of(groups, MIX[2])
    assert (double.value_step, double.repeat_share) == (pytest.approx(0.5), 0.0)
    assert (long_.value_step, long_.repeat_share) == (pytest.approx(0.5, rel=0.05), pytest.approx(0.5, rel=0.05))
    assert _group_of(groups, MIX[3]).value_step is None          # booleans are not numbers here
    assert _group_of(groups, MIX[5]).string_chars == len(TEXT)
    assert "scalar devdouble rw every 10 s" in [g.label for g in groups]
    assert "spectrum devdouble ro x100 every 1 s" in [g.label for g in groups]
    # the file is the one load_inventory reads, and says the same
    assert load_inventory(output).groups == groups
    # the attribute that never stored an event is named and left out
    assert done.warnings == (f"1 attribute left out, no event stored: {SILENT}",)
    assert all(SILENT not in g.names for g in groups)


def test_a_short_window_reads_stopped_attributes_from_their_last_events(archive: Backend, tmp_path: Path) -> None:
    done = hdb.from_hdb(url_of(archive.endpoint, archive.database), tmp_path / "half-hour.toml", window_h=0.5)
    stopped = MIX[-1]
    assert _group_of(done.inventory.groups, stopped).rate_hz == pytest.approx(0.1, rel=0.05)
    assert done.warnings[0] == (f"1 attribute without an event in the 0.5 h window, counted at the rate of "
                                f"their last events: {stopped.names()[0]}")


def test_the_command_line_writes_the_inventory(archive: Backend, tmp_path: Path) -> None:
    if archive.name != DEFAULT_BACKENDS[0]:
        pytest.skip("the command line is run once, on the first backend")
    output = tmp_path / "cli.toml"
    result = subprocess.run([sys.executable, "-m", "hdbbench", "inventory", "from-hdb",
                             url_of(archive.endpoint, archive.database), "--output", str(output), "--window-h", "2"],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {output}: {len(MIX)} groups of {sum(s.count for s in MIX)} attributes")
    assert f"hdbbench: warning: 1 attribute left out, no event stored: {SILENT}" in result.stderr
    text = output.read_text()
    assert archive.endpoint.password not in text     # the URL is recorded with its password masked
    assert len(load_inventory(output).groups) == len(MIX)


# ------------------------------------------------------------------------------------ 2. read-only


def _write_counters(backend: Backend) -> dict[str, int]:
    """The server's own counts of written rows and write statements (a new session each time)."""
    if server_of(backend.name) == "postgres":
        with backend.endpoint.connect(autocommit=True) as conn:
            row = conn.execute("SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database "
                               "WHERE datname = %s", (backend.database,)).fetchone()
        return dict(zip(("tup_inserted", "tup_updated", "tup_deleted"), map(int, row), strict=True))
    names = ("Com_insert", "Com_update", "Com_delete", "Com_replace", "Com_insert_select", "Com_create_table",
             "Com_drop_table", "Com_alter_table", "Handler_write", "Handler_update", "Handler_delete")
    with closing(backend.endpoint.connect()) as conn:
        cur = conn.cursor()
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(f"'{n}'" for n in names) + ")")
        return {k: int(v) for k, v in cur.fetchall()}


def _settled(backend: Backend) -> dict[str, int]:
    """The counters once they stop moving (PostgreSQL publishes a session's counts when it ends)."""
    previous = _write_counters(backend)
    for _ in range(20):
        time.sleep(0.5)
        now = _write_counters(backend)
        if now == previous:
            return now
        previous = now
    return previous


def test_the_read_only_account_reads_and_writes_nothing(archive: Backend, tmp_path: Path) -> None:
    reader = as_account(archive.endpoint, read_only_account(archive.name))
    before = _settled(archive)
    done = hdb.from_hdb(url_of(reader, archive.database), tmp_path / "reader.toml")
    after = _settled(archive)
    assert len(done.inventory.groups) == len(MIX)
    assert after == before, "the read wrote: " + ", ".join(
        f"{k} +{after[k] - before[k]}" for k in before if after[k] != before[k])
    # the counters do see a write (so the check above can fail)
    with closing(archive.endpoint.connect(archive.database)) as conn:
        conn.cursor().execute("INSERT INTO att_error_desc (error_desc) VALUES ('counter check')")
        conn.commit()
    assert _settled(archive) != after


def test_the_session_refuses_writes(archive: Backend) -> None:
    """Even the administrator's session of from-hdb cannot write (read-only transactions)."""
    target = archive_mod.resolve_url(url_of(archive.endpoint, archive.database))
    session = target.reader.open_archive(target.endpoint, target.database, 10.0)
    try:
        with pytest.raises(ServerError, match="(?i)read.only"):
            session._all("INSERT INTO att_error_desc (error_desc) VALUES ('from-hdb wrote')")
    finally:
        session.close()


# ------------------------------------------------------------------------------------ 3. bad input


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _refused(url: str, output: Path, error: type[Exception], match: str, **kwargs: Any) -> str:
    with pytest.raises(error, match=match) as caught:
        hdb.from_hdb(url, output, **kwargs)
    assert not output.exists() and not list(output.parent.glob(f".{output.name}.*")), "something was written"
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("backend", one_backend_per_server())
def test_a_database_that_is_not_hdbpp_or_is_empty_is_refused(backend: str, endpoint_of: Callable[[str], Any],
                                                              tmp_path: Path) -> None:
    endpoint = endpoint_of(backend)
    plain = unique_db_name(backend, "h3plain")
    with closing(endpoint.connect(autocommit=True) if server_of(backend) == "postgres" else endpoint.connect()) as c:
        c.cursor().execute(f"CREATE DATABASE {plain}")
    try:
        _refused(url_of(endpoint, plain), tmp_path / "x.toml", ConfigError,
                 rf"database '{plain}' on .* is not an HDB\+\+ archive: it has no att_conf table")
    finally:
        with closing(endpoint.connect(autocommit=True) if server_of(backend) == "postgres" else endpoint.connect()) as c:
            c.cursor().execute(f"DROP DATABASE {plain}")
    with fresh_backend(backend, endpoint, prefix="h3empty") as empty:
        url = url_of(endpoint, empty.database)
        _refused(url, tmp_path / "x.toml", ConfigError, "holds no archived attribute: att_conf is empty")
        with empty.bulk_writer() as writer:
            writer.register_attribute(AttributeInfo(SILENT, TangoType.DEV_DOUBLE))
        _refused(url, tmp_path / "x.toml", ConfigError, "holds no archived event: none of its 1 attributes")


def test_bad_urls_and_unreachable_servers_are_one_line_each(tmp_path: Path) -> None:
    out = tmp_path / "x.toml"
    _refused("ftp://u:secret@127.0.0.1:21/hdb", out, ConfigError, r"unknown kind of URL 'ftp://'; give postgresql://")
    _refused("postgresql://u:secret@127.0.0.1:notaport/hdb", out, ConfigError, "cannot parse the URL")
    assert "secret" not in _refused("mysql://u:secret@127.0.0.1:3306", out, ConfigError, "names no database")
    port = _closed_port()
    for scheme, label in (("postgresql", "PostgreSQL"), ("mysql", "MariaDB")):
        message = _refused(f"{scheme}://u:secret@127.0.0.1:{port}/hdb", out, ServerError,
                           f"cannot connect to {label} at 127.0.0.1:{port}, database 'hdb'")
        assert "secret" not in message


def test_an_output_that_cannot_be_written_is_refused_before_reading(tmp_path: Path) -> None:
    # checked before the URL is even resolved: a directory in the way
    (tmp_path / "taken").mkdir()
    with pytest.raises(ConfigError, match="is a directory"):
        hdb.from_hdb("postgresql://u:p@127.0.0.1:1/hdb", tmp_path / "taken")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        hdb.from_hdb("postgresql://u:p@127.0.0.1:1/hdb", tmp_path / "file" / "x.toml")


def test_the_read_stops_at_its_time_bound_and_writes_nothing(archive: Backend, tmp_path: Path) -> None:
    if archive.name != DEFAULT_BACKENDS[-1]:
        pytest.skip("once, on the last backend")
    message = _refused(url_of(archive.endpoint, archive.database), tmp_path / "x.toml", hdb.ReadStopped,
                       r"stopped after 0\.001 s \(--max-seconds\)", max_seconds=0.001)
    assert message.endswith("nothing written")


def test_the_command_line_prints_one_error_line() -> None:
    result = subprocess.run([sys.executable, "-m", "hdbbench", "inventory", "from-hdb", "ftp://h/x", "-o", "x.toml"],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.startswith("hdbbench: error: ftp://h/x: unknown kind of URL")
    assert result.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------ no server


def test_rates_bands_and_labels() -> None:
    end = datetime(2026, 1, 1, tzinfo=timezone.utc)
    times = [end - timedelta(seconds=10 * k) for k in range(5)]
    assert figures.attribute_rate(times, 86400, end) == pytest.approx(0.1)
    assert figures.attribute_rate(times[:2], 86400, end) == pytest.approx(0.1)
    assert figures.attribute_rate(times[:1], 86400, end) == pytest.approx(1 / 86400)
    assert figures.attribute_rate([end - timedelta(days=2)], 86400, end) == pytest.approx(1 / (2 * 86400))
    # the value sent on subscription, 17 s before the first periodic event of a 60 s attribute, is left out
    subscribed = [end - timedelta(seconds=137), end - timedelta(seconds=120), end - timedelta(seconds=60), end]
    assert figures.attribute_rate(subscribed, 86400, end) == pytest.approx(1 / 60)
    assert grouping.rate_band(0.999) == grouping.rate_band(1.004) == 1.0 != grouping.rate_band(0.98)
    assert [grouping.period_text(r) for r in (1.0, 0.1, 5.0, 1 / 60, 1 / 600, 1 / 7200)] == [
        "every 1 s", "every 10 s", "every 0.2 s", "every 60 s", "every 10 min", "every 2 h"]

    def shape(name: str, rate: float) -> grouping.AttributeShape:
        return grouping.AttributeShape(name, TangoType.DEV_DOUBLE, AttrFormat.SCALAR, WriteType.READ, rate_hz=rate)

    groups = grouping.group_shapes([shape("a", 0.999), shape("b", 1.001), shape("c", 9.8), shape("d", 9.9)])
    assert [(g.names, g.rate_hz) for g in groups] == [(("a", "b"), 1.0), (("c",), 9.8), (("d",), 9.9)]
    assert len({g.label for g in groups}) == 3     # 9.8 and 9.9 Hz both read "every 0.1 s" at two digits
    assert groups[0].label == "scalar devdouble ro every 1 s"


def test_errors_invalid_events_and_value_statistics() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    values = [1.0, 1.0, None, 3.0, 4.0]
    rows = [EventRow(t0 + timedelta(seconds=k), 0 if v is not None else Quality.INVALID, False, v is not None, v)
            for k, v in enumerate(values)]
    rows.append(EventRow(t0 + timedelta(seconds=9), None, True, False, None))
    f = figures.tally(TangoType.DEV_DOUBLE, rows[::-1])
    assert (f.errors, f.invalid, f.pairs, f.repeats, f.step_sum) == (1, 1, 3, 1, 3.0)
