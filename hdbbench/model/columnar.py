# SPDX-License-Identifier: Apache-2.0
"""Scalar rows as numpy columns: the fast bulk-load path of data generation and dump loading.

A `ColumnBatch` holds rows of one Tango type (scalar format) for any number of attributes, as
columns: att_conf_id, data_time (µs since the Unix epoch, UTC), value_r/value_w with NULL masks,
quality, and whether each row's attribute has a write side (a backend may route those rows to a
table of their own). Each backend's column loader encodes a batch into what its server loads fastest
(in the backend's folder: a binary COPY stream, `LOAD DATA` text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hdbbench.model.hdbtypes import TangoType

# Tango type -> numpy dtype of generated values: the types with a fixed-width column in every
# backend. Unsigned types, strings and DevEncoded go through the generic BulkWriter.
FAST_TYPES: dict[TangoType, str] = {
    TangoType.DEV_BOOLEAN: "bool",
    TangoType.DEV_SHORT: "int16",
    TangoType.DEV_LONG: "int32",
    TangoType.DEV_LONG64: "int64",
    TangoType.DEV_FLOAT: "float32",
    TangoType.DEV_DOUBLE: "float64",
    TangoType.DEV_STATE: "int32",
    TangoType.DEV_ENUM: "int16",
}


@dataclass
class ColumnBatch:
    """Scalar rows of one Tango type; every array has one entry per row."""

    tango_type: TangoType
    att_conf_id: np.ndarray      # int64
    data_time_us: np.ndarray     # int64, µs since 1970-01-01 UTC
    value_r: np.ndarray          # FAST_TYPES dtype
    value_w: np.ndarray
    has_r: np.ndarray            # bool: False = NULL value_r
    has_w: np.ndarray            # bool: False = NULL value_w (READ attributes)
    rw: np.ndarray               # bool: the attribute has a write side (MariaDB `_rw` table)
    quality: np.ndarray          # int16

    def __len__(self) -> int:
        return int(self.att_conf_id.shape[0])

    def take(self, index: np.ndarray) -> ColumnBatch:
        """The rows at `index` (a bool mask or positions), in that order."""
        return ColumnBatch(
            self.tango_type, self.att_conf_id[index], self.data_time_us[index], self.value_r[index],
            self.value_w[index], self.has_r[index], self.has_w[index], self.rw[index], self.quality[index],
        )
