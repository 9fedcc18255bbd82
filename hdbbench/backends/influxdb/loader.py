# SPDX-License-Identifier: Apache-2.0
"""The column loader of `data generate` and disk measurement: `columnar.ColumnBatch`es of scalars as
line protocol, POSTed in requests of at most LINES_PER_REQUEST points (the events of one batch are
stored whole or the load fails: InfluxDB has no transaction, a failed request may leave part of it)."""

from __future__ import annotations

import math
from typing import Any

from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.encoders import string_field
from hdbbench.backends.influxdb.tables import measurement
from hdbbench.model.hdbtypes import AttrFormat, TangoType
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint

LINES_PER_REQUEST = 50_000


def _field(side: str, tango_type: TangoType, value: Any) -> str:
    if tango_type == TangoType.DEV_BOOLEAN:
        return f"{side}={'true' if value else 'false'}"
    if tango_type in (TangoType.DEV_FLOAT, TangoType.DEV_DOUBLE):
        v = float(value)
        if math.isfinite(v):
            return f"{side}={v!r}"
        word = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return f"{side}_special={string_field(word)}"
    return f"{side}={int(value)}i"


class InfluxColumnLoader:
    def __init__(self, endpoint: InfluxDBEndpoint, database: str) -> None:
        self.endpoint = endpoint
        self.database = database

    def load(self, batch: Any) -> int:
        name = measurement(batch.tango_type, AttrFormat.SCALAR)
        ids = batch.att_conf_id.tolist()
        times = batch.data_time_us.tolist()
        value_r, value_w = batch.value_r.tolist(), batch.value_w.tolist()
        has_r, has_w, quality = batch.has_r.tolist(), batch.has_w.tolist(), batch.quality.tolist()
        lines = []
        for i in range(len(ids)):
            fields = f"quality={quality[i]}i"
            if has_r[i]:
                fields += "," + _field("value_r", batch.tango_type, value_r[i])
            if has_w[i]:
                fields += "," + _field("value_w", batch.tango_type, value_w[i])
            lines.append(f"{name},att_conf_id={ids[i]} {fields} {times[i]}")
        for start in range(0, len(lines), LINES_PER_REQUEST):
            client.write(self.endpoint, self.database, lines[start:start + LINES_PER_REQUEST])
        return len(lines)

    def close(self) -> None:
        pass
