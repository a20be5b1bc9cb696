"""Sign-in at ``hello``: a token from the operator's site names the player.

The operator's site signs a short-lived JWT for a player who logged in there;
the client passes it in ``hello`` (``auth``); the server checks it with PyJWT
and opens a session that belongs to the token's account. Two kinds of keys:

- ``auth_secret``: an HS256 secret the site and the server share;
- ``auth_jwks``: the site's public keys (RS256, ES256, EdDSA), a JWKS file
  (read again when it changes: keys can rotate without a restart) or an
  ``https://`` URL (fetched off the event loop, cached, fetched again for a
  ``kid`` it does not know).

Claims: ``sub`` is the account (stable, whatever the player's name), ``name``
(or ``preferred_username``) the display name, ``roles`` a list that may hold
``moderator`` and ``admin``; ``exp`` and ``jti`` are required, ``iss`` and
``aud`` checked against the settings. Each token opens one session: its
``jti`` is remembered until it expires (``Replays``, shared by the nodes of a
cluster through Redis), and a second ``hello`` with it is refused. Every
refusal has its own error code (``AuthRefused.code``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from protocol.errors import ErrorCode as WireCode
from server.identity import names
from server.identity.session import Identity

ROLES = frozenset({"moderator", "admin"})
HMAC_ALGORITHMS = ("HS256",)
KEY_ALGORITHMS = ("RS256", "ES256", "EdDSA")
MAX_ACCOUNT = 64
MAX_LIFETIME = 366 * 86400.0
"""How far ahead a token's ``exp`` may be: its ``jti`` is remembered until then (in the store,
and with several nodes in Redis, whose expiry has a bound), and a token opens one session."""
JWKS_LIFESPAN = 300
"""Seconds the keys fetched from a JWKS URL are trusted before they are fetched again."""


class AuthRefused(Exception):
    """A sign-in token was refused: ``code`` says why (a stable protocol error code)."""

    def __init__(self, code: WireCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class SignIn:
    """A token that checked out: who it names, and its id and expiry (for replays)."""

    identity: Identity
    jti: str
    expires: float


class Keys:
    """The site's public keys, from a JWKS file or URL."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._url = source.startswith(("https://", "http://"))
        self._client = jwt.PyJWKClient(source, lifespan=JWKS_LIFESPAN) if self._url else None
        self._path = None if self._url else Path(source)
        self._mtime: float | None = None
        self._set: jwt.PyJWKSet | None = None
        if self._path is not None:
            self._load()

    def _load(self) -> None:
        assert self._path is not None
        mtime = self._path.stat().st_mtime
        if mtime != self._mtime:
            self._set = jwt.PyJWKSet.from_json(self._path.read_text())
            self._mtime = mtime

    async def key(self, token: str, kid: str | None) -> jwt.PyJWK:
        """The key that signed ``token`` (by its ``kid``; the only one if it names none)."""
        if self._client is not None:
            client = self._client
            try:
                return await asyncio.to_thread(client.get_signing_key_from_jwt, token)
            except jwt.PyJWKClientConnectionError as exc:
                raise AuthRefused(
                    WireCode.AUTH_UNAVAILABLE, f"the key set is out of reach: {exc}"
                ) from None
            except jwt.PyJWKClientError as exc:
                raise AuthRefused(WireCode.AUTH_UNKNOWN_KEY, str(exc)) from None
            except (ValueError, jwt.PyJWKSetError) as exc:  # the site answered no key set
                raise AuthRefused(
                    WireCode.AUTH_UNAVAILABLE, f"the key set cannot be read: {exc}"
                ) from None
        try:
            self._load()  # a file changed since: keys rotated
        except (OSError, ValueError, jwt.PyJWKSetError) as exc:  # gone, or not a key set
            raise AuthRefused(
                WireCode.AUTH_UNAVAILABLE, f"the key set cannot be read: {exc}"
            ) from None
        assert self._set is not None
        keys = self._set.keys
        if kid is None:
            if len(keys) == 1:
                return keys[0]
            raise AuthRefused(WireCode.AUTH_UNKNOWN_KEY, "the token names no key (kid)")
        for key in keys:
            if key.key_id == kid:
                return key
        raise AuthRefused(WireCode.AUTH_UNKNOWN_KEY, f"no signing key {kid[:64]!r}")


class Verifier:
    """Checks sign-in tokens against the settings' secret or keys, issuer and audience."""

    def __init__(
        self,
        *,
        secret: str | None,
        jwks: str | None,
        issuer: str | None,
        audience: str | None,
        leeway: float,
    ) -> None:
        self._secret = secret
        self._keys = Keys(jwks) if jwks else None
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway

    async def verify(self, token: str) -> SignIn:
        """The sign-in ``token`` stands for; ``AuthRefused`` if it is refused."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthRefused(WireCode.AUTH_INVALID, "the token is not a JWT") from None
        algorithm = header.get("alg")
        kid = header.get("kid")
        key: Any
        if algorithm in HMAC_ALGORITHMS and self._secret is not None:
            key, algorithms = self._secret, list(HMAC_ALGORITHMS)
        elif algorithm in KEY_ALGORITHMS and self._keys is not None:
            key = await self._keys.key(token, kid if isinstance(kid, str) else None)
            algorithms = list(KEY_ALGORITHMS)
        else:
            raise AuthRefused(
                WireCode.AUTH_INVALID, f"tokens signed with {str(algorithm)[:16]!r} are not taken"
            )
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=self._audience,
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["exp", "sub", "jti"]},
            )
        except (jwt.ExpiredSignatureError, jwt.ImmatureSignatureError) as exc:
            raise AuthRefused(WireCode.AUTH_EXPIRED, f"the token {exc}".lower()) from None
        except jwt.InvalidAudienceError:
            raise AuthRefused(
                WireCode.AUTH_WRONG_AUDIENCE, "the token is for another audience"
            ) from None
        except jwt.InvalidIssuerError:
            raise AuthRefused(
                WireCode.AUTH_WRONG_ISSUER, "the token is from another issuer"
            ) from None
        except jwt.InvalidSignatureError:
            raise AuthRefused(
                WireCode.AUTH_INVALID, "the token's signature does not verify"
            ) from None
        except jwt.PyJWTError as exc:
            raise AuthRefused(WireCode.AUTH_INVALID, f"the token is refused: {exc}") from None
        try:
            expires = float(claims["exp"])  # an integer, PyJWT checked: perhaps past any float
        except OverflowError:
            raise AuthRefused(WireCode.AUTH_INVALID, "the token's exp is out of range") from None
        if expires - time.time() > MAX_LIFETIME:
            raise AuthRefused(
                WireCode.AUTH_INVALID, "the token's exp is more than 366 days ahead"
            ) from None
        return SignIn(_identity(claims), str(claims["jti"])[:128], expires)


def _identity(claims: dict[str, Any]) -> Identity:
    account = claims["sub"]
    if not isinstance(account, str) or not 1 <= len(account) <= MAX_ACCOUNT:
        raise AuthRefused(WireCode.AUTH_INVALID, "sub must be a string of 1..64 characters")
    if not all(c.isascii() and (c.isalnum() or c in "_.:@|-") for c in account):
        raise AuthRefused(WireCode.AUTH_INVALID, "sub may hold only A-Z a-z 0-9 _ . : @ | -")
    if account.startswith("bot:"):
        raise AuthRefused(WireCode.AUTH_INVALID, "accounts named bot:... are the server's bots")
    raw = claims.get("name") or claims.get("preferred_username") or account
    try:
        name = names.normalise(str(raw))
    except names.NameRefused:
        name = names.normalise(account[:24])
    roles = claims.get("roles", [])
    if isinstance(roles, str):
        roles = roles.split()
    if not isinstance(roles, list):
        raise AuthRefused(WireCode.AUTH_INVALID, "roles must be a list of names")
    # What is not one of our roles' names is ignored, an unknown name or a site's numeric id
    # alike: such tokens signed in before, and an upgrade must not refuse them.
    return Identity(account, name, frozenset(r for r in roles if isinstance(r, str) and r in ROLES))


class Replays:
    """The ids of the tokens used, each until it expires: a token opens one session.

    ``shared`` (a cluster: Redis ``SET NX``) decides across nodes; without it this
    process decides, and ``remember`` writes each use to the store so that a
    restart still refuses it (``load`` reads them back)."""

    def __init__(
        self,
        wall: Callable[[], float] = time.time,
        remember: Callable[[str, float], None] = lambda jti, expires: None,
        shared: Callable[[str, float], Awaitable[bool]] | None = None,
    ) -> None:
        self._wall = wall
        self._remember = remember
        self._used: dict[str, float] = {}
        self.shared: Callable[[str, float], Awaitable[bool]] = shared or _here_alone
        """``(jti, seconds) -> first use?``, atomic for every node (``server.cluster``); alone,
        always True: this process decides."""

    def load(self, used: dict[str, float]) -> None:
        now = self._wall()
        self._used.update({jti: exp for jti, exp in used.items() if exp > now})

    async def first_use(self, jti: str, expires: float) -> bool:
        now = self._wall()
        if len(self._used) > 1024:
            self._used = {j: e for j, e in self._used.items() if e > now}
        if self._used.get(jti, 0.0) > now:
            return False
        if not await self.shared(jti, max(1.0, expires - now)):
            return False
        self._used[jti] = expires
        self._remember(jti, expires)
        return True


async def _here_alone(jti: str, seconds: float) -> bool:
    return True


def verifier(config: Any) -> Verifier | None:
    """The verifier the settings (``ServerConfig``) ask for; None: no sign-in."""
    if not config.auth_enabled:
        return None
    secret = config.auth_secret.get_secret_value() if config.auth_secret is not None else None
    return Verifier(
        secret=secret,
        jwks=config.auth_jwks,
        issuer=config.auth_issuer,
        audience=config.auth_audience,
        leeway=config.auth_leeway_seconds,
    )


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header."""
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
