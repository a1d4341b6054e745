"""Load the demo data set through the public REST API only (``gpux_sdk``), idempotently.

Run twice against the same exchange it changes nothing: keys saved in the keys file are
reused while they still work, sign-ups, offers and top-ups carry Idempotency-Keys, an offer
the seller already has (same GPU, tier, billing, currency and region) is not pushed again,
and a currency the buyer's wallet already holds is not topped up again.

A sign-up is anonymous, and the gateway answers a sign-up sent again with its key by
replaying the first answer, the new API key included, to whoever sends it. So the sign-ups'
keys are derived from a random secret kept in the keys file (written, 0600, before the first
sign-up): a rerun after a crash sends the same keys and gets the same accounts, and nobody
without the file can guess them. The other writes' keys are the account's own (the gateway
scopes them by the key's account), so they may be derived from what they do.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from gpux_devinfra.demo.dataset import BUYER, SELLERS, DemoSeller, demo_gpus, offer_spec
from gpux_devinfra.profiles import write_private
from gpux_devinfra.sdk_client import (
    ApiError,
    account_client,
    call,
    pages,
    public_client,
    write_key,
)
from gpux_sdk import AuthenticatedClient, Client
from gpux_sdk.api.accounts import get_me, sign_up
from gpux_sdk.api.catalog import list_gpus
from gpux_sdk.api.offers import list_offers, submit_offer
from gpux_sdk.api.wallets import create_topup, list_balances
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.gpu_out import GpuOut
from gpux_sdk.models.offer_in import OfferIn
from gpux_sdk.models.offer_out import OfferOut
from gpux_sdk.models.provider import Provider
from gpux_sdk.models.role import Role
from gpux_sdk.models.sign_up import SignUp
from gpux_sdk.models.topup_in import TopupIn

Progress = Callable[[str], None]
UNAUTHORIZED = 401
RETRY = frozenset({429, 503})  # the catalog is not read yet, or slow down
# Offers whose spec may not be pushed again: everything but a refused one.
KEPT = frozenset({"pending", "live", "withdrawn", "exhausted", "expired"})


class DemoError(RuntimeError):
    """The demo could not be loaded; the message says why."""


@dataclass(frozen=True)
class DemoAccount:
    """A demo account and its API key."""

    handle: str
    name: str
    role: str
    account_id: str
    api_key: str


@dataclass
class DemoResult:
    """What the loader did and what the demo's people can use."""

    url: str
    accounts: list[DemoAccount]
    gpus: list[GpuOut] = field(default_factory=list)
    offers_pushed: int = 0
    offers_live: int = 0
    topups: list[str] = field(default_factory=list)

    @property
    def buyer(self) -> DemoAccount:
        """The demo buyer."""
        return next(a for a in self.accounts if a.role == "buyer")

    @property
    def sellers(self) -> list[DemoAccount]:
        """The demo sellers."""
        return [a for a in self.accounts if a.role == "seller"]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class DemoKeys:
    """What the keys file keeps: the secret the sign-ups' keys derive from, and the accounts."""

    secret: str
    accounts: dict[str, DemoAccount] = field(default_factory=dict)
    """By handle."""

    def sign_up_key(self, handle: str, replacing: str = "") -> str:
        """The Idempotency-Key of ``handle``'s sign-up: the same for every run that has this
        secret, unguessable for anyone without it. ``replacing``: the stored account whose key
        no longer works here (a sign-up of its own, not the replay of the one it came from)."""
        message = f"{handle}\n{replacing}".encode()
        digest = hmac.new(self.secret.encode(), message, hashlib.sha256).hexdigest()
        return f"gpux-demo-account-{digest}"


def new_keys() -> DemoKeys:
    """Keys of a demo not loaded yet: a fresh secret, no account."""
    return DemoKeys(secrets.token_urlsafe(32))


def read_keys(path: Path | None) -> DemoKeys:
    """What the keys file keeps (``new_keys`` if it is missing or unreadable; a new secret if
    it keeps none, as a file of an older loader)."""
    if path is None or not path.exists():
        return new_keys()
    try:
        stored = json.loads(path.read_text())
        accounts = {a["handle"]: DemoAccount(**a) for a in stored["accounts"]}
    except (OSError, ValueError, KeyError, TypeError):
        return new_keys()
    secret = stored.get("secret")
    return DemoKeys(secret if isinstance(secret, str) and secret else new_keys().secret, accounts)


def write_keys(path: Path, url: str, keys: DemoKeys) -> None:
    """Save the demo keys, readable only by the owner (a key is shown only once): written as
    the CLI's profiles are, 0600 from the first byte and replaced whole."""
    accounts = [asdict(a) for a in keys.accounts.values()]
    document = {"gateway": url, "secret": keys.secret, "accounts": accounts}
    write_private(path, json.dumps(document, indent=2) + "\n")


class DemoLoader:
    """Loads the data set into one gateway."""

    def __init__(
        self,
        url: str,
        *,
        keys_file: Path | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 90.0,
        progress: Progress = _quiet,
    ) -> None:
        self.url = url.rstrip("/")
        self.keys_file = keys_file
        self.transport = transport
        self.timeout_s = timeout_s
        self.progress = progress

    def public(self) -> Client:
        """A client of the gateway without credentials."""
        return public_client(self.url, timeout_s=30, through=self.transport)

    def client(self, key: str) -> AuthenticatedClient:
        """A client of the gateway acting as the account of ``key``."""
        return account_client(self.url, key, timeout_s=30, through=self.transport)

    def offers(self, key: str) -> list[OfferOut]:
        """Every offer of the seller of ``key``."""
        with self.client(key) as client:
            return list(pages(list_offers.sync_detailed, client))

    def currencies_held(self, client: AuthenticatedClient) -> set[str]:
        """The currencies the wallet of ``client``'s account holds."""
        return {str(b.currency) for b in call(list_balances.sync_detailed, client).items}

    def load(self) -> DemoResult:
        """Catalog check, accounts, offers, credit; returns the keys and what was done."""
        result = DemoResult(self.url, [], gpus=self.catalog())
        stored = read_keys(self.keys_file)
        self._keep(stored)  # the secret before any sign-up that derives its key from it
        self.progress("demo accounts")
        for seller in SELLERS:
            result.accounts.append(self.account(seller.handle, seller.name, "seller", stored))
        result.accounts.append(self.account(BUYER.handle, BUYER.name, "buyer", stored))
        self._keep(DemoKeys(stored.secret, {a.handle: a for a in result.accounts}))
        pending: list[tuple[DemoAccount, str]] = []
        for seller, account in zip(SELLERS, result.sellers, strict=True):
            self.progress(f"offers of {seller.name}")
            pending += [(account, o) for o in self.push_offers(seller, account, result)]
        result.offers_live = self.wait_live(pending, result)
        self.progress("the demo buyer's credit")
        self.credit(result.buyer, result)
        return result

    def _keep(self, keys: DemoKeys) -> None:
        if self.keys_file is not None:
            write_keys(self.keys_file, self.url, keys)

    def catalog(self) -> list[GpuOut]:
        """GET /v1/gpus once the gateway has read the catalog; every demo GPU must be in it."""
        self.progress("waiting for the catalog")
        deadline = time.monotonic() + self.timeout_s
        with self.public() as client:
            while True:
                try:
                    gpus = call(list_gpus.sync_detailed, client).items
                    break
                except ApiError as exc:
                    if exc.status not in RETRY or time.monotonic() > deadline:
                        raise DemoError(f"the catalog is not available: {exc}") from None
                time.sleep(1.0)
        missing = demo_gpus() - {g.id for g in gpus}
        if missing:
            raise DemoError(f"GPU models missing from the catalog: {', '.join(sorted(missing))}")
        return gpus

    def account(self, handle: str, name: str, role: str, stored: DemoKeys) -> DemoAccount:
        """The stored account if its key still works here, else a sign-up (idempotent)."""
        known = stored.accounts.get(handle)
        if known is not None and known.role == role:
            with self.client(known.api_key) as client:
                try:
                    if call(get_me.sync_detailed, client).id == known.account_id:
                        return known
                except ApiError as exc:
                    if exc.status != UNAUTHORIZED:
                        raise
        body = SignUp(name=name, roles=[Role(role)])
        key = stored.sign_up_key(handle, known.account_id if known is not None else "")
        with self.public() as client:
            made = call(sign_up.sync_detailed, client, body=body, idempotency_key=key)
        return DemoAccount(handle, name, role, made.account.id, made.api_key)

    def push_offers(
        self, seller: DemoSeller, account: DemoAccount, result: DemoResult
    ) -> list[str]:
        """Push the seller's offers it does not have yet; returns the ids still pending."""
        existing = self.offers(account.api_key)
        have = {offer_spec(o.to_dict()) for o in existing if o.status in KEPT}
        waiting = [o.id for o in existing if o.status == "pending"]
        with self.client(account.api_key) as client:
            for offer in seller.offers:
                body = offer.body(seller.currency, seller.region)
                if offer_spec(body) in have:
                    continue
                key = write_key("gpux-demo-offer", account.account_id, *offer_spec(body))
                made = call(
                    submit_offer.sync_detailed,
                    client,
                    body=OfferIn.from_dict(body),
                    idempotency_key=key,
                )
                result.offers_pushed += 1
                if made.status == "pending":
                    waiting.append(made.id)
        return waiting

    def wait_live(self, pending: list[tuple[DemoAccount, str]], result: DemoResult) -> int:
        """Wait until every pending offer is on the book; a refused demo offer is an error."""
        deadline = time.monotonic() + self.timeout_s
        left = set(pending)
        while left:
            self.progress(f"pricing checks the offers ({len(left)} pending)")
            for account in {a for a, _ in left}:
                status = {o.id: o for o in self.offers(account.api_key)}
                for pair in [p for p in left if p[0] == account]:
                    offer = status.get(pair[1])
                    if offer is None or offer.status in ("pending", "accepted"):
                        continue  # pricing has not decided, or the book has not shown it yet
                    if offer.status == "rejected":
                        raise DemoError(f"pricing refused a demo offer: {offer.reason} {offer}")
                    left.discard(pair)
            if left and time.monotonic() > deadline:
                raise DemoError(f"{len(left)} demo offers still pending after {self.timeout_s} s")
            if left:
                time.sleep(0.3)
        return sum(
            o.status == "live" for account in result.sellers for o in self.offers(account.api_key)
        )

    def credit(self, buyer: DemoAccount, result: DemoResult) -> None:
        """A `dev` top-up per currency the buyer's wallet has never held; waits until booked."""
        with self.client(buyer.api_key) as client:
            held = self.currencies_held(client)
            wanted = [(c, a) for c, a in BUYER.credit if c not in held]
            for currency, amount in wanted:
                body = TopupIn(amount=amount, currency=Currency(currency), provider=Provider.DEV)
                key = write_key("gpux-demo-topup", buyer.account_id, currency)
                call(create_topup.sync_detailed, client, body=body, idempotency_key=key)
                result.topups.append(f"{amount} {currency}")
            deadline = time.monotonic() + self.timeout_s
            while wanted:
                held = self.currencies_held(client)
                if all(c in held for c, _ in wanted):
                    return
                if time.monotonic() > deadline:
                    raise DemoError(
                        "the demo buyer's top-up was not booked; billing accepts `dev`"
                        " top-ups only with GPUX_DEV_TOPUPS=true"
                    )
                time.sleep(0.3)


def load_demo(
    url: str,
    *,
    keys_file: Path | None = None,
    transport: httpx.BaseTransport | None = None,
    timeout_s: float = 90.0,
    progress: Progress = _quiet,
) -> DemoResult:
    """Load the demo data set into the gateway at ``url`` (see the module docstring)."""
    loader = DemoLoader(
        url, keys_file=keys_file, transport=transport, timeout_s=timeout_s, progress=progress
    )
    return loader.load()
