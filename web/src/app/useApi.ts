// Loading one API answer for a page: a busy exchange (429, 503 with Retry-After, e.g. the
// catalog not read yet after a start) is tried again after the delay it names; the last good
// answer stays on screen while a new one loads.
import { useEffect, useState } from "react";

import type { Problem } from "../api/client";
import { retryAfterMs } from "../api/priceStream";

export interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

export type Load<T> =
  | { readonly status: "loading"; readonly data?: T }
  | { readonly status: "ok"; readonly data: T }
  | { readonly status: "retrying"; readonly seconds: number; readonly data?: T }
  | { readonly status: "notFound"; readonly data?: undefined }
  | { readonly status: "failed"; readonly detail: string; readonly data?: T };

const TRIES = 6;
const DEFAULT_WAIT_MS = 3_000;

function detailOf(error: unknown, response: Response): string {
  const problem = error as Partial<Problem> | undefined;
  return problem?.detail ?? problem?.title ?? `${response.status} ${response.statusText}`;
}

export function useApi<T>(load: (signal: AbortSignal) => Promise<Answer<T>>, deps: readonly unknown[]): Load<T> {
  const [state, setState] = useState<Load<T>>({ status: "loading" });
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const attempt = async (tries: number): Promise<void> => {
      let answer: Answer<T>;
      try {
        answer = await load(controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        setState((s) => ({ status: "failed", detail: String(error), ...(s.data !== undefined && { data: s.data }) }));
        return;
      }
      if (controller.signal.aborted) return;
      const { data, error, response } = answer;
      if (data !== undefined) {
        setState({ status: "ok", data });
        return;
      }
      if (response.status === 404) {
        setState({ status: "notFound" });
        return;
      }
      if ((response.status === 429 || response.status === 503) && tries > 1) {
        const waitMs = retryAfterMs(response) ?? DEFAULT_WAIT_MS;
        setState((s) => ({ status: "retrying", seconds: Math.ceil(waitMs / 1000), ...(s.data !== undefined && { data: s.data }) }));
        timer = setTimeout(() => void attempt(tries - 1), waitMs);
        return;
      }
      setState((s) => ({ status: "failed", detail: detailOf(error, response), ...(s.data !== undefined && { data: s.data }) }));
    };
    setState((s) => ({ status: "loading", ...(s.data !== undefined && { data: s.data }) }));
    void attempt(TRIES);
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, deps);
  return state;
}
