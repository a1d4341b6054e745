from datetime import UTC, datetime, timedelta

from gpux_gateway.domain.windows import check_window

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def test_a_deadline_must_be_in_the_future_and_within_a_year_and_a_day() -> None:
    assert check_window(None, NOW) is None
    assert check_window(NOW + timedelta(hours=1), NOW) is None
    assert check_window(NOW, NOW) == "available_until: must be in the future"
    assert check_window(NOW + timedelta(days=367), NOW, field="expires_at") == (
        "expires_at: at most 366 days ahead"
    )
