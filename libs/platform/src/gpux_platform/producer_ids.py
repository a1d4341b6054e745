"""An idempotent producer's id, renewed after a failed send, so a partition never stays unwritable.

An idempotent producer numbers each batch per partition, and the broker accepts a partition's
batches only in sequence. Any batch aiokafka (0.14) fails after it numbered it leaves a gap:
one the broker refused, and one that outlived its ``request_timeout_ms`` while its partition
had no leader (a broker restarting slowly, its partitions not led yet), which is failed
although it was never sent. From then on the broker answers every later batch of that
partition ``OUT_OF_ORDER_SEQUENCE_NUMBER``, which is not retried, for as long as the producer
lives: a relay publishing there would fail every try while its process stayed ready. The Java
client resets its producer id in that case; aiokafka does not, so gpux does it: after any
failed send (``confirmed``), the producer asks the broker for a new id before its next batch,
with every partition's numbers back at 0.

A record of the failed send is sent again by its caller (the relay keeps the row unpublished),
so the new id costs at most a duplicate, which consumers' inboxes absorb. Should the broker
answer that id request with an error aiokafka does not handle, the producer's sender task ends
and nothing is sent any more: ``check_sending`` makes readiness say so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from aiokafka.producer.transaction_manager import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    PidAndEpoch,
    TransactionManager,
)

log = logging.getLogger("gpux.broker")


def renew_producer_id(producer: AIOKafkaProducer | None) -> bool:
    """Make an idempotent producer take a new producer id before its next batch (its sequence
    numbers start again at 0); False when it has none to renew (not idempotent, transactional,
    already waiting for one, or None).

    aiokafka has no public call for this: it resets the state its sender checks before every
    drain (``_maybe_wait_for_pid``), as ``InitProducerId`` found it at the start.
    ``test_producer_ids`` pins these internals to the locked aiokafka version.
    """
    manager = getattr(producer, "_txn_manager", None)
    if not isinstance(manager, TransactionManager) or manager.transactional_id is not None:
        return False
    if not manager.has_pid():
        return False
    manager._pid_and_epoch = PidAndEpoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    manager._pid_waiter = asyncio.get_running_loop().create_future()
    manager._sequence_numbers.clear()
    return True


async def confirmed(producer: AIOKafkaProducer | None, sent: Sequence[Awaitable[Any]]) -> None:
    """Wait until the broker answered every record sent; when some failed, renew the
    producer's id once (its numbering may have a gap now) and raise the first failure."""
    answers = await asyncio.gather(*sent, return_exceptions=True)
    failures = [a for a in answers if isinstance(a, BaseException)]
    if not failures:
        return
    if any(isinstance(f, KafkaError) for f in failures) and renew_producer_id(producer):
        log.warning(
            "a send failed; the producer takes a new producer id",
            extra={"error": repr(failures[0]), "failed": len(failures)},
        )
    raise failures[0]


class ProducerStopped(Exception):
    """The producer's sender task ended: nothing given to the producer is sent any more."""


def check_sending(producer: AIOKafkaProducer | None) -> None:
    """Raise ``ProducerStopped`` when the producer's sender task has ended (nothing to check
    before the producer started)."""
    task = getattr(getattr(producer, "_sender", None), "sender_task", None)
    if isinstance(task, asyncio.Future) and task.done():
        raise ProducerStopped
