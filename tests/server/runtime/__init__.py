"""Unit tests of ``server.runtime``."""
