import { describe, expect, it } from "vitest";

import { csrfHeader, isWrite, readCookie } from "./csrf";

describe("the CSRF header", () => {
  const cookies = "gpux.theme=dark; gpux_csrf=abc-DEF_123; other=x%20y";

  it("reads one cookie among several, decoded", () => {
    expect(readCookie(cookies, "gpux_csrf")).toBe("abc-DEF_123");
    expect(readCookie(cookies, "other")).toBe("x y");
    expect(readCookie(cookies, "gpux_session")).toBeUndefined();
    expect(readCookie("", "gpux_csrf")).toBeUndefined();
  });

  it("does not take a cookie whose name only ends like it", () => {
    expect(readCookie("xgpux_csrf=no", "gpux_csrf")).toBeUndefined();
  });

  it("is sent on every write and never on a read", () => {
    for (const method of ["POST", "PATCH", "PUT", "DELETE", "delete"]) {
      expect(isWrite(method)).toBe(true);
      expect(csrfHeader(method, cookies)).toEqual({ "X-CSRF-Token": "abc-DEF_123" });
    }
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      expect(isWrite(method)).toBe(false);
      expect(csrfHeader(method, cookies)).toEqual({});
    }
  });

  it("is left out when the page has no session", () => {
    expect(csrfHeader("POST", "gpux.theme=dark")).toEqual({});
    expect(csrfHeader("POST", "gpux_csrf=")).toEqual({});
  });
});
