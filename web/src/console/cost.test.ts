import { describe, expect, it } from "vitest";

import { accruedMicros, elapsedSeconds, liveCostMicros, ticks, type Ticking } from "./cost";

const START = "2026-12-01T10:00:00Z";
const lease: Ticking = { billing: "second", status: "running", price_per_gpu_hour: "3.60", gpus: 2, ends_at: null, cost_so_far: "0" };
const at = (seconds: number) => Date.parse(START) + seconds * 1000;

describe("the ticking cost of a per-second lease", () => {
  it("accrues by the whole second, exactly", () => {
    // 3.60 × 2 GPUs = 7.20 an hour = 0.002 a second.
    expect(liveCostMicros(lease, START, at(1))).toBe(2_000n);
    expect(liveCostMicros(lease, START, at(1.999))).toBe(2_000n);
    expect(liveCostMicros(lease, START, at(90))).toBe(180_000n);
  });

  it("rounds half to even as the gateway does", () => {
    // 1 micro-unit an hour for one second: 1/3600 → 0; 1800 s → 0.5 → 0 (even); 5400 s → 1.5 → 2.
    expect(accruedMicros(1n, 1, 1)).toBe(0n);
    expect(accruedMicros(1n, 1, 1800)).toBe(0n);
    expect(accruedMicros(1n, 1, 5400)).toBe(2n);
  });

  it("never shows less than billing charged, nor counts before the start", () => {
    expect(liveCostMicros({ ...lease, cost_so_far: "0.5" }, START, at(10))).toBe(500_000n);
    expect(liveCostMicros(lease, START, at(-30))).toBe(0n);
  });

  it("stops at the lease's end", () => {
    const ending = { ...lease, ends_at: "2026-12-01T10:01:00Z" };
    expect(elapsedSeconds(START, ending.ends_at, at(3600))).toBe(60);
    expect(liveCostMicros(ending, START, at(3600))).toBe(120_000n);
  });

  it("does not tick for hourly or ended leases: they cost what was charged", () => {
    const hourly = { ...lease, billing: "hour" as const, cost_so_far: "7.2" };
    expect(ticks(hourly)).toBe(false);
    expect(liveCostMicros(hourly, START, at(7200))).toBe(7_200_000n);
    const ended = { ...lease, status: "ended", cost_so_far: "0.01" };
    expect(ticks(ended)).toBe(false);
    expect(liveCostMicros(ended, START, at(7200))).toBe(10_000n);
    expect(ticks({ ...lease, status: "interrupting" })).toBe(true);
    expect(ticks({ ...lease, status: "provisioning" })).toBe(false);
  });
});
