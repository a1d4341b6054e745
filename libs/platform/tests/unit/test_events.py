from datetime import UTC, datetime, timedelta, timezone
from typing import ClassVar, Literal

import pytest
from pydantic import ValidationError

from gpux_contracts.events import (
    Envelope,
    EventCodec,
    Payload,
    TraceContext,
    UnknownEventError,
    wrap,
)
from gpux_contracts.ids import new_id, stable_id


class ThingHappened(Payload):
    event_type: ClassVar[str] = "thing.happened"
    schema_version: ClassVar[int] = 1
    thing_id: str
    size: int


class ThingHappenedV2(Payload):
    event_type: ClassVar[str] = "thing.happened"
    schema_version: ClassVar[int] = 2
    thing_id: str
    size: int
    colour: Literal["red", "blue"]


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TRACE = TraceContext(traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")


def test_wrap_takes_type_and_version_from_the_payload() -> None:
    envelope = wrap(ThingHappened(thing_id="a", size=3), producer="catalog", occurred_at=NOW)
    assert envelope.event_type == "thing.happened"
    assert envelope.schema_version == 1
    assert envelope.headers() == {"gpux-event-type": "thing.happened", "gpux-event-version": "1"}


def test_codec_round_trips_and_dispatches_on_version() -> None:
    codec: EventCodec[Payload] = EventCodec(ThingHappened, ThingHappenedV2)
    first = wrap(ThingHappened(thing_id="a", size=3), producer="p", occurred_at=NOW, trace=TRACE)
    second = wrap(
        ThingHappenedV2(thing_id="b", size=4, colour="red"), producer="p", occurred_at=NOW
    )
    assert codec.decode(first.model_dump_json()).payload == first.payload
    assert codec.decode(first.model_dump_json()).trace == TRACE
    assert isinstance(codec.decode(second.model_dump_json()).payload, ThingHappenedV2)


def test_codec_refuses_unknown_types() -> None:
    codec: EventCodec[Payload] = EventCodec(ThingHappened)
    other = wrap(ThingHappenedV2(thing_id="b", size=4, colour="red"), producer="p", occurred_at=NOW)
    with pytest.raises(UnknownEventError):
        codec.decode(other.model_dump_json())


def test_occurred_at_must_be_aware_and_is_stored_in_utc() -> None:
    cet = timezone(timedelta(hours=1))
    envelope = wrap(
        ThingHappened(thing_id="a", size=1),
        producer="p",
        occurred_at=datetime(2026, 1, 1, 13, tzinfo=cet),
    )
    assert envelope.occurred_at == datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert envelope.occurred_at.utcoffset() == timedelta(0)
    with pytest.raises(ValidationError):
        Envelope[ThingHappened](
            event_id="x",
            event_type="thing.happened",
            schema_version=1,
            occurred_at=datetime(2026, 1, 1),  # naive: refused
            producer="p",
            payload=ThingHappened(thing_id="a", size=1),
        )


def test_payloads_refuse_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        ThingHappened.model_validate({"thing_id": "a", "size": 1, "extra": True})


def test_bad_traceparent_is_refused() -> None:
    with pytest.raises(ValidationError):
        TraceContext(traceparent="not-a-trace")


def test_ids_are_unique_and_sortable_and_stable_ids_are_deterministic() -> None:
    ids = [new_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert ids == sorted(ids) or len({i[:10] for i in ids}) == 1
    assert stable_id("acct", "key-1") == stable_id("acct", "key-1")
    assert stable_id("acct", "key-1") != stable_id("acct", "key-2")
    assert stable_id("ab", "c") != stable_id("a", "bc")
