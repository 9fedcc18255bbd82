# SPDX-License-Identifier: Apache-2.0
"""Directories for servers that run as another account, outside the user's own directories.

As root, PostgreSQL runs as ``postgres`` and MariaDB as ``mysql``: they refuse to run as root. Those
accounts cannot enter a directory only root may enter (``/root``, a ``mktemp -d`` directory), and
hdbbench never loosens the permissions of the user's directories. Such a server therefore keeps its
data in a *home* of its own::

    /var/tmp/hdbbench-<uid>/              owned by the invoking user, 0711 as root, else 0700
        <digest of the state directory>/  same owner and mode
            <server>/                     owned by the server's account, 0700: data/, option files, socket

Every level is created with ``mkdir`` (which fails on anything already there) or, when it exists,
checked: a real directory (not a symlink), owned by the expected account, not writable by others.
Anything else is refused in one line. The state directory keeps a link ``<server>/data`` to the
home's data directory; ``hdbbench stack down`` stops the servers and removes the homes of the state
directory (``remove_homes``). Each digest level names its state directory in a file ``state-dir``,
so that ``hdbbench stack up`` can remove the homes that a crashed command left behind once their state
directory is gone (``sweep_orphan_homes``). A normal user's servers run as that user and keep their data in the
state directory; only MariaDB's socket comes here when the state directory's path is too long for a
Unix socket.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from hdbbench.model.errors import ServerError

HOMES_ROOT = Path("/var/tmp")
STATE_DIR_MARKER = "state-dir"


def _base(state_dir: Path, root: Path | None = None) -> Path:
    digest = hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:16]
    return (root or HOMES_ROOT) / f"hdbbench-{os.geteuid()}" / digest


def home_path(state_dir: Path, server: str, root: Path | None = None) -> Path:
    """Where the home of a server of this state directory is (created or not)."""
    return _base(state_dir, root) / server


def make_home(state_dir: Path, server: str, uid: int, gid: int, root: Path | None = None) -> Path:
    """Create (or check) the home of a server run by uid:gid; return its path."""
    home = home_path(state_dir, server, root)
    # Only root runs servers as other accounts; they pass through root's levels without listing them.
    shared_mode = 0o711 if os.geteuid() == 0 else 0o700
    for level in (home.parent.parent, home.parent):
        _safe_dir(level, os.geteuid(), os.getegid(), shared_mode)
    marker = home.parent / STATE_DIR_MARKER
    if not marker.exists():
        write_file(marker, str(Path(state_dir).resolve()), 0o600)
    _safe_dir(home, uid, gid, 0o700)
    return home


def _safe_dir(path: Path, uid: int, gid: int, mode: int) -> None:
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        pass
    else:
        os.chmod(path, mode)  # mkdir's mode is filtered by the umask
        if uid != os.geteuid() or gid != os.getegid():
            os.chown(path, uid, gid)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise ServerError(f"{path} is not a directory (a symlink or file is in the way); remove it")
    if info.st_uid != uid:
        raise ServerError(f"{path} is owned by uid {info.st_uid}, not uid {uid}; remove it")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ServerError(f"{path} is writable by other users; remove it")
    if stat.S_IMODE(info.st_mode) != mode:
        os.chmod(path, mode)  # ours and safe, but readable by more than it should be


def write_file(path: Path, text: str, mode: int, uid: int | None = None, gid: int | None = None) -> None:
    """Write a file in a directory another account owns, never through a link that account planted."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.write(fd, text.encode())
        os.fchmod(fd, mode)
        if uid is not None and gid is not None and (uid, gid) != (os.geteuid(), os.getegid()):
            os.fchown(fd, uid, gid)
    finally:
        os.close(fd)


def remove_homes(state_dir: Path, root: Path | None = None) -> list[Path]:
    """Remove every server home of this state directory (the servers must be stopped)."""
    base = _base(state_dir, root)
    try:
        info = os.lstat(base)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return []  # not ours: leave it alone
    removed = sorted(base.iterdir())
    shutil.rmtree(base)
    try:
        base.parent.rmdir()  # the last state directory of this user
    except OSError:
        pass
    return removed


def sweep_orphan_homes(root: Path | None = None) -> list[Path]:
    """Remove this user's homes whose state directory no longer exists and whose servers are not
    running (a command killed before ``stack down`` leaves them); return those removed. Homes without
    a ``state-dir`` file, or whose server still runs, are left alone."""
    user_root = (root or HOMES_ROOT) / f"hdbbench-{os.geteuid()}"
    try:
        if os.lstat(user_root).st_uid != os.geteuid():
            return []
        bases = sorted(user_root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    removed = []
    for base in bases:
        if _orphaned(base):
            shutil.rmtree(base, ignore_errors=True)
            removed.append(base)
    return removed


def _orphaned(base: Path) -> bool:
    try:
        info = os.lstat(base)
        state_dir = Path((base / STATE_DIR_MARKER).read_text().strip())
    except (OSError, ValueError):
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or state_dir.exists():
        return False
    return not any(_pid_alive(pid_file) for pid_file in base.glob("*/data/*.pid"))


def _pid_alive(pid_file: Path) -> bool:
    """A server's pid file (PostgreSQL's postmaster.pid, MariaDB's mariadbd.pid: the pid on line 1)."""
    try:
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, 0)
    except PermissionError:
        return True  # alive, another account's
    except (OSError, ValueError, IndexError):
        return False
    return True
