"""Sign-in tokens as an operator's site would make them (PyJWT), for the tests of sign-in."""

from __future__ import annotations

import base64
import json
import secrets
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from jwt.algorithms import OKPAlgorithm, RSAAlgorithm

SECRET = "a-secret-shared-with-the-site-0123456789"
ISSUER = "https://games.example.org"
AUDIENCE = "tali"


def claims(account: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    found: dict[str, Any] = {
        "sub": account,
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + 600,
        "jti": secrets.token_hex(8),
    }
    if name is not None:
        found["name"] = name
    found.update(extra)
    return {k: v for k, v in found.items() if v is not None}


def hs256(account: str, name: str | None = None, *, secret: str = SECRET, **extra: Any) -> str:
    return jwt.encode(claims(account, name, **extra), secret, algorithm="HS256")


def segment(data: Any) -> str:
    """``data`` as one segment of a token: its JSON, base64url without padding."""
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def signed(payload: bytes, secret: str = SECRET) -> str:
    """A token signed with the site's secret whose payload is ``payload`` as it is (not
    necessarily claims, nor JSON)."""
    return jwt.PyJWS().encode(payload, secret, algorithm="HS256")


class KeySet:
    """An RSA and an Ed25519 key pair, and their public JWKS (written to ``path``)."""

    def __init__(self, path: Path) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ed = ed25519.Ed25519PrivateKey.generate()
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key()))
        ed_jwk = json.loads(OKPAlgorithm.to_jwk(self.ed.public_key()))
        rsa_jwk.update(kid="rsa-1", alg="RS256", use="sig")
        ed_jwk.update(kid="ed-1", alg="EdDSA", use="sig")
        self.path = path
        path.write_text(json.dumps({"keys": [rsa_jwk, ed_jwk]}))

    def rs256(
        self, account: str, name: str | None = None, *, kid: str = "rsa-1", **extra: Any
    ) -> str:
        return jwt.encode(claims(account, name, **extra), self.rsa, algorithm="RS256",
                          headers={"kid": kid})  # fmt: skip

    def eddsa(
        self, account: str, name: str | None = None, *, kid: str = "ed-1", **extra: Any
    ) -> str:
        return jwt.encode(claims(account, name, **extra), self.ed, algorithm="EdDSA",
                          headers={"kid": kid})  # fmt: skip


def stranger_rs256(account: str) -> str:
    """A token signed by a key the server does not know, under a kid it does: forged."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode(claims(account), key, algorithm="RS256", headers={"kid": "rsa-1"})
