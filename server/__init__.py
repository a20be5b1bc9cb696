"""The tali game server: the pure rules engine (``server.engine``) and, around it, the shell."""
