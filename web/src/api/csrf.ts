// Browser sessions: the gateway's HttpOnly cookie `gpux_session` stands for the signed-in
// account (the page never holds an API key), and every write made with it must echo the
// readable `gpux_csrf` cookie in `X-CSRF-Token` (else 403 `csrf-failed`).

export const CSRF_COOKIE = "gpux_csrf";
export const CSRF_HEADER = "X-CSRF-Token";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** One cookie's value from a `document.cookie` string, or undefined. */
export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

/** Whether a request of this method changes something (and so needs the CSRF token). */
export function isWrite(method: string): boolean {
  return !SAFE.has(method.toUpperCase());
}

/** The CSRF header a request of `method` carries, given the page's cookies: none for reads. */
export function csrfHeader(method: string, cookies: string): Record<string, string> {
  if (!isWrite(method)) return {};
  const token = readCookie(cookies, CSRF_COOKIE);
  return token === undefined || token === "" ? {} : { [CSRF_HEADER]: token };
}

/** A fresh Idempotency-Key for one creating POST (retries of that submission reuse it). */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}
