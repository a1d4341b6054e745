import { describe, expect, it } from "vitest";

import { gpuPath, GUIDE_PATH, parseRoute } from "./router";

describe("parseRoute", () => {
  it("knows the market, the guide and a GPU's page", () => {
    expect(parseRoute("/")).toEqual({ page: "market" });
    expect(parseRoute(GUIDE_PATH)).toEqual({ page: "guide" });
    expect(parseRoute("/guide/")).toEqual({ page: "guide" });
    expect(parseRoute(gpuPath("rtx-4090"))).toEqual({ page: "gpu", id: "rtx-4090" });
  });

  it("draws nothing else", () => {
    for (const path of ["/guides", "/guide/x", "/gpus", "/gpus/a/b", "/orders"]) {
      expect(parseRoute(path)).toEqual({ page: "notFound" });
    }
  });
});
