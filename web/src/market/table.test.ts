import { describe, expect, it } from "vitest";

import type { Gpu } from "../api/client";
import { nextSort, sortRows, toMicros, type Row } from "./table";

function gpu(id: string, memory: number, bandwidth: number): Gpu {
  return {
    id,
    name: id.toUpperCase(),
    vendor: "NVIDIA",
    architecture: "Test",
    memory_gb: memory,
    memory_type: "HBM3",
    bandwidth_gb_s: bandwidth,
    bf16_tflops: 1,
    fp16_tflops: 1,
    fp8_tflops: null,
    tdp_w: 300,
    form_factor: "SXM",
    interconnect: "NVLink",
    source: "https://example.invalid",
    fit: { qlora_b: memory, lora16_b: memory / 2, full_b: 1, inference_fp16_b: 1, inference_int8_b: 1, inference_int4_b: 1 },
    data_version: 1,
  };
}

const ROWS: Row[] = [
  { gpu: gpu("a", 24, 1008), index: 0, ask: { price: "0.69", gpus: 1 } },
  { gpu: gpu("b", 48, 768), index: 1, ask: null },
  { gpu: gpu("c", 80, 3350), index: 2, ask: { price: "2.88", gpus: 1 } },
  { gpu: gpu("d", 80, 2039), index: 3, ask: { price: "0.7", gpus: 1 } },
  { gpu: gpu("e", 141, 4800), index: 4, ask: undefined },
];
const collator = new Intl.Collator("en");
const ids = (rows: Row[]) => rows.map((row) => row.gpu.id).join("");

describe("the market table's order", () => {
  it("is the catalog's without a choice", () => {
    expect(ids(sortRows([...ROWS].reverse(), null, collator))).toBe("abcde");
  });

  it("sorts prices exactly, rows without a price last in either direction", () => {
    expect(ids(sortRows(ROWS, { key: "price", descending: false }, collator))).toBe("adcbe");
    expect(ids(sortRows(ROWS, { key: "price", descending: true }, collator))).toBe("cdabe");
  });

  it("sorts numbers, ties in the catalog's order", () => {
    expect(ids(sortRows(ROWS, { key: "memory", descending: true }, collator))).toBe("ecdba");
    expect(ids(sortRows(ROWS, { key: "bandwidth", descending: false }, collator))).toBe("badce");
  });

  it("goes ascending, then descending, then ascending on another column", () => {
    const first = nextSort(null, "price");
    expect(first).toEqual({ key: "price", descending: false });
    expect(nextSort(first, "price")).toEqual({ key: "price", descending: true });
    expect(nextSort(nextSort(first, "price"), "memory")).toEqual({ key: "memory", descending: false });
  });

  it("reads decimal strings as micro-units", () => {
    expect(toMicros("0.33")).toBe(330_000n);
    expect(toMicros("12")).toBe(12_000_000n);
    expect(toMicros("0.000001")).toBe(1n);
    expect(() => toMicros("1e3")).toThrow();
  });
});
