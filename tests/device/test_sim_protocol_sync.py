"""VirtualFS and the sync: service: adb push / pull / ls and adbutils' sync, real adb server."""

from __future__ import annotations

import io
import os
import stat

import pytest

from simphone.fs import VirtualFS

# --- VirtualFS ------------------------------------------------------------------------------


def test_virtualfs_files_dirs_modes_and_mtimes():
    fs = VirtualFS(clock=lambda: 1_700_000_000.0)
    assert fs.is_dir("/sdcard/Download") and fs.is_dir("/data/local/tmp")
    fs.write_file("/sdcard/a.txt", b"hello", mode=0o644)
    st = fs.stat("/sdcard/a.txt")
    assert (st.is_file, st.size, stat.S_IMODE(st.mode), st.mtime) == (True, 5, 0o644, 1_700_000_000)
    fs.write_file("/sdcard/a.txt", b"!", append=True)
    assert fs.read_file("/sdcard/a.txt") == b"hello!"
    fs.write_file("/x/y/z.bin", b"\0\1", parents=True, mtime=5)
    assert fs.stat("/x/y/z.bin").mtime == 5
    assert fs.listdir("/x") == ["y"]
    assert fs.walk_files("/x") == ["/x/y/z.bin"]
    fs.remove("/x", recursive=True)
    assert not fs.exists("/x")


def test_virtualfs_errors_are_typed_oserrors():
    fs = VirtualFS()
    with pytest.raises(FileNotFoundError):
        fs.read_file("/sdcard/missing")
    with pytest.raises(FileNotFoundError):
        fs.write_file("/nope/file", b"")
    with pytest.raises(IsADirectoryError):
        fs.read_file("/sdcard")
    fs.write_file("/sdcard/f", b"")
    with pytest.raises(NotADirectoryError):
        fs.stat("/sdcard/f/child")
    with pytest.raises(FileExistsError):
        fs.mkdir("/sdcard")
    with pytest.raises(OSError):
        fs.remove("/sdcard")  # not empty
    with pytest.raises(ValueError):
        fs.stat("relative/path")
    with pytest.raises(TypeError):
        fs.write_file("/sdcard/s", "text, not bytes")  # type: ignore[arg-type]


def test_virtualfs_clear_returns_to_the_standard_layout():
    fs = VirtualFS()
    fs.write_file("/sdcard/Download/a", b"1")
    fs.clear()
    assert fs.listdir("/sdcard/Download") == []
    assert fs.is_dir("/sdcard/DCIM/Camera")


# --- through adb ---------------------------------------------------------------------------


def test_adb_push_and_pull_roundtrip(sim_phone, adb_server, tmp_path):
    payload = os.urandom(300_000)
    local = tmp_path / "photo.jpg"
    local.write_bytes(payload)
    os.chmod(local, 0o640)
    pushed = adb_server.run("-s", sim_phone.serial, "push", str(local), "/sdcard/Download/")
    assert pushed.returncode == 0, pushed.stderr
    assert sim_phone.phone.fs.read_file("/sdcard/Download/photo.jpg") == payload
    assert stat.S_IMODE(sim_phone.phone.fs.stat("/sdcard/Download/photo.jpg").mode) == 0o640

    back = tmp_path / "back.jpg"
    pulled = adb_server.run("-s", sim_phone.serial, "pull", "/sdcard/Download/photo.jpg", str(back))
    assert pulled.returncode == 0, pulled.stderr
    assert back.read_bytes() == payload


def test_adb_push_creates_missing_directories_and_pushes_trees(sim_phone, adb_server, tmp_path):
    tree = tmp_path / "album"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_bytes(b"A")
    (tree / "sub" / "b.txt").write_bytes(b"B")
    result = adb_server.run("-s", sim_phone.serial, "push", str(tree), "/sdcard/new/place/")
    assert result.returncode == 0, result.stderr
    fs = sim_phone.phone.fs
    # Like `cp -r`: into a directory that does not exist yet, the tree's contents land there.
    assert fs.walk_files("/sdcard/new") == ["/sdcard/new/place/a.txt", "/sdcard/new/place/sub/b.txt"]
    again = adb_server.run("-s", sim_phone.serial, "push", str(tree), "/sdcard/new/place/")
    assert again.returncode == 0, again.stderr
    assert fs.read_file("/sdcard/new/place/album/sub/b.txt") == b"B"  # now it exists: nested

    out = tmp_path / "pulled"
    out.mkdir()
    result = adb_server.run("-s", sim_phone.serial, "pull", "/sdcard/new/place", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "place" / "sub" / "b.txt").read_bytes() == b"B"
    assert (out / "place" / "album" / "a.txt").read_bytes() == b"A"


def test_pull_of_a_missing_file_fails_cleanly(sim_phone, adb_server, tmp_path):
    result = adb_server.run("-s", sim_phone.serial, "pull", "/sdcard/none.txt", str(tmp_path / "x"))
    assert result.returncode != 0
    assert "No such file or directory" in result.stderr
    assert sim_phone.device.shell("echo alive") == "alive"


def test_adbutils_sync_push_read_stat_list(sim_phone):
    sync = sim_phone.device.sync
    sync.push(io.BytesIO(b"note body"), "/sdcard/Documents/note.txt", mode=0o600)
    assert sim_phone.phone.fs.read_file("/sdcard/Documents/note.txt") == b"note body"
    assert sync.read_bytes("/sdcard/Documents/note.txt") == b"note body"
    info = sync.stat("/sdcard/Documents/note.txt")
    assert (info.size, stat.S_IMODE(info.mode)) == (9, 0o600)
    assert sync.exists("/sdcard/Documents/note.txt")
    assert not sync.exists("/sdcard/Documents/other.txt")
    names = [entry.path for entry in sync.list("/sdcard/Documents")]
    assert names == ["note.txt"]


def test_adb_ls_and_large_pull(sim_phone, adb_server, tmp_path):
    big = os.urandom(3 * 1024 * 1024 + 17)
    sim_phone.phone.fs.write_file("/sdcard/big.bin", big, mtime=1_600_000_000)
    listing = adb_server.run("-s", sim_phone.serial, "ls", "/sdcard")
    assert listing.returncode == 0
    assert any(line.endswith(" big.bin") for line in listing.stdout.splitlines())
    target = tmp_path / "big.bin"
    result = adb_server.run("-s", sim_phone.serial, "pull", "-a", "/sdcard/big.bin", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == big
    assert int(target.stat().st_mtime) == 1_600_000_000
