"""Unit tests of ``server.net``."""
