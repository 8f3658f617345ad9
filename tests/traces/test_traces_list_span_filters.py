"""``searchtrace traces list --doc ID`` and ``--attribute KEY=VALUE``, on the home's file and on the shared
store: the store's own filter, over every stored trace; a malformed ``--attribute`` is refused."""

from __future__ import annotations

import json

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.cli import main
from searchtrace.home import Home
from searchtrace.traces import open_trace_store

S = 1000 * MS


def _six_hundred(home, url=None) -> list[str]:
    """600 searches in the home's store (the shared one with ``url``): the oldest names document 'needle', the
    second oldest asks about a ferry; their trace ids, oldest first."""
    searches = [FakeSearch(start_ns=T0 + i * S, candidates=3, query="Ferry times" if i == 1 else f"hay {i}",
                           results=(("needle" if i == 0 else f"hay{i}", "high", 0.9),)) for i in range(600)]
    spans, ids = record(*searches)
    store = open_trace_store(Home(home).traces, url)
    store.write(spans)
    store.close()
    return ids


@pytest.fixture(params=["sqlite", "postgres"])
def stored(request, tmp_path):
    """A home and the arguments that name its store (the shared one for postgres), holding the 600 searches."""
    home = tmp_path / "home"
    url = request.getfixturevalue("pg_db").url if request.param == "postgres" else None
    ids = _six_hundred(home, url)
    return ["--home", str(home), *(["--store", url.conninfo] if url else [])], ids


def _listed(capsys, *args: str) -> list[str]:
    assert main(["traces", "list", *args, "--format", "json"]) == 0
    return [t["trace_id"] for t in json.loads(capsys.readouterr().out)]


def test_list_by_document_and_by_attribute_covers_the_whole_store(stored, capsys):
    where, ids = stored
    assert _listed(capsys, *where, "--doc", "needle") == [ids[0]]  # the oldest of 600: beyond any first page
    assert _listed(capsys, *where, "--attribute", "input.value=FERRY") == [ids[1]]
    assert _listed(capsys, *where, "--attribute", "input.value=hay", "--limit", "2") == [ids[599], ids[598]]
    assert _listed(capsys, *where, "--doc", "needle", "--attribute", "input.value=ferry") == []


def test_an_attribute_without_a_key_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["traces", "list", "--home", str(tmp_path), "--attribute", "no-equals-sign"])
    assert exit_.value.code == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_the_dashboard_covers_the_whole_store_on_the_homes_file_too(tmp_path):
    """The dashboard reads the store's own filters over every trace on the home's file as on the shared store
    (tests/dashboard/test_dashboard_shared_store.py): the document filter along ``trace_docs`` (schema 6), the
    attribute filter read from the spans until the page is full, its count stopped at COUNT_LIMIT."""
    from dataclasses import replace

    from searchtrace.dashboard import data

    home = tmp_path / "home"
    ids = _six_hundred(home)
    flt = replace(data.SEARCHES, kind=None, limit=None)
    assert data.list_traces(home, replace(flt, doc_id="needle")).trace_id.tolist() == [ids[0]]  # the oldest
    assert data.count_traces(home, replace(flt, doc_id="needle")) == 1
    assert data.list_traces(home, replace(flt, attribute=("input.value", "ferry"))).trace_id.tolist() == [ids[1]]
    assert data.count_traces(home, replace(flt, attribute=("input.value", "hay"))) == 599  # all but the ferry
    assert data.list_traces(home, replace(flt, doc_id="hay598")).trace_id.tolist() == [ids[598]]
