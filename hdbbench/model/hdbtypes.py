# SPDX-License-Identifier: Apache-2.0
"""The neutral HDB++ data model: Tango types, formats, write types, attributes and archive events.

Everything that produces or consumes archived data (simulated devices, the subscriber, backends,
benchmarks) speaks this model; no database appears here.

Values in an `Event`:
- scalar: a Python scalar (bool, int, float, str); `Encoded` for DEV_ENCODED; int for DEV_STATE
  and DEV_ENUM (the enum index; labels come from `AttParameter.enum_labels`).
- spectrum: a list of such scalars.
- image: a list of rows (nested lists, all rows of the same length); `[]` is an empty image.
- `None`: no value (INVALID quality, error event, or the side of a READ/WRITE attribute that has none).
numpy arrays are accepted wherever lists are (`as_plain` converts them).

DEV_ENCODED is a (format string, bytes) pair: `Encoded(format, data)`. Backends store `data` in the
value column (bytea / blob) and the format string beside it (see schemas/README.md); a bare `bytes`
value is accepted and means `Encoded("", data)`.

Times are timezone-aware UTC datetimes with microsecond resolution, the resolution of every backend.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from hdbbench.model.errors import ConfigError


class TangoType(enum.IntEnum):
    """Tango data type numbers (CmdArgType) of the 14 archivable types."""

    DEV_BOOLEAN = 1
    DEV_SHORT = 2
    DEV_LONG = 3
    DEV_FLOAT = 4
    DEV_DOUBLE = 5
    DEV_USHORT = 6
    DEV_ULONG = 7
    DEV_STRING = 8
    DEV_STATE = 19
    DEV_UCHAR = 22
    DEV_LONG64 = 23
    DEV_ULONG64 = 24
    DEV_ENCODED = 28
    DEV_ENUM = 29

    @property
    def suffix(self) -> str:
        """The table-name suffix, e.g. `devdouble`."""
        return "dev" + self.name[4:].lower()


class AttrFormat(enum.IntEnum):
    SCALAR = 0
    SPECTRUM = 1
    IMAGE = 2


class WriteType(enum.IntEnum):
    READ = 0
    READ_WITH_WRITE = 1
    WRITE = 2
    READ_WRITE = 3


class Quality(enum.IntEnum):
    """Tango AttrQuality numbers, stored as-is in the `quality` column."""

    VALID = 0
    INVALID = 1
    ALARM = 2
    CHANGING = 3
    WARNING = 4


# att_history_event names, in the order the PostgreSQL/TimescaleDB schema numbers them.
HISTORY_EVENTS: tuple[str, ...] = ("add", "start", "stop", "remove", "insert_param", "update_ttl", "pause", "crash")

# Integer ranges of the Tango integer types (DEV_STATE and DEV_ENUM are small non-negative ints).
INT_RANGES: dict[TangoType, tuple[int, int]] = {
    TangoType.DEV_UCHAR: (0, 2**8 - 1),
    TangoType.DEV_SHORT: (-(2**15), 2**15 - 1),
    TangoType.DEV_USHORT: (0, 2**16 - 1),
    TangoType.DEV_LONG: (-(2**31), 2**31 - 1),
    TangoType.DEV_ULONG: (0, 2**32 - 1),
    TangoType.DEV_LONG64: (-(2**63), 2**63 - 1),
    TangoType.DEV_ULONG64: (0, 2**64 - 1),
}


class Encoded(NamedTuple):
    """A DEV_ENCODED value: Tango's (format string, raw bytes) pair."""

    format: str
    data: bytes


class AttName(NamedTuple):
    """The parts of `tango://host:port/domain/family/member/name` (HDB++ att_conf columns)."""

    cs_name: str
    domain: str
    family: str
    member: str
    name: str


def split_att_name(att_name: str) -> AttName:
    """Split a full attribute name the way the HDB++ subscriber does.

    `cs_name` is the `host:port` control-system part; a name without `tango://` has an empty cs_name.
    Anything after the fourth `/` stays in `name`, so odd names are kept rather than rejected.
    """
    rest = att_name
    cs_name = ""
    if rest.lower().startswith("tango://"):
        cs_name, _, rest = rest[len("tango://") :].partition("/")
    parts = rest.split("/", 3)
    parts += [""] * (4 - len(parts))
    return AttName(cs_name, parts[0], parts[1], parts[2], parts[3])


@dataclass(frozen=True)
class AttributeInfo:
    """What a subscriber knows about an attribute when it registers it (att_conf)."""

    name: str
    type: TangoType
    format: AttrFormat = AttrFormat.SCALAR
    write_type: WriteType = WriteType.READ
    ttl_hours: int | None = None


@dataclass(frozen=True)
class AttParameter:
    """One att_parameter row: the attribute configuration at `recv_time`."""

    att_name: str
    recv_time: datetime
    label: str = ""
    unit: str = ""
    standard_unit: str = ""
    display_unit: str = ""
    format: str = ""
    archive_rel_change: str = ""
    archive_abs_change: str = ""
    archive_period: str = ""
    description: str = ""
    enum_labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Event:
    """One archive event of one attribute: a row of a data table.

    `error_desc` set means an error event (values are then None); `recv_time` is when the subscriber
    received it (backends with a recv_time column use it, or the write time when None).
    """

    att_name: str
    data_time: datetime
    value_r: Any = None
    value_w: Any = None
    quality: int = Quality.VALID
    error_desc: str | None = None
    recv_time: datetime | None = field(default=None, compare=False)


def utc(dt: datetime) -> datetime:
    """A timezone-aware UTC datetime; naive datetimes are taken as UTC."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def as_plain(value: Any) -> Any:
    """Turn numpy scalars/arrays (as PyTango returns them) into Python scalars and (nested) lists."""
    tolist = getattr(value, "tolist", None)
    if tolist is not None and not isinstance(value, (bytes, bytearray)):
        return tolist()
    if isinstance(value, tuple) and not isinstance(value, Encoded):
        return [as_plain(v) for v in value]
    return value


def as_encoded(value: Any) -> Encoded | None:
    """Normalise a DEV_ENCODED value: Encoded, (format, bytes) tuple, or bare bytes."""
    if value is None or isinstance(value, Encoded):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Encoded("", bytes(value))
    fmt, data = value
    return Encoded(str(fmt), bytes(data))


def parse_type(text: str) -> TangoType:
    """`devdouble`, `DevDouble` or `DEV_DOUBLE`."""
    key = text.strip().lower().replace("_", "")
    for t in TangoType:
        if key in (t.suffix, t.name.lower().replace("_", "")):
            return t
    raise ConfigError(f"unknown Tango type {text!r} (e.g. devdouble, devlong, devstring)")
