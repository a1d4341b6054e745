// An API error for people: the problem's detail (or title), else the status line; the field
// errors of a 422 name their fields.
import type { Problem } from "../api/client";

export function problemText(error: unknown, response: Response): string {
  const problem = error as Partial<Problem> | undefined;
  const fields = (problem?.errors ?? [])
    .map((e) => {
      const loc = Array.isArray(e["loc"]) ? (e["loc"] as unknown[]).filter((part) => part !== "body").join(".") : "";
      const msg = typeof e["msg"] === "string" ? e["msg"] : "";
      return loc ? `${loc}: ${msg}` : msg;
    })
    .filter((text) => text !== "");
  if (problem?.detail) return problem.detail;
  const head = problem?.title ?? `${response.status} ${response.statusText}`;
  return fields.length > 0 ? `${head} (${fields.join("; ")})` : head;
}

/** What a call that answers nothing to read went wrong with: its problem text, or undefined
 * when it succeeded. */
export function failureText({ error, response }: { readonly error?: unknown; readonly response: Response }): string | undefined {
  return response.ok ? undefined : problemText(error, response);
}
