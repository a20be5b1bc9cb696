"""Unit tests of ``server.rooms``."""
