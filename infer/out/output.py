"""Writing an output file: only ever a regular file, atomically, and never leaving a temporary behind.

Every command that writes (``annotate``, ``report``) and ``infer.out.report.write_report`` go through
``write_file``. The rules, stated for users in docs/limits.md ("Writing outputs"):

- The destination must be a regular file or not exist. A directory, a device, a FIFO or a socket
  is refused (``OutputRefused``) before anything is written. The destination itself is never
  opened: the data goes to a temporary file beside it, which is renamed over it, so nothing is
  ever written *into* a device or a pipe, and a reader never sees half a file.
- The input is never written over unless asked: a destination that is the file ``spare`` names
  (the same file: by a symbolic link, a hard link or another spelling of its path) is refused,
  at the check and again right before the rename.
- A symbolic link is followed to the file it names, which is then replaced (the link stays a
  link). A link to nothing is refused (no file is created through a link), and so is a link the
  kernel's ``protected_symlinks`` rule would not follow: one in a sticky, world-writable
  directory such as /tmp owned by neither the writer nor the directory's owner.
- The destination is examined again right before the rename; a file that did not exist is put
  in place with ``link`` (which never replaces anything), so a name created in the meantime is
  not clobbered.
- The temporary file is removed when writing fails and on SIGINT, SIGTERM and SIGHUP (a signal
  whose handling was the default gets it back and is raised again, so the exit status tells the
  signal). SIGKILL cannot be caught: the temporary is named
  ``.NAME.HOST.PID.RANDOM.onnx-infer.tmp``, and the next write of NAME in that directory removes
  the ones left by a process of this host that no longer runs.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import signal
import socket
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TEMP_SUFFIX = ".onnx-infer.tmp"
MAX_LINKS = 40  # symbolic links followed before giving up, as the kernel does (ELOOP)
CAUGHT_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


class OutputRefused(OSError):
    """The destination is not something onnx-infer writes over; the message is one line."""


@dataclass(frozen=True)
class Destination:
    """Where the data will go: ``path`` (symbolic links followed) and what is there now."""

    given: str
    path: Path
    existing: os.stat_result | None  # lstat of ``path``: a regular file, or None when absent
    spare: tuple[str, tuple[int, int]] | None = None  # a file not to replace: (its path, device and inode)


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_kind(shown: str, mode: int) -> OutputRefused:
    return OutputRefused(f"{shown} is {_kind(mode)}, not a regular file; onnx-infer writes only regular files")


# Paths that name one of this process's open descriptors rather than a file: /dev/stdout and its
# siblings, /dev/fd/N, /proc/self/fd/N (and /proc/PID/fd/N, /proc/thread-self/fd/N).
_DESCRIPTOR = re.compile(r"/dev/std(?:in|out|err)|/dev/fd/\d+|/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/\d+")
_STREAMS = {"0": "the standard input", "1": "the standard output", "2": "the standard error"}


def _refuse_descriptor(given: str, current: str) -> None:
    """Refuse a destination that is an open descriptor (``-o /dev/stdout``): its link names no
    file (``pipe:[...]``), or a file the shell opened, which writing by rename would replace
    behind the shell's back. The reason says what it is instead of following the link."""
    path = os.path.normpath(current)
    if not _DESCRIPTOR.fullmatch(path):
        return
    stream = path.rpartition("/")[2]  # stdout, or a descriptor's number
    fd = {"stdin": "0", "stdout": "1", "stderr": "2"}.get(stream, stream)
    try:
        mode = os.stat(given).st_mode
        what = "a regular file" if stat.S_ISREG(mode) else _kind(mode)
        what = "a terminal" if fd.isdigit() and os.isatty(int(fd)) else what
    except OSError:
        what = "closed"
    which = _STREAMS.get(fd, f"descriptor {fd}")
    raise OutputRefused(
        f"{given} is {which} of onnx-infer ({what}), not a file by name; "
        "onnx-infer writes its outputs to regular files named by a path, atomically"
    )


def _may_follow(link: str, link_st: os.stat_result) -> bool:
    """The kernel's ``protected_symlinks`` rule, which a rename done by path would bypass."""
    try:
        parent = os.stat(os.path.dirname(link) or ".")
    except OSError:
        return False
    shared = parent.st_mode & stat.S_ISVTX and parent.st_mode & stat.S_IWOTH
    return not shared or link_st.st_uid in (_euid(), parent.st_uid)


def _identity(path: str | os.PathLike[str] | None) -> tuple[str, tuple[int, int]] | None:
    """``path`` and the device and inode of the file it names (links followed); None if none."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # (no such file: nothing to spare)
        return None
    return os.fsdecode(path), (st.st_dev, st.st_ino)


def _refuse_spared(given: str, st: os.stat_result, spare: tuple[str, tuple[int, int]] | None) -> None:
    """Refuse a destination that is the file not to replace (``spare``)."""
    if spare is not None and (st.st_dev, st.st_ino) == spare[1]:
        raise OutputRefused(
            f"{given} is the input model {spare[0]} (the same file, through a link or another name); "
            "onnx-infer does not write over its input"
        )


def destination(dest: str | os.PathLike[str], spare: str | os.PathLike[str] | None = None) -> Destination:
    """Check ``dest`` as an output and follow its symbolic links; raise ``OutputRefused`` if unfit,
    or if it is the file ``spare`` names (the input, which only an explicit in-place write replaces).

    Other ``OSError``s (a missing directory, permission denied) propagate unchanged.
    """
    spared = _identity(spare)
    given = os.fsdecode(dest)
    if not given:
        raise OutputRefused("the output path is empty")
    if "\0" in given:
        raise OutputRefused("the output path contains a NUL character")
    if given.endswith(os.sep) or (os.altsep and given.endswith(os.altsep)):
        raise OutputRefused(f"{given} names a directory, not a file")
    current = given
    for _ in range(MAX_LINKS + 1):
        _refuse_descriptor(given, current)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if current != given:
                raise OutputRefused(
                    f"{given} is a symbolic link to {current}, which does not exist; "
                    "onnx-infer does not create files through links"
                ) from None
            return Destination(given, Path(current), None, spared)
        if stat.S_ISREG(st.st_mode):
            _refuse_spared(given, st, spared)
            return Destination(given, Path(current), st, spared)
        if not stat.S_ISLNK(st.st_mode):
            shown = given if current == given else f"{given} (through a link, {current})"
            raise _refuse_kind(shown, st.st_mode)
        if not _may_follow(current, st):
            raise OutputRefused(
                f"{current} is a symbolic link in a shared sticky directory owned by another user; not followed"
            )
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    raise OutputRefused(f"{given}: too many levels of symbolic links")


# -- temporary files -----------------------------------------------------------------------------


def _host_tag() -> str:
    # Two machines sharing a directory (NFS) have unrelated process ids: only this host's are judged.
    return hashlib.sha1(socket.gethostname().encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()[:8]


def _name_key(name: str) -> str:
    """``name`` as it appears in its temporaries' names: shortened so they stay under NAME_MAX."""
    if len(os.fsencode(name)) <= 100:
        return name
    return name[:24] + "~" + hashlib.sha1(os.fsencode(name), usedforsecurity=False).hexdigest()[:16]


def temp_name(name: str, pid: int | None = None) -> str:
    """A fresh temporary name for a file ``name``, owned by process ``pid`` (this one by default)."""
    pid = os.getpid() if pid is None else pid
    return f".{_name_key(name)}.{_host_tag()}.{pid}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _owner_pid(entry: str, name: str) -> int | None:
    """The process id in ``entry`` when it is a temporary of ``name`` made on this host, else None."""
    prefix = f".{_name_key(name)}.{_host_tag()}."
    if not entry.startswith(prefix) or not entry.endswith(TEMP_SUFFIX):
        return None
    pid, _, token = entry[len(prefix) : -len(TEMP_SUFFIX)].partition(".")
    if not (pid.isascii() and pid.isdigit() and len(pid) < 10 and token.isascii() and token.isalnum()):
        return None
    return int(pid)


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":  # on Windows, os.kill(pid, 0) would send CTRL_C_EVENT
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError, OSError):
        return True  # a process we may not signal is still a process; when unsure, keep the file
    return True


def remove_stale_temporaries(directory: Path, name: str) -> list[str]:
    """Remove the temporaries of ``name`` in ``directory`` left by dead processes; return their names.

    Only regular files owned by this user, named by ``temp_name`` for ``name`` on this host, whose
    process no longer runs, are removed.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        pid = _owner_pid(entry.name, name)
        if pid is None or pid <= 0 or _alive(pid):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_uid == _euid():
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def _unlink(path: str | None) -> None:
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


@contextmanager
def _removed_on_signal(temp: list[str]) -> Iterator[None]:
    """While in the block, SIGINT, SIGTERM or SIGHUP removes the file named in ``temp`` first.

    A signal with a Python handler (SIGINT's ``KeyboardInterrupt``) is left to it: the exception
    reaches ``write_file``, which removes the file. A signal whose handling is the default would
    kill the process on the spot, so it gets a handler that removes the file, restores the
    default and raises the signal again. Ignored signals stay ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can be set only from the main thread; the except clause still cleans up
        return

    def handler(signum: int, frame: object) -> None:
        _unlink(temp[0] if temp else None)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    installed = []
    for sig in CAUGHT_SIGNALS:
        try:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, handler)
                installed.append(sig)
        except (OSError, ValueError):
            continue
    try:
        yield
    finally:
        for sig in installed:
            if signal.getsignal(sig) is handler:
                signal.signal(sig, signal.SIG_DFL)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Defer the caught signals for a few system calls, so a temporary is never made unrecorded."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, CAUGHT_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _create_temp(directory: Path, name: str) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = os.path.join(directory, temp_name(name))
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise OutputRefused(f"cannot make a temporary file in {directory}")


def _mode_and_owner(fd: int, path: str, existing: os.stat_result | None) -> None:
    """Give the new file the permissions of the one it replaces, or those a plain open() would."""
    # Through the descriptor where the platform can: the name could be swapped for a link meanwhile.
    chmod_at = fd if os.chmod in os.supports_fd else path
    if existing is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(chmod_at, 0o666 & ~umask)
        return
    os.chmod(chmod_at, existing.st_mode & 0o777)  # set-id bits are not carried onto new contents
    if hasattr(os, "fchown") and (existing.st_uid, existing.st_gid) != (_euid(), os.getegid()):
        try:  # root rewriting a user's model in place keeps it the user's
            os.fchown(fd, existing.st_uid, existing.st_gid)
        except OSError:
            pass


def _commit(temp: str, dest: Destination) -> None:
    """Put ``temp`` in place of ``dest.path``, after looking at ``dest.path`` once more."""
    target = os.fspath(dest.path)
    if dest.existing is None:
        try:
            os.link(temp, target)  # fails if anything took the name meanwhile: nothing is replaced
        except FileExistsError:
            pass  # examined below, like a destination that existed
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK, errno.EXDEV):
                raise
        else:
            _unlink(temp)
            return
    try:
        now = os.lstat(target)
    except FileNotFoundError:
        now = None
    if now is not None and not stat.S_ISREG(now.st_mode):
        raise OutputRefused(f"{target} became {_kind(now.st_mode)} while the output was being written; not replaced")
    if now is not None:
        _refuse_spared(dest.given, now, dest.spare)  # (made a link to the input meanwhile)
    os.replace(temp, target)


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(data: bytes, dest: str | os.PathLike[str], spare: str | os.PathLike[str] | None = None) -> Path:
    """Write ``data`` to ``dest`` atomically under the rules above; return the path written.
    ``spare``: a file ``dest`` must not be (the input of the command).

    Raises ``OutputRefused`` for a destination it will not write over, ``OSError`` when the
    write fails; either way ``dest`` is as it was and no temporary file is left.
    """
    target = destination(dest, spare)
    directory = target.path.parent
    remove_stale_temporaries(directory, target.path.name)
    temp: list[str] = []
    with _removed_on_signal(temp):
        try:
            with _signals_blocked():
                fd, path = _create_temp(directory, target.path.name)
                temp.append(path)
            with os.fdopen(fd, "wb") as f:
                _mode_and_owner(fd, path, target.existing)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            _commit(path, target)
        except BaseException:
            _unlink(temp[0] if temp else None)
            raise
    _sync_directory(directory)  # the rename itself survives a crash
    return target.path
