"""``searchtrace collect``'s options refused before anything starts: a ``--doc-id-key`` with an empty service
or key names the option and what to give."""

from __future__ import annotations

import pytest

from searchtrace.cli import main


@pytest.mark.parametrize("given", ["", "svc=", "=key", " = "])
def test_an_empty_doc_id_key_or_service_is_refused(given, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["collect", "--doc-id-key", given])
    assert stopped.value.code == 2
    assert f"--doc-id-key: {given!r}: give KEY or SERVICE=KEY, neither empty" in capsys.readouterr().err
