from datetime import UTC, datetime, timedelta

from gpux_gateway.domain.windows import window_problem

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def test_a_deadline_must_be_in_the_future_and_within_a_year_and_a_day() -> None:
    # The field it is about is named by the 422's errors[] (``loc``), not by the reason.
    assert window_problem(None, NOW) is None
    assert window_problem(NOW + timedelta(hours=1), NOW) is None
    assert window_problem(NOW, NOW) == "must be in the future"
    assert window_problem(NOW + timedelta(days=367), NOW) == "at most 366 days ahead"
