import { describe, expect, it } from "vitest";

import type { Recommendation } from "../api/client";
import { divHalfEven, fromMicros, jobCostMicros, parseDecimal, rankJobs, type AskOf } from "./finder";

function item(gpu: string, gpuHours: number, extra: Partial<Recommendation> = {}): Recommendation {
  return {
    rank: 1,
    gpu_id: gpu,
    gpu_name: gpu.toUpperCase(),
    memory_gb: 80,
    headroom_gb: 10,
    headroom_pct: 12.5,
    num_gpus: 1,
    hours: gpuHours,
    gpu_hours: gpuHours,
    ...extra,
  };
}

const asks = (prices: Record<string, string | null>): AskOf => (gpu) => {
  const price = prices[gpu];
  return price === undefined ? undefined : price === null ? null : { price };
};

describe("decimals", () => {
  it("reads JSON numbers and strings exactly as written", () => {
    expect(parseDecimal(1.0234)).toEqual({ digits: 10234n, scale: 4 });
    expect(parseDecimal("0.33")).toEqual({ digits: 33n, scale: 2 });
    expect(parseDecimal(12)).toEqual({ digits: 12n, scale: 0 });
    expect(parseDecimal(1e21)).toEqual({ digits: 10n ** 21n, scale: 0 });
    expect(() => parseDecimal("-1")).toThrow();
  });

  it("rounds half to even, like the exchange", () => {
    expect(divHalfEven(5n, 2n)).toBe(2n);
    expect(divHalfEven(7n, 2n)).toBe(4n);
    expect(divHalfEven(11n, 4n)).toBe(3n);
    expect(divHalfEven(9n, 4n)).toBe(2n);
  });

  it("prices GPU-hours exactly, to the micro-unit", () => {
    // 1.0234 h × 2.88 = 2.947392 exactly
    expect(jobCostMicros(1.0234, "2.88")).toBe(2_947_392n);
    // 0.0001 h × 0.000015 = 0.0000000015 → 0 micros (half-to-even of 0.0015)
    expect(jobCostMicros(0.0001, "0.000015")).toBe(0n);
    // 0.0001 h × 0.025 = 0.0000025 → 2 micros (2.5 rounds to even)
    expect(jobCostMicros(0.0001, "0.025")).toBe(2n);
    // 0.0001 h × 0.035 = 0.0000035 → 4 micros (3.5 rounds to even)
    expect(jobCostMicros(0.0001, "0.035")).toBe(4n);
    expect(fromMicros(2_947_392n)).toBe("2.947392");
    expect(fromMicros(5n)).toBe("0.000005");
    expect(fromMicros(-1_500_000n)).toBe("-1.500000");
  });
});

describe("rankJobs", () => {
  it("puts the cheapest job first, whatever is fastest", () => {
    const items = [item("h100", 1.02), item("rtx-4090", 6.1), item("a100", 2)];
    const ranked = rankJobs(items, asks({ h100: "2.88", "rtx-4090": "0.33", a100: "1.79" }), "USD");
    expect(ranked.map((r) => r.item.gpu_id)).toEqual(["rtx-4090", "h100", "a100"]);
    expect(ranked.map((r) => r.cost)).toEqual(["2.013000", "2.937600", "3.580000"]);
    expect(ranked.map((r) => r.rank)).toEqual([1, 2, 3]);
  });

  it("puts GPUs without an offer last, fastest first, then by id", () => {
    const items = [item("c", 3), item("b", 1), item("a", 1), item("d", 9)];
    const ranked = rankJobs(items, asks({ a: null, b: null, c: null, d: "1" }), "USD");
    expect(ranked.map((r) => r.item.gpu_id)).toEqual(["d", "a", "b", "c"]);
    expect(ranked.slice(1).every((r) => r.cost === null && r.price === null)).toBe(true);
  });

  it("breaks equal costs by hours, then by id", () => {
    const items = [item("b", 2), item("a", 2), item("c", 1)];
    const ranked = rankJobs(items, asks({ a: "1", b: "1", c: "2" }), "USD");
    expect(ranked.map((r) => r.item.gpu_id)).toEqual(["c", "a", "b"]);
  });

  it("orders by the unrounded cost, as the estimator does", () => {
    // 0.0001 h × 0.000015 and × 0.000014: both round to 0 micros, b is still the cheaper
    const items = [item("a", 0.0001), item("b", 0.0001)];
    const ranked = rankJobs(items, asks({ a: "0.000015", b: "0.000014" }), "USD");
    expect(ranked.map((r) => [r.item.gpu_id, r.cost])).toEqual([["b", "0.000000"], ["a", "0.000000"]]);
  });

  it("takes the answered price until the live one is known, and the live one after", () => {
    const items = [
      item("x", 1, { price_per_gpu_hour: "5", cost: "5", currency: "USD" }),
      item("y", 1, { price_per_gpu_hour: "4", cost: "4", currency: "USD" }),
    ];
    expect(rankJobs(items, asks({}), "USD").map((r) => r.item.gpu_id)).toEqual(["y", "x"]);
    // the stream says x is now 3 and y has no offer left
    const live = rankJobs(items, asks({ x: "3", y: null }), "USD");
    expect(live.map((r) => [r.item.gpu_id, r.cost])).toEqual([["x", "3.000000"], ["y", null]]);
  });

  it("never uses an answered price of another currency", () => {
    const items = [item("x", 1, { price_per_gpu_hour: "5", cost: "5", currency: "USD" })];
    expect(rankJobs(items, asks({}), "EUR")[0]?.cost).toBeNull();
  });
});
