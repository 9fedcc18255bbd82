# SPDX-License-Identifier: Apache-2.0
"""`AttrSpec`, one generated attribute's description, and its validation (`SpecError` names the field).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from hdbbench.load.emitter.types import (
    DEFAULT_ENUM_LABELS,
    DEFAULT_MODEL,
    DEFAULT_STATES,
    FORMATS,
    MAX_DIM,
    MODELS,
    MODES,
    STATE_NAMES,
    TYPES,
    WRITE_TYPES,
    TypeInfo,
)


class SpecError(ValueError):
    """An attribute specification is invalid (the launcher turns it into a ConfigError with its line)."""


@dataclass(frozen=True)
class AttrSpec:
    """One generated attribute. Units are in the names; every field has a usable default."""

    name: str
    type: str = "DevDouble"
    format: str = "SCALAR"
    write: str = "READ"
    mode: str = "push"                  # push: code-pushed archive events; poll: Tango polling + criteria
    rate_hz: float = 1.0                # push rate, or polling frequency in poll mode
    dim_x: int = 1                      # spectrum length / image width / DevEncoded payload bytes
    dim_y: int = 0                      # image height
    model: str = ""                     # "" = DEFAULT_MODEL of the type's kind
    offset: float = 0.0
    amplitude: float = 1.0
    period: int = 100                   # events per sine period / per step level
    levels: int = 2                     # step model: number of levels
    step: float = 0.1                   # walk: step std-dev (integer types: max step); counter: increment
    labels: tuple[str, ...] = ()        # enum labels; state or string values of cycle/step/noise
    text: str = ""                      # string prefix / DevEncoded format name
    abs_change: float | None = None     # poll mode: archive_abs_change
    rel_change: float | None = None     # poll mode: archive_rel_change (percent)
    archive_period_ms: int | None = None  # poll mode: archive_period
    p_error: float = 0.0
    p_invalid: float = 0.0
    p_alarm: float = 0.0
    p_warning: float = 0.0

    @property
    def info(self) -> TypeInfo:
        return TYPES[self.type]

    @property
    def kind(self) -> str:
        return TYPES[self.type].kind

    @property
    def value_model(self) -> str:
        return self.model or DEFAULT_MODEL[self.kind]

    @property
    def shape(self) -> tuple[int, ...]:
        """numpy shape of one event's value: () scalar, (n,) spectrum, (y, x) image."""
        if self.format == "SPECTRUM":
            return (self.dim_x,)
        if self.format == "IMAGE":
            return (self.dim_y, self.dim_x)
        return ()

    @property
    def elements(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def choices(self) -> tuple[str, ...]:
        """Values of the state/enum/string cycle, step and noise models."""
        if self.kind == "enum":
            return self.labels or DEFAULT_ENUM_LABELS
        if self.kind == "state":
            return self.labels or DEFAULT_STATES
        return self.labels

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AttrSpec:
        data = json.loads(text)
        data["labels"] = tuple(data.get("labels", ()))
        return validate_spec(cls(**data))


def _fail(spec_name: str, msg: str) -> SpecError:
    return SpecError(f"attribute {spec_name!r}: {msg}")


def validate_spec(spec: AttrSpec) -> AttrSpec:
    """Check one spec; return it (normalised) or raise SpecError naming the field."""
    n = spec.name
    if spec.type not in TYPES:
        raise _fail(n, f"unknown type {spec.type!r} (one of {', '.join(TYPES)})")
    if spec.format not in FORMATS:
        raise _fail(n, f"unknown format {spec.format!r} (one of {', '.join(FORMATS)})")
    if spec.write not in WRITE_TYPES:
        raise _fail(n, f"unknown write type {spec.write!r} (one of {', '.join(WRITE_TYPES)})")
    if spec.mode not in MODES:
        raise _fail(n, f"unknown mode {spec.mode!r} (one of {', '.join(MODES)})")
    if spec.kind == "encoded" and spec.format != "SCALAR":
        raise _fail(n, "Tango allows DevEncoded only as SCALAR")
    if not (math.isfinite(spec.rate_hz) and spec.rate_hz > 0):
        raise _fail(n, f"rate_hz must be > 0, got {spec.rate_hz}")
    if spec.mode == "poll" and spec.rate_hz > 1000:
        raise _fail(n, "poll mode: rate_hz above 1000 (polling period below 1 ms)")
    if spec.format != "SCALAR" or spec.kind == "encoded":
        if spec.dim_x < 1:
            raise _fail(n, f"dim_x must be >= 1, got {spec.dim_x}")
    if spec.format == "IMAGE" and spec.dim_y < 1:
        raise _fail(n, f"image dim_y must be >= 1, got {spec.dim_y}")
    if spec.elements > MAX_DIM or spec.dim_x > MAX_DIM:
        raise _fail(n, f"more than {MAX_DIM} elements")
    if spec.value_model not in MODELS[spec.kind]:
        raise _fail(n, f"model {spec.value_model!r} does not fit {spec.type} "
                       f"(one of {', '.join(MODELS[spec.kind])})")
    if spec.period < 1 or spec.levels < 1:
        raise _fail(n, "period and levels must be >= 1")
    probs = (spec.p_error, spec.p_invalid, spec.p_alarm, spec.p_warning)
    if any(not (0.0 <= p <= 1.0) for p in probs) or sum(probs[1:]) > 1.0:
        raise _fail(n, "probabilities must be in [0, 1] and p_invalid + p_alarm + p_warning <= 1")
    if spec.kind == "state":
        bad = [s for s in spec.choices if s not in STATE_NAMES]
        if bad:
            raise _fail(n, f"unknown DevState name(s) {bad}")
    if spec.kind == "enum" and len(set(spec.choices)) != len(spec.choices):
        raise _fail(n, "enum labels must be distinct")
    if spec.kind == "string" and spec.value_model == "cycle" and not spec.labels:
        raise _fail(n, "string model 'cycle' needs labels")
    if spec.mode == "push" and (spec.abs_change, spec.rel_change, spec.archive_period_ms) != (None,) * 3:
        raise _fail(n, "abs_change/rel_change/archive_period_ms apply to mode = 'poll' only")
    if spec.mode == "poll" and (spec.archive_period_ms or 0) < 0:
        raise _fail(n, "archive_period_ms must be >= 0")
    return spec


def replace_spec(spec: AttrSpec, **changes: Any) -> AttrSpec:
    return validate_spec(replace(spec, **changes))
