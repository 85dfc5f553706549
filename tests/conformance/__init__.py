"""Real-package conformance: isolated venvs, checker scripts, and the tests that run them."""
