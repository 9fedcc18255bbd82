# SPDX-License-Identifier: Apache-2.0
"""Typed errors. Each carries a one-line message that names the problem; the CLI prints it and exits 2."""


class HdbbenchError(Exception):
    """Base of every error the user should see as one clear line."""


class ConfigError(HdbbenchError):
    """A scenario, profile, inventory or option is wrong; raised before anything starts."""


class ServerError(HdbbenchError):
    """A server could not be started, reached or stopped."""


class SchemaError(HdbbenchError):
    """A schema cannot be created, dropped or does not match its definition."""


def first_line(exc: BaseException) -> str:
    """The first non-blank line of an exception's message (a driver's error spans several), else its type."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def one_line(exc: BaseException) -> str:
    """An exception as one line of a record: its type and the first line of its message."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
