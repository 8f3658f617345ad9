"""The dashboard tests' fixtures (``dashboard_fixtures``, shared with the browser tests in ``tests/system/dashboard``)."""

from dashboard_fixtures import browser, dashboard_home, live_home, mixed_home, run_ids, served, shots  # noqa: F401
