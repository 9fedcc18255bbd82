# SPDX-License-Identifier: Apache-2.0
"""The results model: run directories, typed records of every part, their one reader and writer, migration of older runs.

May import: subscribers, load, backends, stack, model.
"""
