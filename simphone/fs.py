"""The simulated phone's filesystem: an in-memory tree of files and directories.

``VirtualFS`` is what ``sync:`` (adb push / pull / ls) and shell redirections read and
write. Paths are absolute POSIX paths; errors are the standard ``OSError`` subclasses
(``FileNotFoundError``, ``NotADirectoryError``, ``IsADirectoryError``,
``FileExistsError``) carrying the path, the way a real filesystem reports them.
Thread-safe: the ADB server thread and the test thread both touch it.

May import: the standard library only.
"""

from __future__ import annotations

import errno
import posixpath
import stat as stat_module
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["FileStat", "VirtualFS", "STANDARD_DIRS"]

# What a freshly flashed phone has, so that `adb push x /sdcard/` just works.
STANDARD_DIRS = (
    "/data/local/tmp",
    "/sdcard/Download",
    "/sdcard/DCIM/Camera",
    "/sdcard/Pictures",
    "/sdcard/Documents",
    "/sdcard/Music",
    "/system/bin",
)


@dataclass(frozen=True)
class FileStat:
    """One entry's metadata; ``mode`` includes the type bits (``S_IFREG`` / ``S_IFDIR``)."""

    mode: int
    size: int
    mtime: int
    ino: int
    nlink: int = 1
    uid: int = 0
    gid: int = 0

    @property
    def is_dir(self) -> bool:
        return stat_module.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        return stat_module.S_ISREG(self.mode)


@dataclass
class _Node:
    mode: int
    mtime: int
    ino: int
    data: bytes = b""
    children: dict[str, _Node] | None = field(default=None)

    @property
    def is_dir(self) -> bool:
        return self.children is not None


def _normalize(path: str) -> str:
    if not isinstance(path, str) or not path:
        raise ValueError(f"path must be a non-empty string, got {path!r}")
    if "\0" in path:
        raise ValueError(f"path contains a NUL byte: {path!r}")
    if not path.startswith("/"):
        raise ValueError(f"path must be absolute: {path!r}")
    norm = posixpath.normpath(path)
    # normpath keeps a leading '//' (POSIX allows it to be special); a phone doesn't.
    return "/" + norm.lstrip("/")


def _parts(path: str) -> list[str]:
    return [p for p in _normalize(path).split("/") if p]


class VirtualFS:
    """An in-memory filesystem with files, directories, permission modes and mtimes."""

    def __init__(self, *, standard_layout: bool = True, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self._next_ino = 1
        self._standard_layout = standard_layout
        self._root = self._new_dir(0o755)
        if standard_layout:
            for directory in STANDARD_DIRS:
                self.mkdir(directory, parents=True, exist_ok=True)

    # -- internals -----------------------------------------------------------------------
    def _now(self) -> int:
        return int(self._clock())

    def _new_dir(self, mode: int) -> _Node:
        ino, self._next_ino = self._next_ino, self._next_ino + 1
        return _Node(mode=stat_module.S_IFDIR | (mode & 0o7777), mtime=self._now(), ino=ino, children={})

    def _new_file(self, data: bytes, mode: int, mtime: int | None) -> _Node:
        ino, self._next_ino = self._next_ino, self._next_ino + 1
        return _Node(
            mode=stat_module.S_IFREG | (mode & 0o7777),
            mtime=self._now() if mtime is None else int(mtime),
            ino=ino,
            data=bytes(data),
        )

    def _lookup(self, path: str) -> _Node:
        node = self._root
        walked = ""
        for name in _parts(path):
            walked += "/" + name
            if node.children is None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", walked)
            child = node.children.get(name)
            if child is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
            node = child
        return node

    def _parent_of(self, path: str, *, create: bool) -> tuple[_Node, str]:
        parts = _parts(path)
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", "/")
        node = self._root
        walked = ""
        for name in parts[:-1]:
            walked += "/" + name
            assert node.children is not None
            child = node.children.get(name)
            if child is None:
                if not create:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", walked)
                child = self._new_dir(0o771)
                node.children[name] = child
            if child.children is None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", walked)
            node = child
        return node, parts[-1]

    # -- queries ---------------------------------------------------------------------------
    def stat(self, path: str) -> FileStat:
        with self._lock:
            node = self._lookup(path)
            size = 4096 if node.is_dir else len(node.data)
            nlink = 2 + sum(1 for c in (node.children or {}).values() if c.is_dir) if node.is_dir else 1
            return FileStat(mode=node.mode, size=size, mtime=node.mtime, ino=node.ino, nlink=nlink)

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
        except OSError:
            return False
        return True

    def is_dir(self, path: str) -> bool:
        try:
            return self.stat(path).is_dir
        except OSError:
            return False

    def is_file(self, path: str) -> bool:
        try:
            return self.stat(path).is_file
        except OSError:
            return False

    def listdir(self, path: str) -> list[str]:
        """Names in a directory, sorted."""
        with self._lock:
            node = self._lookup(path)
            if node.children is None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", path)
            return sorted(node.children)

    def read_file(self, path: str) -> bytes:
        with self._lock:
            node = self._lookup(path)
            if node.is_dir:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            return node.data

    # -- changes ---------------------------------------------------------------------------
    def mkdir(self, path: str, *, mode: int = 0o771, parents: bool = False, exist_ok: bool = False) -> None:
        with self._lock:
            if self.exists(path):
                if exist_ok and self.is_dir(path):
                    return
                raise FileExistsError(errno.EEXIST, "File exists", path)
            parent, name = self._parent_of(path, create=parents)
            assert parent.children is not None
            parent.children[name] = self._new_dir(mode)
            parent.mtime = self._now()

    def write_file(
        self,
        path: str,
        data: bytes,
        *,
        mode: int = 0o660,
        mtime: int | None = None,
        parents: bool = False,
        append: bool = False,
    ) -> None:
        """Create or replace a file (``append`` adds to an existing one, like ``>>``)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"file data must be bytes, got {type(data).__name__}")
        with self._lock:
            parent, name = self._parent_of(path, create=parents)
            assert parent.children is not None
            existing = parent.children.get(name)
            if existing is not None and existing.is_dir:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            if append and existing is not None:
                existing.data = existing.data + bytes(data)
                existing.mtime = self._now() if mtime is None else int(mtime)
                return
            node = self._new_file(bytes(data), mode, mtime)
            if existing is not None:
                node.ino = existing.ino
            parent.children[name] = node
            parent.mtime = self._now()

    def remove(self, path: str, *, recursive: bool = False) -> None:
        with self._lock:
            parent, name = self._parent_of(path, create=False)
            assert parent.children is not None
            node = parent.children.get(name)
            if node is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
            if node.is_dir and node.children and not recursive:
                raise OSError(errno.ENOTEMPTY, "Directory not empty", path)
            del parent.children[name]
            parent.mtime = self._now()

    def set_mtime(self, path: str, mtime: int) -> None:
        with self._lock:
            self._lookup(path).mtime = int(mtime)

    def clear(self) -> None:
        """Back to a freshly flashed phone: only the standard directories, all empty."""
        with self._lock:
            self._root = self._new_dir(0o755)
            if self._standard_layout:
                for directory in STANDARD_DIRS:
                    self.mkdir(directory, parents=True, exist_ok=True)

    def walk_files(self, top: str = "/") -> list[str]:
        """Every file path under ``top``, sorted."""
        with self._lock:
            found: list[str] = []

            def visit(node: _Node, at: str) -> None:
                for name, child in (node.children or {}).items():
                    child_path = posixpath.join(at, name)
                    if child.is_dir:
                        visit(child, child_path)
                    else:
                        found.append(child_path)

            start = self._lookup(top)
            if not start.is_dir:
                return [_normalize(top)]
            visit(start, _normalize(top))
            return sorted(found)
