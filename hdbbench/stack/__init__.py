# SPDX-License-Identifier: Apache-2.0
"""The stack: database and Tango servers as private processes (servers/), their settings profiles and CPU placement.

May import: model.
"""
