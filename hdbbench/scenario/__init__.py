# SPDX-License-Identifier: Apache-2.0
"""A scenario read, checked and resolved into each part's plan; where components run (hosts).

May import: parts and every stage below.
"""
