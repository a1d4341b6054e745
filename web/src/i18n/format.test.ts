import { describe, expect, it } from "vitest";

import { Formats } from "./format";

const NBSP = "\u00a0";

describe("formats per locale", () => {
  it("writes German as the reference page does", () => {
    const de = new Formats("de");
    expect(de.bandwidth(1008)).toBe("1.008 GB/s");
    expect(de.money("0.33", "USD")).toBe(`0,33${NBSP}$`);
    expect(de.money("1.5", "EUR")).toBe(`1,50${NBSP}€`);
    expect(de.money("0.3345", "GBP")).toBe(`0,3345${NBSP}£`);
    expect(de.parameters(15)).toBe(`15${NBSP}Mrd.`);
    expect(de.memory(141)).toBe("141 GB");
    expect(de.moneyExact("0.000123", "USD")).toBe(`0,000123${NBSP}$`);
    expect(de.moneyExact("12.5", "EUR")).toBe(`12,50${NBSP}€`);
  });

  it("writes English with English separators and symbols", () => {
    const en = new Formats("en");
    expect(en.bandwidth(1008)).toBe("1,008 GB/s");
    expect(en.money("0.33", "USD")).toBe("$0.33");
    expect(en.money("2.88", "EUR")).toBe("€2.88");
    expect(en.parameters(110)).toBe("110B");
  });

  it("formats a decimal string exactly, with no float in between", () => {
    expect(new Formats("en").money("0.1001", "USD")).toBe("$0.1001");
    expect(new Formats("en").money("99999.9999", "USD")).toBe("$99,999.9999");
  });

  it("writes estimates: hours, GiB and counts", () => {
    const de = new Formats("de");
    const en = new Formats("en");
    expect(de.hours(1.0234)).toBe(`1,02${NBSP}Std.`);
    expect(en.hours(1.0234)).toBe(`1.02${NBSP}hr`);
    expect(de.gib(21.83)).toBe(`21,8${NBSP}GiB`);
    expect(en.gib(149.1)).toBe(`149.1${NBSP}GiB`);
    expect(de.count(10_240_000)).toBe("10.240.000");
    expect(en.count(10_240_000)).toBe("10,240,000");
  });
});
