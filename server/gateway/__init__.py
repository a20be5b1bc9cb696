"""One client's connection: limits, dispatch to lobby and rooms, a loop turn's reads and writes."""
