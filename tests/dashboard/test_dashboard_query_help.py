"""The help marks of the Query and Judge pages: one sentence each, and every key a page asks for is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from searchtrace.dashboard.ui.query_help import HELP, help_for

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"
#: The modules that draw the Query and Judge pages (and the Implicit page's shared picker).
PAGES = ("views/query.py", "ui/query_parts.py", "views/judge.py", "ui/judge_parts.py")


@pytest.mark.parametrize("key", sorted(HELP))
def test_each_help_is_one_sentence(key):
    text = HELP[key]
    starts = text[0].isupper() or text.split()[0].casefold() == key.casefold()  # or the metric's own name
    assert starts and text.endswith(".") and "\n" not in text
    assert not re.search(r"[.!?] [A-Z]", text[:-1]), f"{key}: more than one sentence"
    assert len(text) <= 160, f"{key}: {len(text)} characters, two lines of a tooltip at most"


def test_every_key_the_pages_ask_for_is_written():
    asked = {key for page in PAGES
             for key in re.findall(r"help_for\(\"([^\"]+)\"\)", (DASHBOARD / page).read_text(encoding="utf-8"))}
    asked |= {"ndcg@10", "recall@100", "bestScore", "noConfidentResults"}  # asked through a variable
    assert asked and not asked - set(HELP), sorted(asked - set(HELP))
    with pytest.raises(KeyError):
        help_for("no such figure")
