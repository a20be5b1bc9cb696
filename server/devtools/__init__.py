"""Generators of the checked-in files (README settings, client facts) and the demo."""
