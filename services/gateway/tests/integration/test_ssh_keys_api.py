"""Buyers' SSH public keys through the real HTTP API: register, list, read, delete, the 422s,
the 409 for a key registered twice, idempotent retries and tenancy."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

URL = "/v1/accounts/me/ssh-keys"


def new_line() -> str:
    line = (
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    return line.decode()


def fingerprint(line: str) -> str:
    digest = hashlib.sha256(base64.b64decode(line.split()[1])).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


async def test_register_list_read_delete(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    line = new_line()
    async with gateway.client(buyer["key"]) as client:
        created = await client.post(URL, json={"name": "laptop", "public_key": f"{line} me@lap"})
        assert created.status_code == 201, created.text
        key = created.json()
        assert key["type"] == "ed25519"
        assert key["fingerprint"] == fingerprint(line)
        assert key["bits"] is None
        assert key["comment"] == "me@lap"
        assert key["public_key"] == line
        second = await client.post(URL, json={"name": "desk", "public_key": new_line()})
        assert second.status_code == 201
        first_page = (await client.get(URL, params={"limit": 1})).json()
        rest = (await client.get(URL, params={"cursor": first_page["next_cursor"]})).json()
        paged = [k["id"] for k in first_page["items"] + rest["items"]]
        assert paged == sorted([key["id"], second.json()["id"]])
        assert rest["next_cursor"] is None
        assert (await client.get(f"{URL}/{key['id']}")).json() == key
        assert (await client.delete(f"{URL}/{key['id']}")).status_code == 204
        assert (await client.get(f"{URL}/{key['id']}")).status_code == 404
        assert (await client.delete(f"{URL}/{key['id']}")).status_code == 404
        listed = (await client.get(URL)).json()
    assert [k["id"] for k in listed["items"]] == [second.json()["id"]]


async def test_a_key_registered_twice_is_409_naming_the_first(gateway: Any, sign_up: Any) -> None:
    buyer, other = await sign_up(["buyer"]), await sign_up(["buyer"])
    line = new_line()
    async with gateway.client(buyer["key"]) as client:
        first = await client.post(URL, json={"name": "a", "public_key": line})
        again = await client.post(URL, json={"name": "b", "public_key": f"{line} other comment"})
    assert again.status_code == 409
    assert again.headers["content-type"] == "application/problem+json"
    assert first.json()["id"] in again.json()["detail"]
    async with gateway.client(other["key"]) as client:
        theirs = await client.post(URL, json={"name": "a", "public_key": line})
    assert theirs.status_code == 201


async def test_an_idempotent_retry_replays_the_key(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    body = {"name": "ci", "public_key": new_line()}
    headers = {"Idempotency-Key": "ssh-key-retry-1"}
    async with gateway.client(buyer["key"]) as client:
        first = await client.post(URL, json=body, headers=headers)
        retry = await client.post(URL, json=body, headers=headers)
        listed = (await client.get(URL)).json()
    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert [k["id"] for k in listed["items"]] == [first.json()["id"]]


async def test_refused_keys_are_422_on_public_key(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    weak = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    async with gateway.client(buyer["key"]) as client:
        for text in [weak, "ssh-ed25519 AAAA", f"no-pty {new_line()}", "x" * 20_000]:
            response = await client.post(URL, json={"name": "k", "public_key": text})
            assert response.status_code == 422, text
            assert response.headers["content-type"] == "application/problem+json"
            assert [e["loc"] for e in response.json()["errors"]] == [["body", "public_key"]]


async def test_another_accounts_key_is_404(gateway: Any, sign_up: Any) -> None:
    alice, bob = await sign_up(["buyer"]), await sign_up(["buyer"])
    async with gateway.client(alice["key"]) as client:
        key = (await client.post(URL, json={"name": "a", "public_key": new_line()})).json()
    async with gateway.client(bob["key"]) as client:
        assert (await client.get(f"{URL}/{key['id']}")).status_code == 404
        assert (await client.delete(f"{URL}/{key['id']}")).status_code == 404
        assert (await client.get(URL)).json()["items"] == []
    async with gateway.client(alice["key"]) as client:
        assert (await client.get(f"{URL}/{key['id']}")).status_code == 200


async def test_a_seller_only_account_has_no_ssh_keys(gateway: Any, sign_up: Any) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        response = await client.post(URL, json={"name": "a", "public_key": new_line()})
    assert response.status_code == 403
