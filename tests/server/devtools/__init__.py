"""Unit tests of ``server.devtools``."""
