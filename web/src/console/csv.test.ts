import { describe, expect, it } from "vitest";

import type { LedgerLine } from "../api/client";
import { offerRows, parseCsv, statementCsv, toCsv } from "./csv";

describe("CSV parsing", () => {
  it("reads quoted fields with commas, quotes and line breaks, CRLF or LF, and a BOM", () => {
    const text = '\ufeffa,b,c\r\n"x, y","say ""hi""","two\nlines"\n1,,3\n';
    expect(parseCsv(text)).toEqual([
      ["a", "b", "c"],
      ["x, y", 'say "hi"', "two\nlines"],
      ["1", "", "3"],
    ]);
  });

  it("skips blank lines and keeps a last line without a line end", () => {
    expect(parseCsv("a,b\n\n1,2")).toEqual([["a", "b"], ["1", "2"]]);
    expect(parseCsv("")).toEqual([]);
  });

  it("round-trips what it writes", () => {
    const rows = [["plain", "with,comma", 'with "quote"', "multi\r\nline", ""]];
    expect(parseCsv(toCsv(rows))).toEqual(rows);
    expect(toCsv([["a", "b,c"]])).toBe('a,"b,c"\r\n');
  });
});

describe("the bulk offer upload", () => {
  it("turns each row into an offer, columns in any order, defaults for the optional ones", () => {
    const rows = offerRows(
      "price_per_gpu_hour,gpu,gpus,currency,billing,provisioning_timeout_seconds,interruptible_price_per_gpu_hour\n" +
        "1.79,h100-sxm,8,USD,second,0,0.99\n2.10,a100-sxm-80gb,4,EUR,,,\n",
    );
    expect(rows).toEqual([
      { line: 2, offer: { gpu: "h100-sxm", gpus: 8, price_per_gpu_hour: "1.79", currency: "USD", tier: "on_demand", billing: "second", provisioning_timeout_seconds: 0, interruption_notice_seconds: 120, interruptible_price_per_gpu_hour: "0.99" } },
      { line: 3, offer: { gpu: "a100-sxm-80gb", gpus: 4, price_per_gpu_hour: "2.10", currency: "EUR", tier: "on_demand", billing: "hour", provisioning_timeout_seconds: 600, interruption_notice_seconds: 120 } },
    ]);
  });

  it("names the line and the column of each row it cannot use", () => {
    const rows = offerRows("gpu,gpus,price_per_gpu_hour,currency,tier\nl4,two,0.2,USD,\nl4,1,,USD,\nl4,1,0.2,JPY,\nl4,1,0.2,USD,spot\nl4,1,0.2,USD,on_demand,extra\n");
    expect(rows).toEqual([
      { line: 2, problem: { kind: "invalid", column: "gpus" } },
      { line: 3, problem: { kind: "missing", column: "price_per_gpu_hour" } },
      { line: 4, problem: { kind: "invalid", column: "currency" } },
      { line: 5, problem: { kind: "invalid", column: "tier" } },
      { line: 6, problem: { kind: "columns" } },
    ]);
  });
});

describe("the statement export", () => {
  it("writes a header and one row per line, amounts as given", () => {
    const line: LedgerLine = {
      transfer_id: "t1", kind: "charge", created_at: "2026-12-01T10:00:00Z", reference: "lease 01, stop",
      account_kind: "available", currency: "USD", amount: "-0.0123", fx_rate: null, fx_base: null, fx_quote: null, fx_rate_at: null,
    };
    const rows = parseCsv(statementCsv([line]));
    expect(rows[0]).toEqual(["created_at", "kind", "reference", "account_kind", "currency", "amount", "fx_rate", "fx_base", "fx_quote", "transfer_id"]);
    expect(rows[1]).toEqual(["2026-12-01T10:00:00Z", "charge", "lease 01, stop", "available", "USD", "-0.0123", "", "", "", "t1"]);
  });
});
