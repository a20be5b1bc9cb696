"""Bots seated as players: a connection in the process, a view made from its frames."""
