"""The published tali protocol: models, schemas and documents for client authors.

The version is ``protocol.codec.PROTOCOL_VERSION``.
"""
