"""Rooms as actors (command in, effects out), their log entries and replay, the lobby."""
