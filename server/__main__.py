"""``python -m server``: run the tali server (``--help`` lists the settings)."""

from server.app import main

main()
