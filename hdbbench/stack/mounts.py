# SPDX-License-Identifier: Apache-2.0
"""Small tmpfs mounts for the filesystem faults (a spool or a tablespace that can be filled up).

Mounting needs root: as root `mount -t tmpfs` runs directly, otherwise through password-less
`sudo -n`; when neither works the caller gets one line saying so. A directory is mounted over only
when it is empty and not already a mount point. Every mount is recorded in the stack's state
directory (`<state>/mounts/<digest>.json`) before it is made, so that `hdbbench stack down` can
unmount what a crashed run left (`unmount_leftovers`). Unmounting waits a moment for a busy mount
(a server closing its files) and then detaches it lazily, so nothing stays mounted.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from hdbbench.model.errors import HdbbenchError

MOUNTS_DIR = "mounts"      # in the state directory
MOUNT_SOURCE = "hdbbench-fault"  # the device name `findmnt` shows for our mounts
_BUSY_WAIT_S = 10.0        # how long a busy mount may take to be released before a lazy unmount


def _privileged(argv: Sequence[str], what: str) -> None:
    """Run a mount tool as root: directly when we are root, else through `sudo -n`."""
    command = list(argv) if os.geteuid() == 0 else ["sudo", "-n", *argv]
    if command[0] == "sudo" and shutil.which("sudo") is None:
        raise HdbbenchError(f"{what} needs root or password-less sudo, and sudo is not installed")
    try:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=60, check=False)
    except FileNotFoundError:
        raise HdbbenchError(f"{what}: {command[0]} not found") from None
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit code {result.returncode}"
        hint = "" if os.geteuid() == 0 else " (needs root or password-less sudo)"
        raise HdbbenchError(f"{what} failed{hint}: {reason}")


def _record_path(state_dir: Path, path: Path) -> Path:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    return Path(state_dir) / MOUNTS_DIR / f"{digest}.json"


def _write_record(state_dir: Path, path: Path, size_mb: int, created_dir: bool) -> None:
    record = _record_path(state_dir, path)
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps({"path": str(path), "size_mb": size_mb, "created_dir": created_dir}))
    tmp.replace(record)


def _read_record(record: Path) -> dict[str, object] | None:
    try:
        data = json.loads(record.read_text())
        return data if isinstance(data, dict) and isinstance(data.get("path"), str) else None
    except (OSError, ValueError):
        return None


def is_mounted(path: Path) -> bool:
    return os.path.ismount(path)


def _prepare_directory(path: Path) -> bool:
    """Check (or create) the directory to mount over; True when it was created here."""
    if path.is_symlink():
        raise HdbbenchError(f"cannot mount a tmpfs at {path}: it is a symbolic link")
    if not path.exists():
        path.mkdir(parents=True)
        return True
    if not path.is_dir():
        raise HdbbenchError(f"cannot mount a tmpfs at {path}: it is not a directory")
    if is_mounted(path):
        raise HdbbenchError(f"cannot mount a tmpfs at {path}: something is already mounted there")
    if any(path.iterdir()):
        raise HdbbenchError(f"cannot mount a tmpfs at {path}: the directory is not empty (it would hide its files)")
    return False


def mount_tmpfs(path: Path, size_mb: int, owner: tuple[int, int] | None = None, *,
                state_dir: Path | None = None, mode: int = 0o700) -> bool:
    """Mount a tmpfs of `size_mb` MiB at `path`, its root owned by `owner` (uid, gid; default: us).

    Returns True when the directory was created here (`unmount` then removes it). The mount is
    recorded in `state_dir` first, when given, so a crash leaves a record `stack down` finds; a
    mount of ours recorded there and still in place (that crash) is replaced.
    """
    if size_mb < 1:
        raise HdbbenchError(f"tmpfs size must be at least 1 MiB, got {size_mb}")
    path = Path(path).absolute()
    leftover = _read_record(_record_path(state_dir, path)) if state_dir is not None else None
    if leftover is not None and is_mounted(path):
        unmount(path, state_dir=state_dir, remove_dir=False)  # ours, left by a run that crashed
    created = _prepare_directory(path) or bool(leftover and leftover.get("created_dir"))
    uid, gid = owner if owner is not None else (os.geteuid(), os.getegid())
    if state_dir is not None:
        _write_record(state_dir, path, size_mb, created)
    options = f"size={size_mb}m,mode={mode:o},uid={uid},gid={gid},nosuid,nodev"
    try:
        _privileged(["mount", "-t", "tmpfs", "-o", options, MOUNT_SOURCE, str(path)],
                    f"mounting a {size_mb} MiB tmpfs at {path}")
    except BaseException:
        _forget(path, state_dir, created)
        raise
    return created


def unmount(path: Path, *, state_dir: Path | None = None, remove_dir: bool | None = None) -> bool:
    """Unmount the tmpfs at `path` if one is mounted (idempotent); True when something was unmounted.

    The directory is removed when `remove_dir` says so, or (None) when the mount's record says it
    was created for the mount. A mount still busy after a few seconds is detached lazily: the
    kernel frees it once the last file on it is closed.
    """
    path = Path(path).absolute()
    unmounted = False
    if is_mounted(path):
        _unmount_waiting(path)
        unmounted = True
    created = bool(remove_dir)
    if remove_dir is None and state_dir is not None:
        record = _read_record(_record_path(state_dir, path))
        created = bool(record and record.get("created_dir"))
    _forget(path, state_dir, created)
    return unmounted


def _unmount_waiting(path: Path) -> None:
    deadline = time.monotonic() + _BUSY_WAIT_S
    while True:
        try:
            _privileged(["umount", str(path)], f"unmounting {path}")
            return
        except HdbbenchError as exc:
            if "busy" not in str(exc) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    # Busy for too long (a process keeps a file open): detach it now; it goes when the file is closed.
    _privileged(["umount", "--lazy", str(path)], f"unmounting {path}")


def _forget(path: Path, state_dir: Path | None, remove_dir: bool) -> None:
    if state_dir is not None:
        _record_path(state_dir, path).unlink(missing_ok=True)
    if remove_dir and not is_mounted(path):
        try:
            path.rmdir()
        except OSError:
            pass  # not empty or already gone: leave it as it is


def unmount_leftovers(state_dir: Path) -> list[str]:
    """Unmount every tmpfs recorded in `state_dir` (left by a run that crashed); return their paths."""
    records = sorted((Path(state_dir) / MOUNTS_DIR).glob("*.json"))
    done = []
    for record_path in records:
        record = _read_record(record_path)
        if record is None:
            record_path.unlink(missing_ok=True)
            continue
        path = Path(str(record["path"]))
        if unmount(path, state_dir=state_dir):
            done.append(str(path))
    try:
        (Path(state_dir) / MOUNTS_DIR).rmdir()
    except OSError:
        pass
    return done


@contextmanager
def tmpfs(path: Path, size_mb: int, owner: tuple[int, int] | None = None, *,
          state_dir: Path | None = None) -> Iterator[Path]:
    """A tmpfs mounted at `path` for the duration of the block; unmounted also on errors and Ctrl-C."""
    created = mount_tmpfs(path, size_mb, owner, state_dir=state_dir)
    try:
        yield Path(path).absolute()
    finally:
        unmount(path, state_dir=state_dir, remove_dir=created)


def fill(directory: Path, name: str = "hdbbench-filler") -> Path:
    """Write a file into `directory` until its filesystem says it is full (ENOSPC); return its path."""
    filler = Path(directory) / name
    block = b"\0" * (1 << 20)
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        while True:
            try:
                os.write(fd, block)  # a short write fills the last pages; the next one fails
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    return filler
                raise
    finally:
        os.close(fd)
