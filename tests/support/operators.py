"""The operator key the admin tests' services are configured with, and its authorization header."""

from __future__ import annotations

OPERATOR_KEY = "operator-key-for-the-tests-0123456789abcdef"


OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
