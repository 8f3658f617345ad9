"""A target's secrets kept out of the run folder, the traces and the output.

A target named by a URL may carry a secret in it: a password or token in its user
part (``https://user:TOKEN@host``) or a query parameter (``?api_key=...``). What the
run records and prints of the target is :func:`mask_target`'s text, in the style of
the shared store's URL (``****`` where the secret was, the rest as given); a message
that quotes the raw URL (a transport's error) goes through :func:`redact` first.
Header values from environment variables never reach a message: only the variable's
name is part of a target's spec.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["MASK", "mask_target", "redact", "secrets_of"]

MASK = "****"
"""What stands where a secret was."""

_SECRET_KEY = re.compile(r"pass|pwd|token|secret|key|auth|sig|cred|session", re.IGNORECASE)
"""Query parameter names whose values are secrets (``api_key``, ``access_token``, ``password``, ``sig``, ...)."""


def _is_url(spec: str) -> bool:
    return "://" in spec


def secrets_of(spec: str) -> tuple[str, ...]:
    """The secret substrings of ``spec``: its URL's user part and secret query values (none for ``module:fn``)."""
    if not _is_url(spec):
        return ()
    parts = urlsplit(spec)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        found.append(password if colon else user)  # a bare user part is often a token (https://TOKEN@host)
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if value and _SECRET_KEY.search(name):
            found.append(value)
    return tuple(s for s in found if s)


def mask_target(spec: str) -> str:
    """``spec`` as the run records and shows it: each secret of its URL replaced by :data:`MASK`."""
    if not _is_url(spec):
        return spec
    parts = urlsplit(spec)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}"
    pairs = [p.partition("=") for p in parts.query.split("&") if p]
    query = "&".join(f"{k}{eq}{MASK if v and _SECRET_KEY.search(k) else v}" for k, eq, v in pairs)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every occurrence of each secret replaced by :data:`MASK` (longest first, so none is left
    half shown)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
