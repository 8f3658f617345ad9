"""The floor's one door for names from outside a folder: plain relative parts, resolved inside, else refused naming the field."""

from __future__ import annotations

import os

import pytest

from searchtrace.errors import ValidationError
from searchtrace.safepaths import checked_part, inside


@pytest.mark.parametrize("name, why", [
    ("..", "'..'"),
    ("../../../../escaped-via-cache.txt", "'..'"),
    ("a/../b", "'..'"),
    (".", "'.'"),
    ("a/./b", "'.'"),
    ("", "empty"),
    ("a//b", "''"),
    ("a/", "''"),
    ("/etc/passwd", "absolute"),
    ("C:evil.txt", "absolute"),
    ("c:/windows/evil.txt", "absolute"),
    ("a\x00b", "NUL"),
    ("a\nb", "control"),
    ("a\x7fb", "control"),
    ("..\\..\\evil.txt", "backslash"),
    ("x" * 300, "255 bytes"),
    ("é" * 128, "255 bytes"),  # 256 bytes in UTF-8, 128 characters
    ("/".join(["x" * 200] * 6), "1024 bytes"),
    (None, "not a string"),
])
def test_a_name_that_is_no_plain_relative_name_is_refused_naming_the_field(tmp_path, name, why):
    with pytest.raises(ValidationError, match=why) as caught:
        inside(tmp_path, name, "file name")
    assert caught.value.field == "file name"
    assert caught.value.message.startswith("file name ")
    assert len(caught.value.message) < 200  # the value is cut, and repr-escaped
    assert "\x00" not in caught.value.message and "\n" not in caught.value.message


def test_a_plain_name_is_joined_to_its_folder(tmp_path):
    assert inside(tmp_path, "run.json", "file name") == tmp_path / "run.json"
    assert inside(tmp_path, "qrels/test.tsv", "split") == tmp_path / "qrels" / "test.tsv"
    assert inside(tmp_path / "not-yet", "a..b", "x") == tmp_path / "not-yet" / "a..b"  # '..' inside a part is fine
    assert inside(tmp_path, "x" * 255, "x").name == "x" * 255
    assert checked_part("run-1", "run") == "run-1"
    with pytest.raises(ValidationError, match="a path, not one name"):
        checked_part("a/b", "run")


def test_a_symlink_already_in_the_folder_that_leads_outside_is_refused(tmp_path):
    folder, outside = tmp_path / "folder", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    os.symlink(outside, folder / "link")
    os.symlink(outside / "file.txt", folder / "file.txt")
    for name in ("link/escaped.txt", "file.txt", "link"):
        with pytest.raises(ValidationError, match="leads outside") as caught:
            inside(folder, name, "file name")
        assert caught.value.field == "file name"
    (folder / "sub").mkdir()
    os.symlink(folder / "sub", folder / "inner")  # a symlink that stays inside is followed
    assert inside(folder, "inner/x", "file name") == folder / "inner" / "x"


def test_the_homes_run_and_index_folders_take_only_plain_names(tmp_path):
    from searchtrace.home import Home

    home = Home(tmp_path)
    assert home.index("sample", "abc") == home.indexes / "sample-abc"
    for dataset, key in (("../..", "abc"), ("sample", "../../x"), ("a/b", "k"), ("", "k")):
        with pytest.raises(ValidationError):
            home.index(dataset, key)
    for run_id in ("../x", "/abs", "a\x00b", "x" * 300):
        with pytest.raises(ValidationError, match="run"):
            home.run(run_id)
