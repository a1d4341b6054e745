"""The book's partition of a GPU is the one Kafka's default partitioner (aiokafka's) picks."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.partitioner import murmur2 as kafka_murmur2
from hypothesis import given
from hypothesis import strategies as st

from gpux_matching.domain import partition_of
from gpux_matching.domain.partitioning import murmur2

pytestmark = pytest.mark.unit


@given(st.binary(max_size=64))
def test_murmur2_is_kafkas(data: bytes) -> None:
    assert murmur2(data) == kafka_murmur2(data)


@given(st.text(max_size=40), st.integers(1, 64))
def test_a_gpu_lands_where_kafka_puts_its_key(gpu: str, partitions: int) -> None:
    every = list(range(partitions))
    assert partition_of(gpu, partitions) == DefaultPartitioner()(gpu.encode(), every, every)
