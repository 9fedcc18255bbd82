# SPDX-License-Identifier: Apache-2.0
"""Insertion trials: one trial, its figures from inside and outside the subscriber, saturation searches, progress.

May import: results, subscribers, load, backends, stack, model.
"""
