"""`gpux login|logout|whoami|signup|keys` against a fake gateway, with profiles in a fresh
``$XDG_CONFIG_HOME``; and where every command takes its key and gateway from."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from typer.testing import Result

from gpux_devinfra import cli_account, cli_leases, profiles
from gpux_devinfra.profiles import Profile, ProfileError
from gpux_devinfra.testing.cli import (
    KEY,
    FakeGateway,
    answer,
    line_with,
    problem,
    run,
    use_transport,
)

pytestmark = pytest.mark.unit

STAMP = "2025-01-01T00:00:00Z"
ACCOUNT = {
    "id": "01ACC",
    "name": "Acme GPUs",
    "roles": ["buyer", "seller"],
    "status": "active",
    "created_at": STAMP,
}
KEY_OUT = {
    "id": "01KEY",
    "name": "api key",
    "prefix": "gpx_01KEY",
    "scopes": ["read", "offers:write"],
    "created_at": STAMP,
    "revoked_at": None,
}
REVOKED = {**KEY_OUT, "id": "01OLD", "name": "laptop", "revoked_at": "2025-02-01T10:00:00Z"}
NEW_KEY = "gpx_01NEW_secret"
LEASES: dict[str, Any] = {"items": [], "next_cursor": None}


def _me(request: httpx.Request) -> httpx.Response:
    if request.headers.get("authorization") != f"Bearer {KEY}":
        return httpx.Response(401, json=problem(401, "Unauthorized", "unknown key", "unauthorized"))
    return httpx.Response(200, json=ACCOUNT)


def _signed_up(request: httpx.Request) -> httpx.Response:
    sent = json.loads(request.content)
    account = {**ACCOUNT, "name": sent["name"], "roles": sent["roles"]}
    return httpx.Response(201, json={"api_key": NEW_KEY, "key": KEY_OUT, "account": account})


def _key_created(request: httpx.Request) -> httpx.Response:
    sent = json.loads(request.content)
    key = {**KEY_OUT, "id": "01NEW", "name": sent.get("name", "api key")}
    return httpx.Response(201, json={"api_key": NEW_KEY, "key": key})


ROUTES = {
    ("GET", "/v1/accounts/me"): _me,
    ("POST", "/v1/accounts"): _signed_up,
    ("GET", "/v1/accounts/me/keys"): answer(200, {"items": [KEY_OUT, REVOKED]}),
    ("POST", "/v1/accounts/me/keys"): _key_created,
    ("DELETE", "/v1/accounts/me/keys/01OLD"): lambda _: httpx.Response(204),
    ("GET", "/v1/leases"): answer(200, LEASES),
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    gateway = FakeGateway(ROUTES)
    use_transport(monkeypatch, gateway)
    return gateway


APP = typer.Typer()
cli_account.register(APP)
cli_leases.register(APP)


def gpux(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    return run(*args, env=env, stdin=stdin, app=APP)


def saved() -> dict[str, Profile]:
    return profiles.read_profiles()


def test_login_checks_the_key_before_it_saves_it(fake: FakeGateway, config_file: Path) -> None:
    result = gpux("login", "--key", KEY, "--api", "http://gw.example:9000")
    assert result.exit_code == 0, result.output
    assert [(r.method, str(r.url)) for r in fake.requests] == [
        ("GET", "http://gw.example:9000/v1/accounts/me")
    ]
    assert fake.last.headers["authorization"] == f"Bearer {KEY}"
    assert saved() == {"default": Profile("http://gw.example:9000", KEY)}
    assert "as Acme GPUs (01ACC; buyer, seller)" in result.stdout
    assert str(config_file) in result.stdout
    assert config_file.stat().st_mode & 0o077 == 0


def test_a_key_the_gateway_refuses_saves_nothing(fake: FakeGateway, config_file: Path) -> None:
    result = gpux("login", "--key", "gpx_wrong")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "gpux: the key was not accepted, nothing saved (401 Unauthorized: unknown key)"
    )
    assert not config_file.exists()


def test_a_gateway_that_cannot_be_reached_saves_nothing(
    monkeypatch: pytest.MonkeyPatch, config_file: Path
) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    use_transport(monkeypatch, down)
    profiles.save("default", Profile("http://old.example", "gpx_old"))
    result = gpux("login", "--key", KEY)
    assert result.exit_code == 1
    assert "cannot reach the gpux API at http://old.example" in result.stderr
    assert saved() == {"default": Profile("http://old.example", "gpx_old")}


def test_login_asks_for_the_key_without_echoing_it(fake: FakeGateway) -> None:
    result = gpux("login", stdin=f"{KEY}\n")
    assert result.exit_code == 0, result.output
    assert "API key" in result.output
    assert KEY not in result.output
    assert saved() == {"default": Profile("http://127.0.0.1:8000", KEY)}


def test_commands_take_the_key_and_gateway_from_the_profile(fake: FakeGateway) -> None:
    assert gpux("login", "--key", KEY, "--api", "http://gw.example:9000").exit_code == 0
    assert gpux("leases").exit_code == 0
    assert str(fake.last.url).startswith("http://gw.example:9000/v1/leases")
    assert fake.last.headers["authorization"] == f"Bearer {KEY}"


def test_key_and_url_options_beat_the_environment_which_beats_the_profile(
    fake: FakeGateway,
) -> None:
    profiles.save(None, Profile("http://profile.example", "gpx_profile"))
    env = {"GPUX_API_KEY": "gpx_env", "GPUX_API_URL": "http://env.example"}
    cases = [
        ((), {}, "http://profile.example", "gpx_profile"),
        ((), env, "http://env.example", "gpx_env"),
        (("--key", "gpx_opt", "--api", "http://opt.example"), env, "http://opt.example", "gpx_opt"),
    ]
    for args, environment, url, key in cases:
        assert gpux("leases", *args, env=environment).exit_code == 0
        assert (fake.last.url.host, fake.last.headers["authorization"]) == (
            httpx.URL(url).host,
            f"Bearer {key}",
        )


def test_profile_option_and_gpux_profile_choose_the_profile(fake: FakeGateway) -> None:
    profiles.save(None, Profile(key="gpx_default"))
    profiles.save("prod", Profile("http://prod.example", "gpx_prod"))
    assert gpux("leases", "--profile", "prod").exit_code == 0
    assert fake.last.headers["authorization"] == "Bearer gpx_prod"
    assert gpux("leases", env={"GPUX_PROFILE": "prod"}).exit_code == 0
    assert fake.last.url.host == "prod.example"
    assert gpux("leases").exit_code == 0
    assert fake.last.headers["authorization"] == "Bearer gpx_default"


def test_login_saves_under_the_named_profile(fake: FakeGateway) -> None:
    profiles.save(None, Profile(key="gpx_default"))
    assert gpux("login", "--key", KEY, "--profile", "work").exit_code == 0
    assert saved()["work"] == Profile("http://127.0.0.1:8000", KEY)
    assert saved()["default"] == Profile(key="gpx_default")


def test_logout_forgets_the_key_and_keeps_the_gateway(fake: FakeGateway) -> None:
    profiles.save(None, Profile("http://gw.example", KEY))
    result = gpux("logout")
    assert result.exit_code == 0, result.output
    assert saved() == {"default": Profile("http://gw.example", None)}
    assert fake.requests == []
    again = gpux("logout")
    assert "holds no key" in again.stdout
    assert "needs an API key" in gpux("leases").stderr


def test_whoami_names_the_account_and_the_gateway(fake: FakeGateway) -> None:
    result = gpux("whoami", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "Acme GPUs (01ACC; buyer, seller) at http://127.0.0.1:8000"
    assert json.loads(gpux("whoami", "--key", KEY, "--json").stdout)["id"] == "01ACC"


def test_signup_makes_the_account_and_prints_its_key_once(fake: FakeGateway) -> None:
    result = gpux("signup", "Acme GPUs", "--role", "seller", "--role", "buyer")
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/accounts", None)
    assert fake.body() == {"name": "Acme GPUs", "roles": ["seller", "buyer"]}
    assert uuid.UUID(fake.last.headers["idempotency-key"])
    assert result.stdout.count(NEW_KEY) == 1
    assert "shown only now" in line_with(result.stdout, NEW_KEY)
    assert saved() == {}


def test_signup_with_login_saves_the_new_key_as_the_profile(fake: FakeGateway) -> None:
    result = gpux("signup", "Acme", "--role", "buyer", "--login", "--api", "http://gw.example")
    assert result.exit_code == 0, result.output
    assert saved() == {"default": Profile("http://gw.example", NEW_KEY)}
    assert "profile 'default' saved" in result.stdout


def test_signup_needs_a_role_it_knows(fake: FakeGateway) -> None:
    assert gpux("signup", "Acme").exit_code == 2
    assert gpux("signup", "Acme", "--role", "admin").exit_code == 2
    assert fake.requests == []


def test_signup_refused_is_one_line(fake: FakeGateway) -> None:
    fake.problem = problem(422, "Request validation failed", "name is too long", "validation")
    result = gpux("signup", "x" * 300, "--role", "buyer", "--login")
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 422 Request validation failed: name is too long"
    assert saved() == {}


def test_keys_list_shows_each_key_and_whether_it_was_revoked(fake: FakeGateway) -> None:
    result = gpux("keys", "list", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("GET", "/v1/accounts/me/keys", f"Bearer {KEY}")
    live = line_with(result.stdout, "01KEY ")
    for cell in ("api key", "gpx_01KEY", "read, offers:write", "2025-01-01T00:00:00Z", "—"):
        assert cell in live
    assert "2025-02-01T10:00:00Z" in line_with(result.stdout, "01OLD")
    as_json = json.loads(gpux("keys", "list", "--key", KEY, "--json").stdout)
    assert [k["id"] for k in as_json] == ["01KEY", "01OLD"]


def test_keys_create_sends_name_and_scopes_and_prints_the_secret_once(fake: FakeGateway) -> None:
    args = ("keys", "create", "--name", "ci", "--scope", "read", "--scope", "orders:write")
    result = gpux(*args, "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/accounts/me/keys", f"Bearer {KEY}")
    assert fake.body() == {"name": "ci", "scopes": ["read", "orders:write"]}
    assert uuid.UUID(fake.last.headers["idempotency-key"])
    assert result.stdout.count(NEW_KEY) == 1
    assert "key 01NEW (ci;" in result.stdout


def test_keys_create_without_options_sends_an_empty_body(fake: FakeGateway) -> None:
    assert gpux("keys", "create", "--key", KEY).exit_code == 0
    assert fake.body() == {}


def test_keys_revoke_deletes_the_key(fake: FakeGateway) -> None:
    result = gpux("keys", "revoke", "01OLD", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("DELETE", "/v1/accounts/me/keys/01OLD", f"Bearer {KEY}")
    assert result.stdout.strip() == "key 01OLD revoked"
    unknown = gpux("keys", "revoke", "01NOPE", "--key", KEY)
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("gpux: 404")


def test_every_write_of_a_run_sends_its_own_idempotency_key(fake: FakeGateway) -> None:
    writes: list[tuple[str, ...]] = [
        ("signup", "A", "--role", "buyer"),
        ("keys", "create", "--key", KEY),
    ]
    for args in writes * 2:
        assert gpux(*args).exit_code == 0, args
    posts: list[Any] = [r for r in fake.requests if r.method == "POST"]
    keys = [r.headers["idempotency-key"] for r in posts]
    assert len(posts) == 4
    assert len(set(keys)) == 4


def test_the_profiles_key_goes_only_to_the_profiles_gateway(fake: FakeGateway) -> None:
    profiles.save(None, Profile("http://profile.example:9000", KEY))
    elsewhere: list[tuple[str, tuple[str, ...], dict[str, str]]] = [
        ("http://evil.example", ("--api", "http://evil.example"), {}),
        ("http://evil.example", (), {"GPUX_API_URL": "http://evil.example"}),
        ("https://profile.example:9000", ("--api", "https://profile.example:9000"), {}),
    ]
    for url, args, env in elsewhere:
        refused = gpux("leases", *args, env=env)
        assert refused.exit_code == 1, args
        assert refused.stderr.strip() == (
            f"gpux: profile 'default' holds a key for http://profile.example:9000, not for {url}:"
            f" give --key or GPUX_API_KEY (or `gpux login --api {url}`)"
        )
    assert fake.requests == []
    same = gpux("leases", "--api", "HTTP://Profile.Example:9000/")
    assert same.exit_code == 0, same.output
    assert fake.last.headers["authorization"] == f"Bearer {KEY}"
    given = gpux("leases", "--api", "http://evil.example", "--key", "gpx_mine")
    assert given.exit_code == 0, given.output
    assert (fake.last.url.host, fake.last.headers["authorization"]) == (
        "evil.example",
        "Bearer gpx_mine",
    )


def test_a_profile_without_a_url_keeps_its_key_for_the_local_gateway(fake: FakeGateway) -> None:
    profiles.save(None, Profile(key=KEY))
    assert gpux("leases", "--api", "http://127.0.0.1:8000/").exit_code == 0
    assert gpux("leases", "--api", "http://gw.example").exit_code == 1
    assert [r.url.host for r in fake.requests] == ["127.0.0.1"]


def test_signup_login_shows_the_key_even_when_the_profile_cannot_be_saved(
    fake: FakeGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unwritable(*_: Any) -> Path:
        raise ProfileError("cannot write /nowhere/config.toml: read-only file system")

    monkeypatch.setattr(profiles, "save", unwritable)
    result = gpux("signup", "Acme", "--role", "buyer", "--login")
    assert result.exit_code == 0, result.output
    assert "shown only now" in line_with(result.stdout, NEW_KEY)
    assert result.stderr.strip() == (
        "gpux: warning: the key was not saved as a profile"
        " (cannot write /nowhere/config.toml: read-only file system)"
    )


def test_login_with_token_reads_the_key_from_stdin(fake: FakeGateway) -> None:
    result = gpux("login", "--with-token", stdin=f"{KEY}\n")
    assert result.exit_code == 0, result.output
    assert "API key:" not in result.output  # nothing asked
    assert KEY not in result.output
    assert saved() == {"default": Profile("http://127.0.0.1:8000", KEY)}
    both = gpux("login", "--with-token", "--key", KEY, stdin=f"{KEY}\n")
    assert both.exit_code == 1
    assert "not both" in both.stderr
    empty = gpux("login", "--with-token", stdin="")
    assert (empty.exit_code, empty.stderr.strip()) == (1, "gpux: no API key given")


def test_keys_create_sends_the_idempotency_key_given(fake: FakeGateway) -> None:
    result = gpux("keys", "create", "--key", KEY, "--idempotency-key", "ci-key-1")
    assert result.exit_code == 0, result.output
    assert fake.last.headers["idempotency-key"] == "ci-key-1"
    refused = gpux("keys", "create", "--key", KEY, "--idempotency-key", "two words")
    assert refused.exit_code == 2
    assert len(fake.requests) == 1


def test_a_write_that_timed_out_says_how_to_send_it_again(
    monkeypatch: pytest.MonkeyPatch, pauses: list[float]
) -> None:
    sent: list[httpx.Request] = []

    def slow(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        raise httpx.ReadTimeout("timed out", request=request)

    use_transport(monkeypatch, slow)
    result = gpux("keys", "create", "--key", KEY)
    assert result.exit_code == 1
    keys = {r.headers["idempotency-key"] for r in sent}
    assert len(sent) > 1
    assert len(keys) == 1
    assert result.stderr.strip().endswith(
        f"run it again with --idempotency-key {keys.pop()}: it is done at most once"
    )
