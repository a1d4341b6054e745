// The best asks the pages show, from two sources: a snapshot (GET /v1/prices, in one currency)
// and the price stream (every currency at once). Each book keeps the newest quote by `as_of`,
// so a late snapshot never undoes a newer event and the reverse; a snapshot as new as the
// stored quote only adds its currency. Only the all-regions books (`*`) are kept. A book that
// a snapshot did not list, once that snapshot was read, has no offer.
import type { Currency, PriceItem, Quote, Tier } from "../api/client";

export const ALL_REGIONS = "*";

export interface Ask {
  readonly offerId: string;
  readonly gpus: number;
  /** The price per GPU-hour in each currency known (a decimal string). */
  readonly prices: Readonly<Partial<Record<Currency, string>>>;
}

export interface BookQuote {
  /** Milliseconds since the epoch of the quote's `as_of`. */
  readonly asOf: number;
  /** Null: nothing is offered in this book. */
  readonly ask: Ask | null;
}

export interface Quotes {
  readonly books: ReadonlyMap<string, BookQuote>;
  /** What snapshots were read: `<gpu or *>|<currency>`. */
  readonly read: ReadonlySet<string>;
}

export const NO_QUOTES: Quotes = { books: new Map(), read: new Set() };

export function bookKey(gpu: string, tier: string): string {
  return `${gpu}|${tier}`;
}

function merge(books: Map<string, BookQuote>, key: string, incoming: BookQuote): boolean {
  const stored = books.get(key);
  if (stored !== undefined && incoming.asOf < stored.asOf) return false;
  let next = incoming;
  if (
    stored !== undefined &&
    incoming.asOf === stored.asOf &&
    stored.ask !== null &&
    incoming.ask !== null &&
    stored.ask.offerId === incoming.ask.offerId
  ) {
    next = { asOf: incoming.asOf, ask: { ...incoming.ask, prices: { ...stored.ask.prices, ...incoming.ask.prices } } };
  }
  books.set(key, next);
  return true;
}

/** One event of the price stream. */
export function applyQuote(quotes: Quotes, quote: Quote): Quotes {
  if (quote.region !== ALL_REGIONS) return quotes;
  const best = quote.best;
  const ask: Ask | null =
    best === null
      ? null
      : {
          offerId: best.offer_id,
          gpus: best.gpus,
          prices: { ...(best.prices as Partial<Record<Currency, string>>), [best.currency]: best.price },
        };
  const books = new Map(quotes.books);
  return merge(books, bookKey(quote.gpu, quote.tier), { asOf: Date.parse(quote.as_of), ask })
    ? { books, read: quotes.read }
    : quotes;
}

/** A snapshot in one currency of every book (`scope` "*": GET /v1/prices) or of one GPU's. */
export function applySnapshot(quotes: Quotes, items: readonly PriceItem[], scope: string, currency: Currency): Quotes {
  const books = new Map(quotes.books);
  for (const item of items) {
    if (item.region !== ALL_REGIONS) continue;
    const best = item.best_ask;
    const ask: Ask | null =
      best === null || best === undefined
        ? null
        : {
            offerId: best.offer_id,
            gpus: best.gpus,
            prices: { [best.offered_currency]: best.offered_price, [best.currency]: best.price },
          };
    merge(books, bookKey(item.gpu, item.tier), { asOf: Date.parse(item.as_of), ask });
  }
  return { books, read: new Set(quotes.read).add(`${scope}|${currency}`) };
}

/** What a book shows: an ask in `currency`, null (no offer), or undefined (not known yet). */
export function askIn(
  quotes: Quotes,
  gpu: string,
  tier: Tier,
  currency: Currency,
): { price: string; gpus: number } | null | undefined {
  const quote = quotes.books.get(bookKey(gpu, tier));
  if (quote === undefined) {
    const listed = quotes.read.has(`*|${currency}`) || quotes.read.has(`${gpu}|${currency}`);
    return listed ? null : undefined;
  }
  if (quote.ask === null) return null;
  const price = quote.ask.prices[currency];
  return price === undefined ? undefined : { price, gpus: quote.ask.gpus };
}
