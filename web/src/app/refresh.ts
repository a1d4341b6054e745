import { useCallback, useEffect, useRef, useState } from "react";

import type { Quote } from "../api/client";
import { useQuoteEvents } from "./live";

/**
 * A counter that grows when the price stream reports a change of `gpu` (of `tier`, if
 * given), at most once per `spacingMs` and always after the last change: data that the stream
 * does not carry (candles, both sides of the book) is read again as it moves, without a read
 * per event (anonymous reads are rate-limited per address).
 */
export function useRefreshOnQuotes(gpu: string, tier: string | undefined, spacingMs: number): number {
  const [count, setCount] = useState(0);
  const last = useRef(0);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const onQuote = useCallback(
    (quote: Quote) => {
      if (tier !== undefined && quote.tier !== tier) return;
      if (pending.current !== undefined) return;
      const waitMs = Math.max(0, last.current + spacingMs - Date.now());
      pending.current = setTimeout(() => {
        pending.current = undefined;
        last.current = Date.now();
        setCount((value) => value + 1);
      }, waitMs);
    },
    [tier, spacingMs],
  );
  useQuoteEvents(gpu, onQuote);
  useEffect(() => () => clearTimeout(pending.current), []);
  return count;
}
