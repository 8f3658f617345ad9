"""Where a team's shared store lives: a PostgreSQL URL, from ``--store`` or ``$SEARCHTRACE_STORE``.

Unset means the home folder (SQLite traces, run folders, judgments beside their
dataset). A URL is ``postgresql://user:password@host:port/database?sslmode=...``;
every libpq parameter in its query string passes through to the driver, and libpq's
own variables (``PGPASSWORD``, ``PGSSLMODE``, ``PGPASSFILE``...) apply as usual.
Credentials come only from the URL or the environment, and the URL is only ever
shown masked: :meth:`StoreUrl.masked`, also what ``str`` and ``repr`` give.
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from searchtrace.environment import SEARCHTRACE_STORE
from searchtrace.envvalues import text
from searchtrace.errors import ConfigError

__all__ = ["SCHEMES", "StoreUrl", "add_store_argument", "resolve_store_url"]

SCHEMES = ("postgresql", "postgres")
_MASK = "****"


@dataclass(frozen=True)
class StoreUrl:
    """A PostgreSQL connection URL; shown only with its password masked.

    Attributes:
        conninfo: the URL as given (with its credentials): what the driver connects with.
        origin: where it came from (``--store`` or ``$SEARCHTRACE_STORE``), for messages.
    """

    conninfo: str = field(repr=False)
    origin: str = "--store"

    def __post_init__(self) -> None:
        parts = urlsplit(self.conninfo)
        if parts.scheme not in SCHEMES:
            shown = _masked(self.conninfo)
            raise ConfigError(f"{self.origin} must be a postgresql:// URL (unset: the home folder), got {shown!r}",
                              field="store")
        try:
            parts.port  # noqa: B018 - a port that is no number raises here, naming nothing secret
        except ValueError:
            raise ConfigError(f"{self.origin} has a port that is not a number: {_masked(self.conninfo)!r}",
                              field="store") from None

    def masked(self) -> str:
        """The URL with its password (if any) replaced by ``****``."""
        return _masked(self.conninfo)

    def unsecret(self) -> str:
        """The URL without its password, to paste into a command (the password then comes from ``$PGPASSWORD``
        or ``~/.pgpass``; a masked one would be sent as ``****``)."""
        return _masked(self.conninfo, None)

    def command(self, words: str) -> str:
        """``searchtrace WORDS --store URL`` for a message: the URL without its password, quoted, to paste as it is
        (the password then comes from ``$PGPASSWORD`` or ``~/.pgpass``; a masked one would be sent as ``****``)."""
        return f"searchtrace {words} --store {shlex.quote(self.unsecret())}"

    def __str__(self) -> str:
        return self.masked()

    def __repr__(self) -> str:
        return f"StoreUrl({self.masked()!r})"


def _masked(url: str, mask: str | None = _MASK) -> str:
    """``url`` with its password replaced by ``mask``, or left out where ``mask`` is None."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}{':' + mask if colon and mask is not None else ''}@{hostport}"
    pairs = [(k, v) for k, _, v in (p.partition("=") for p in parts.query.split("&") if p)]
    query = "&".join(f"{k}={mask if k.lower() == 'password' else v}" for k, v in pairs
                     if mask is not None or k.lower() != "password")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def resolve_store_url(argument: str | None, environ: Mapping[str, str] | None = None) -> StoreUrl | None:
    """The store a command uses: ``--store`` wins over ``$SEARCHTRACE_STORE``; None: the home folder.

    Raises:
        ConfigError: a value that is not a postgresql:// URL, naming where it came from.
    """
    if argument is not None and argument.strip():
        return StoreUrl(argument.strip(), "--store")
    value = text(os.environ if environ is None else environ, SEARCHTRACE_STORE)
    return StoreUrl(value.strip(), f"${SEARCHTRACE_STORE}") if value else None


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--store URL`` flag of every command that reads or writes traces, runs or judgments."""
    parser.add_argument("--store", metavar="URL",
                        help=f"a postgresql:// URL of the store a team shares (default: ${SEARCHTRACE_STORE}, "
                             "else the home folder)")
