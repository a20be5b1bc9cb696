"""The published tali protocol: models, schemas and documents for client authors."""

PROTOCOL_VERSION = "1.0"
