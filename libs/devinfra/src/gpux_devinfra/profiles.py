"""The CLI's profiles: a gateway URL and an API key under a name, saved by ``gpux login``.

They live in ``$XDG_CONFIG_HOME/gpux/config.toml`` (``~/.config/gpux`` when the variable is
unset, empty or relative, as the XDG spec says), one table per profile::

    [default]
    api = "http://127.0.0.1:8000"
    key = "gpx_..."

The file holds secrets, so it is never readable by anyone else, not even for an instant: the
directory is made 0700, and every write goes to a new file opened 0600 beside it, then
atomically replaces the old one (a crash leaves the old file or the new one, never half).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CONFIG_HOME_ENV = "XDG_CONFIG_HOME"
PROFILE_ENV = "GPUX_PROFILE"
DEFAULT_PROFILE = "default"
DIR_MODE = 0o700
FILE_MODE = 0o600
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A profile's name: a TOML bare key, so the file stays plain to read and edit."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ProfileError(Exception):
    """The config file cannot be read or written, or a name or value is not allowed."""


@dataclass(frozen=True)
class Profile:
    """What a profile saves: the gateway's URL and the API key (either may be missing)."""

    api: str | None = None
    key: str | None = None


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/gpux``, or ``~/.config/gpux`` unless that variable is absolute."""
    env = os.environ if environ is None else environ
    base = env.get(CONFIG_HOME_ENV, "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "gpux"


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the profiles are kept."""
    return config_dir(environ) / "config.toml"


def selected(name: str | None = None) -> str:
    """The profile to use: ``name`` if given, else ``$GPUX_PROFILE``, else ``default``."""
    chosen = name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if not _NAME.fullmatch(chosen):
        raise ProfileError(f"{chosen!r} is not a profile name (letters, digits, - and _)")
    return chosen


def read_profiles(path: Path | None = None) -> dict[str, Profile]:
    """Every saved profile by name (none when the file does not exist)."""
    where = path or config_path()
    try:
        with where.open("rb") as source:
            document = tomllib.load(source)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"cannot read {where}: {exc}") from None
    return {
        name: Profile(api=_text(table.get("api")), key=_text(table.get("key")))
        for name, table in document.items()
        if isinstance(table, dict)
    }


def load(name: str | None = None, path: Path | None = None) -> Profile:
    """The profile ``name`` (see ``selected``); an empty one when it was never saved."""
    return read_profiles(path).get(selected(name), Profile())


def save(name: str | None, profile: Profile, path: Path | None = None) -> Path:
    """Save ``profile`` under ``name`` (see ``selected``), keeping the others; the file's path."""
    where = path or config_path()
    profiles = read_profiles(where)
    profiles[selected(name)] = profile
    _write(where, render(profiles))
    return where


def remove(name: str | None = None, path: Path | None = None) -> bool:
    """Forget the profile ``name``; whether there was one."""
    where = path or config_path()
    profiles = read_profiles(where)
    if profiles.pop(selected(name), None) is None:
        return False
    _write(where, render(profiles))
    return True


def render(profiles: Mapping[str, Profile]) -> str:
    """The config file's text: a table per profile, its set values as TOML strings."""
    tables = []
    for name, profile in profiles.items():
        if not _NAME.fullmatch(name):
            raise ProfileError(f"{name!r} is not a profile name (letters, digits, - and _)")
        lines = [f"[{name}]"]
        lines += [
            f"{field} = {_string(value)}"
            for field, value in (("api", profile.api), ("key", profile.key))
            if value is not None
        ]
        tables.append("\n".join(lines) + "\n")
    return "\n".join(tables)


def _string(value: str) -> str:
    """``value`` as a TOML basic string: JSON's escapes are TOML's for text without control
    characters (refused: a URL or a key never holds one)."""
    if _CONTROL.search(value):
        raise ProfileError("a profile's values may not hold control characters")
    return json.dumps(value, ensure_ascii=False)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _write(path: Path, text: str) -> None:
    """``write_private`` in a directory 0700; a failure is a ``ProfileError``."""
    try:
        write_private(path, text, dir_mode=DIR_MODE)
    except OSError as exc:
        raise ProfileError(f"cannot write {path}: {exc}") from None


def write_private(path: Path, text: str, *, dir_mode: int | None = None) -> None:
    """Replace ``path`` with ``text``, readable by its owner only from the first byte: a
    temporary file created 0600 beside it (never wider), flushed to disk, then renamed over
    the old one, so a crash leaves the old file or the new one; a symbolic link at ``path``
    is replaced, never followed. The directory is made if missing (``dir_mode``: and set to
    that mode)."""
    if dir_mode is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        path.parent.mkdir(mode=dir_mode, parents=True, exist_ok=True)
        os.chmod(path.parent, dir_mode)
    # mkstemp opens with O_EXCL and mode 0600 under a fresh random name.
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    scratch = Path(name)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
