import { describe, expect, it } from "vitest";

import { problemText } from "./problems";

const answer = (status: number, statusText = "") => new Response(null, { status, statusText });

describe("an API error for people", () => {
  it("is the problem's detail when it has one", () => {
    const problem = { type: "about:blank", title: "Forbidden", status: 403, detail: "the CSRF token is missing" };
    expect(problemText(problem, answer(403))).toBe("the CSRF token is missing");
  });

  it("names the fields of a validation error without a detail", () => {
    const problem = {
      type: "validation", title: "Invalid request", status: 422,
      errors: [{ loc: ["body", "gpus"], msg: "must be at most 4096" }, { loc: ["body"], msg: "expires_at: required for a gtd order" }],
    };
    expect(problemText(problem, answer(422))).toBe("Invalid request (gpus: must be at most 4096; expires_at: required for a gtd order)");
  });

  it("falls back to the status line when the answer is no problem document", () => {
    expect(problemText(undefined, answer(502, "Bad Gateway"))).toBe("502 Bad Gateway");
  });
});
