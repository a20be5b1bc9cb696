"""Accounts and their records, ratings, moderation, the operator and its API."""
