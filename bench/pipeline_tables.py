"""The pipeline benchmark's tables, one per section, from the figures each section returns."""

from __future__ import annotations

from typing import Any

from pipeline_report import LATENCY_HEADERS, counts, latency_row, ms, table


def _cpu(cpu: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in cpu.items()) or "-"


def limits_tables(figures: dict[str, Any]) -> str:
    """The front door's and the broker's limits."""
    door = figures["front_door"]
    broker = figures["broker"]
    rows = [
        [
            f"front door ({door['stack']}, 1 INSERT)",
            door["accepted_per_s"],
            counts(door["statuses"]),
            ms(door["response_latency"]["p50_ms"]),
            ms(door["response_latency"]["p99_ms"]),
        ],
        [
            f"broker: produce→consume, burst of {broker['burst']:,}",
            broker["produce_consume_per_s"],
            f"produce alone {broker['produce_per_s']:,}/s",
            ms(broker["round_trip"].get("p50_ms")),
            ms(broker["round_trip"].get("p99_ms")),
        ],
    ]
    out = table("limits of this box", ("", "per s", "answers", "p50 ms", "p99 ms"), rows)
    return (
        f"{out}\nfront door: {door['connections']} connections,"
        f" {door['duration_s']:g} s (closed loop); CPU % of a core: {_cpu(door['cpu_pct'])}\n"
        f"load generator: {_generator(door['generator'])}\n"
        f"broker: p50/p99 are sequential round trips ({broker['round_trips']}),"
        f" produce→consume on one partition, acks=all"
    )


def latency_table(figures: dict[str, Any]) -> str:
    """Sequential market orders."""
    rows = [
        latency_row("POST → 202", figures["post_202"]),
        latency_row("POST → filled (GET)", figures["post_to_filled_get"]),
        latency_row("POST → best ask changed (stream)", figures["post_to_stream"]),
    ]
    out = table(f"latency: {figures['orders']} sequential market orders", LATENCY_HEADERS, rows)
    return f"{out}\noutcomes: {counts(figures['outcomes'])}; GET polled every" + (
        f" {figures['poll_interval_ms']:g} ms"
    )


def _open_row(phase: dict[str, Any]) -> list[Any]:
    follow = phase["follow_latency"]
    server = phase["server_accept_to_filled"]
    return [
        f"{phase['label']} {phase['offered_per_s']:g}/s",
        phase["accepted_per_s"],
        phase["filled_per_s_in_window"],
        f"{phase['filled_total']:,}/{phase['accepted']:,}",
        ms(phase["response_latency"]["p50_ms"]),
        ms(follow["p50_ms"]),
        ms(follow["p90_ms"]),
        ms(follow["p99_ms"]),
        ms(follow["max_ms"]),
        ms(server["p50_ms"]),
        ms(server["p99_ms"]),
    ]


def open_tables(phases: list[dict[str, Any]]) -> str:
    """Open loops: rates, latencies, lag, statuses, CPU."""
    headers = (
        "offered",
        "accepted/s",
        "filled/s",
        "filled/acc.",
        "202 p50",
        "fill p50",
        "p90",
        "p99",
        "max",
        "srv p50",
        "srv p99",
    )
    out = [table("open loop: market orders (ms)", headers, [_open_row(p) for p in phases])]
    every = sorted({g for p in phases for g in p["lag"]})
    groups = [g for g in every if any(_lagged(p, g) for p in phases)]
    rows = [
        [group] + [_lag_cell(p["lag"].get(group), p["lag_after_drain"].get(group)) for p in phases]
        for group in groups
    ]
    lag_headers = ["consumer group (lag mid→end, after drain)"] + [
        f"{p['label']} {p['offered_per_s']:g}/s" for p in phases
    ]
    out.append(table("consumer lag", lag_headers, rows))
    idle = [g for g in every if g not in groups]
    out.append(f"groups that never lagged: {', '.join(idle) or 'none'}")
    out += [_phase_notes(p) for p in phases]
    return "\n".join(out)


def _errors(errors: dict[str, int]) -> str:
    return f" (client errors: {counts(errors)})" if errors else ""


def _lagged(phase: dict[str, Any], group: str) -> bool:
    lag = phase["lag"].get(group) or {}
    return bool(lag.get("mid") or lag.get("end") or phase["lag_after_drain"].get(group))


def _generator(figures: dict[str, Any]) -> str:
    return (
        f"{figures['workers']} client processes, {figures['cpu_s']} CPU s,"
        f" {figures['avg_core_pct_per_worker']} % of a core each"
    )


def _phase_notes(p: dict[str, Any]) -> str:
    settled = p["settled_before"]
    lagging = counts(settled["still_lagging"]) if settled["still_lagging"] else "none"
    return (
        f"{p['label']} {p['offered_per_s']:g}/s: statuses {counts(p['statuses'])}"
        f" (Retry-After on {counts(p['with_retry_after'])}), skipped client-side"
        f" {p['skipped_client_side']}{_errors(p['errors'])};"
        f" before it the lag settled for {settled['waited_s']} s"
        f" (groups still over 100: {lagging})\n"
        f"  after the window: {p['final']:,}/{p['accepted']:,} final"
        f" ({counts(p['final_statuses'])}), last fill {p['last_fill_after_window_s']} s after"
        f" the window; sampled fills {counts(p['followed'])}"
        f" ({p['follow_polls_per_s']} GET/s to see them)\n"
        f"  CPU % of a core: {_cpu(p['cpu_pct'])}\n  load generator: {_generator(p['generator'])}"
    )


def _lag_cell(lag: dict[str, Any] | None, after: int | None) -> str:
    if lag is None:
        return "-"
    return f"{lag['mid']}→{lag['end']} {lag['trend']}, {after}"


def _lags(lags: dict[str, Any]) -> str:
    busy = {g: v for g, v in lags.items() if v["mid"] or v["end"]}
    return ", ".join(f"{g} {v['mid']}→{v['end']} {v['trend']}" for g, v in busy.items()) or "none"


def sellers_tables(figures: dict[str, Any]) -> str:
    """Bulk offers and re-pricing."""
    bulk = figures["bulk"]
    out = [
        table(
            f"sellers: {bulk['offers']:,} offers in bulk",
            LATENCY_HEADERS,
            [latency_row("POST → live (own list)", bulk["post_to_live"])],
        ),
        f"bulk requests answered in {bulk['bulk_requests_202_s']} s; live {bulk['live']:,}"
        f" (refused {bulk['refused']}); all live after {bulk['all_live_s']} s"
        f" ({bulk['live_per_s']} offers/s); best ask right after {bulk['best_ask_right_s']} s",
    ]
    again = figures.get("reprice")
    if again:
        rows = [
            latency_row("PATCH → 202", again["response_latency"]),
            latency_row("PATCH → own view (sampled)", again["follow_latency"]),
            latency_row("probe → best ask (GET /v1/prices)", again["probe_best_ask_get"]),
            latency_row("probe → best ask (stream)", again["probe_best_ask_stream"]),
            latency_row("probe → own view (GET /v1/offers/{id})", again["probe_own_view"]),
        ]
        out.append(
            table(
                f"re-pricing: {again['target_per_s']:g} PATCH/s for {again['duration_s']:g} s"
                f" (accepted {again['accepted_per_s']}/s)",
                LATENCY_HEADERS,
                rows,
            )
        )
        out.append(
            f"statuses {counts(again['statuses'])}; followed {counts(again['followed'])}"
            f" ({again['follow_polls_per_s']} GET/s);"
            f" probes {again['probes']}, not seen in 10 s: {counts(again['probes_not_seen'])}\n"
            f"  lag (mid→end): {_lags(again['lag'])}\n"
            f"  CPU % of a core: {_cpu(again['cpu_pct'])}\n"
            f"  load generator: {_generator(again['generator'])}"
        )
    return "\n".join(out)


def summary_table(result: dict[str, Any]) -> str:
    """The ratios to the limits and the machine's load."""
    ratios = result.get("ratios", {})
    rows = [[name, f"{100 * value:.2f} %"] for name, value in ratios.items()]
    out = table("pipeline / limits", ("", "ratio"), rows) if rows else ""
    return (
        f"{out}\nload average at start {result['load_average_start']},"
        f" at end {result['load_average_end']}; {result['machine']}"
    )
