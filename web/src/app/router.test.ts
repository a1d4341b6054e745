import { describe, expect, it } from "vitest";

import { consolePath, gpuPath, GUIDE_PATH, nextPath, parseRoute, sellerPath, signInPath } from "./router";

describe("parseRoute", () => {
  it("knows the market, the guide and a GPU's page", () => {
    expect(parseRoute("/")).toEqual({ page: "market" });
    expect(parseRoute(GUIDE_PATH)).toEqual({ page: "guide" });
    expect(parseRoute("/guide/")).toEqual({ page: "guide" });
    expect(parseRoute(gpuPath("rtx-4090"))).toEqual({ page: "gpu", id: "rtx-4090" });
  });

  it("knows the buyer's and the seller's consoles, section by section", () => {
    expect(parseRoute("/console")).toEqual({ page: "console", section: "wallet" });
    expect(parseRoute("/console/")).toEqual({ page: "console", section: "wallet" });
    for (const section of ["orders", "leases", "statement", "keys"] as const) {
      expect(parseRoute(consolePath(section))).toEqual({ page: "console", section });
      expect(parseRoute(`${consolePath(section)}/`)).toEqual({ page: "console", section });
    }
    expect(consolePath()).toBe("/console");
    expect(parseRoute(sellerPath())).toEqual({ page: "seller", section: "overview" });
    expect(parseRoute(sellerPath("offers"))).toEqual({ page: "seller", section: "offers" });
  });

  it("draws nothing else", () => {
    for (const path of ["/guides", "/guide/x", "/gpus", "/gpus/a/b", "/orders", "/console/wallet", "/console/x", "/consoles", "/seller/overview", "/seller/offers/x"]) {
      expect(parseRoute(path)).toEqual({ page: "notFound" });
    }
  });
});

describe("the way back after signing in", () => {
  it("returns to a page of the app", () => {
    expect(signInPath("/gpus/l4")).toBe("/console?next=%2Fgpus%2Fl4");
    expect(nextPath("?next=%2Fgpus%2Fl4")).toBe("/gpus/l4");
    expect(nextPath(new URL(`http://x${signInPath("/guide")}`).search)).toBe("/guide");
  });

  it("never leaves the app", () => {
    for (const next of ["https://evil.example", "//evil.example/gpus/l4", "/\\evil.example", "javascript:alert(1)", "/no-such-page", ""]) {
      expect(nextPath(`?next=${encodeURIComponent(next)}`)).toBeUndefined();
    }
    expect(nextPath("")).toBeUndefined();
  });
});
