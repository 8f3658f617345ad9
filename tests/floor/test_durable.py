"""The floor's atomic writes: the old file or the new one, never a half-written one or a stray temporary."""

from __future__ import annotations

import errno
import os

import pytest

from searchtrace.durable import fsync_tree, write_atomic


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")

    def half(tmp):
        tmp.write_text("new, but cut")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(path, half)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_write_makes_the_folder_and_replaces_the_file_whole(tmp_path):
    path = tmp_path / "a" / "b" / "stamp"
    write_atomic(path, lambda tmp: tmp.write_bytes(b"1"))
    write_atomic(path, lambda tmp: tmp.write_bytes(b"22"))
    assert path.read_bytes() == b"22" and [p.name for p in path.parent.iterdir()] == ["stamp"]
    fsync_tree(tmp_path / "a")  # every file and folder under it opens and flushes


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_error_names_the_file_being_written(tmp_path):
    """A write on a full disk raises ENOSPC naming no file; write_atomic gives it the target's name."""
    def full(tmp):
        with open("/dev/full", "wb") as fh:
            fh.write(b"x")

    with pytest.raises(OSError) as raw:
        full(None)
    assert raw.value.errno == errno.ENOSPC and raw.value.filename is None
    target = tmp_path / "settings.json"
    target.write_text("old")
    with pytest.raises(OSError) as named:
        write_atomic(target, full)
    assert named.value.errno == errno.ENOSPC and named.value.filename == str(target)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["settings.json"]
