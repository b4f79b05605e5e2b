"""rt test: a fast test runner with a jest-style API and pytest-style functions."""
