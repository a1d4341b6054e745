"""The CLI's profiles: where they are kept, that nobody else can read them, and what they hold."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpux_devinfra import profiles
from gpux_devinfra.profiles import Profile, ProfileError

pytestmark = pytest.mark.unit

KEY = "gpx_01KEY_secret"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: the modes must come from the code, not from it."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_the_file_is_under_xdg_config_home(config_file: Path) -> None:
    assert profiles.config_path() == config_file
    assert config_file.parent.name == "gpux"


def test_without_an_absolute_xdg_config_home_it_is_under_dot_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for value in ("", "relative/dir"):
        monkeypatch.setenv("XDG_CONFIG_HOME", value)
        assert profiles.config_path() == tmp_path / ".config" / "gpux" / "config.toml"


def test_a_saved_profile_is_read_back_and_the_others_are_kept(config_file: Path) -> None:
    profiles.save(None, Profile("http://127.0.0.1:8000", KEY))
    profiles.save("prod", Profile("https://api.gpux.dev", "gpx_other"))
    assert profiles.load() == Profile("http://127.0.0.1:8000", KEY)
    assert profiles.load("prod") == Profile("https://api.gpux.dev", "gpx_other")
    assert profiles.load("never") == Profile()
    assert config_file.read_text().startswith('[default]\napi = "http://127.0.0.1:8000"\n')


def test_the_file_is_0600_and_its_directory_0700_whatever_the_umask(
    config_file: Path, open_umask: None
) -> None:
    profiles.save(None, Profile(key=KEY))
    assert mode(config_file) == 0o600
    assert mode(config_file.parent) == 0o700
    profiles.save("two", Profile(key=KEY))
    assert mode(config_file) == 0o600


def test_an_existing_open_directory_is_closed(config_file: Path, open_umask: None) -> None:
    config_file.parent.mkdir(parents=True, mode=0o755)
    profiles.save(None, Profile(key=KEY))
    assert mode(config_file.parent) == 0o700


def test_the_key_is_never_in_a_file_anyone_else_could_read(
    config_file: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new text is written to a file that is 0600 from its creation, then renamed."""
    renamed: list[int] = []
    replace = os.replace

    def checked(source: str | Path, target: str | Path) -> None:
        assert KEY in Path(source).read_text()
        renamed.append(mode(Path(source)))
        replace(source, target)

    monkeypatch.setattr(os, "replace", checked)
    profiles.save(None, Profile(key=KEY))
    assert renamed == [0o600]
    assert [p.name for p in config_file.parent.iterdir()] == ["config.toml"]


def test_gpux_profile_selects_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    profiles.save("staging", Profile(key=KEY))
    monkeypatch.setenv("GPUX_PROFILE", "staging")
    assert profiles.selected() == "staging"
    assert profiles.load() == Profile(key=KEY)
    assert profiles.selected("other") == "other"


def test_values_that_need_escaping_round_trip() -> None:
    odd = 'gpx_"quoted"\\back'
    profiles.save(None, Profile("http://h/ä", odd))
    assert profiles.load() == Profile("http://h/ä", odd)


def test_names_and_values_that_cannot_be_kept_plainly_are_refused(config_file: Path) -> None:
    with pytest.raises(ProfileError, match="not a profile name"):
        profiles.save("a b", Profile(key=KEY))
    with pytest.raises(ProfileError, match="control characters"):
        profiles.save(None, Profile(key="gpx_\nx"))
    assert not config_file.exists()


def test_remove_forgets_one_profile() -> None:
    profiles.save(None, Profile(key=KEY))
    profiles.save("prod", Profile(key="gpx_other"))
    assert profiles.remove() is True
    assert profiles.remove() is False
    assert profiles.read_profiles() == {"prod": Profile(key="gpx_other")}


def test_a_broken_file_is_an_error_naming_it(config_file: Path) -> None:
    config_file.parent.mkdir(parents=True)
    config_file.write_text("[default\n")
    with pytest.raises(ProfileError, match=r"cannot read .*config\.toml"):
        profiles.load()
