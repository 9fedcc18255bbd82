# SPDX-License-Identifier: Apache-2.0
"""What the tests share: waiting for a condition with a bound, and reading rows back from a database.

`eventually` is the one way a test waits: it polls, returns the first truthy value, and on timeout
fails with what it last observed (and the description), so a failure says what was seen, not only
that time ran out. `row_counts` is the one way a test counts stored events per attribute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

MAX_OBSERVED_CHARS = 3000


def eventually(predicate: Callable[[], Any], timeout_s: float, describe: str | Callable[[], str],
               interval_s: float = 0.1) -> Any:
    """Poll `predicate` until it returns something truthy; fail after `timeout_s` saying what was observed.

    `describe` is what was awaited: a string, or a function called at the failure (to report state)."""
    deadline = time.monotonic() + timeout_s
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            what = describe() if callable(describe) else describe
            raise AssertionError(f"{what}: not reached within {timeout_s:g} s; last observed: {last!r}"[:MAX_OBSERVED_CHARS])
        time.sleep(interval_s)


def sql_rows(conn: Any, backend: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run a query with placeholders written as {} (one spelling for both drivers)."""
    mark = "?" if backend == "mysql" else "%s"
    cur = conn.cursor()
    cur.execute(query.replace("{}", mark), params)
    rows = list(cur.fetchall())
    if backend == "mysql":
        conn.commit()  # end the read snapshot: the next query sees newer rows
    return rows


def row_counts(conn: Any, backend: str) -> dict[str, int]:
    """Stored events per attribute name (array rows counted once per event)."""
    if backend == "mysql":
        kinds = sql_rows(conn, backend, "SELECT c.att_name, t.data_type FROM att_conf c "
                                        "JOIN att_conf_data_type t USING (att_conf_data_type_id)")
        out = {}
        for name, kind in kinds:
            distinct = "DISTINCT data_time" if kind.startswith("array") else "*"
            out[name] = sql_rows(conn, backend, f"SELECT count({distinct}) FROM `att_{kind}` d JOIN att_conf c "
                                                "USING (att_conf_id) WHERE c.att_name = {}", (name,))[0][0]
        return out
    tables = sql_rows(conn, backend, "SELECT DISTINCT table_name FROM att_conf")
    out = {}
    for (table,) in tables:
        for name, n in sql_rows(conn, backend, f'SELECT c.att_name, count(*) FROM "{table}" d JOIN att_conf c '
                                               "USING (att_conf_id) GROUP BY c.att_name"):
            out[name] = n
    return out


class _Seen:
    """A falsy observation: `eventually` keeps waiting and, if time runs out, reports it."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return repr(self.value)


def seen(condition: Any, observation: Any) -> Any:
    """For `eventually`: True when the condition holds, else the observation to report (falsy)."""
    return True if condition else _Seen(observation)
