# SPDX-License-Identifier: Apache-2.0
"""Faults under load: injectors that stop, kill, lock or fill a component, and the runs that use them."""
