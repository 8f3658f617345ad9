"""The commands a message tells one to paste name the store without its password: a masked one would be sent."""

from __future__ import annotations

from searchtrace.database import StoreUrl


def test_a_printed_command_leaves_the_password_out_and_keeps_the_rest():
    url = StoreUrl("postgresql://team:s3cret@db.example:5433/runs?sslmode=require&password=other&application_name=x")
    command = url.command("store migrate")
    assert command == ("searchtrace store migrate --store "
                       "'postgresql://team@db.example:5433/runs?sslmode=require&application_name=x'")
    assert "s3cret" not in url.masked() and "other" not in url.masked() and "****" in url.masked()
    assert StoreUrl("postgresql://localhost/db").command("store status") == (
        "searchtrace store status --store postgresql://localhost/db")
