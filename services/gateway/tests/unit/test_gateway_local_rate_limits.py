"""The per-process windows the rate limiter counts in while Redis is down: the same moving
window as the Redis script, in memory, forgetting windows that ended."""

from __future__ import annotations

from gpux_gateway.adapters.redis.ratelimit import SWEEP_EVERY, LocalWindows


def test_a_window_of_three_admits_three_then_refuses_until_the_oldest_leaves() -> None:
    windows = LocalWindows()
    verdicts = [windows.hit("k", 3, 60, now) for now in (0.0, 1.0, 2.0, 3.0)]
    assert verdicts == [(True, 1, 0.0), (True, 2, 0.0), (True, 3, 0.0), (False, 3, 0.0)]
    assert windows.hit("k", 3, 60, 60.5) == (True, 3, 1.0)  # the request at 0.0 left
    assert windows.hit("other", 3, 60, 60.5) == (True, 1, 60.5)  # windows are per key


def test_windows_that_ended_are_forgotten() -> None:
    windows = LocalWindows()
    windows.hit("old", 5, 60, 0.0)
    windows.hit("long", 5, 3600, 0.0)
    for n in range(SWEEP_EVERY - 2):
        windows.hit("busy", 10**6, 60, 100.0 + n / 1000)
    assert len(windows) == 2  # "old" ended (60 s), "long" has not (1 h)
    assert windows.hit("long", 5, 3600, 200.0) == (True, 2, 0.0)
