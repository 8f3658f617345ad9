"""Strings from data or the URL shown as text: every Markdown construct escaped, links only to the app."""

from __future__ import annotations

import re

import pytest

from searchtrace.dashboard.ui.text import JOINER, app_url, md, metric, ms

PROBES = ["[Click to re-login](https://evil.example/login)", "![t](https://evil.example/p.png)",
          "<img src=https://evil.example/x.png>", "https://evil.example/bare", "www.evil.example",
          "user@evil.example", ":red[alert] :material/warning: $x^2$", "# heading\n- item\n> quote",
          "<https://evil.example/auto>", "`code` **bold** _em_ ~~strike~~ \\[x]"]


@pytest.mark.parametrize("probe", PROBES)
def test_every_punctuation_character_is_escaped_and_nothing_is_lost(probe):
    out = md(probe)
    assert "\n" not in out
    shown = re.sub(r"\\(.)", r"\1", out).replace(JOINER, "")
    assert shown == " ".join(probe.split())  # what is shown is the text
    assert re.fullmatch(r"(?:\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~])*", out)  # each punctuation mark escaped


def test_markdown_renderer_shows_probes_as_text():
    markdown = pytest.importorskip("markdown_it")
    renderer = markdown.MarkdownIt("commonmark", {"linkify": False}).enable(["table", "strikethrough"])
    for probe in PROBES:
        html = renderer.render(md(probe))
        assert "<a " not in html and "<img" not in html and "<h1" not in html and "<li" not in html, (probe, html)


def test_bare_urls_and_addresses_are_broken_for_autolinkers():
    out = md("see HTTPS://evil.example, WWW.evil.example or me@evil.example")
    assert "://" not in out.replace("\\", "") and "www." not in out.lower().replace("\\", "")
    assert not re.search(r"@[\w-]", out.replace("\\", ""))


def test_app_links_are_relative_and_encoded():
    assert app_url("query", query="a b&c=d", run=None) == "query?query=a+b%26c%3Dd"
    assert app_url("compare") == "compare"
    assert not app_url("query", query="https://evil.example").startswith(("http", "//"))


def test_number_formats():
    assert metric(0.12345) == "0.123" and metric(None) == "n/a" and metric(float("nan")) == "n/a"
    assert ms(3.14159) == "3.1 ms" and ms(12_345.0) == "12.3 s" and ms(None) == "n/a"


def test_plain_heading_is_escaped_html_with_the_text_unchanged():
    from searchtrace.dashboard.ui.text import JOINER, plain_heading

    probe = "<img src=x onerror=alert(1)> [a](https://x.example) www.x.example a@b.example  two\nlines"
    out = plain_heading(probe)
    assert out == ("<h3>&lt;img src=x onerror=alert(1)&gt; [a](https://x.example) www.x.example a@b.example "
                   "two lines</h3>")
    assert JOINER not in out and plain_heading("q", level=2) == "<h2>q</h2>"
