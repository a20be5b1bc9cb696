"""Unit tests of ``server.persistence``."""
