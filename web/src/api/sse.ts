// A server-sent events parser (the WHATWG "event stream" format), for the price stream read
// over fetch: unlike EventSource, fetch lets the client send Last-Event-ID on a reconnect of
// its own, see the `: ping` comments (the stream's heartbeat) and honour Retry-After.

/** One dispatched event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
  /** The last event id seen so far (the stream position to resume after). */
  readonly id: string;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  /** The last event id the stream set: sent back as Last-Event-ID on a reconnect. */
  lastEventId = "";
  /** The reconnection delay the stream asked for (`retry:`), in milliseconds. */
  retryMs: number | undefined;

  /** Forget a half-read event (a new connection); the last id and the retry delay stay. */
  reset(): void {
    this.buffer = "";
    this.data = [];
    this.event = "";
  }

  /** Feed decoded text; answers the events it completed. */
  feed(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more text.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== null) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // a comment: the heartbeat
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored, as the format says
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const data = this.data;
    const event = this.event || "message";
    this.data = [];
    this.event = "";
    if (data.length === 0) return null;
    return { event, data: data.join("\n"), id: this.lastEventId };
  }
}
