"""Unit tests of ``server.identity``."""
