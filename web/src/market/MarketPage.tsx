// The market at `/`: the reference page's table (GPU, memory, bandwidth, the largest base
// model for QLoRA and for LoRA 16-bit, the best ask per hour), every GPU model of the catalog,
// the best ask of the chosen tier in the chosen currency pushed by the price stream.
import { useEffect, useId, useMemo, useRef, useState } from "react";

import { api, TIERS, type Gpu } from "../api/client";
import { useLiveMarket, useQuotes, useStreamGeneration } from "../app/live";
import { PageHeading } from "../app/PageHeading";
import { Radios } from "../app/Radios";
import { gpuPath, Link } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { useTitle } from "../app/title";
import { useApi } from "../app/useApi";
import type { Messages } from "../i18n/messages";
import { askIn } from "./asks";
import { nextSort, SORT_KEYS, sortRows, type Row, type Sort, type SortKey } from "./table";

function SortHeader({ column, sort, onSort }: { readonly column: SortKey; readonly sort: Sort | null; readonly onSort: (key: SortKey) => void }) {
  const { t } = useSettings();
  const active = sort?.key === column;
  const direction = active ? (sort.descending ? "descending" : "ascending") : "none";
  return (
    <th scope="col" aria-sort={direction} className={`col-${column}`}>
      <button type="button" onClick={() => onSort(column)} title={t.sortBy(t.columns[column])}>
        <span>{t.columns[column]}</span>
        <span className="arrow" aria-hidden="true">
          {active ? (sort.descending ? "▼" : "▲") : "↕"}
        </span>
      </button>
    </th>
  );
}

function fitText(t: Messages, billions: number, parameters: (b: number) => string): string {
  return billions > 0 ? t.approx(parameters(billions)) : "–";
}

function PriceCell({ row }: { readonly row: Row }) {
  const { t, formats, settings } = useSettings();
  const ask = row.ask;
  const price = ask?.price;
  // A price that changes while shown flashes once (a new key restarts the animation).
  const [flashes, setFlashes] = useState(0);
  const previous = useRef(price);
  useEffect(() => {
    if (previous.current !== undefined && price !== undefined && previous.current !== price) {
      setFlashes((count) => count + 1);
    }
    previous.current = price;
  }, [price]);
  let text: string;
  if (ask === undefined) text = "…";
  else if (ask === null) text = t.noOffer;
  else text = t.from(formats.money(ask.price, settings.currency));
  return (
    <td className="num col-price" data-price={price ?? ""}>
      <span key={flashes} className={flashes > 0 ? "flash" : undefined} title={ask ? t.gpusAt(formats.number(ask.gpus)) : undefined}>
        {text}
      </span>
    </td>
  );
}

function GpuRow({ row, columns }: { readonly row: Row; readonly columns: readonly SortKey[] }) {
  const { t, formats, settings } = useSettings();
  const gpu = row.gpu;
  const parameters = (b: number) => formats.parameters(b);
  const cell = (column: SortKey) => {
    switch (column) {
      case "gpu":
        return (
          <th key={column} scope="row" className="col-gpu">
            <Link href={gpuPath(gpu.id)}>{gpu.name}</Link>
            <span className="arch">{gpu.architecture}</span>
          </th>
        );
      case "memory":
        return <td key={column} className="num">{formats.memory(gpu.memory_gb)}</td>;
      case "bandwidth":
        return <td key={column} className="num">{formats.bandwidth(gpu.bandwidth_gb_s)}</td>;
      case "qlora":
        return <td key={column} className="num col-qlora">{fitText(t, gpu.fit.qlora_b, parameters)}</td>;
      case "lora16":
        return <td key={column} className="num col-lora16">{fitText(t, gpu.fit.lora16_b, parameters)}</td>;
      case "full":
        return <td key={column} className="num col-full">{fitText(t, gpu.fit.full_b, parameters)}</td>;
      case "price":
        return <PriceCell key={`${column}-${settings.currency}-${settings.tier}`} row={row} />;
    }
  };
  return <tr data-gpu={gpu.id}>{columns.map(cell)}</tr>;
}

export interface GpuTableProps {
  readonly gpus: readonly Gpu[];
  /** The columns, in order (the market's by default). */
  readonly columns?: readonly SortKey[];
  readonly heading?: string;
  readonly note?: string;
}

/** The table of every GPU model with its live best ask: the market's, and the guide's. */
export function GpuTable({ gpus, columns = SORT_KEYS, heading, note }: GpuTableProps) {
  const { t, settings, formats } = useSettings();
  const quotes = useQuotes();
  const [sort, setSort] = useState<Sort | null>(null);
  const headingId = useId();
  const hintId = useId();
  const collator = useMemo(() => new Intl.Collator(formats.locale, { numeric: true }), [formats]);
  const rows = sortRows(
    gpus.map((gpu, index) => ({ gpu, index, ask: askIn(quotes, gpu.id, settings.tier, settings.currency) })),
    sort,
    collator,
  );
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{heading ?? t.tableHeading}</h2>
      <p className="hint" id={hintId}>
        {t.swipeHint}
      </p>
      <div className="scroller" role="region" aria-labelledby={headingId} aria-describedby={hintId} tabIndex={0}>
        <table className="market">
          <thead>
            <tr>
              {columns.map((key) => (
                <SortHeader key={key} column={key} sort={sort} onSort={(column) => setSort(nextSort(sort, column))} />
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <GpuRow key={row.gpu.id} row={row} columns={columns} />
            ))}
          </tbody>
        </table>
      </div>
      <p className="note small">{note ?? t.tableNote}</p>
    </section>
  );
}

/** Every book's best ask in the chosen currency into the live market; read again whenever the
 * stream started afresh (the stream carries every change after it). */
export function usePriceSnapshot() {
  const { settings } = useSettings();
  const market = useLiveMarket();
  const generation = useStreamGeneration();
  return useApi(
    async (signal) => {
      const answer = await api.GET("/v1/prices", { params: { query: { currency: settings.currency } }, signal });
      if (answer.data !== undefined) market.snapshot(answer.data.items, "*", settings.currency);
      return answer;
    },
    [settings.currency, generation, market],
  );
}

export function MarketPage() {
  const { t, settings, change } = useSettings();
  useTitle(t.marketTitle);
  const gpus = useApi((signal) => api.GET("/v1/gpus", { signal }), []);
  const prices = usePriceSnapshot();
  return (
    <>
      <PageHeading>{t.marketHeading}</PageHeading>
      <p className="lead">{t.marketIntro}</p>
      <div className="toolbar">
        <Radios
          legend={t.tier}
          name="tier"
          options={TIERS}
          value={settings.tier}
          label={(tier) => t.tiers[tier]}
          onChange={(tier) => change({ tier })}
        />
      </div>
      <LoadStatus load={gpus} />
      {prices.status === "failed" || prices.status === "retrying" ? <LoadStatus load={prices} /> : null}
      {gpus.data !== undefined ? <GpuTable gpus={gpus.data.items} /> : null}
    </>
  );
}
