"""Durable rooms: the append-only logs, snapshots and sessions, in SQLite or PostgreSQL."""
