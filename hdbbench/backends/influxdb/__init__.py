# SPDX-License-Identifier: Apache-2.0
"""InfluxDB 1.6 (`influxdb`), a what-if engine: what InfluxDB would give a facility beside the HDB++
backends, written by hdbbench's own subscriber (no HDB++ library writes it).

    tables.py      the layout: measurements, tags, fields, computed ids; what it cannot hold of HDB++
    encoders.py    events to line protocol and back
    client.py      the HTTP API (standard library): queries, writes, chunked results
    writer.py      the bulk writer (one POST per batch)
    reader.py      configuration, events and counts read back
    extraction.py  InfluxQL extraction (ExtractionBackend)
    loader.py      the column loader of data generation and disk measurement
    storage.py     sizes: shards' disk bytes, measurements' bytes from the TSM files' index
    outside.py     the inserted-point counter and the visibility probe
    backend.py     InfluxBackend
"""

from hdbbench.backends.influxdb.backend import InfluxBackend

__all__ = ["InfluxBackend"]
