"""The ``sync:`` service (adb push / pull / ls / stat) against a phone's ``VirtualFS``.

Requests are ``id(4) + u32 LE length + payload``. Implemented: STAT, STA2, LST2, LIST,
LIS2, RECV, SEND (v1: ``"path,mode"``), QUIT — what adb 29-36 and adbutils send when the
device advertises ``stat_v2,ls_v2`` and no ``sendrecv_v2``. Struct layouts follow AOSP
``file_sync_protocol.h`` (all packed).

May import: the standard library, ``simphone.fs``, ``simphone.adb.protocol``.
"""

from __future__ import annotations

import errno
import logging
import stat as stat_module
import struct
from collections.abc import Awaitable, Callable, Iterable

from simphone.fs import FileStat, VirtualFS

__all__ = ["SYNC_DATA_MAX", "SyncSession"]

log = logging.getLogger(__name__)

SYNC_DATA_MAX = 64 * 1024
_MAX_PATH = 1024
_REQ = struct.Struct("<4sI")
_STAT_V1 = struct.Struct("<4sIII")
_STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
_DENT_V1 = struct.Struct("<4sIIII")
_DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")
_DEV = 0xFD00


def _stat_v2_fields(st: FileStat) -> tuple[int, ...]:
    """dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime of ``sync_stat_v2``."""
    return (_DEV, st.ino, st.mode, st.nlink, st.uid, st.gid, st.size, st.mtime, st.mtime, st.mtime)


class SyncSession:
    """Runs one ``sync:`` stream; ``read_exact`` and ``write`` are the stream's ends."""

    def __init__(
        self,
        fs: VirtualFS | None,
        read_exact: Callable[[int], Awaitable[bytes]],
        write: Callable[[Iterable[bytes | memoryview]], Awaitable[None]],
    ) -> None:
        self.fs = fs
        self.read_exact = read_exact
        self.write = write

    async def run(self) -> None:
        while True:
            ident, length = _REQ.unpack(await self.read_exact(_REQ.size))
            if ident == b"QUIT":
                return
            if length > _MAX_PATH:
                await self._fail(f"path too long: {length} bytes")
                return
            path = (await self.read_exact(length)).decode("utf-8", "surrogateescape")
            if ident in (b"STAT", b"STA2", b"LST2"):
                await self._stat(ident, path)
            elif ident in (b"LIST", b"LIS2"):
                await self._list(ident, path)
            elif ident == b"RECV":
                await self._recv(path)
            elif ident == b"SEND":
                if not await self._send(path):
                    return
            else:
                await self._fail(f"unknown sync request {ident!r}")
                return

    # -- helpers -------------------------------------------------------------------------------
    def _stat_of(self, path: str) -> tuple[FileStat | None, int]:
        if self.fs is None:
            return None, errno.ENOENT
        try:
            return self.fs.stat(path), 0
        except FileNotFoundError:
            return None, errno.ENOENT
        except NotADirectoryError:
            return None, errno.ENOTDIR
        except (OSError, ValueError):
            return None, errno.EINVAL

    async def _fail(self, message: str) -> None:
        data = message.encode()
        await self.write([_REQ.pack(b"FAIL", len(data)), data])

    # -- requests --------------------------------------------------------------------------------
    async def _stat(self, ident: bytes, path: str) -> None:
        st, err = self._stat_of(path)
        if ident == b"STAT":
            if st is None:
                await self.write([_STAT_V1.pack(b"STAT", 0, 0, 0)])
            else:
                await self.write([_STAT_V1.pack(b"STAT", st.mode, min(st.size, 0xFFFFFFFF), st.mtime)])
            return
        if st is None:
            await self.write([_STAT_V2.pack(ident, err, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)])
        else:
            await self.write([_STAT_V2.pack(ident, 0, *_stat_v2_fields(st))])

    async def _list(self, ident: bytes, path: str) -> None:
        names: list[str] = []
        if self.fs is not None:
            try:
                names = self.fs.listdir(path)
            except (OSError, ValueError):
                names = []
        pieces: list[bytes] = []
        for name in names:
            child = path.rstrip("/") + "/" + name
            st, _err = self._stat_of(child)
            if st is None:
                continue
            raw = name.encode("utf-8", "surrogateescape")
            if ident == b"LIST":
                pieces.append(_DENT_V1.pack(b"DENT", st.mode, min(st.size, 0xFFFFFFFF), st.mtime, len(raw)))
            else:
                pieces.append(_DENT_V2.pack(b"DNT2", 0, *_stat_v2_fields(st), len(raw)))
            pieces.append(raw)
        if ident == b"LIST":
            pieces.append(_DENT_V1.pack(b"DONE", 0, 0, 0, 0))
        else:
            pieces.append(_DENT_V2.pack(b"DONE", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        await self.write(pieces)

    async def _recv(self, path: str) -> None:
        if self.fs is None:
            await self._fail("No such file or directory")
            return
        try:
            data = self.fs.read_file(path)
        except FileNotFoundError:
            await self._fail("No such file or directory")
            return
        except IsADirectoryError:
            await self._fail("Is a directory")
            return
        except (OSError, ValueError) as exc:
            await self._fail(str(exc))
            return
        view = memoryview(data)
        pieces: list[bytes | memoryview] = []
        for offset in range(0, len(view), SYNC_DATA_MAX):
            chunk = view[offset : offset + SYNC_DATA_MAX]
            pieces.append(_REQ.pack(b"DATA", len(chunk)))
            pieces.append(chunk)
        pieces.append(_REQ.pack(b"DONE", 0))
        await self.write(pieces)

    async def _send(self, spec: str) -> bool:
        """Receive one file; False when the stream must end (protocol error)."""
        path, comma, mode_text = spec.rpartition(",")
        if not comma:
            path, mode_text = spec, "33188"
        try:
            mode = int(mode_text)
        except ValueError:
            await self._fail(f"bad mode in SEND: {mode_text!r}")
            return False
        parts: list[bytes] = []
        mtime = 0
        while True:
            ident, length = _REQ.unpack(await self.read_exact(_REQ.size))
            if ident == b"DATA":
                if length > SYNC_DATA_MAX:
                    await self._fail(f"DATA chunk of {length} bytes exceeds {SYNC_DATA_MAX}")
                    return False
                parts.append(await self.read_exact(length))
            elif ident == b"DONE":
                mtime = length
                break
            else:
                await self._fail(f"unexpected {ident!r} during SEND")
                return False
        if self.fs is None:
            await self._fail("Read-only file system")
            return True
        if stat_module.S_ISLNK(mode):
            await self._fail("symlinks are not supported")
            return True
        try:
            # fixed_push_mkdir: the device creates missing parent directories.
            self.fs.write_file(path, b"".join(parts), mode=mode & 0o7777, mtime=mtime or None, parents=True)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            await self._fail(f"{path}: {reason}")
            return True
        await self.write([_REQ.pack(b"OKAY", 0)])
        return True
