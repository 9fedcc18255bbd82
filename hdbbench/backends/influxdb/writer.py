# SPDX-License-Identifier: Apache-2.0
"""The InfluxDB bulk writer: a batch of events is one POST of line protocol (the layout of tables.py).

InfluxDB has no transactions: a write either stores every point of the request or, on a point it
cannot parse, refuses the request's bad points and stores the others (a "partial write", reported as
an error here). A point with the series and time of a stored one replaces it: two events of one
attribute at the same microsecond are one point (HDB++'s primary key keeps the first; InfluxDB keeps
the last).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from hdbbench.backends.base import BulkWriter
from hdbbench.backends.influxdb import client
from hdbbench.backends.influxdb.encoders import conf_line, event_line, history_line, string_field, to_us
from hdbbench.backends.influxdb.tables import CONF_RP, att_conf_id, quote_ident
from hdbbench.model.errors import SchemaError
from hdbbench.model.hdbtypes import AttParameter, AttributeInfo, Event
from hdbbench.stack.servers.endpoints import InfluxDBEndpoint


class InfluxBulkWriter(BulkWriter):
    def __init__(self, endpoint: InfluxDBEndpoint, database: str, catalog: dict[str, AttributeInfo]) -> None:
        self.endpoint = endpoint
        self.database = database
        self.infos = dict(catalog)  # attributes of att_conf, by name

    def register_attribute(self, info: AttributeInfo, event_time: datetime | None = None) -> int:
        att_id = att_conf_id(info.name)
        if info.name in self.infos:
            return att_id
        found = client.query(self.endpoint, f"SELECT att_name, att_conf_id FROM {quote_ident(CONF_RP)}.att_conf WHERE att_conf_id = "
                             f"{att_id}", self.database)
        if found and found[0]:
            names = {r["att_name"] for r in client.rows(found[0][0])} - {info.name}
            if names:
                raise SchemaError(f"influxdb: {info.name} and {min(names)} have the same att_conf_id "
                                  f"{att_id} (a hash collision of their names)")
        at = event_time or datetime.now(UTC)
        client.write(self.endpoint, self.database, [conf_line(info), history_line(info.name, "add", at)], CONF_RP)
        self.infos[info.name] = info
        return att_id

    def write_parameter(self, param: AttParameter) -> None:
        fields = {"label": param.label, "unit": param.unit, "standard_unit": param.standard_unit,
                  "display_unit": param.display_unit, "format": param.format,
                  "archive_rel_change": param.archive_rel_change, "archive_abs_change": param.archive_abs_change,
                  "archive_period": param.archive_period, "description": param.description,
                  "enum_labels": "\n".join(param.enum_labels)}
        text = ",".join(f"{k}={string_field(v)}" for k, v in fields.items())
        line = f"att_parameter,att_conf_id={att_conf_id(param.att_name)} {text} {to_us(param.recv_time)}"
        client.write(self.endpoint, self.database, [line, history_line(param.att_name, "insert_param",
                                                                        param.recv_time)], CONF_RP)

    def write_history(self, att_name: str, event: str, event_time: datetime) -> None:
        client.write(self.endpoint, self.database, [history_line(att_name, event, event_time)], CONF_RP)

    def write(self, events: Iterable[Event]) -> int:
        return self.write_recorded(events)[0]

    def write_recorded(self, events: Iterable[Event]) -> tuple[int, Any]:
        """One POST of the batch's lines; the lines are what `replay` sends again."""
        lines = [event_line(self._info(e.att_name), e) for e in events]
        client.write(self.endpoint, self.database, lines)
        return len(lines), lines

    def replay(self, recorded: Any) -> int:
        client.write(self.endpoint, self.database, list(recorded))
        return len(recorded)

    def _info(self, name: str) -> AttributeInfo:
        info = self.infos.get(name)
        if info is None:
            raise SchemaError(f"influxdb: attribute {name} is not registered (att_conf)")
        return info

    def close(self) -> None:
        pass  # one HTTP request per call: nothing stays open

