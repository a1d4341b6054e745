import { describe, expect, it } from "vitest";

import type { Quote } from "./client";
import { PriceStream, retryAfterMs, type StreamState } from "./priceStream";

const QUOTE: Quote = {
  gpu: "rtx-4090",
  tier: "on_demand",
  region: "*",
  best: { offer_id: "o1", price: "0.33", currency: "USD", prices: { USD: "0.33", EUR: "0.3" }, gpus: 4, seller_reliability: null },
  depth: [],
  as_of: "2026-01-01T00:00:00Z",
};

function body(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice(0, 10));
      controller.enqueue(bytes.slice(10));
      controller.close();
    },
  });
}

interface Call {
  readonly headers: Record<string, string>;
}

/** A stream whose connections answer `answers` in turn; the last one stops it. */
function run(answers: (() => Response)[]) {
  const calls: Call[] = [];
  const quotes: Quote[] = [];
  const states: StreamState[] = [];
  const waits: number[] = [];
  let fresh = 0;
  let stream: PriceStream | undefined = undefined;
  let finished: () => void = () => undefined;
  /** Resolves once the last answer was given and the stream's loop has ended. */
  const done = new Promise<void>((resolve) => (finished = resolve));
  const fakeFetch = (_url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ headers: { ...(init?.headers as Record<string, string>) } });
    const next = answers.shift();
    if (next === undefined) throw new Error("no more answers");
    if (answers.length === 0) void stream?.stop().then(finished);
    return Promise.resolve(next());
  };
  stream = new PriceStream({
    onQuote: (quote) => quotes.push(quote),
    onFresh: () => (fresh += 1),
    onState: (state) => states.push(state),
    fetch: fakeFetch as typeof fetch,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  return { stream, done, calls, quotes, states, waits, fresh: () => fresh };
}

const events = (id: string) => `retry: 2500\n: ping\n\nid: ${id}\nevent: best_ask\ndata: ${JSON.stringify(QUOTE)}\n\n`;

describe("PriceStream", () => {
  it("reads quotes, and resumes after the last id it saw without starting afresh", async () => {
    const { stream, done, calls, quotes, waits, fresh } = run([
      () => new Response(body(events("10-0"))),
      () => new Response(body(events("11-0"))),
      () => new Response(body("")),
    ]);
    stream.start();
    await done;
    expect(quotes).toEqual([QUOTE, QUOTE]);
    expect(calls.map((call) => call.headers["Last-Event-ID"])).toEqual([undefined, "10-0", "11-0"]);
    expect(waits.slice(0, 2)).toEqual([2500, 2500]);
    expect(fresh()).toBe(1);
  });

  it("waits as long as a refusal's Retry-After says, then starts afresh", async () => {
    const { stream, done, waits, fresh, quotes } = run([
      () => new Response("{}", { status: 429, headers: { "Retry-After": "7" } }),
      () => new Response(body(events("1-0"))),
      () => new Response(body("")),
    ]);
    stream.start();
    await done;
    expect(waits[0]).toBe(7000);
    expect(fresh()).toBe(1);
    expect(quotes).toHaveLength(1);
  });

  it("skips an event whose data is not JSON", async () => {
    const { stream, done, quotes } = run([
      () => new Response(body("event: best_ask\ndata: {oops\n\n" + events("2-0"))),
      () => new Response(body("")),
    ]);
    stream.start();
    await done;
    expect(quotes).toEqual([QUOTE]);
  });
});

describe("retryAfterMs", () => {
  it("reads seconds, caps them at a minute, and ignores dates", () => {
    expect(retryAfterMs(new Response(null, { headers: { "Retry-After": "3" } }))).toBe(3000);
    expect(retryAfterMs(new Response(null, { headers: { "Retry-After": "3600" } }))).toBe(60000);
    expect(retryAfterMs(new Response(null, { headers: { "Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT" } }))).toBeUndefined();
    expect(retryAfterMs(new Response(null))).toBeUndefined();
  });
});
