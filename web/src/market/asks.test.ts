import { describe, expect, it } from "vitest";

import type { PriceItem, Quote } from "../api/client";
import { applyQuote, applySnapshot, askIn, NO_QUOTES } from "./asks";

const EMPTY = NO_QUOTES;

function quote(asOf: string, price: string | null, region = "*"): Quote {
  return {
    gpu: "h100-sxm",
    tier: "on_demand",
    region,
    best: price === null ? null : { offer_id: `o-${price}`, price, currency: "USD", prices: { USD: price, EUR: `${price}1` }, gpus: 2, seller_reliability: null },
    depth: [],
    as_of: asOf,
  };
}

function snapshot(asOf: string, price: string | null, currency: "EUR" | "GBP" | "USD"): PriceItem {
  return {
    gpu: "h100-sxm",
    tier: "on_demand",
    region: "*",
    currency,
    best_ask:
      price === null ? null : { offer_id: "o-2.88", price, currency, offered_price: "2.88", offered_currency: "USD", gpus: 2, seller_reliability: null },
    depth: [],
    as_of: asOf,
  };
}

describe("the best asks", () => {
  it("shows a stream event in every currency it carries", () => {
    const quotes = applyQuote(EMPTY, quote("2026-01-01T00:00:00Z", "2.88"));
    expect(askIn(quotes, "h100-sxm", "on_demand", "USD")).toEqual({ price: "2.88", gpus: 2 });
    expect(askIn(quotes, "h100-sxm", "on_demand", "EUR")).toEqual({ price: "2.881", gpus: 2 });
    expect(askIn(quotes, "h100-sxm", "on_demand", "GBP")).toBeUndefined();
    expect(askIn(quotes, "h100-sxm", "interruptible", "USD")).toBeUndefined();
  });

  it("keeps the newest quote whichever arrives last, and ignores regional books", () => {
    const newer = applyQuote(EMPTY, quote("2026-01-01T00:00:02Z", "2.50"));
    const stale = applySnapshot(newer, [snapshot("2026-01-01T00:00:01Z", "2.70", "GBP")], "*", "GBP");
    expect(askIn(stale, "h100-sxm", "on_demand", "USD")?.price).toBe("2.50");
    const regional = applyQuote(stale, quote("2026-01-01T00:00:09Z", "1.00", "eu-west"));
    expect(regional).toBe(stale);
    const gone = applyQuote(stale, quote("2026-01-01T00:00:03Z", null));
    expect(askIn(gone, "h100-sxm", "on_demand", "USD")).toBeNull();
  });

  it("adds a snapshot's currency to a quote of the same instant and offer", () => {
    const streamed = applyQuote(EMPTY, {
      ...quote("2026-01-01T00:00:00Z", "2.88"),
    });
    const both = applySnapshot(streamed, [snapshot("2026-01-01T00:00:00Z", "2.27", "GBP")], "h100-sxm", "GBP");
    expect(askIn(both, "h100-sxm", "on_demand", "GBP")?.price).toBe("2.27");
    expect(askIn(both, "h100-sxm", "on_demand", "EUR")?.price).toBe("2.881");
  });

  it("knows a book a snapshot did not list has no offer, in that snapshot's currency", () => {
    const read = applySnapshot(EMPTY, [snapshot("2026-01-01T00:00:00Z", "2.27", "GBP")], "*", "GBP");
    expect(askIn(read, "h100-sxm", "interruptible", "GBP")).toBeNull();
    expect(askIn(read, "h100-sxm", "interruptible", "USD")).toBeUndefined();
    const one = applySnapshot(EMPTY, [], "l40s", "EUR");
    expect(askIn(one, "l40s", "on_demand", "EUR")).toBeNull();
    expect(askIn(one, "h200", "on_demand", "EUR")).toBeUndefined();
  });
});
