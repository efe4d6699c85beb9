"""Shared test helpers: imported by tests, never a test module."""
