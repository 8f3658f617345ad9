"""The space an open needs: the holes Qdrant Edge's load makes real on tmpfs, the mirror's copies, a margin.

The arithmetic is checked on a shard of sparse files laid out as Qdrant Edge
lays out the sample's, with a fake ``statvfs`` and a fake filesystem type; the
real disk filling up is ``tests/system/test_open_space.py``. ``open_index`` and
the command line are checked on the sample's index with a disk said to be full.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from searchtrace.cli import main
from searchtrace.retriever.index import open_index
from searchtrace.retriever.index.open_space import MARGIN, check_open, filesystem_type, open_needs
from searchtrace.retriever.index.space import MB, SpaceNeeded

SEGMENT = Path("segments/5f1c")
CHUNK = SEGMENT / "vector_storage-dense/vectors/chunk_0.mmap"  # linked, loaded whole
PAYLOAD_INDEX = SEGMENT / "payload_index/k3-id-map/page_0.dat"  # linked, loaded whole
PAYLOAD_PAGE = SEGMENT / "payload_storage/page_0.dat"  # linked, read page by page
WAL = Path("wal/open-1")  # linked, untouched by a search
FLAGS = SEGMENT / "vector_storage-dense/deleted/flags_a.dat"  # copied into the mirror


class FakeStatvfs(NamedTuple):
    f_bavail: int
    f_frsize: int = 4096
    f_flag: int = 0


def _sparse(path: Path, size: int, written: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        out.write(b"\1" * written)
        out.truncate(size)
    return path


def _hole(path: Path) -> int:
    stat = path.stat()
    return stat.st_size - stat.st_blocks * 512


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index folder: a shard of sparse files as the sample's, and a sparse ``vectors.npy`` beside it."""
    folder = tmp_path / "indexes" / "sample-0123"
    _sparse(folder / "shard" / CHUNK, 32 * MB, written=MB)
    _sparse(folder / "shard" / PAYLOAD_INDEX, 4 * MB)
    _sparse(folder / "shard" / PAYLOAD_PAGE, 32 * MB, written=4096)
    _sparse(folder / "shard" / WAL, 32 * MB, written=8192)
    _sparse(folder / "shard" / FLAGS, MB, written=4096)
    _sparse(folder / "vectors.npy", 2 * MB, written=4096)
    if _hole(folder / "shard" / CHUNK) == 0:
        pytest.skip("this filesystem keeps no holes (sparse files are what is checked)")
    return folder


def test_where_mapped_holes_take_space_the_loaded_files_holes_and_the_copies_whole_are_counted(index):
    shard = index / "shard"
    needs = open_needs(shard, holes_take_space=True, mapped=[index / "vectors.npy"])
    assert needs.holes == {shard / CHUNK: _hole(shard / CHUNK), shard / PAYLOAD_INDEX: _hole(shard / PAYLOAD_INDEX),
                           index / "vectors.npy": _hole(index / "vectors.npy")}
    # the WAL and the payload storage's pages stay sparse through a load: not counted
    assert needs.needed == MARGIN + _hole(shard / CHUNK) + _hole(shard / PAYLOAD_INDEX) \
        + _hole(index / "vectors.npy") + MB  # the copied bitmap, its whole size


def test_elsewhere_only_the_copies_allocated_bytes_are_counted(index):
    shard = index / "shard"
    needs = open_needs(shard, holes_take_space=False, mapped=[index / "vectors.npy"])
    assert needs.holes == {}
    assert needs.needed == MARGIN + (shard / FLAGS).stat().st_blocks * 512


def test_a_disk_that_cannot_take_the_open_is_refused_naming_the_folder_and_both_sizes(index):
    shard = index / "shard"
    needs = open_needs(shard, holes_take_space=True)
    with pytest.raises(SpaceNeeded) as caught:
        check_open(shard, index, statvfs=lambda _: FakeStatvfs(f_bavail=(needs.needed - 1) // 4096),
                   fs_type=lambda _: "tmpfs")
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(index)
    free = (needs.needed - 1) // 4096 * 4096
    assert caught.value.strerror == (f"No space left to open the index: it needs about {needs.needed / MB:,.0f} MB, "
                                     f"{free / MB:,.0f} MB free")
    assert caught.value.needed == needs.needed and caught.value.free == free
    assert _hole(shard / CHUNK) > 0  # refused before anything was allocated


def test_an_unknown_filesystem_counts_the_holes_as_tmpfs_does(index):
    shard = index / "shard"
    with pytest.raises(SpaceNeeded):  # room for the copies and the margin, not for the holes
        check_open(shard, index, statvfs=lambda _: FakeStatvfs(f_bavail=(MARGIN + 2 * MB) // 4096),
                   fs_type=lambda _: None)
    needs = check_open(shard, index, statvfs=lambda _: FakeStatvfs(f_bavail=(MARGIN + 2 * MB) // 4096),
                       fs_type=lambda _: "ext4")
    assert needs.holes == {}


def test_a_read_only_disk_is_not_refused_nor_written(index):
    shard = index / "shard"  # the mirror goes to a temporary folder; nothing is written on this disk
    needs = check_open(shard, index, statvfs=lambda _: FakeStatvfs(f_bavail=0, f_flag=os.ST_RDONLY),
                       fs_type=lambda _: "tmpfs")
    assert needs.holes and _hole(shard / CHUNK) > 0


def test_when_it_fits_the_loaded_files_holes_are_allocated_before_the_load(index):
    shard = index / "shard"
    try:
        probe = os.open(shard / WAL, os.O_RDWR)
        os.posix_fallocate(probe, 0, 4096)
        os.close(probe)
    except OSError as exc:
        pytest.skip(f"no posix_fallocate on this filesystem: {exc}")
    check_open(shard, index, [index / "vectors.npy"], statvfs=lambda _: FakeStatvfs(f_bavail=1 << 30),
               fs_type=lambda _: "tmpfs")
    assert _hole(shard / CHUNK) <= 0 and _hole(shard / PAYLOAD_INDEX) <= 0 and _hole(index / "vectors.npy") <= 0
    assert _hole(shard / PAYLOAD_PAGE) > 0 and _hole(shard / WAL) > 0  # what the load leaves alone stays sparse


def _full_disk(monkeypatch):
    """Every ``statvfs`` says 1 MB is free (the open's estimate is a margin of 4 MB at least)."""
    monkeypatch.setattr(os, "statvfs", lambda _path: FakeStatvfs(f_bavail=MB // 4096))


def test_open_index_refuses_a_full_disk_before_mirroring_the_shard(sample_index_path, sample_config, monkeypatch):
    readers = sample_index_path.parent / ".readers"
    mirrors = set(readers.iterdir()) if readers.is_dir() else set()
    _full_disk(monkeypatch)
    with pytest.raises(SpaceNeeded) as caught:
        open_index(sample_index_path, sample_config)
    assert caught.value.filename == str(sample_index_path) and caught.value.free == MB
    assert caught.value.needed >= MARGIN
    assert (set(readers.iterdir()) if readers.is_dir() else set()) == mirrors  # no mirror made, none left


def test_search_on_a_full_disk_is_one_error_line_and_exit_1(sample_index_path, sample_config, monkeypatch, capsys):
    _full_disk(monkeypatch)
    code = main(["search", str(Path(__file__).resolve().parents[2] / "datasets" / "sample"), "tides",
                 "--home", str(sample_config.home.root)])
    err = capsys.readouterr().err
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # any other line is a notice
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith("error: No space left to open the index: it needs about "), errors
    assert f" MB, 1 MB free ({sample_index_path}): free some space" in errors[0], errors


MOUNTINFO = """\
22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:27 / /tmp/a\\040b rw,nosuid shared:5 - tmpfs tmpfs rw,size=143360k
31 22 0:28 / /tmp/a\\040b/deep rw - ext4 /dev/vdb rw
32 22 0:29 / /srv rw - ext4 /dev/vdc rw
33 22 0:30 / /srv rw - tmpfs tmpfs rw
"""


@pytest.mark.parametrize(("path", "kind"), [
    ("/home/user/.searchtrace/indexes", "ext4"),
    ("/tmp/a b/home/indexes", "tmpfs"),  # an escaped space in the mount point
    ("/tmp/a b/deep/indexes", "ext4"),  # the deepest mount holds it
    ("/tmp/a bc/indexes", "ext4"),  # a longer name is not inside /tmp/a b
    ("/srv/home", "tmpfs"),  # of two mounts on one point, the later one is seen
])
def test_the_filesystem_holding_a_path_is_read_from_mountinfo(tmp_path, path, kind):
    (tmp_path / "mountinfo").write_text(MOUNTINFO, encoding="utf-8")
    assert filesystem_type(Path(path), tmp_path / "mountinfo") == kind


def test_an_unreadable_mountinfo_names_no_filesystem(tmp_path):
    assert filesystem_type(tmp_path, tmp_path / "missing") is None


def test_allocating_a_files_holes_keeps_its_times(tmp_path):
    """The holes made real read as they did: the times a manifest records stay, so the next open does not see
    a changed file (on tmpfs, posix_fallocate moves the modification time; a concurrent reader saw it)."""
    from searchtrace.retriever.index.space import allocate

    path = tmp_path / "chunk_0.mmap"
    with path.open("wb") as f:
        f.truncate(4 << 20)  # a file of holes
    os.utime(path, ns=(10**18, 10**18))
    allocate(path, tmp_path, 4 << 20)
    assert path.stat().st_mtime_ns == 10**18 and path.read_bytes() == bytes(4 << 20)
