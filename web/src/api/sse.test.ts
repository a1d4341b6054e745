import { describe, expect, it } from "vitest";

import { SseParser } from "./sse";

describe("SseParser", () => {
  it("dispatches an event at its blank line, with its id and type", () => {
    const parser = new SseParser();
    expect(parser.feed('id: 1-0\nevent: best_ask\ndata: {"a":1}\n')).toEqual([]);
    expect(parser.feed("\n")).toEqual([{ event: "best_ask", data: '{"a":1}', id: "1-0" }]);
    expect(parser.lastEventId).toBe("1-0");
  });

  it("reads lines split anywhere across chunks, with any line ending", () => {
    const text = "retry: 3000\r\n: price stream\r\n\r\nid: 7-1\revent: best_ask\rdata: x\r\rid: 8-0\ndata: y\ndata: z\n\n";
    const whole = new SseParser().feed(text);
    const pieces = new SseParser();
    const split = [...text].flatMap((character) => pieces.feed(character));
    expect(split).toEqual(whole);
    expect(whole).toEqual([
      { event: "best_ask", data: "x", id: "7-1" },
      { event: "message", data: "y\nz", id: "8-0" },
    ]);
  });

  it("takes the retry delay and ignores comments, unknown fields and empty events", () => {
    const parser = new SseParser();
    expect(parser.feed(": ping\n\nretry: 3000\nfoo: bar\n\nretry: soon\n\n")).toEqual([]);
    expect(parser.retryMs).toBe(3000);
  });

  it("forgets a half-read event on reset but keeps the position", () => {
    const parser = new SseParser();
    parser.feed("id: 5-0\ndata: a\n\nid: 6-0\ndata: half");
    parser.reset();
    expect(parser.feed("data: b\n\n")).toEqual([{ event: "message", data: "b", id: "6-0" }]);
  });
});
