"""The system tests' fixtures that live beside other tests: the Bolt server (``bolt_fixtures``)."""

from bolt_fixtures import bolt_server  # noqa: F401
