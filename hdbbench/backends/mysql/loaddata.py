# SPDX-License-Identifier: Apache-2.0
"""`columnar.ColumnBatch`es as `LOAD DATA` text (tab-separated, \\N = NULL); knows nothing about
connections (`extraction.MySQLColumnLoader` sends the files)."""

from __future__ import annotations

import numpy as np

from hdbbench.model.columnar import ColumnBatch
from hdbbench.model.hdbtypes import TangoType


def _text(values: np.ndarray, present: np.ndarray, tango_type: TangoType) -> list[str]:
    if tango_type == TangoType.DEV_BOOLEAN:
        plain = values.astype(np.int8).tolist()
    elif values.dtype.kind == "f":
        plain = values.astype(np.float64).tolist()  # repr of a float64 reads back exactly
    else:
        plain = values.tolist()
    text = list(map(str, plain))
    if not present.all():
        for k in np.flatnonzero(~present).tolist():
            text[k] = "\\N"
    return text


def mysql_times(data_time_us: np.ndarray) -> list[str]:
    """`YYYY-MM-DD HH:MM:SS.ffffff` UTC, as datetime(6) columns hold them."""
    iso = np.datetime_as_string(data_time_us.astype("datetime64[us]"), unit="us")
    return [s.replace("T", " ") for s in iso.tolist()]


def mysql_tsv(batch: ColumnBatch, with_w: bool) -> bytes:
    """Tab-separated rows `att_conf_id, data_time, value_r[, value_w], quality` (\\N = NULL)."""
    cols = [
        list(map(str, batch.att_conf_id.tolist())),
        mysql_times(batch.data_time_us),
        _text(batch.value_r, batch.has_r, batch.tango_type),
    ]
    if with_w:
        cols.append(_text(batch.value_w, batch.has_w, batch.tango_type))
    cols.append(list(map(str, batch.quality.tolist())))
    if not cols[0]:
        return b""
    return ("\n".join(map("\t".join, zip(*cols))) + "\n").encode()
