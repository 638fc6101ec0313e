"""The reader's on-disk cache of verified files: private to this user, written atomically, never following symlinks."""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

from ...format import settings

log = logging.getLogger(__name__)

_MAX_ETAG = 256


#: The one variable naming toolcat's cache folder (the reader's files here, models under ``models/``).
CACHE_VARIABLE = "TOOLCAT_CACHE_DIR"
#: Its old name, read when the new one is unset, with a warning.
DEPRECATED_CACHE_VARIABLE = "TOOLCAT_CACHE"


def default_cache_dir() -> Path:
    """The cache home (:func:`toolcat.format.settings.cache_home`: ``$TOOLCAT_CACHE_DIR``, XDG, ``~/.cache/toolcat``)."""
    return settings.cache_home()


def clean_etag(value: Any) -> str | None:
    """An ETag the reader may store and send back: short printable ASCII (no CR/LF header injection)."""
    if isinstance(value, str) and 0 < len(value) <= _MAX_ETAG and all(" " <= c <= "~" for c in value):
        return value
    return None


class DiskCache:
    """The reader's on-disk cache: private, written atomically, read without following symlinks.

    The folder (and the symlink to it, if it is one) must belong to this user, and the folder must not be
    writable by group or others (else it is not used at all: another user could plant entries). Folders are created 0o700 and files 0o600; a file is
    written to a temporary name and renamed into place; a symlink planted where a folder should be is
    removed, one where a file should be is not followed (``O_NOFOLLOW``) and removed; a file that is
    not a regular file of the expected size (a FIFO, a device, a huge plant) is never read.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._usable: bool | None = None
        self._lock = threading.Lock()

    def _private(self, info: os.stat_result, what: Path) -> bool:
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            log.warning("reader cache %s belongs to another user (uid %d); not using the cache", what, info.st_uid)
            return False
        if info.st_mode & 0o022:
            log.warning(
                "reader cache %s is writable by group or others (mode %o); not using the cache "
                "(chmod 700 it, or pick another cache_dir)",
                what,
                stat.S_IMODE(info.st_mode),
            )
            return False
        return True

    def usable(self) -> bool:
        """Whether the cache folder exists (created 0o700 if not), belongs to this user and only they can write it."""
        with self._lock:
            if self._usable is None:
                try:
                    self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
                    link, info = self.root.lstat(), self.root.stat()  # the root may be a symlink of the user's
                except OSError as exc:
                    log.warning("reader cache %s is not usable (%s); continuing without caching", self.root, exc)
                    self._usable = False
                else:
                    self._usable = (
                        stat.S_ISDIR(info.st_mode)
                        and self._private(info, self.root)
                        and (not stat.S_ISLNK(link.st_mode) or self._private(link, self.root))
                    )
            return self._usable

    def folder(self, *parts: str, create: bool) -> Path | None:
        """The sub-folder ``parts`` of the cache (a real, private folder), or None."""
        if not self.usable():
            return None
        folder = self.root
        try:
            for part in parts:
                folder /= part
                try:
                    info = os.lstat(folder)
                except FileNotFoundError:
                    if not create:
                        return None
                    folder.mkdir(mode=0o700, exist_ok=True)
                    info = os.lstat(folder)
                if stat.S_ISLNK(info.st_mode):
                    log.warning("removing symlink %s planted in the reader cache", folder)
                    folder.unlink()
                    if not create:
                        return None
                    folder.mkdir(mode=0o700)
                    info = os.lstat(folder)
                if not stat.S_ISDIR(info.st_mode) or not self._private(info, folder):
                    return None
        except OSError as exc:
            log.warning("reader cache folder %s is not usable (%s); continuing without caching", folder, exc)
            return None
        return folder

    def read(self, parts: tuple[str, ...], name: str, size: int | None, max_bytes: int) -> bytes | None:
        """The bytes of a regular cache file (exactly ``size`` of them when given, at most ``max_bytes``), or None.

        A file that is a symlink, not a regular file, or of another size is removed and not read.
        """
        folder = self.folder(*parts, create=False)
        if folder is None:
            return None
        file = folder / name
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(file, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:  # ELOOP: a symlink; or unreadable
            log.warning("cache file %s cannot be read safely (%s); removing it", file, exc)
            self.remove(parts, name)
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            ok = stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes and size in (None, info.st_size)
            data = handle.read(info.st_size + 1) if ok else b""
        if not ok or len(data) != info.st_size:
            log.warning("cache file %s is not what was stored there; removing it", file)
            self.remove(parts, name)
            return None
        return data

    def write(self, parts: tuple[str, ...], name: str, data: bytes) -> None:
        """Store ``data`` atomically (temporary file 0o600, then rename); a failure only logs a warning."""
        folder = self.folder(*parts, create=True)
        if folder is None:
            return
        tmp = folder / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            tmp.replace(folder / name)
        except OSError as exc:
            log.warning("reader cache %s is not writable (%s); continuing without caching", folder, exc)
            try:
                tmp.unlink()
            except OSError:
                log.debug("no temporary cache file %s to remove", tmp)

    def remove(self, parts: tuple[str, ...], name: str) -> None:
        """Remove a cache file (a symlink itself, never its target)."""
        folder = self.root.joinpath(*parts)
        try:
            (folder / name).unlink()
        except OSError:
            log.debug("could not remove cache file %s", folder / name)
