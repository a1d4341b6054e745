// The market table's rows and their order: the catalog's (memory, then bandwidth: the
// reference page's) unless a column is chosen; rows without a price always last.
import type { Gpu } from "../api/client";

export type SortKey = "gpu" | "memory" | "bandwidth" | "qlora" | "lora16" | "full" | "price";
/** The market's columns (the reference page's); the guide adds full fine-tuning. */
export const SORT_KEYS: readonly SortKey[] = ["gpu", "memory", "bandwidth", "qlora", "lora16", "price"];
export const GUIDE_KEYS: readonly SortKey[] = ["gpu", "memory", "bandwidth", "qlora", "lora16", "full", "price"];

export interface Sort {
  readonly key: SortKey;
  readonly descending: boolean;
}

export interface Row {
  readonly gpu: Gpu;
  /** The catalog's position. */
  readonly index: number;
  readonly ask: { readonly price: string; readonly gpus: number } | null | undefined;
}

/** A decimal string as integer micro-units (the exchange's scale), for exact comparison. */
export function toMicros(amount: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6})\d*)?$/.exec(amount.trim());
  if (match === null) throw new Error(`not a decimal amount: ${amount}`);
  const [, sign = "", whole = "0", fraction = ""] = match;
  const micros = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
  return sign === "-" ? -micros : micros;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function value(row: Row, key: Exclude<SortKey, "gpu" | "price">): number {
  switch (key) {
    case "memory":
      return row.gpu.memory_gb;
    case "bandwidth":
      return row.gpu.bandwidth_gb_s;
    case "qlora":
      return row.gpu.fit.qlora_b;
    case "lora16":
      return row.gpu.fit.lora16_b;
    case "full":
      return row.gpu.fit.full_b;
  }
}

/** The next order when a column's header is pressed: ascending first, then descending. */
export function nextSort(current: Sort | null, key: SortKey): Sort {
  return current?.key === key && !current.descending ? { key, descending: true } : { key, descending: false };
}

export function sortRows(rows: readonly Row[], sort: Sort | null, collator: Intl.Collator): Row[] {
  const sorted = [...rows];
  if (sort === null) return sorted.sort((a, b) => a.index - b.index);
  const direction = sort.descending ? -1 : 1;
  return sorted.sort((a, b) => {
    let order: number;
    if (sort.key === "price") {
      const pa = a.ask?.price;
      const pb = b.ask?.price;
      if (pa === undefined || pb === undefined) {
        // no price last, whichever the direction
        order = pa === undefined ? (pb === undefined ? 0 : 1) : -1;
        return order !== 0 ? order : a.index - b.index;
      }
      order = compareNumbers(toMicros(pa), toMicros(pb));
    } else if (sort.key === "gpu") {
      order = collator.compare(a.gpu.name, b.gpu.name);
    } else {
      order = compareNumbers(value(a, sort.key), value(b, sort.key));
    }
    return order !== 0 ? order * direction : a.index - b.index;
  });
}
