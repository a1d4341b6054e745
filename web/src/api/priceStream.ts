// The live price stream (GET /v1/stream/prices), read over fetch and parsed by SseParser.
//
// The gateway's contract (docs/API.md): `retry: 3000` first, a `: ping` comment every 15 s, each
// event's id its stream position; a client that hears nothing for 45 s reconnects after the
// retry delay with Last-Event-ID and resumes without a gap. A refused connection (429, 503)
// waits for its Retry-After. A start without a position begins "from now": whoever shows
// prices must then read them anew (onFresh), since what changed meanwhile is not replayed.
import { PRICE_STREAM, type Quote } from "./client";
import { SseParser } from "./sse";

export type StreamState = "connecting" | "live" | "waiting" | "stopped";

export interface PriceStreamOptions {
  readonly onQuote: (quote: Quote) => void;
  /** The stream went live from now, not from a position: what was missed must be read anew. */
  readonly onFresh?: () => void;
  readonly onState?: (state: StreamState) => void;
  readonly url?: string;
  readonly fetch?: typeof fetch;
  /** How long without a byte before the connection is taken for dead (the contract's 45 s). */
  readonly silenceMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const SILENCE_MS = 45_000;
const RETRY_MS = 3_000;
const MAX_WAIT_MS = 60_000;

/** Seconds of a Retry-After header as milliseconds (the gateway sends seconds), if any. */
export function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("Retry-After");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Math.min(Number(value) * 1000, MAX_WAIT_MS);
}

export class PriceStream {
  private readonly options: PriceStreamOptions;
  private readonly parser = new SseParser();
  private controller: AbortController | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(options: PriceStreamOptions) {
    this.options = options;
  }

  /** Connect, and keep reconnecting until stop(). */
  start(): void {
    this.stopped = false;
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Close the connection for good; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller?.abort();
    this.options.onState?.("stopped");
    await this.running;
  }

  private async run(): Promise<void> {
    const sleep = this.options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    while (!this.stopped) {
      const waitMs = await this.connectOnce();
      if (this.stopped) break;
      this.options.onState?.("waiting");
      await sleep(waitMs);
    }
  }

  /** One connection, read until it ends; answers how long to wait before the next. */
  private async connectOnce(): Promise<number> {
    const controller = new AbortController();
    this.controller = controller;
    const resumeAfter = this.parser.lastEventId;
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (resumeAfter !== "") headers["Last-Event-ID"] = resumeAfter;
    this.options.onState?.("connecting");
    const doFetch = this.options.fetch ?? fetch.bind(globalThis);
    let response: Response;
    try {
      response = await doFetch(this.options.url ?? PRICE_STREAM, {
        headers,
        signal: controller.signal,
        cache: "no-store",
      });
    } catch {
      return this.retryMs();
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      return retryAfterMs(response) ?? this.retryMs();
    }
    this.options.onState?.("live");
    if (resumeAfter === "") this.options.onFresh?.();
    await this.read(response.body, controller);
    return this.retryMs();
  }

  private async read(body: ReadableStream<Uint8Array>, controller: AbortController): Promise<void> {
    this.parser.reset();
    const silenceMs = this.options.silenceMs ?? SILENCE_MS;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let watchdog = setTimeout(() => controller.abort(), silenceMs);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        clearTimeout(watchdog);
        watchdog = setTimeout(() => controller.abort(), silenceMs);
        for (const event of this.parser.feed(decoder.decode(value, { stream: true }))) {
          if (event.event === "best_ask") this.quote(event.data);
        }
      }
    } catch {
      // aborted (stop, or silence) or the connection broke: the caller reconnects
    } finally {
      clearTimeout(watchdog);
    }
  }

  private quote(data: string): void {
    let quote: Quote;
    try {
      quote = JSON.parse(data) as Quote;
    } catch {
      return; // not one of ours: skipped, the stream goes on
    }
    this.options.onQuote(quote);
  }

  private retryMs(): number {
    return this.parser.retryMs ?? RETRY_MS;
  }
}
