"""Sessions across connections: hello, resume, presence and the reconnect grace."""
