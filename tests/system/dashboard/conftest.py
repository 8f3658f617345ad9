"""The dashboard fixtures (``dashboard_fixtures``) for the tests that drive the app in a real browser."""

from dashboard_fixtures import browser, dashboard_home, live_home, mixed_home, run_ids, served, shots  # noqa: F401
