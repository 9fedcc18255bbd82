# SPDX-License-Identifier: Apache-2.0
"""How long work talks to people: a rich progress bar on a terminal; elsewhere (a log, CI, a
redirected run) plain lines, one every `PLAIN_PERIOD_S`, so that a log stays readable."""

from __future__ import annotations

PLAIN_PERIOD_S = 10.0
