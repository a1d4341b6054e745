"""`gpux login`, `logout`, `whoami`, `signup` and `keys list|create|revoke`: who the CLI is.

``login`` checks a key with the gateway (GET /v1/accounts/me) before it saves anything, so a
mistyped key never becomes the profile; it saves the key and the gateway's URL as a profile
(``profiles``: ``$XDG_CONFIG_HOME/gpux/config.toml``, mode 0600). The key is asked for
unechoed, or read from stdin (``--with-token``, for scripts), so that it stays out of the
shell's history. ``signup`` makes an account and prints its first key once (``--login``
saves it as the profile too, after printing it). Every POST here sends an Idempotency-Key, a
fresh one per run (``keys create --idempotency-key``: the caller's): a retry inside the run
is answered as the first try was (the gateway derives a key's secret from it), a new run
makes a new account or key. Revoking is a DELETE, the same however often it is sent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Annotated

import typer
from rich.table import Table

from gpux_devinfra import profiles
from gpux_devinfra.cli_support import (
    ApiUrl,
    Caller,
    ProfileName,
    Public,
    Writer,
    api_url,
    fail,
    grouped_options,
    print_json,
    saved_profile,
    stamp,
)
from gpux_devinfra.market_tables import listing
from gpux_devinfra.profiles import Profile, ProfileError
from gpux_devinfra.sdk_client import ApiError, account_client, call, write_key
from gpux_sdk.api.accounts import create_api_key, get_me, list_api_keys, revoke_api_key, sign_up
from gpux_sdk.models.account_out import AccountOut
from gpux_sdk.models.key_created import KeyCreated
from gpux_sdk.models.key_out import KeyOut
from gpux_sdk.models.new_key import NewKey
from gpux_sdk.models.role import Role
from gpux_sdk.models.scope import Scope
from gpux_sdk.models.sign_up import SignUp
from gpux_sdk.models.signed_up import SignedUp
from gpux_sdk.types import UNSET

keys_app = typer.Typer(help="Your API keys: list, create, revoke.", no_args_is_help=True)

LoginKey = Annotated[
    str | None,
    typer.Option(
        "--key",
        help="The API key (gpx_...; it stays in the shell's history: prefer the prompt or"
        " --with-token); asked for, unechoed, if not given.",
        show_default=False,
    ),
]
WithToken = Annotated[
    bool,
    typer.Option(
        "--with-token",
        help="Read the API key from stdin (`gpux login --with-token < key.txt`), for scripts.",
    ),
]


def who(account: AccountOut) -> str:
    """``Acme GPUs (01ACC…; seller)``."""
    roles = ", ".join(str(role) for role in account.roles) or "no role"
    suspended = "; suspended" if str(account.status) != "active" else ""
    return f"{account.name} ({account.id}; {roles}{suspended})"


def _save(profile: str | None, saved: Profile) -> str:
    """Save the profile; where, as a line's end (exit 1 if it cannot be written)."""
    try:
        path = profiles.save(profile, saved)
    except ProfileError as exc:
        fail(exc)
    return f"profile {profiles.selected(profile)!r} saved in {path}"


def _login_key(key: str | None, with_token: bool) -> str:
    """The key to log in with: ``--key``, else stdin's first line (``--with-token``), else
    asked for, unechoed; exit 1 when none is given."""
    if key is not None and with_token:
        fail("give the key with --key or on stdin (--with-token), not both")
    given = sys.stdin.readline() if with_token else key or typer.prompt("API key", hide_input=True)
    given = given.strip()
    if not given:
        fail("no API key given")
    return given


def login_command(
    *,
    key: LoginKey = None,
    with_token: WithToken = False,
    api: ApiUrl = None,
    profile: ProfileName = None,
) -> None:
    """Save an API key as a profile, once the gateway accepts it (GET /v1/accounts/me)."""
    url = api_url(api, profile)
    given = _login_key(key, with_token)
    try:
        with account_client(url, given) as client:
            account = call(get_me.sync_detailed, client)
    except ApiError as exc:
        fail(f"the key was not accepted, nothing saved ({exc})")
    print(f"logged in to {url} as {who(account)}; {_save(profile, Profile(url, given))}")


def logout_command(*, profile: ProfileName = None) -> None:
    """Forget the profile's key (the key itself keeps working: `gpux keys revoke ID` ends it)."""
    saved = saved_profile(profile)
    name = profiles.selected(profile)
    if saved.key is None:
        print(f"profile {name!r} holds no key")
        return
    try:
        if saved.api is None:
            profiles.remove(name)
        else:
            profiles.save(name, Profile(api=saved.api))
    except ProfileError as exc:
        fail(exc)
    print(f"logged out: profile {name!r} no longer holds a key")


@grouped_options
def whoami_command(*, caller: Caller) -> None:
    """The account the key acts as, and the gateway it is sent to (GET /v1/accounts/me)."""
    account = caller.ask(lambda client: call(get_me.sync_detailed, client))
    caller.show(account, lambda a: f"{who(a)} at {caller.url}")


def _signed_up(answer: SignedUp) -> str:
    return (
        f"account {who(answer.account)} created\n"
        f"API key (shown only now; store it): {answer.api_key}"
    )


@grouped_options
def signup_command(
    name: Annotated[str, typer.Argument(help="The account's name, shown to counterparties.")],
    *,
    role: Annotated[list[Role], typer.Option(help="buyer or seller; give it twice for both.")],
    login: Annotated[
        bool, typer.Option("--login", help="Save the new key as the profile, as `gpux login`.")
    ] = False,
    public: Public,
) -> None:
    """Create an account (POST /v1/accounts) and print its first API key, once."""
    body = SignUp(name=name, roles=list(dict.fromkeys(role)))
    key = write_key()
    made = public.ask(
        lambda client: call(sign_up.sync_detailed, client, body=body, idempotency_key=key)
    )
    if public.as_json:  # the key first: it is shown only now, whatever becomes of the profile
        print_json(made)
    else:
        print(_signed_up(made), flush=True)
    if not login:
        return
    try:
        path = profiles.save(public.profile, Profile(public.url, made.api_key))
    except ProfileError as exc:
        typer.echo(f"gpux: warning: the key was not saved as a profile ({exc})", err=True)
        return
    name = profiles.selected(public.profile)
    typer.echo(f"profile {name!r} saved in {path}", err=public.as_json)


def keys_table(keys: Iterable[KeyOut]) -> Table:
    """The account's keys: what each may do, and whether it still works."""
    rows = (
        [
            k.id,
            k.name,
            k.prefix,
            ", ".join(str(s) for s in k.scopes),
            stamp(k.created_at),
            stamp(k.revoked_at),
        ]
        for k in keys
    )
    columns = ("id", "name", "prefix", "scopes", "created", "revoked")
    return listing("Your API keys", columns, rows, empty="no keys")


@keys_app.command("list")
@grouped_options
def keys_list(*, caller: Caller) -> None:
    """Your API keys, revoked ones too (GET /v1/accounts/me/keys; never their secrets)."""
    keys = caller.ask(lambda client: call(list_api_keys.sync_detailed, client).items)
    caller.show(keys, keys_table)


def _created(answer: KeyCreated) -> str:
    scopes = ", ".join(str(s) for s in answer.key.scopes)
    return (
        f"key {answer.key.id} ({answer.key.name}; {scopes}) created\n"
        f"API key (shown only now; store it): {answer.api_key}"
    )


@keys_app.command("create")
@grouped_options
def keys_create(
    *,
    name: Annotated[str | None, typer.Option(help="What the key is for.")] = None,
    scope: Annotated[
        list[Scope] | None,
        typer.Option(help="A scope it gets (repeat; default: all the roles allow)."),
    ] = None,
    caller: Writer,
) -> None:
    """Create an API key (POST /v1/accounts/me/keys) and print its secret, once."""
    body = NewKey(name=name if name else UNSET, scopes=list(scope) if scope else UNSET)
    caller.show(caller.send(create_api_key.sync_detailed, body), _created)


@keys_app.command("revoke")
@grouped_options
def keys_revoke(
    key_id: Annotated[str, typer.Argument(metavar="ID", help="The key's id (`gpux keys list`).")],
    *,
    caller: Caller,
) -> None:
    """Revoke an API key (DELETE /v1/accounts/me/keys/ID): it stops working at once."""
    # No Idempotency-Key, and so no retry by sdk_client: the gateway's DELETE is idempotent by
    # nature (a key revoked again answers 204 and stays revoked at its first time), so
    # running the command again is the retry.
    caller.ask(lambda client: call(revoke_api_key.sync_detailed, client, key_id=key_id))
    if caller.as_json:
        print_json({"id": key_id, "revoked": True})
    else:
        print(f"key {key_id} revoked")


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.command("login")(login_command)
    app.command("logout")(logout_command)
    app.command("whoami")(whoami_command)
    app.command("signup")(signup_command)
    app.add_typer(keys_app, name="keys")
