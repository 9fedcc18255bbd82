# SPDX-License-Identifier: Apache-2.0
"""A Prometheus exporter of HDB++ event subscribers (class HdbEventSubscriber), through Tango only.

It serves ``GET /metrics`` on 127.0.0.1:<port> and, on each scrape, reads the scalar statistics
attributes of every subscriber it was given (PyTango, one ``read_attributes`` call per device), as
MAX IV's exporter does for their archivers. It works for the real hdbpp-es (HDB++'s attributes) and
for hdbbench-es (ours too, unless it is strict). Metric names come from statistics.def through the
generated ``subscriber_statistics.METRICS``, the names hdbbench-es serves itself (LibConfiguration
``metrics_port``): ``hdbpp_attribute_pending_number{device="archiving/..."}``,
``hdbbench_rows_stored_number{...}``. The exporter adds ``hdbbench_exporter_up`` (1 when the device
answered this scrape) and ``hdbbench_exporter_state`` (its Tango state as a number).

Reading at scrape time, not on a timer of our own, keeps the figures as fresh as Prometheus asks for
and the exporter idle between scrapes. One scrape at a time, which is what one Prometheus needs.
"""

from __future__ import annotations

import errno
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from hdbbench.model.errors import ConfigError, HdbbenchError, ServerError
from hdbbench.stack.servers.ports import LOOPBACK
from hdbbench.subscribers import statistics as stats

CLASS_NAME = "HdbEventSubscriber"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_TIMEOUT_MS = 3000
UP_METRIC = "hdbbench_exporter_up"
STATE_METRIC = "hdbbench_exporter_state"
# Tango's DevState numbers (tango.DevState), the value of STATE_METRIC.
STATE_HELP = ("Tango state of the subscriber: 0 ON, 1 OFF, 8 FAULT, 9 INIT, 11 ALARM, 13 UNKNOWN "
              "(-1: not read)")


def device_label(name: str) -> str:
    """The device label: the device name without its Tango host, lower case, as hdbbench-es labels
    its own metrics (tango://host:10000/Archiving/ES/1 -> archiving/es/1)."""
    plain = name.split("#", 1)[0]
    if plain.startswith("tango://"):
        plain = plain[len("tango://"):].split("/", 1)[1] if "/" in plain[len("tango://"):] else ""
    return plain.lower()


def format_value(value: Any) -> str:
    """A sample value: integers exactly, floats as the shortest text that reads back the same."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(number)


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@dataclass
class Subscriber:
    """One HdbEventSubscriber device: its proxy and which statistics it has, learnt at the first
    contact and again after a failed read (a restarted subscriber may publish others: strict mode)."""

    name: str       # a full tango:// name
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    proxy: Any = None
    statistics: tuple[str, ...] | None = None  # scalar statistics this device publishes; None: not known yet

    @property
    def label(self) -> str:
        return device_label(self.name)

    def ensure(self) -> None:
        """Reach the device and learn its statistics; an unreachable device, or one of another class,
        raises an HdbbenchError of one line."""
        # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
        import tango

        if self.statistics is not None:
            return
        try:
            if self.proxy is None:
                self.proxy = tango.DeviceProxy(self.name)
                self.proxy.set_timeout_millis(self.timeout_ms)
            self.proxy.ping()
            dev_class = self.proxy.info().dev_class
            present = {attr.lower() for attr in self.proxy.get_attribute_list()}
        except tango.DevFailed as exc:
            raise ServerError(f"subscriber device {self.name} unreachable: {_first_line(exc)}") from None
        if dev_class != CLASS_NAME:
            raise ConfigError(f"device {self.name} is of class {dev_class}, not {CLASS_NAME}")
        self.statistics = tuple(attr for attr in stats.METRICS if attr.lower() in present)


def _first_line(exc: BaseException) -> str:
    args = getattr(exc, "args", ())
    if args and hasattr(args[0], "desc"):  # tango.DevFailed: the first error's description
        text = str(args[0].desc)
    else:
        text = str(exc)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def full_name(device: str, tango_host: str | None) -> str:
    """tango://HOST:PORT/d/f/m for a plain name (given Tango host); a full name is kept."""
    if device.startswith("tango://"):
        return device
    if device.count("/") != 2:
        raise ConfigError(f"--device {device!r} is not a device name (domain/family/member)")
    if not tango_host:
        raise ConfigError(f"--device {device!r} needs a Tango host: give --tango-host or a full "
                          "tango:// name")
    return f"tango://{tango_host}/{device}"


def discover(tango_host: str) -> list[str]:
    """The exported devices of class HdbEventSubscriber in a Tango database, as full names."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    host, _, port = tango_host.rpartition(":")
    try:
        db = tango.Database(host, int(port))
        names = sorted(db.get_device_exported_for_class(CLASS_NAME))
    except (tango.DevFailed, ValueError) as exc:
        raise ServerError(f"cannot read the Tango database {tango_host}: {_first_line(exc)}") from None
    if not names:
        raise ServerError(f"no device of class {CLASS_NAME} runs in the Tango database {tango_host}")
    return [f"tango://{tango_host}/{name}" for name in names]


def connect(name: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Subscriber:
    """A subscriber that answers now (see Subscriber.ensure for the errors)."""
    sub = Subscriber(name, timeout_ms)
    sub.ensure()
    return sub


def scrape(subscribers: Sequence[Subscriber]) -> str:
    """The exposition text of every subscriber: one read per device; a device that does not answer
    has ``hdbbench_exporter_up 0`` and no statistics this time."""
    # deferred: PyTango (cppTango) is heavy to load; only this path talks to Tango
    import tango

    samples: dict[str, list[str]] = {}  # metric -> sample lines, so each metric is one group
    helps = {UP_METRIC: "1 when the subscriber answered this scrape", STATE_METRIC: STATE_HELP}
    for sub in subscribers:
        label = f'{{device="{_escape_label(sub.label)}"}}'
        up, state = 0, -1
        values: dict[str, Any] = {}
        try:
            sub.ensure()
            names = list(sub.statistics or ())
            for reply in sub.proxy.read_attributes(names) if names else ():
                if not reply.has_failed and reply.value is not None:
                    values[reply.name.lower()] = reply.value
            state = int(sub.proxy.state())
            up = 1
        except (tango.DevFailed, HdbbenchError):
            values = {}
            sub.statistics = None  # learn them again once it answers
        samples.setdefault(UP_METRIC, []).append(f"{UP_METRIC}{label} {up}")
        samples.setdefault(STATE_METRIC, []).append(f"{STATE_METRIC}{label} {state}")
        for attr in sub.statistics or ():
            if attr.lower() in values:
                metric, help_text = stats.METRICS[attr]
                helps[metric] = help_text
                samples.setdefault(metric, []).append(f"{metric}{label} {format_value(values[attr.lower()])}")
    out = []
    for metric, lines in samples.items():
        help_text = helps[metric].replace("\\", "\\\\").replace("\n", "\\n")
        out += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge", *lines]
    return "\n".join(out) + "\n"


def serve(port: int, render: Callable[[], str], on_ready: Callable[[int], None] | None = None) -> None:
    """Serve GET /metrics on 127.0.0.1:port until interrupted (KeyboardInterrupt, as SIGTERM is
    turned into by the CLI). A port in use is refused in one line."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._reply(body=True)

        def do_HEAD(self) -> None:
            self._reply(body=False)

        def _reply(self, body: bool) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                try:
                    status, text, kind = 200, render(), CONTENT_TYPE
                except Exception as exc:  # noqa: BLE001 - a scrape error must not end the exporter
                    status, text, kind = 500, f"{type(exc).__name__}: {exc}\n", "text/plain"
            elif path == "/":
                status, text, kind = 200, "hdbbench exporter: the statistics are at /metrics\n", "text/plain"
            else:
                status, text, kind = 404, "not found: GET /metrics\n", "text/plain"
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    try:
        server = HTTPServer((LOOPBACK, port), Handler)
    except OSError as exc:
        reason = "address already in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise ServerError(f"exporter cannot listen on {LOOPBACK}:{port}: {reason}") from None
    with server:
        if on_ready is not None:
            on_ready(server.server_address[1])
        server.serve_forever()
