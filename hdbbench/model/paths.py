# SPDX-License-Identifier: Apache-2.0
"""Where the repository is: hdbbench runs from its clone (an editable install), beside devices/, subscriber/
and scenarios/, which it reads and builds from."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
