# SPDX-License-Identifier: Apache-2.0
"""Watching archivers live: hdbbench-es's own /metrics (LibConfiguration metrics_port), ``hdbbench
exporter`` and the Grafana dashboard dashboards/hdbpp-archivers.json, with real processes.

A Tango database of its own (no SQL server: the subscriber uses the null backend, which counts what it
would store), a simulated device pushing four scalar doubles, one hdbbench-es with ``metrics_port``,
``hdbbench exporter`` reading that subscriber through Tango, and Debian's Prometheus scraping both
every second (its own configuration and data directory, bound to 127.0.0.1). Every wait is a proof
(Prometheus's API says the targets are up and the series are there); every process is stopped at the
end, also on failure. Then the bad inputs: a port in use (exporter and subscriber), an unreachable
subscriber device.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hdbbench.stack.servers import process
from hdbbench.stack.servers.ports import LOOPBACK, pick_free_port
from hdbbench.subscribers import statistics as stats
from hdbbench.subscribers.launcher import DEFAULT_BINARY, SubscriberFleet, SubscriberSpec
from tests.harness import REPO, eventually, seen
from tests.harness.devices import tango_database
from tests.harness.runs import hdbbench

DASHBOARD = REPO / "dashboards" / "hdbpp-archivers.json"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
SUBSCRIBER_JOB, EXPORTER_JOB = "subscriber", "exporter"
WAIT_S = 90.0  # bound of every wait: a loaded 2-core machine, never a timing assertion

pytestmark = [
    pytest.mark.slow,
    pytest.mark.subscriber,
]

PROFILE = """
[profile]
name = "metrics"
description = "four scalar doubles for the metrics tests"
seed = 5
servers = 1
devices_per_server = 1
device_prefix = "sim/metrics"
timestamps = "push"

[defaults]
type = "DevDouble"
format = "SCALAR"
rate_hz = 5.0
p_warning = 0.0
p_alarm = 0.0
p_invalid = 0.0
p_error = 0.0

[[attribute]]
name = "v"
count = 4
"""


# ------------------------------------------------------------------------------------ helpers


def http_get(url: str) -> tuple[int, str]:
    """(status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except OSError:
        return 0, ""


def serving(url: str, line: str | None = None) -> Any:
    """For `eventually`: the body of `url` once it answers 200 (and holds `line`, when given)."""
    status, body = http_get(url)
    ok = status == 200 and (line is None or line in body.splitlines())
    return body if ok else seen(False, (status, body[-500:]))


def samples(text: str) -> dict[str, float]:
    """metric name -> value of an exposition with one device (comments skipped)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series.split("{", 1)[0]] = float(value)
    return out


@contextmanager
def port_held() -> Iterator[int]:
    """A loopback port below the ephemeral range with a listener of ours on it."""
    port = pick_free_port(23500)
    holder = socket.socket()
    # A port this module served before may linger in TIME_WAIT: take it anyway, as servers do.
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind((LOOPBACK, port))
    holder.listen(1)
    try:
        yield port
    finally:
        holder.close()


@contextmanager
def child(argv: list[str], log: Path) -> Iterator[process.ProcessRecord]:
    """A process that dies with the test session and is stopped when the block ends, whatever happens."""
    _, record = process.spawn(argv, log_path=log, attached=True)
    try:
        yield record
    finally:
        process.stop(record, timeout_s=15)


@dataclass
class Scene:
    tango_host: str
    fleet: SubscriberFleet
    device: str            # the subscriber
    sim: str               # the simulated device
    metrics_port: int      # the subscriber's /metrics
    exporter_port: int

    def es(self) -> Any:
        return self.fleet.proxy(self.device)


@pytest.fixture(scope="module")
def scene(own_tango_host: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    """The simulated device, the subscriber with metrics_port, and `hdbbench exporter` against it."""
    from hdbbench.load import devices

    tmp = tmp_path_factory.mktemp("metrics")
    profile = tmp / "metrics.toml"
    profile.write_text(PROFILE)
    fleet = SubscriberFleet(own_tango_host, tmp, binary=DEFAULT_BINARY, attached=True)
    metrics_port = pick_free_port(23600)
    exporter_port = pick_free_port(metrics_port + 1)
    try:
        sims = devices.up(own_tango_host, profile, state_dir=tmp / "devices", tie_to_parent=True, auto_start=True)
        plan = next(iter(sims.devices.values()))
        attributes = [f"tango://{own_tango_host}/{plan.name}/{s.name}".lower() for s in plan.specs]
        spec = SubscriberSpec(86, ("backend=null", f"metrics_port={metrics_port}", "flush_interval_ms=50"),
                              tuple(attributes), properties={"SubscribeRetryPeriod": ["5"],
                                                             "StatisticsTimeWindow": ["3600"]})
        fleet.up([spec])
        with child([sys.executable, "-m", "hdbbench", "exporter", "--tango-host", own_tango_host,
                    "--device", spec.device, "--port", str(exporter_port)], tmp / "exporter.log"):
            eventually(lambda: serving(f"http://{LOOPBACK}:{exporter_port}/metrics"), WAIT_S,
                       "the exporter serves")
            yield Scene(own_tango_host, fleet, spec.device, plan.name, metrics_port, exporter_port)
    finally:
        fleet.down()
        devices.down(tmp / "devices")


class Prometheus:
    def __init__(self, port: int) -> None:
        self.url = f"http://{LOOPBACK}:{port}"

    def api(self, path: str, **params: str) -> Any:
        status, body = http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        return json.loads(body)["data"] if status == 200 else None

    def query(self, expr: str) -> list[dict[str, Any]]:
        return (self.api("query", query=expr) or {"result": []})["result"]

    def targets_up(self) -> dict[str, str]:
        data = self.api("targets") or {"activeTargets": []}
        return {t["labels"]["job"]: t["health"] for t in data["activeTargets"]}


@pytest.fixture(scope="module")
def prometheus(scene: Scene, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    """Debian's Prometheus as a child process scraping the subscriber and the exporter every second."""
    if not os.access(PROMETHEUS, os.X_OK):
        pytest.skip(f"Prometheus not installed ({PROMETHEUS}): run scripts/setup.sh")
    tmp = tmp_path_factory.mktemp("prometheus")
    config = tmp / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"{LOOPBACK}:{target}"]}]}
            for job, target in ((SUBSCRIBER_JOB, scene.metrics_port), (EXPORTER_JOB, scene.exporter_port))
        ],
    }))
    port = pick_free_port(scene.exporter_port + 1)
    with child([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
                f"--web.listen-address={LOOPBACK}:{port}", "--storage.tsdb.retention.time=1h"],
               tmp / "prometheus.log"):
        prom = Prometheus(port)
        def both_up() -> Any:
            health = prom.targets_up()
            return seen(health == {SUBSCRIBER_JOB: "up", EXPORTER_JOB: "up"}, health)

        eventually(both_up, WAIT_S, "Prometheus reports both targets up")
        yield prom


def dashboard_queries(device: str) -> list[str]:
    """Every query of the dashboard, its variables set to all sources and the one subscriber."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    exprs = [target["expr"] for panel in panels for target in panel["targets"]]
    return [e.replace("$job", ".*").replace("$device", device) for e in exprs]


# ------------------------------------------------------------------------------------ tests


def test_subscriber_serves_every_scalar_statistic_named_from_statistics_def(scene: Scene) -> None:
    status, text = http_get(f"http://{LOOPBACK}:{scene.metrics_port}/metrics")
    assert status == 200, text
    served = samples(text)
    assert set(served) == {metric for metric, _ in stats.METRICS.values()}
    assert f'hdbpp_attribute_number{{device="{scene.device}"}} 4' in text.splitlines()
    # The exporter names the same attributes alike, and adds its own two.
    exported = samples(http_get(f"http://{LOOPBACK}:{scene.exporter_port}/metrics")[1])
    assert set(exported) == set(served) | {"hdbbench_exporter_up", "hdbbench_exporter_state"}
    assert exported["hdbbench_exporter_up"] == 1


def test_every_dashboard_query_has_series_in_prometheus(scene: Scene, prometheus: Prometheus) -> None:
    queries = dashboard_queries(scene.device)
    assert len(queries) >= 20
    def answered(expr: str) -> Any:
        result = prometheus.query(expr)
        return seen(result and all(s["metric"]["device"] == scene.device for s in result), result)

    for expr in queries:
        eventually(lambda e=expr: answered(e), WAIT_S, f"Prometheus has series for the dashboard's {expr}")
    # The dashboard's variables: the subscriber is among the `device` values of each source.
    for job in (SUBSCRIBER_JOB, EXPORTER_JOB):
        match = f'hdbpp_attribute_number{{job="{job}"}}'
        values = prometheus.api("label/device/values", **{"match[]": match})
        assert values is not None and scene.device in values, (job, values)


def test_prometheus_values_equal_the_subscribers_attributes(scene: Scene, prometheus: Prometheus) -> None:
    import tango

    # Stop the device: the counters then stand still, and Prometheus's latest sample must reach them.
    tango.DeviceProxy(f"tango://{scene.tango_host}/{scene.sim}").Stop()
    es = scene.es()
    eventually(lambda: seen(int(es.RowsStoredNumber) > 0, int(es.RowsStoredNumber)), WAIT_S, "rows stored")
    for attribute in (stats.ATTRIBUTE_NUMBER, stats.ATTRIBUTE_OK_NUMBER, stats.ATTRIBUTE_STARTED_NUMBER,
                      stats.ATTRIBUTE_NOK_NUMBER, stats.ROWS_STORED_NUMBER, stats.MEMORY_QUEUE_CAPACITY):
        metric = stats.METRICS[attribute][0]
        for job in (SUBSCRIBER_JOB, EXPORTER_JOB):
            expr = f'{metric}{{job="{job}",device="{scene.device}"}}'

            def agree(expr: str = expr, attribute: str = attribute) -> Any:
                tango_value = float(es.read_attribute(attribute).value)
                result = prometheus.query(expr)
                scraped = float(result[0]["value"][1]) if len(result) == 1 else None
                return seen(scraped == tango_value, {"prometheus": scraped, "tango": tango_value})

            eventually(agree, WAIT_S, f"{expr} equals the attribute {attribute}")
    assert float(es.AttributeNumber) == 4


def test_exporter_refuses_a_port_in_use(scene: Scene) -> None:
    with port_held() as port:
        done = hdbbench("exporter", "--tango-host", scene.tango_host, "--device", scene.device,
                            "--port", str(port))
    assert done.returncode == 2, done
    assert done.stderr.strip() == (f"hdbbench: error: exporter cannot listen on {LOOPBACK}:{port}: "
                                   "address already in use")


@pytest.mark.parametrize("device", ["archiving/nowhere/1", "archiving/hdbbench-es/registered-not-running"])
def test_exporter_refuses_an_unreachable_subscriber(scene: Scene, device: str) -> None:
    import tango

    if device.endswith("not-running"):  # defined in the database, never started: a subscriber that is down
        info = tango.DbDevInfo()
        info.name, info._class, info.server = device, "HdbEventSubscriber", "hdbbench-es/not-running"
        tango_database(scene.tango_host).add_device(info)
    done = hdbbench("exporter", "--tango-host", scene.tango_host, "--device", device,
                        "--device", scene.device, "--port", str(pick_free_port(23700)))
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"hdbbench: error: subscriber device tango://{scene.tango_host}/{device} unreachable: "), done.stderr


def test_exporter_finds_the_running_subscribers_in_the_tango_database(scene: Scene) -> None:
    done = hdbbench("exporter", "--tango-host", scene.tango_host, "--once")
    assert done.returncode == 0, done
    lines = done.stdout.splitlines()
    assert f'hdbpp_attribute_number{{device="{scene.device}"}} 4' in lines
    assert f'hdbbench_exporter_up{{device="{scene.device}"}} 1' in lines
    # Registered but never started: not exported, so not found.
    assert "registered-not-running" not in done.stdout


def test_subscriber_with_its_metrics_port_in_use_alarms_then_init_serves_strictly(scene: Scene,
                                                                                  tmp_path: Path) -> None:
    import tango

    device = "archiving/hdbbench-es/87"
    with port_held() as port:
        scene.fleet.up([SubscriberSpec(87, ("backend=null", f"metrics_port={port}"))])
        es = scene.fleet.proxy(device)
        expected = (f"Metrics endpoint off (LibConfiguration metrics_port={port}): cannot listen on "
                    f"{LOOPBACK}:{port}: Address already in use; free the port or choose another, then Init.")
        eventually(lambda: seen(es.state() == tango.DevState.ALARM and expected in es.status(),
                                (es.state(), es.status())), WAIT_S, "ALARM, the status saying why")
        assert not scene.fleet.exited([device])
    # The port is free again: after Init the endpoint serves, strict mode HDB++'s statistics only.
    tango_database(scene.tango_host).put_device_property(
        device, {"LibConfiguration": ["backend=null", f"metrics_port={port}", "hdbpp_strict=1"]})
    es.Init()
    text = eventually(lambda: serving(f"http://{LOOPBACK}:{port}/metrics"), WAIT_S,
                      "the endpoint serves after Init")
    served = set(samples(text))
    assert served == {metric for attr, (metric, _) in stats.METRICS.items() if attr not in stats.OURS}
    assert all(name.startswith("hdbpp_") for name in served)
    assert "Metrics endpoint off" not in es.status()
    # The exporter serves it too; once its process is gone, it says so and serves on.
    exporter_port = pick_free_port(23800)
    url = f"http://{LOOPBACK}:{exporter_port}/metrics"
    up = f'hdbbench_exporter_up{{device="{device}"}}'
    with child([sys.executable, "-m", "hdbbench", "exporter", "--tango-host", scene.tango_host,
                "--device", device, "--port", str(exporter_port)], tmp_path / "exporter.log"):
        body = eventually(lambda: serving(url, f"{up} 1"), WAIT_S, "the exporter reads the strict subscriber")
        assert set(samples(body)) == served | {"hdbbench_exporter_up", "hdbbench_exporter_state"}
        record = process.ProcessRecord.load(scene.fleet.dir / "87" / "process.json")
        assert record is not None
        process.stop(record)
        eventually(lambda: serving(url, f"{up} 0"), WAIT_S,
                   "the exporter reports the stopped subscriber down")
