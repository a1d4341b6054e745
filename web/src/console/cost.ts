// A per-second lease's cost as it ticks on screen: price × GPUs × whole seconds since the
// lease started (its machines were ready) up to now or its end, ÷ 3600, in micro-units,
// half-to-even (the gateway's `cost_so_far_micros`), never below what billing charged. An
// hourly lease is charged in advance and an ended one is final: they cost what was charged.
import type { Billing } from "../api/client";
import { toMicros } from "../market/table";
import { divHalfEven } from "../guide/finder";

export interface Ticking {
  readonly billing: Billing;
  readonly status: string;
  readonly price_per_gpu_hour: string;
  readonly gpus: number;
  readonly ends_at: string | null;
  readonly cost_so_far: string;
}

const RUNNING = new Set(["running", "interrupting"]);

/** Whether the lease's cost grows by the second (what the page re-renders every second). */
export function ticks(lease: Ticking): boolean {
  return lease.billing === "second" && RUNNING.has(lease.status);
}

/** price per GPU-hour (micros) × GPUs × seconds ÷ 3600, half-to-even. */
export function accruedMicros(priceMicrosPerGpuHour: bigint, gpus: number, seconds: number): bigint {
  return divHalfEven(priceMicrosPerGpuHour * BigInt(gpus) * BigInt(seconds), 3600n);
}

/** Whole seconds from `startIso` to `nowMs` (or the lease's end, if earlier); never negative. */
export function elapsedSeconds(startIso: string, endsAtIso: string | null, nowMs: number): number {
  const until = endsAtIso === null ? nowMs : Math.min(nowMs, Date.parse(endsAtIso));
  return Math.max(0, Math.floor((until - Date.parse(startIso)) / 1000));
}

/** The lease's cost at `nowMs`, in micro-units of its currency; `startIso` is when it began
 * to be charged (ready, or started when its machines were ready at the start). */
export function liveCostMicros(lease: Ticking, startIso: string, nowMs: number): bigint {
  const known = toMicros(lease.cost_so_far);
  if (!ticks(lease)) return known;
  const accrued = accruedMicros(toMicros(lease.price_per_gpu_hour), lease.gpus, elapsedSeconds(startIso, lease.ends_at, nowMs));
  return accrued > known ? accrued : known;
}
