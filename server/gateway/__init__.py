"""One client's connection: the hello handshake, limits, dispatch to lobby and rooms."""
