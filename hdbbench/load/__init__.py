# SPDX-License-Identifier: Apache-2.0
"""The offered load: simulated Tango devices, the event generator (emitter/), facility inventories and how a trial steers the devices.

May import: backends, stack, model.
"""
