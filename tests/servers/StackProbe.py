# SPDX-License-Identifier: Apache-2.0
"""The smallest device server: proves that the Tango database registers and exports devices."""

from tango.server import Device, attribute, run


class StackProbe(Device):
    @attribute(dtype=float)
    def answer(self) -> float:
        return 42.0


if __name__ == "__main__":
    run((StackProbe,))
