"""``python -m server``: for now, a console demo of the rules engine."""

from server.demo import main

main()
