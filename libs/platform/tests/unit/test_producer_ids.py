"""Why and how a producer takes a new producer id after a failed send (``producer_ids``).

The first test pins aiokafka's defect: when it fails, the locked aiokafka no longer numbers a
batch it fails unsent, and ``renew_producer_id`` may be dropped. The others pin the internals
``renew_producer_id`` resets, so an upgrade that moves them fails here, not in production.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from unittest import mock

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import LeaderNotAvailableError, OutOfOrderSequenceNumber
from aiokafka.producer.message_accumulator import MessageAccumulator
from aiokafka.producer.transaction_manager import TransactionManager

from gpux_platform.producer_ids import (
    ProducerStopped,
    check_sending,
    confirmed,
    renew_producer_id,
)

TP = TopicPartition("t", 0)


async def test_aiokafka_numbers_a_batch_it_fails_unsent_when_its_partition_has_no_leader() -> None:
    cluster = mock.Mock()
    cluster.leader_for_partition.return_value = -1  # a broker back, its partitions not led yet
    manager = TransactionManager(None, 60_000)
    manager.set_pid_and_epoch(7, 0)
    ttl_s = 0.05
    accumulator = MessageAccumulator(cluster, 16_384, 0, ttl_s, txn_manager=manager)
    sent = await accumulator.add_message(TP, b"key", b"value", timeout=1)
    await asyncio.sleep(ttl_s * 3)  # the batch outlived request_timeout_ms
    batches, unknown_leaders = accumulator.drain_by_nodes(ignore_nodes=set())
    assert (dict(batches), unknown_leaders) == ({}, True)  # nothing went to any broker...
    assert isinstance(sent.exception(), LeaderNotAvailableError)
    assert manager.sequence_number(TP) == 1  # ...yet the next batch is numbered 1: a gap


@pytest.fixture
async def producer() -> AsyncIterator[AIOKafkaProducer]:
    """An idempotent producer (never started) as if ``InitProducerId`` had answered, with
    batches numbered."""
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9", enable_idempotence=True)
    manager = producer._txn_manager
    manager.set_pid_and_epoch(41, 3)
    manager.increment_sequence_number(TP, 5)
    yield producer
    await producer.stop()


async def test_renewing_asks_for_a_new_id_and_numbers_every_partition_from_zero(
    producer: AIOKafkaProducer,
) -> None:
    manager = producer._txn_manager
    assert renew_producer_id(producer)
    assert not manager.has_pid()  # the sender asks InitProducerId before its next drain
    assert manager.sequence_number(TP) == 0
    assert not renew_producer_id(producer)  # already waiting for one
    manager.set_pid_and_epoch(42, 0)  # what the sender does with the answer
    await asyncio.wait_for(manager.wait_for_pid(), 1)
    assert (manager.producer_id, manager.producer_epoch) == (42, 0)


async def test_a_producer_without_an_idempotent_id_is_left_alone() -> None:
    plain = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9")
    try:
        assert not renew_producer_id(plain)
    finally:
        await plain.stop()
    assert not renew_producer_id(None)


async def test_failed_sends_renew_the_id_and_the_first_failure_is_raised(
    producer: AIOKafkaProducer,
) -> None:
    loop = asyncio.get_running_loop()
    done, first, second = loop.create_future(), loop.create_future(), loop.create_future()
    done.set_result(None)
    first.set_exception(OutOfOrderSequenceNumber())
    second.set_exception(LeaderNotAvailableError())
    with pytest.raises(OutOfOrderSequenceNumber):
        await confirmed(producer, [done, first, second])
    assert not producer._txn_manager.has_pid()


async def test_confirmed_sends_keep_the_id(producer: AIOKafkaProducer) -> None:
    done = asyncio.get_running_loop().create_future()
    done.set_result(None)
    await confirmed(producer, [done])
    assert producer._txn_manager.producer_id == 41
    assert producer._txn_manager.sequence_number(TP) == 5


async def test_a_producer_whose_sender_ended_is_reported(producer: AIOKafkaProducer) -> None:
    check_sending(producer)  # never started: nothing to report
    check_sending(None)
    ended = asyncio.get_running_loop().create_future()
    ended.set_result(None)
    producer._sender._sender_task = ended  # what aiokafka's sender keeps of its routine
    with pytest.raises(ProducerStopped):
        check_sending(producer)
