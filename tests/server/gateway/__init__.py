"""Unit tests of ``server.gateway``."""
