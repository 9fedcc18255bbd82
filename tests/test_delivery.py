# SPDX-License-Identifier: Apache-2.0
"""hdbbench.subscribers.delivery's name handling (the event path itself is proven in every run test)."""

from hdbbench.subscribers import delivery


def test_attributes_are_grouped_by_their_device() -> None:
    host = "127.0.0.1:20000"
    attributes = [f"tango://{host}/sim/a/s00/x1", f"tango://{host}/SIM/A/S00/x2", f"tango://{host}/sim/b/s01/y",
                  f"tango://{host}/other/dev/ice/z"]
    grouped = delivery._by_device(attributes, host, ["sim/a/s00", "sim/b/s01"])
    assert dict(grouped) == {"sim/a/s00": ["x1", "x2"], "sim/b/s01": ["y"]}
