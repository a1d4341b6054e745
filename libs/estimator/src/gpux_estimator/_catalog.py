"""What the GPU and model catalogs share: a versioned, ordered set of items with unique ids."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Generic, Protocol, TypeVar

from gpux_estimator.errors import CatalogDataError, UnknownItemError


class _Item(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_Item)


class Catalog(Generic[T]):
    """The items of a data file in file order, looked up by id (``kind`` names them in errors).

    A subclass is a frozen dataclass with ``version`` and a tuple of items that ``_items``
    returns; building it checks that no two items share any of its ``unique`` attributes.
    """

    __slots__ = ()
    kind: ClassVar[str]
    unique: ClassVar[tuple[str, ...]] = ("id",)

    def __post_init__(self) -> None:
        for attribute in self.unique:
            values = [getattr(item, attribute) for item in self._items()]
            if len(set(values)) != len(values):
                plural = " and ".join(f"{name}s" for name in self.unique)
                raise CatalogDataError(f"{self.kind} catalog: {plural} must be unique")

    def _items(self) -> tuple[T, ...]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[T]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    @property
    def ids(self) -> tuple[str, ...]:
        """Every id, in data-file order."""
        return tuple(item.id for item in self._items())

    def get(self, item_id: str) -> T:
        """The item with this id, or UnknownItemError."""
        for item in self._items():
            if item.id == item_id:
                return item
        raise UnknownItemError(f"unknown {self.kind} id {item_id!r}")
