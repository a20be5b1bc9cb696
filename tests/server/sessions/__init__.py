"""Unit tests of ``server.sessions``."""
