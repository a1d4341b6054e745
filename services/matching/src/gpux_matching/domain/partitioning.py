"""Which partition of the book's input topics holds a GPU model's offers and orders.

``pricing.offers`` and ``orders.book`` are keyed by GPU id and Kafka's default partitioner
places a key by its murmur2 hash (the Java client's ``Utils.murmur2``, which aiokafka
implements too): the book of partition p is every GPU whose id hashes to p. The engine needs
this only to split a book that was kept whole before partitions; the hash is written out
here so the rule stays pure (``tests/unit/test_matching_partitioning.py`` checks it against
aiokafka's).
"""

from __future__ import annotations

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """The 32-bit murmur2 hash of ``data`` as Kafka's partitioner computes it."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length % 4
    if rest >= 3:
        h ^= data[whole + 2] << 16
    if rest >= 2:
        h ^= data[whole + 1] << 8
    if rest >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_of(gpu: str, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record keyed by ``gpu``."""
    return (murmur2(gpu.encode()) & 0x7FFFFFFF) % partitions
