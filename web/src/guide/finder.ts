// The "what fits" finder's arithmetic: the gateway's recommendation gives each GPU that holds
// the job its GPU-hours (the estimator's, rounded up to 0.0001 h); the job's cost is those
// GPU-hours at the GPU's live best ask, exact in micro-units (half-to-even, the exchange's one
// rounding rule), and the order is the estimator's (`rank_gpus_for_job`): priced GPUs first,
// cheapest first, then the unpriced ones fastest first, ties by hours and then by id.
import type { Currency, Recommendation } from "../api/client";
import { toMicros } from "../market/table";

/** A decimal as an integer and a power of ten: 1.0234 → { digits: 10234n, scale: 4 }. */
export interface Scaled {
  readonly digits: bigint;
  readonly scale: number;
}

/** A JSON number or decimal string, read exactly as written (no float arithmetic). */
export function parseDecimal(value: number | string): Scaled {
  const text = typeof value === "number" ? String(value) : value.trim();
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (match === null) throw new Error(`not a non-negative decimal: ${text}`);
  const [, whole = "0", fraction = "", exponent = "0"] = match;
  let digits = BigInt(whole + fraction);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits, scale };
}

/** numerator / denominator rounded half-to-even (gpux_contracts.money.div_half_even). */
export function divHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new Error("the denominator must be positive");
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  const twice = 2n * remainder;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) return quotient + 1n;
  return quotient;
}

/** GPU-hours × a price per GPU-hour, in micro-units of the price's currency. */
export function jobCostMicros(gpuHours: number | string, pricePerGpuHour: string): bigint {
  const hours = parseDecimal(gpuHours);
  return divHalfEven(hours.digits * toMicros(pricePerGpuHour), 10n ** BigInt(hours.scale));
}

/** Micro-units as a decimal string: 1234567n → "1.234567". */
export function fromMicros(micros: bigint): string {
  const sign = micros < 0n ? "-" : "";
  const magnitude = micros < 0n ? -micros : micros;
  const whole = magnitude / 1_000_000n;
  const fraction = (magnitude % 1_000_000n).toString().padStart(6, "0");
  return `${sign}${whole}.${fraction}`;
}

/** A GPU's best ask as the page knows it: a price, no offer (null), or not known (undefined). */
export type AskOf = (gpuId: string) => { readonly price: string } | null | undefined;

export interface RankedJob {
  readonly rank: number;
  readonly item: Recommendation;
  /** The price per GPU-hour the cost is at; null: nothing is offered. */
  readonly price: string | null;
  /** The job's cost in `currency`, a decimal string to the micro-unit; null without a price. */
  readonly cost: string | null;
  readonly costMicros: bigint | null;
}

/**
 * The recommended GPUs priced at the live best asks (`ask`), falling back to the price the
 * recommendation was answered with while the page does not know a GPU's ask yet; ranked as
 * the estimator ranks them.
 */
export function rankJobs(items: readonly Recommendation[], ask: AskOf, currency: Currency): RankedJob[] {
  const priced = items.map((item) => {
    const live = ask(item.gpu_id);
    const answered = item.currency === currency ? (item.price_per_gpu_hour ?? null) : null;
    const price = live === undefined ? answered : live === null ? null : live.price;
    const costMicros = price === null ? null : jobCostMicros(item.gpu_hours, price);
    // The unrounded cost orders the jobs, as the estimator's Decimal does.
    const exact = price === null ? null : exactCost(item.gpu_hours, price);
    return { item, price, costMicros, exact, cost: costMicros === null ? null : fromMicros(costMicros) };
  });
  priced.sort((a, b) => {
    if ((a.exact === null) !== (b.exact === null)) return a.exact === null ? 1 : -1;
    const cost = a.exact !== null && b.exact !== null ? compareScaled(a.exact, b.exact) : 0;
    if (cost !== 0) return cost;
    const hours = compareDecimals(a.item.hours, b.item.hours);
    if (hours !== 0) return hours;
    return a.item.gpu_id < b.item.gpu_id ? -1 : a.item.gpu_id > b.item.gpu_id ? 1 : 0;
  });
  return priced.map(({ exact: _exact, ...row }, index) => ({ rank: index + 1, ...row }));
}

/** GPU-hours × price in micro-units, unrounded: digits / 10^scale micro-units. */
function exactCost(gpuHours: number, price: string): Scaled {
  const hours = parseDecimal(gpuHours);
  return { digits: hours.digits * toMicros(price), scale: hours.scale };
}

function compareDecimals(a: number, b: number): number {
  return compareScaled(parseDecimal(a), parseDecimal(b));
}

function compareScaled(x: Scaled, y: Scaled): number {
  const scale = Math.max(x.scale, y.scale);
  const left = x.digits * 10n ** BigInt(scale - x.scale);
  const right = y.digits * 10n ** BigInt(scale - y.scale);
  return left < right ? -1 : left > right ? 1 : 0;
}
