# SPDX-License-Identifier: Apache-2.0
"""A storage class per database server: its data directory on its own ext4 on a throttled loop device.

The sparse image lives beside the server's home (hdbbench.stack.servers.homes: ``<digest>/<server>.img``,
in the root-owned level, so the server's account cannot swap it for a link), is attached with
``losetup --direct-io=on`` (the loop device reads and writes the image without a second page cache on
the host) and mounted on the home's ``data`` directory before the server initialises it.

The throttle is a rule of the blkio controller's *root* group for that loop device. The device is
private to the server, so a root rule limits nobody else; unlike a rule on a group of the server's
own, it also limits the flusher threads' write-back of the server's dirty pages (they run in the root
group, and v1 does not charge write-back to the writer's group). docs/stack.md gives the measurement.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hdbbench.model.errors import ServerError
from hdbbench.stack.servers import homes
from hdbbench.stack.servers.confine import cgroup
from hdbbench.stack.servers.confine.spec import StorageClass

_THROTTLE_FILES = ("read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device")
_SECTOR = 512  # /sys/block/*/stat counts 512-byte sectors whatever the device's block size


@dataclass(frozen=True)
class IoCounters:
    """I/O of a server's loop device (/sys/block/loopN/stat: cumulative over every use of the device
    since it was created, so hdbbench.stack.servers.confine.io_counters subtracts the figures at attach)."""

    read_bytes: int
    read_ops: int
    write_bytes: int
    write_ops: int


def image_path(state_dir: Path, server: str) -> Path:
    return homes.home_path(state_dir, server).parent / f"{server}.img"


def mount_point(state_dir: Path, server: str) -> Path:
    """The server's data directory (the home's `data`), where its file system is mounted."""
    return homes.home_path(state_dir, server) / "data"


def _run(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    except FileNotFoundError:
        raise ServerError(f"{what}: {argv[0]} not found (util-linux, e2fsprogs)") from None
    if done.returncode != 0:
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ServerError(f"{what} failed: {message[-1] if message else f'exit code {done.returncode}'}")
    return done.stdout.strip()


# --- the loop device ------------------------------------------------------------------------------
def loop_device(image: Path) -> str | None:
    """The loop device (e.g. "loop3") the image is attached to, found from sysfs; None when none is."""
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            if Path(backing.read_text().strip()) == image:
                return backing.parent.parent.name
        except OSError:
            continue
    return None


def device_numbers(device: str) -> str:
    """"MAJ:MIN" of a block device, as the blkio controller's rules name it."""
    return (Path("/sys/block") / device / "dev").read_text().strip()


def mounted_at(point: Path) -> str | None:
    """The source mounted on `point` (e.g. "/dev/loop3"), None when nothing is."""
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 2 and _unescape(fields[1]) == str(point):
            return _unescape(fields[0])
    return None


def _unescape(field: str) -> str:
    """/proc/mounts writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def attach(state_dir: Path, server: str, size: int, uid: int, gid: int) -> str:
    """Create the image (first use), attach it, make its file system (first use) and mount it on the
    server's data directory, owned by the server's account; return the loop device's name."""
    homes.make_home(state_dir, server, uid, gid)
    image = image_path(state_dir, server)
    new = not image.exists()
    if new:
        fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.ftruncate(fd, size)  # sparse: the host's disk holds only what is written
        os.close(fd)
    device = loop_device(image) or Path(_run(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)], "losetup")).name
    try:
        if new:
            # Inode tables and journal written now, unthrottled: lazy initialisation would write them
            # in the background later, through the throttle, during the measurements.
            _run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                  "-L", f"hdbbench-{server}", f"/dev/{device}"], "mkfs.ext4")
        _mount(state_dir, server, device, uid, gid)
    except BaseException:
        _detach(device)
        raise
    return device


def _mount(state_dir: Path, server: str, device: str, uid: int, gid: int) -> None:
    point = mount_point(state_dir, server)
    if mounted_at(point) == f"/dev/{device}":
        return
    if point.is_symlink():
        raise ServerError(f"{point} is a link; remove it")
    if not point.exists():
        point.mkdir(mode=0o700)
        os.chown(point, uid, gid)  # the directory under the mount: the server's when class `ram` uses it later
    _run(["mount", "-t", "ext4", "-o", "noatime", f"/dev/{device}", str(point)], "mount")
    # The server's initialisation wants an empty directory of its own account.
    lost = point / "lost+found"
    if lost.is_dir() and not any(lost.iterdir()):
        lost.rmdir()
    os.chown(point, uid, gid)
    os.chmod(point, 0o700)


def _detach(device: str) -> None:
    # On a device still open (after a lazy unmount) this sets autoclear: detached when it is closed.
    subprocess.run(["losetup", "-d", f"/dev/{device}"], capture_output=True, check=False, timeout=60)


# --- the throttle ---------------------------------------------------------------------------------
def _blkio_root() -> Path:
    root = cgroup.controller("blkio")
    if root is None:
        raise ServerError("the blkio cgroup controller is not mounted")
    return root


def throttle(device: str, storage: StorageClass) -> None:
    """Set the class's limits on the device in the blkio root group (0 removes a limit)."""
    numbers = device_numbers(device)
    for name, value in storage.limits().items():
        cgroup.write(_blkio_root() / f"blkio.throttle.{name}", f"{numbers} {value or 0}")


def limits_in_force(device: str) -> dict[str, int | None]:
    """The blkio rules on the device, read back from the kernel (None: no rule)."""
    numbers = device_numbers(device)
    found: dict[str, int | None] = {}
    root = cgroup.controller("blkio")
    for name in _THROTTLE_FILES:
        found[name] = None
        if root is None:
            continue
        for line in (root / f"blkio.throttle.{name}").read_text().splitlines():
            dev, _, value = line.partition(" ")
            if dev == numbers:
                found[name] = int(value)
    return found


def _unthrottle(device: str) -> None:
    root = cgroup.controller("blkio")
    if root is None:
        return
    numbers = device_numbers(device)
    for name in _THROTTLE_FILES:
        try:
            cgroup.write(root / f"blkio.throttle.{name}", f"{numbers} 0")
        except OSError:
            pass  # no rule there


def io_counters_of(device: str) -> IoCounters:
    fields = [int(v) for v in (Path("/sys/block") / device / "stat").read_text().split()]
    return IoCounters(read_ops=fields[0], read_bytes=fields[2] * _SECTOR,
                      write_ops=fields[4], write_bytes=fields[6] * _SECTOR)


# --- taking it all down ---------------------------------------------------------------------------
def release(state_dir: Path, server: str) -> list[str]:
    """Unmount the server's file system, lift the throttle and detach the loop device (the server must
    be stopped); the image stays for the next `up` until the homes go. Return what was undone."""
    undone = []
    point = mount_point(state_dir, server)
    source = mounted_at(point)
    if source is not None:
        try:
            _run(["umount", str(point)], "umount")
        except ServerError:
            # Still busy (a process outside the server's group has a file open there): take the mount
            # out of the tree now; the kernel lets go of the file system when the last user does.
            _run(["umount", "--lazy", str(point)], "umount --lazy")
        undone.append(f"mount {point}")
    device = loop_device(image_path(state_dir, server))
    if device is not None:
        _unthrottle(device)
        _detach(device)
        undone.append(f"/dev/{device}")
    return undone


def remove_image(state_dir: Path, server: str) -> None:
    image_path(state_dir, server).unlink(missing_ok=True)
