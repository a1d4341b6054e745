"""Load the demo data set through the public REST API only, idempotently.

Run twice against the same exchange it changes nothing: keys saved in the keys file are
reused while they still work, sign-ups, offers and top-ups carry Idempotency-Keys, an offer
the seller already has (same GPU, tier, billing, currency and region) is not pushed again,
and a currency the buyer's wallet already holds is not topped up again.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from gpux_devinfra.api_client import ApiClient, ApiError
from gpux_devinfra.demo.dataset import BUYER, SELLERS, DemoSeller, demo_gpus, offer_spec

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
    gpus: list[dict[str, Any]] = field(default_factory=list)
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


def read_keys(path: Path | None) -> dict[str, DemoAccount]:
    """The keys file's accounts by handle (nothing if it is missing or unreadable)."""
    if path is None or not path.exists():
        return {}
    try:
        stored = json.loads(path.read_text())
        return {a["handle"]: DemoAccount(**a) for a in stored["accounts"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def write_keys(path: Path, url: str, accounts: list[DemoAccount]) -> None:
    """Save the demo keys, readable only by the owner (a key is shown only once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"gateway": url, "accounts": [asdict(a) for a in accounts]}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(document, out, indent=2)
        out.write("\n")


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

    def client(self, key: str | None = None) -> ApiClient:
        """A client of the gateway, authorized with ``key`` when given."""
        client = ApiClient(self.url, transport=self.transport, timeout_s=30)
        if key:
            client.authorize(key)
        return client

    def load(self) -> DemoResult:
        """Catalog check, accounts, offers, credit; returns the keys and what was done."""
        result = DemoResult(self.url, [], gpus=self.catalog())
        stored = read_keys(self.keys_file)
        self.progress("demo accounts")
        for seller in SELLERS:
            result.accounts.append(self.account(seller.handle, seller.name, "seller", stored))
        result.accounts.append(self.account(BUYER.handle, BUYER.name, "buyer", stored))
        if self.keys_file is not None:
            write_keys(self.keys_file, self.url, result.accounts)
        pending: list[tuple[DemoAccount, str]] = []
        for seller, account in zip(SELLERS, result.sellers, strict=True):
            self.progress(f"offers of {seller.name}")
            pending += [(account, o) for o in self.push_offers(seller, account, result)]
        result.offers_live = self.wait_live(pending, result)
        self.progress("the demo buyer's credit")
        self.credit(result.buyer, result)
        return result

    def catalog(self) -> list[dict[str, Any]]:
        """GET /v1/gpus once the gateway has read the catalog; every demo GPU must be in it."""
        self.progress("waiting for the catalog")
        deadline = time.monotonic() + self.timeout_s
        with self.client() as client:
            while True:
                try:
                    gpus = client.gpus()
                    break
                except ApiError as exc:
                    if exc.status not in RETRY or time.monotonic() > deadline:
                        raise DemoError(f"the catalog is not available: {exc}") from None
                time.sleep(1.0)
        missing = demo_gpus() - {g["id"] for g in gpus}
        if missing:
            raise DemoError(f"GPU models missing from the catalog: {', '.join(sorted(missing))}")
        return gpus

    def account(
        self, handle: str, name: str, role: str, stored: dict[str, DemoAccount]
    ) -> DemoAccount:
        """The stored account if its key still works here, else a sign-up (idempotent)."""
        known = stored.get(handle)
        if known is not None and known.role == role:
            with self.client(known.api_key) as client:
                try:
                    if client.me()["id"] == known.account_id:
                        return known
                except ApiError as exc:
                    if exc.status != UNAUTHORIZED:
                        raise
        with self.client() as client:
            made = client.sign_up(name, [role], idempotency_key=f"gpux-demo-account-{handle}")
        return DemoAccount(handle, name, role, made["account"]["id"], made["api_key"])

    def push_offers(
        self, seller: DemoSeller, account: DemoAccount, result: DemoResult
    ) -> list[str]:
        """Push the seller's offers it does not have yet; returns the ids still pending."""
        with self.client(account.api_key) as client:
            existing = client.offers()
            have = {offer_spec(o): o for o in existing if o["status"] in KEPT}
            waiting = [o["id"] for o in existing if o["status"] == "pending"]
            for offer in seller.offers:
                body = offer.body(seller.currency, seller.region)
                if offer_spec(body) in have:
                    continue
                key = f"gpux-demo-offer-{account.account_id}-{'-'.join(offer_spec(body))}"
                made = client.push_offer(body, idempotency_key=key)
                result.offers_pushed += 1
                if made["status"] == "pending":
                    waiting.append(made["id"])
        return waiting

    def wait_live(self, pending: list[tuple[DemoAccount, str]], result: DemoResult) -> int:
        """Wait until every pending offer is on the book; a refused demo offer is an error."""
        deadline = time.monotonic() + self.timeout_s
        left = set(pending)
        while left:
            self.progress(f"pricing checks the offers ({len(left)} pending)")
            for account in {a for a, _ in left}:
                with self.client(account.api_key) as client:
                    status = {o["id"]: o for o in client.offers()}
                for pair in [p for p in left if p[0] == account]:
                    offer = status.get(pair[1])
                    if offer is None or offer["status"] in ("pending", "accepted"):
                        continue  # pricing has not decided, or the book has not shown it yet
                    if offer["status"] == "rejected":
                        raise DemoError(f"pricing refused a demo offer: {offer['reason']} {offer}")
                    left.discard(pair)
            if left and time.monotonic() > deadline:
                raise DemoError(f"{len(left)} demo offers still pending after {self.timeout_s} s")
            if left:
                time.sleep(0.3)
        with_live = 0
        for account in result.sellers:
            with self.client(account.api_key) as client:
                with_live += sum(o["status"] == "live" for o in client.offers())
        return with_live

    def credit(self, buyer: DemoAccount, result: DemoResult) -> None:
        """A `dev` top-up per currency the buyer's wallet has never held; waits until booked."""
        with self.client(buyer.api_key) as client:
            held = {b["currency"] for b in client.balances()}
            wanted = [(c, a) for c, a in BUYER.credit if c not in held]
            for currency, amount in wanted:
                body = {"amount": amount, "currency": currency, "provider": "dev"}
                key = f"gpux-demo-topup-{buyer.account_id}-{currency}"
                client.topup(body, idempotency_key=key)
                result.topups.append(f"{amount} {currency}")
            deadline = time.monotonic() + self.timeout_s
            while wanted:
                held = {b["currency"] for b in client.balances()}
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
