# SPDX-License-Identifier: Apache-2.0
"""HdbBenchSim: a simulated Tango device whose attributes are generated from its properties.

A thin Tango shell over `hdbbench.load.emitter`: the device property ``Attributes`` holds one JSON
`AttrSpec` per line (written by the launcher from a profile), ``Seed`` the seed. Push-mode attributes
get code-pushed archive events (``set_archive_event(name, True, False)``: Tango does not check the
archive criteria, every pushed event is sent) from one pusher thread; poll-mode attributes are polled
by Tango with ``archive_abs_change``/``archive_rel_change``/``archive_period`` set, and each read serves
the next generated sample. Event k of an attribute is `hdbbench.load.emitter.predict_event(seed, device,
spec, k)`; the statistics attributes report per attribute how many events were emitted and their
checksum (see the emitter module for its definition).

Run it as ``python HdbBenchSim.py <instance>`` (server ``HdbBenchSim/<instance>``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

# The server runs as a script: make the repository's hdbbench package importable without installing.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import tango  # noqa: E402
from tango import AttrDataFormat, AttrQuality, AttrWriteType, CmdArgType, DevState  # noqa: E402
from tango.server import Device, attribute, command, device_property  # noqa: E402

from hdbbench.load import emitter as em  # noqa: E402

_FORMATS = {"SCALAR": AttrDataFormat.SCALAR, "SPECTRUM": AttrDataFormat.SPECTRUM,
            "IMAGE": AttrDataFormat.IMAGE}
_WRITES = {"READ": AttrWriteType.READ, "READ_WRITE": AttrWriteType.READ_WRITE}
_QUALITIES = {em.VALID: AttrQuality.ATTR_VALID, em.INVALID: AttrQuality.ATTR_INVALID,
              em.ALARM: AttrQuality.ATTR_ALARM, em.WARNING: AttrQuality.ATTR_WARNING,
              em.CHANGING: AttrQuality.ATTR_CHANGING}
_STATES = [DevState(i) for i in range(len(em.STATE_NAMES))]
_IDLE_WAIT_S = 0.05   # longest sleep of the pusher: bounds the reaction to commands and shutdown
_MIN_SLEEP_S = 2e-4   # below this a sleep costs more than it saves: keep pushing
_STEP_BUDGET = 2000   # events per step: the emitter lock is released regularly for commands


def _simulated_error() -> tango.DevFailed:
    err = tango.DevError()
    err.reason, err.desc, err.origin = em.ERROR_REASON, em.ERROR_DESC, "HdbBenchSim"
    err.severity = tango.ErrSeverity.ERR
    return tango.DevFailed(err)


class HdbBenchSim(Device):
    """Generated attributes + archive events at configured rates, with event accounting."""

    Attributes = device_property(dtype=(str,), default_value=[],
                                 doc="one JSON AttrSpec per element (hdbbench.load.emitter.AttrSpec)")
    Seed = device_property(dtype=int, default_value=1, doc="seed of every generated sequence")
    AutoStart = device_property(dtype=bool, default_value=False, doc="start emitting at init")
    Timestamps = device_property(dtype=str, default_value="schedule",
                                 doc="source timestamps of pushed events: 'schedule' (due time) or 'push' (push time)")
    Phases = device_property(dtype=str, default_value="aligned",
                             doc="schedule phases: 'aligned' (every attribute of a rate at once) or 'seeded' "
                                 "(each offset by a seeded fraction of its period)")

    # ---------------------------------------------------------------- life cycle
    def init_device(self) -> None:
        super().init_device()
        self._error = _simulated_error()
        self._specs: list[em.AttrSpec] = []
        self._quit = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            self._specs = [em.AttrSpec.from_json(line) for line in self.Attributes if line.strip()]
            self._emitter = em.Emitter(self.Seed, self.get_name(), self._specs, self._push,
                                       timestamps=self.Timestamps, phases=self.Phases)
        except (ValueError, TypeError, em.SpecError) as exc:
            # Never exit on bad configuration: FAULT with the reason, no generated attributes.
            self._specs = []
            self._emitter = em.Emitter(self.Seed, self.get_name(), [], self._push)
            self.set_state(DevState.FAULT)
            self.set_status(f"bad Attributes, Timestamps or Phases property: {exc}")
            return
        self._placeholders = {s.name.lower(): self._tango_value(s, em.EventStream(
            self.Seed, "placeholder", s).raw_value(0)) for s in self._specs}
        self._thread = threading.Thread(target=self._pusher, name="hdbbench-pusher", daemon=True)
        self._thread.start()
        self._set_running_state()
        if self.AutoStart:
            self.Start()

    def delete_device(self) -> None:
        self._quit.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        super().delete_device()

    def initialize_dynamic_attributes(self) -> None:
        for spec in self._specs:
            self._add_generated(spec)

    def _add_generated(self, spec: em.AttrSpec) -> None:
        kw: dict[str, Any] = dict(
            name=spec.name, dtype=CmdArgType(spec.info.number), dformat=_FORMATS[spec.format],
            access=_WRITES[spec.write], max_dim_x=max(1, spec.dim_x), max_dim_y=max(0, spec.dim_y),
            fget=self._read_generated)
        if spec.write == "READ_WRITE":
            kw["fset"] = self._write_generated
        if spec.kind == "enum":
            kw["enum_labels"] = list(spec.choices)
        if spec.mode == "poll":
            kw["polling_period"] = max(1, round(1000.0 / spec.rate_hz))
            for key, val in (("archive_abs_change", spec.abs_change), ("archive_rel_change", spec.rel_change),
                             ("archive_period", spec.archive_period_ms)):
                if val is not None:
                    kw[key] = str(val)
        self.add_attribute(attribute(**kw))
        if spec.mode == "push":
            self.set_archive_event(spec.name, True, False)
        if spec.write == "READ_WRITE" and spec.kind != "encoded":
            self._init_set_point(spec)

    def _init_set_point(self, spec: em.AttrSpec) -> None:
        """A deterministic set point (the model value of event 0), so value_w is never 'uninitialised'."""
        value = self._placeholders[spec.name.lower()]
        try:
            self.get_device_attr().get_w_attr_by_name(spec.name).set_write_value(value)
        except (tango.DevFailed, TypeError, ValueError) as exc:
            self.warn_stream(f"{spec.name}: cannot set the initial set point: {exc}")

    # ---------------------------------------------------------------- emission
    def _pusher(self) -> None:
        # push_archive_event from a thread Tango did not create must run inside EnsureOmniThread.
        with tango.EnsureOmniThread():
            while not self._quit.is_set():
                try:
                    self._emitter.step(budget=_STEP_BUDGET)
                except Exception as exc:  # noqa: BLE001 - keep pushing; the reason goes to the log
                    self.error_stream(f"pusher step failed: {exc}")
                wait = self._emitter.next_due_s()
                if wait is None or wait > _MIN_SLEEP_S:
                    self._wake.wait(_IDLE_WAIT_S if wait is None else min(wait, _IDLE_WAIT_S))
                    self._wake.clear()

    def _tango_value(self, spec: em.AttrSpec, value: Any) -> Any:
        if spec.kind == "state":
            return _STATES[value] if spec.format == "SCALAR" else value
        return value

    def _push(self, st: em.AttrState, ev: em.Event, ts_us: int) -> None:
        spec = st.spec
        # +0.5 µs: Tango truncates the float timestamp to whole microseconds.
        ts = (ts_us + 0.5) / 1e6
        if ev.error is not None:
            self.push_archive_event(spec.name, self._error)
            return
        value = self._placeholders[spec.name.lower()] if ev.value is None else self._tango_value(spec, ev.value)
        quality = _QUALITIES[ev.quality]
        if spec.kind == "encoded":
            self.push_archive_event(spec.name, value[0], value[1], ts, quality)
        else:
            self.push_archive_event(spec.name, value, ts, quality)

    def _read_generated(self, attr: tango.Attribute) -> None:
        name = attr.get_name()
        st = self._emitter.get(name)
        if st.spec.mode == "poll" and st.running:
            ev, ts_us = self._emitter.sample(name)  # a stopped poll attribute repeats its last sample
        else:
            ev, ts_us = st.last_event, st.last_ts_us
        if ev is None:
            attr.set_quality(AttrQuality.ATTR_INVALID)
            return
        if ev.error is not None:
            raise self._error
        value = self._placeholders[name.lower()] if ev.value is None else self._tango_value(st.spec, ev.value)
        ts = (ts_us + 0.5) / 1e6
        if st.spec.kind == "encoded":
            attr.set_value_date_quality(value[0], value[1], ts, _QUALITIES[ev.quality])
        else:
            attr.set_value_date_quality(value, ts, _QUALITIES[ev.quality])

    def _write_generated(self, attr: tango.WAttribute) -> None:
        # Tango keeps the written value as the set point; later events carry it as w_value.
        pass

    def _set_running_state(self) -> None:
        if self.get_state() == DevState.FAULT:
            return
        running = any(st.running for st in self._emitter.attrs)
        self.set_state(DevState.RUNNING if running else DevState.STANDBY)
        self.set_status(f"{len(self._specs)} generated attributes, "
                        f"{'emitting' if running else 'stopped'} (seed {self.Seed})")

    # ---------------------------------------------------------------- commands
    @command(doc_in="start every generated attribute (push: schedule from now; poll: serve reads)")
    def Start(self) -> None:
        self._emitter.start()
        self._wake.set()
        self._set_running_state()

    @command(doc_in="stop every generated attribute")
    def Stop(self) -> None:
        self._emitter.stop()
        self._set_running_state()

    @command(doc_in="stop and rewind to event 0 with zeroed statistics: the next run repeats the first")
    def Reset(self) -> None:
        self._emitter.reset()
        self._set_running_state()

    @command(dtype_in=(str,), doc_in="attribute names")
    def StartAttributes(self, names: list[str]) -> None:
        self._emitter.start(self._checked(names))
        self._wake.set()
        self._set_running_state()

    @command(dtype_in=(str,), doc_in="attribute names")
    def StopAttributes(self, names: list[str]) -> None:
        self._emitter.stop(self._checked(names))
        self._set_running_state()

    @command(dtype_in=float, doc_in="events/s for every push-mode attribute")
    def SetRate(self, rate_hz: float) -> None:
        self._emitter.set_rate(rate_hz)
        self._wake.set()

    @command(dtype_in=tango.DevVarDoubleStringArray, doc_in="[[rate_hz], [name, ...]]: one rate for the names")
    def SetAttributeRate(self, arg: tuple[list[float], list[str]]) -> None:
        rates, names = arg
        if len(rates) != 1:
            tango.Except.throw_exception("HdbBench_BadArgument", "give exactly one rate", "SetAttributeRate")
        self._emitter.set_rate(rates[0], self._checked(names))
        self._wake.set()

    @command(dtype_in=int, doc_in="n: emit n extra events now on every push-mode attribute")
    def Burst(self, n: int) -> None:
        self._emitter.burst(n)
        self._wake.set()

    @command(dtype_in=tango.DevVarLongStringArray, doc_in="[[n], [name, ...]]: n extra events on the names")
    def BurstAttributes(self, arg: tuple[list[int], list[str]]) -> None:
        counts, names = arg
        if len(counts) != 1:
            tango.Except.throw_exception("HdbBench_BadArgument", "give exactly one count", "BurstAttributes")
        self._emitter.burst(counts[0], self._checked(names))
        self._wake.set()

    def _checked(self, names: list[str]) -> list[str]:
        for n in names:
            try:
                self._emitter.get(n)
            except KeyError as exc:
                tango.Except.throw_exception("HdbBench_UnknownAttribute", str(exc), "HdbBenchSim")
        return names

    # ---------------------------------------------------------------- statistics
    def _stats(self) -> list[em.AttrStats]:
        return self._emitter.stats()

    @attribute(dtype=bool, doc="true while any generated attribute is started")
    def Running(self) -> bool:
        return any(st.running for st in self._emitter.attrs)

    @attribute(dtype=int, doc="seed of the generated sequences")
    def EmitterSeed(self) -> int:
        return int(self.Seed)

    @attribute(dtype=(str,), max_dim_x=100000, doc="generated attribute names: the order of the *List attributes")
    def GeneratedAttributes(self) -> list[str]:
        return [s.name for s in self._specs]

    @attribute(dtype=(tango.DevULong64,), max_dim_x=100000, doc="events emitted per attribute (poll: samples)")
    def EventsEmittedList(self) -> np.ndarray:
        return np.array([s.emitted for s in self._stats()], dtype=np.uint64)

    @attribute(dtype=(tango.DevULong64,), max_dim_x=100000, doc="error events emitted per attribute")
    def ErrorsEmittedList(self) -> np.ndarray:
        return np.array([s.errors for s in self._stats()], dtype=np.uint64)

    @attribute(dtype=(tango.DevULong64,), max_dim_x=100000,
               doc="per attribute: sum mod 2**64 of the emitted events' digests (hdbbench.load.emitter)")
    def ChecksumList(self) -> np.ndarray:
        return np.array([s.checksum_sum for s in self._stats()], dtype=np.uint64)

    @attribute(dtype=(float,), max_dim_x=100000, unit="events/s", doc="achieved rate per attribute (last 5 s)")
    def AchievedRateList(self) -> list[float]:
        return [s.achieved_rate_hz for s in self._stats()]

    @attribute(dtype=(float,), max_dim_x=100000, unit="events/s", doc="configured rate per attribute")
    def TargetRateList(self) -> list[float]:
        return [s.target_rate_hz for s in self._stats()]

    @attribute(dtype=tango.DevULong64, doc="events emitted by all generated attributes")
    def EventsEmittedTotal(self) -> int:
        return self._emitter.total_emitted()

    @attribute(dtype=float, unit="events/s", doc="achieved rate of the whole device (last 5 s)")
    def AchievedRate(self) -> float:
        return float(sum(s.achieved_rate_hz for s in self._stats()))

    @attribute(dtype=float, unit="s", doc="largest delay of a push-mode attribute behind its schedule")
    def MaxLag(self) -> float:
        return max((s.lag_s for s in self._stats()), default=0.0)

    @attribute(dtype=tango.DevULong64, doc="pushes that raised (the event is counted as emitted)")
    def PushFailures(self) -> int:
        return self._emitter.push_failures

    @attribute(dtype=str, doc="JSON: every statistic per attribute, and the device totals")
    def Statistics(self) -> str:
        stats = self._stats()
        return json.dumps({
            "device": self.get_name(), "engine": "python", "seed": int(self.Seed), "time": time.time(),
            "events_emitted_total": sum(s.emitted for s in stats),
            "push_failures": self._emitter.push_failures,
            "last_push_failure": self._emitter.last_push_failure,
            "attributes": [asdict(s) for s in stats],
        })


def main(args: list[str] | None = None) -> None:
    HdbBenchSim.run_server(args=args)


if __name__ == "__main__":
    main()
