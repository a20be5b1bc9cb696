# A copy of protocol/__init__.py made by `python -m protocol.generate`: edit the original.
"""The tali protocol's models, as the server publishes them."""
