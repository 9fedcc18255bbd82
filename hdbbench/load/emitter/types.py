# SPDX-License-Identifier: Apache-2.0
"""The Tango vocabulary of the generator: qualities, states, the type table, formats, modes and models.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR_REASON = "HdbBench_SimulatedError"
ERROR_DESC = "simulated error event"

# AttrQuality numbers (tango.AttrQuality).
VALID, INVALID, ALARM, CHANGING, WARNING = 0, 1, 2, 3, 4
QUALITY_NAMES = {VALID: "ATTR_VALID", INVALID: "ATTR_INVALID", ALARM: "ATTR_ALARM",
                 CHANGING: "ATTR_CHANGING", WARNING: "ATTR_WARNING"}

# tango.DevState numbers, in Tango's order.
STATE_NAMES = ("ON", "OFF", "CLOSE", "OPEN", "INSERT", "EXTRACT", "MOVING", "STANDBY", "FAULT",
               "INIT", "RUNNING", "ALARM", "DISABLE", "UNKNOWN")


@dataclass(frozen=True)
class TypeInfo:
    name: str       # Tango name, e.g. "DevDouble"
    number: int     # Tango CmdArgType number (hdbpp-reference §4)
    kind: str       # bool | int | float | string | state | enum | encoded
    dtype: str      # canonical little-endian numpy dtype of the checksum payload ("" if none)


TYPES: dict[str, TypeInfo] = {t.name: t for t in (
    TypeInfo("DevBoolean", 1, "bool", "<u1"),
    TypeInfo("DevUChar", 22, "int", "<u1"),
    TypeInfo("DevShort", 2, "int", "<i2"),
    TypeInfo("DevUShort", 6, "int", "<u2"),
    TypeInfo("DevLong", 3, "int", "<i4"),
    TypeInfo("DevULong", 7, "int", "<u4"),
    TypeInfo("DevLong64", 23, "int", "<i8"),
    TypeInfo("DevULong64", 24, "int", "<u8"),
    TypeInfo("DevFloat", 4, "float", "<f4"),
    TypeInfo("DevDouble", 5, "float", "<f8"),
    TypeInfo("DevString", 8, "string", ""),
    TypeInfo("DevState", 19, "state", "<u4"),
    TypeInfo("DevEnum", 29, "enum", "<i2"),
    TypeInfo("DevEncoded", 28, "encoded", ""),
)}
FORMATS = ("SCALAR", "SPECTRUM", "IMAGE")
WRITE_TYPES = ("READ", "READ_WRITE")
MODES = ("push", "poll")
MODELS: dict[str, tuple[str, ...]] = {
    "bool": ("constant", "step", "noise", "sine"),
    "int": ("constant", "sine", "step", "noise", "walk", "counter"),
    "float": ("constant", "sine", "step", "noise", "walk", "counter"),
    "string": ("constant", "counter", "cycle", "noise"),
    "state": ("constant", "cycle", "step", "noise"),
    "enum": ("constant", "cycle", "step", "noise"),
    "encoded": ("constant", "counter", "noise"),
}
DEFAULT_MODEL = {"bool": "step", "int": "walk", "float": "walk", "string": "counter",
                 "state": "cycle", "enum": "cycle", "encoded": "counter"}
DEFAULT_STATES = ("ON", "MOVING", "STANDBY", "ALARM", "FAULT")
DEFAULT_ENUM_LABELS = ("OFF", "ON", "FAULT")
MAX_DIM = 1 << 24  # elements; a larger spectrum/image is surely a typo
