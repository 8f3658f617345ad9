"""The graph tests' fixtures: the Bolt server (``bolt_fixtures``, shared with ``tests/system``)."""

from bolt_fixtures import bolt_server  # noqa: F401
