# SPDX-License-Identifier: Apache-2.0
"""HDB++ event subscribers: launching them, their kinds, their statistics attributes, the Prometheus exporter, delivery proofs.

May import: load, backends, stack, model.
"""
