// One price stream for the whole app: every page reads the same quotes, and a page that needs
// a snapshot (after a fresh start of the stream) sees the stream's generation change.
import { createContext, useContext, useEffect, useMemo, useSyncExternalStore, type ReactNode } from "react";

import type { Currency, PriceItem, Quote } from "../api/client";
import { PriceStream, type StreamState } from "../api/priceStream";
import { applyQuote, applySnapshot, NO_QUOTES, type Quotes } from "../market/asks";

type Listener = (quote?: Quote) => void;

export class LiveMarket {
  private quotes: Quotes = NO_QUOTES;
  private listeners = new Set<Listener>();
  private streamState: StreamState = "connecting";
  /** How often the stream went live from "now" (each time, snapshots must be read anew). */
  private fresh = 0;
  readonly stream = new PriceStream({
    onQuote: (quote) => {
      this.quotes = applyQuote(this.quotes, quote);
      this.emit(quote);
    },
    onFresh: () => {
      this.fresh += 1;
      this.emit();
    },
    onState: (state) => {
      this.streamState = state;
      this.emit();
    },
  });

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getQuotes = (): Quotes => this.quotes;
  getState = (): StreamState => this.streamState;
  getGeneration = (): number => this.fresh;

  /** A snapshot of every book (`scope` "*") or of one GPU's, in `currency`. */
  snapshot(items: readonly PriceItem[], scope: string, currency: Currency): void {
    this.quotes = applySnapshot(this.quotes, items, scope, currency);
    this.emit();
  }

  private emit(quote?: Quote): void {
    for (const listener of this.listeners) listener(quote);
  }
}

const LiveContext = createContext<LiveMarket | null>(null);

export function LiveProvider({ children }: { readonly children: ReactNode }) {
  const market = useMemo(() => new LiveMarket(), []);
  useEffect(() => {
    market.stream.start();
    return () => void market.stream.stop();
  }, [market]);
  return <LiveContext.Provider value={market}>{children}</LiveContext.Provider>;
}

export function useLiveMarket(): LiveMarket {
  const market = useContext(LiveContext);
  if (market === null) throw new Error("useLiveMarket outside LiveProvider");
  return market;
}

export function useQuotes(): Quotes {
  const market = useLiveMarket();
  return useSyncExternalStore(market.subscribe, market.getQuotes);
}

export function useStreamState(): StreamState {
  const market = useLiveMarket();
  return useSyncExternalStore(market.subscribe, market.getState);
}

export function useStreamGeneration(): number {
  const market = useLiveMarket();
  return useSyncExternalStore(market.subscribe, market.getGeneration);
}

/** Calls `onQuote` for each stream event about `gpu`. */
export function useQuoteEvents(gpu: string, onQuote: (quote: Quote) => void): void {
  const market = useLiveMarket();
  useEffect(
    () =>
      market.subscribe((quote) => {
        if (quote !== undefined && quote.gpu === gpu) onQuote(quote);
      }),
    [market, gpu, onQuote],
  );
}
