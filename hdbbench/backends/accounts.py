# SPDX-License-Identifier: Apache-2.0
"""The HDB++ accounts of a schema: who connects as what, and with which password.

HDB++ defines an event-subscriber account (inserts data, reads and fills the configuration tables,
never deletes or drops) and a read-only one (extraction). Their names are the backend's (PostgreSQL:
``hdb_event_sub`` / ``hdb_data_reporter``; MariaDB: ``hdbpprw`` / ``hdbppro``).

Their passwords are generated, never a constant: each is derived from the server's administrator
password (HMAC-SHA-256 with the account name), so it is as secret as that password, which hdbbench
keeps in a 0600 file (or the user gave in a URL), and needs no file of its own. The same server
always yields the same account passwords, so schema creation and the subscriber agree without
passing them around. They are hex, so they can be written into DDL that takes no placeholders.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from typing import Any

WRITER, READER = "writer", "reader"  # the two HDB++ duties


def account_password(admin_password: str, account: str) -> str:
    """The password of `account` on the server whose administrator password is `admin_password`."""
    return hmac.new(admin_password.encode(), f"hdbbench account {account}".encode(), hashlib.sha256).hexdigest()[:32]


def as_account(endpoint: Any, account: str) -> Any:
    """The same server endpoint, logging in as `account` with its derived password."""
    return dataclasses.replace(endpoint, user=account, password=account_password(endpoint.password, account))
