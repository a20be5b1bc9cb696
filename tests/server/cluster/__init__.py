"""Unit tests of ``server.cluster``."""
