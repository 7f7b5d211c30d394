"""Which history a command uses, and how it is shown.

In order: the ``SCENARIST_HISTORY`` environment variable; ``history:`` in scenarist.yaml;
the default, ``.scenarist/history.db`` beside scenarist.yaml. A value is a PostgreSQL URL
(``postgresql://user@host:5432/db``), a SQLite file (relative to scenarist.yaml, or to the
current folder for the environment variable), or ``off`` (``history: false``): no history.

A URL is shown and kept (run.json) without its password, always; scenarist.yaml may not
hold one at all (E221): libpq reads it from ``PGPASSWORD`` or ``~/.pgpass``. A value with
``://`` and a scheme Scenarist does not know (``postgressql://``, ``mysql://``) is refused
(E221 in scenarist.yaml, :class:`~dsl.errors.NotReady` for ``SCENARIST_HISTORY``), never
taken for a SQLite file's name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from ..errors import NotReady

HISTORY_ENV = "SCENARIST_HISTORY"
DEFAULT_HISTORY = ".scenarist/history.db"
OFF = ("off", "false", "none", "no", "0")
SCHEMES = ("postgresql", "postgres")


class Location(msgspec.Struct, frozen=True):
    """A history store: a SQLite file or a PostgreSQL URL (which may hold a password, read
    from the environment: never shown, never written — :attr:`shown` is without it)."""

    kind: str  # sqlite | postgresql
    target: str  # the file's absolute path, or the URL as given

    @property
    def shown(self) -> str:
        return without_password(self.target) if self.kind == "postgresql" else self.target


def without_password(url: str) -> str:
    """The URL with its password (in the user part or a ``password=`` parameter) left out."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a PostgreSQL URL that cannot be read)"
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = "&".join(q for q in parts.query.split("&")
                     if q and not q.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def has_password(url: str) -> bool:
    return without_password(url) != urlunsplit(urlsplit(url)) if _readable(url) else False


def _readable(url: str) -> bool:
    try:
        urlsplit(url)
    except ValueError:
        return False
    return True


def is_url(value: str) -> bool:
    return value.split(":", 1)[0].lower() in SCHEMES and "://" in value


def scheme_problem(value: str) -> str | None:
    """What is wrong with a history written as a URL whose scheme Scenarist does not know
    (None: it is not one). The value itself is never repeated: it may hold a password."""
    if "://" not in value or is_url(value):
        return None
    scheme = value.split("://", 1)[0].strip()
    named = (f"the scheme '{scheme}'" if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme)
             else "no scheme")
    known = " or ".join(f"{s}://" for s in SCHEMES)
    return (f"the history is a URL with {named}, and Scenarist knows {known} (PostgreSQL) "
            "only; give postgresql://user@host/database, or a file name for SQLite")


def setting_problem(value: Any) -> str | None:
    """What is wrong with ``history:`` in scenarist.yaml, in words (None: nothing)."""
    if value is False or value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return "history must be a PostgreSQL URL, a file name, or false"
    problem = scheme_problem(value)
    if problem is not None:
        return problem
    if is_url(value) and has_password(value):
        return ("the history URL holds a password, and scenarist.yaml is shared; leave it "
                "out and set PGPASSWORD (or ~/.pgpass, or the whole URL in "
                f"{HISTORY_ENV}) where the run happens")
    return None


def location_from_setting(value: Any, root: Path) -> Location | None:
    """``history:`` of the suite at ``root`` (None when absent: the default)."""
    if value is None:
        value = DEFAULT_HISTORY
    if value is False or (isinstance(value, str) and value.strip().lower() in OFF):
        return None
    text = str(value).strip()
    if is_url(text):
        return Location("postgresql", text)
    return Location("sqlite", str((root / text).resolve()))


def location_for(suite_root: Path | None, setting: Any = None,
                 kept: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None) -> Location | None:
    """The history to use: ``SCENARIST_HISTORY``; else the suite's ``history:`` (when the
    suite is known); else what a run folder kept (``kept``: run.json's ``history``).
    NotReady when ``SCENARIST_HISTORY`` is a URL of a scheme Scenarist does not know."""
    env = os.environ if env is None else env
    value = env.get(HISTORY_ENV)
    if value is not None and value.strip():
        if value.strip().lower() in OFF:
            return None
        text = value.strip()
        problem = scheme_problem(text)
        if problem is not None:
            raise NotReady(f"{HISTORY_ENV} cannot be used: {problem}")
        return Location("postgresql", text) if is_url(text) else \
            Location("sqlite", str(Path(text).resolve()))
    if suite_root is not None:
        return location_from_setting(setting, suite_root)
    if kept and kept.get("kind") in ("sqlite", "postgresql") and kept.get("target"):
        return Location(str(kept["kind"]), str(kept["target"]))
    return None


def kept_json(location: Location | None) -> dict[str, str] | None:
    """What run.json keeps of the history it was written to (never a password)."""
    return None if location is None else {"kind": location.kind, "target": location.shown}
