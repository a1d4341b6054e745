"""The shared owned-table reads build their SQL from names only, never from anything else."""

from __future__ import annotations

import pytest

from gpux_gateway.adapters.postgres.repository import OwnedTable


@pytest.mark.parametrize(
    ("name", "owner", "key"),
    [
        ("gateway.offers; DROP TABLE x", "seller_id", "id"),
        ("gateway.offers", "seller_id = seller_id OR 1", "id"),
        ("gateway.offers", "seller_id", "id--"),
        ("Gateway.Offers", "seller_id", "id"),
    ],
)
def test_an_owned_table_refuses_anything_but_a_name(name: str, owner: str, key: str) -> None:
    with pytest.raises(ValueError, match="not a table or column name"):
        OwnedTable(name, owner, dict, key=key)
