"""Unit tests of ``server.seats``."""
