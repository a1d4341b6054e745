// One tier's order book (GET /v1/orderbook/{gpu}): asks lowest first, bids highest first, each
// level with a bar of its share of the side's GPUs.
import { useId, type CSSProperties } from "react";

import type { BookLevel, Currency, OrderBook } from "../api/client";
import { useSettings } from "../app/settings";

function Side({ caption, levels, currency, side }: { readonly caption: string; readonly levels: readonly BookLevel[]; readonly currency: Currency; readonly side: "asks" | "bids" }) {
  const { t, formats } = useSettings();
  const total = levels.reduce((sum, level) => sum + level.gpus, 0);
  return (
    <table className={`depth ${side}`} data-side={side} data-levels={levels.length}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{t.level.price}</th>
          <th scope="col" className="num">{t.level.gpus}</th>
          <th scope="col" className="num">{t.level.orders}</th>
        </tr>
      </thead>
      <tbody>
        {levels.length === 0 ? (
          <tr>
            <td colSpan={3} className="empty">{t.emptySide}</td>
          </tr>
        ) : (
          levels.map((level) => (
            <tr key={level.price}>
              <td className="num">{formats.money(level.price, currency)}</td>
              <td className="num gpus">
                <span className="bar" style={{ "--share": `${total > 0 ? (100 * level.gpus) / total : 0}%` } as CSSProperties} />
                <span className="value">{formats.number(level.gpus)}</span>
              </td>
              <td className="num">{formats.number(level.orders)}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export function Depth({ book, title }: { readonly book: OrderBook; readonly title: string }) {
  const { t, formats } = useSettings();
  const headingId = useId();
  return (
    <section className="book" aria-labelledby={headingId} data-tier={book.tier}>
      <h3 id={headingId}>{title}</h3>
      <p className="note small">{book.as_of === null ? t.bookNever : t.bookAsOf(formats.dateTime(book.as_of))}</p>
      <div className="sides">
        <Side caption={t.asks} levels={book.asks} currency={book.currency} side="asks" />
        <Side caption={t.bids} levels={book.bids} currency={book.currency} side="bids" />
      </div>
    </section>
  );
}
