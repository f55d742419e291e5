"""The writer's lock of a store: one ``tablegen run`` writes a store at a time.

The lock is a file beside the store (``paper.zarr.lock``; inside it Zarr would warn about it) holding
a JSON record of its holder: host, pid, user, start time, a random token.

On a local or POSIX shared filesystem the lock is the kernel's: the file is opened and locked with
``flock(LOCK_EX | LOCK_NB)``, which is atomic, and released by the kernel when the holder exits, even
by SIGKILL.  Taking over the lock of a dead run is therefore the same atomic step as taking a free
lock; no two processes (or threads) can both succeed.  After locking, the holder checks that the
path still names the file it locked (a releasing run unlinks it), and retries otherwise.  A record
left by a run on *another host* is honoured (some cluster filesystems keep flock per node) until
``--break-lock``; a live holder is never broken, on any host whose filesystem shares flock.

The lock belongs to the store, not to the path typed: the path is resolved first (a store reached
through a symbolic link has the same lock), and the holder also locks the store's folder itself
(created empty if it does not exist yet, removed again if the run leaves it empty), so deleting the
lock file under a live run does not let a second writer in.  The lock file is opened without
following a symbolic link planted in its place, and a record is read to at most 64 KiB.

On object stores (fsspec URLs other than local paths) there is no lock primitive: the record is
created with exclusive-create semantics where the backend offers them, read back to confirm, and a
lock of a dead process on this host is taken over; this is best effort (see the store reference in the documentation).
"""

from __future__ import annotations

import datetime
import errno
import getpass
import json
import logging
import os
import socket
import uuid

from tablegen.errors import StoreError, StoreLockedError
from tablegen.store.schema import is_local, store_fs

logger = logging.getLogger(__name__)

LOCK_SUFFIX = ".lock"
_RETRIES = 100
#: The most of a lock record that is read (a record is ~200 bytes; a lock linked to /dev/zero is not read forever).
MAX_RECORD_BYTES = 65536

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _parse(raw: bytes) -> dict | str | None:
    """The holder's record, None for an empty file, or the reason it is malformed (a str)."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return f"not a JSON lock record ({error})"
    return record if isinstance(record, dict) else f"not a JSON object ({type(record).__name__})"


def _pid_alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError, TypeError):
        return True  # exists under another user, or not a pid we can judge: assume alive
    return True


def _holder_text(record) -> str:
    if not isinstance(record, dict):
        return f"holder unknown: the lock record is malformed, {record}" if record else "holder unknown"
    return (f"pid {record.get('pid')} on {record.get('host')}, user {record.get('user')}, "
            f"started {record.get('started')}")


class StoreLock:
    """An exclusive lock on a store (a context manager); see the module text for how it holds.

    Parameters
    ----------
    url : str
        The store's path or fsspec URL (the lock is ``url + ".lock"``).
    storage_options : dict, optional
    break_lock : bool
        Take over a lock recorded by a run on another host (after checking it is dead); a holder that
        is alive on this host, or holds the kernel lock, is never broken.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.zarr")
    >>> with StoreLock(path) as lock:
    ...     os.path.exists(path + ".lock")
    True
    >>> os.path.exists(path + ".lock")
    False
    """

    def __init__(self, url: str, storage_options: dict | None = None, break_lock: bool = False):
        self.fs, root = store_fs(url, storage_options)
        self.local = is_local(self.fs)
        if self.local:
            root = os.path.realpath(root)  # a store reached through a symbolic link has one lock
        self.path, self.root = f"{root}{LOCK_SUFFIX}", root
        self.url, self.break_lock, self.fd, self.folder_fd, self._made_folder = url, break_lock, None, None, False
        self.record = {"token": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid(),
                       "user": getpass.getuser(), "started": _now()}

    # -- messages -------------------------------------------------------------------------------
    def _locked(self, record, live: bool) -> StoreLockedError:
        if live and self.break_lock:
            return StoreLockedError(f"store {self.url!r} is locked by a run that is still alive "
                                    f"({_holder_text(record)}); --break-lock never breaks a live run's lock: "
                                    "stop that run first")
        return StoreLockedError(f"store {self.url!r} is locked by another tablegen run ({_holder_text(record)}); "
                                "wait for it to finish, or if it is dead and ran on another host, "
                                "rerun with --break-lock")

    def _judge_previous(self, record) -> None:
        """Holding the lock, decide whether a record left in the file may be taken over."""
        if record is None:
            return
        if isinstance(record, str):
            logger.warning("lock of %s held a malformed record (%s) and no live holder: taken over", self.url, record)
            return
        here = record.get("host") == socket.gethostname()
        if not here and not self.break_lock:
            raise self._locked(record, live=False)
        reason = ("--break-lock given" if not here else "that process no longer exists"
                  if not _pid_alive(record.get("pid")) else "that process holds no lock (its pid was reused)")
        logger.warning("removing the lock of %s (pid %s on %s, started %s): %s", self.url, record.get("pid"),
                       record.get("host"), record.get("started"), reason)

    # -- local: flock ---------------------------------------------------------------------------
    def _acquire_local(self) -> None:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        for _ in range(_RETRIES):
            fd = self._open_lock_file()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise self._locked(self._read(), live=True) from None
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                    return self._acquire_exclusive()
                raise
            if self._same_file(fd):
                try:
                    self._judge_previous(_parse(self._read_fd(fd)))
                except StoreError:
                    os.close(fd)
                    raise
                self.fd = fd
                try:
                    self._lock_folder()
                except StoreError:
                    self.fd = None
                    os.close(fd)
                    raise
                self._write_fd(fd)
                return None
            os.close(fd)  # the file we locked was unlinked by a releasing run: lock the new one
        raise StoreError(f"store {self.url!r}: could not take its lock after {_RETRIES} tries")

    def _open_lock_file(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise StoreError(f"store {self.url!r}: its lock {self.path} is a symbolic link, which tablegen "
                                 "never writes through; remove it if no run is writing the store") from None
            raise

    def _lock_folder(self) -> None:
        """Lock the store's folder too (its inode: the store itself, whatever path or lock file names it)."""
        try:
            os.mkdir(self.root)
            self._made_folder = True
        except FileExistsError:
            pass
        if not os.path.isdir(self.root) or os.path.islink(self.root):
            return  # a file where the store should be: create_store names that
        folder = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(folder)
            raise StoreLockedError(f"store {self.url!r} is being written by another tablegen run that still holds "
                                   "the store's folder (its lock file was removed, so its holder is unknown); "
                                   "wait for it to finish") from None
        except OSError as error:  # a filesystem without folder locks (NFS emulates flock with POSIX locks)
            os.close(folder)
            logger.debug("store %s: its folder cannot be locked (%s); the lock file alone guards it", self.url, error)
            return
        self.folder_fd = folder

    def _release_folder(self) -> None:
        if self.folder_fd is None:
            return
        if self._made_folder:
            try:
                os.rmdir(self.root)  # only if the run left it empty
            except OSError:
                pass
        os.close(self.folder_fd)
        self.folder_fd, self._made_folder = None, False

    def _same_file(self, fd: int) -> bool:
        try:
            return os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    @staticmethod
    def _read_fd(fd: int) -> bytes:
        return os.pread(fd, MAX_RECORD_BYTES, 0)

    def _write_fd(self, fd: int) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(self.record, allow_nan=False).encode(), 0)
        os.fsync(fd)

    def _read(self):
        try:
            with self.fs.open(self.path, "rb") as f:
                return _parse(f.read(MAX_RECORD_BYTES))
        except FileNotFoundError:
            return None

    # -- object stores: exclusive create, best effort -------------------------------------------
    def _acquire_exclusive(self) -> None:
        parent = self.path.rsplit("/", 1)[0]
        if parent:
            self.fs.makedirs(parent, exist_ok=True)
        record = self._read()
        if record is not None:
            foreign = isinstance(record, dict) and record.get("host") != socket.gethostname()
            alive = isinstance(record, dict) and not foreign and _pid_alive(record.get("pid"))
            if alive or ((foreign or isinstance(record, str)) and not self.break_lock):
                raise self._locked(record, live=alive)
            self._judge_previous(record)
            self.fs.rm(self.path)
        try:
            with self.fs.open(self.path, "xb") as f:
                f.write(json.dumps(self.record, allow_nan=False).encode())
        except FileExistsError:
            raise self._locked(self._read(), live=True) from None
        record = self._read()
        if not isinstance(record, dict) or record.get("token") != self.record["token"]:
            raise StoreError(f"store {self.url!r}: lost the race for its lock to another run")

    # -- public ---------------------------------------------------------------------------------
    def acquire(self) -> None:
        """Take the lock, or raise :class:`StoreError` naming its holder."""
        try:
            if self.local and fcntl is not None:
                self._acquire_local()
            else:
                self._acquire_exclusive()
        except OSError as error:  # unwritable place, a file where a folder should be, /proc ...
            raise StoreError(f"store {self.url!r}: cannot take the lock {self.path} "
                             f"({getattr(error, 'strerror', None) or error})") from None

    def release(self) -> None:
        """Remove the lock if it is still ours (the file first, then the kernel lock)."""
        if self.fd is not None:
            try:
                self._release_folder()
                if self._same_file(self.fd):
                    os.unlink(self.path)
            finally:
                os.close(self.fd)
                self.fd = None
            return
        record = self._read()
        if isinstance(record, dict) and record.get("token") == self.record["token"]:
            self.fs.rm(self.path)

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()
        return False


def live_holder(url: str, storage_options: dict | None = None) -> str | None:
    """Who is writing the store now (its lock's holder, in words), or None when no live run holds the lock.

    A record left by a dead process on this host, or by this very process, is no live writer; a record
    left by a run on another host is counted as live (it cannot be judged from here).  Only reads.
    """
    try:
        lock = StoreLock(url, storage_options)
        record = lock._read()
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    here = record.get("host") == socket.gethostname()
    if here and (record.get("pid") == os.getpid() or not _pid_alive(record.get("pid"))):
        return None
    return _holder_text(record)
