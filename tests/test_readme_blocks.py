"""The README's block reader (tests/readme_blocks.py): fences, headings, line numbers and commands."""

from __future__ import annotations

import pytest
from readme_blocks import README, read_blocks, split_commands

DOC = """# Title

Text.

## Setup

```bash
# a comment
$ searchtrace eval datasets/sample \\
    --out runs/a   # trailing
searchtrace gate --baseline a --candidate b
```

```toml
# not a command
a = 1
```
"""


def test_blocks_carry_their_language_line_heading_and_commands(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(DOC, encoding="utf-8")
    shell, toml = read_blocks(path)
    assert (shell.language, shell.line, shell.heading) == ("bash", 7, "Setup")
    assert shell.commands == ["searchtrace eval datasets/sample --out runs/a   # trailing",
                              "searchtrace gate --baseline a --candidate b"]
    assert shell.key == "Setup | searchtrace eval datasets/sample --out runs/a"
    assert (toml.language, toml.line, toml.commands) == ("toml", 14, [])
    assert toml.key == "Setup | # not a command"


def test_a_changed_command_is_read_as_changed(tmp_path):
    """A copy of the README with one flag changed: the block holds the changed command, as written."""
    text = README.read_text(encoding="utf-8")
    copy = tmp_path / "README.md"
    copy.write_text(text.replace("--fusion rrf --out runs/b2", "--fusion nope --out runs/b2"), encoding="utf-8")
    before = {b.key: b.commands for b in read_blocks()}
    after = {b.key: b.commands for b in read_blocks(copy)}
    changed = [k for k in before if before[k] != after[k]]
    assert changed == ["Labels for your own corpus | searchtrace queries from-traces mine-q --dataset corpora/mine --source h"]
    assert "searchtrace eval mine-q --fusion nope --out runs/b2" in after[changed[0]]


def test_a_continuation_with_nothing_after_it_and_an_unclosed_fence_are_errors(tmp_path):
    with pytest.raises(ValueError, match="continuation"):
        split_commands("searchtrace eval \\\n")
    path = tmp_path / "README.md"
    path.write_text("# T\n\n```bash\nls\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"README.md:3: .*never closed"):
        read_blocks(path)
