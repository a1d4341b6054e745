// A page per GPU model at `/gpus/{id}`: its best asks (live), specs and what fits, a
// candlestick chart with volume from the OHLC history (1m/1h/1d), each tier's order book, and
// a buy panel (a market order for this GPU when signed in as a buyer; a link to sign in).
import { useId, useState } from "react";

import { api, INTERVALS, TIERS, type Candle, type Gpu, type Interval, type Tier } from "../api/client";
import { useLiveMarket, useQuotes, useStreamGeneration } from "../app/live";
import { PageHeading } from "../app/PageHeading";
import { Radios } from "../app/Radios";
import { useRefreshOnQuotes } from "../app/refresh";
import { Link } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { ScrollTable } from "../app/Table";
import { useTitle } from "../app/title";
import { useApi } from "../app/useApi";
import { askIn } from "../market/asks";
import { BuyPanel } from "../console/Buy";
import { CandleChart } from "./CandleChart";
import { Depth } from "./Depth";

const FITS = ["qlora_b", "lora16_b", "full_b", "inference_fp16_b", "inference_int8_b", "inference_int4_b"] as const;

function BestAsks({ gpu }: { readonly gpu: Gpu }) {
  const { t, formats, settings } = useSettings();
  const market = useLiveMarket();
  const quotes = useQuotes();
  const generation = useStreamGeneration();
  const headingId = useId();
  useApi(
    async (signal) => {
      const answer = await api.GET("/v1/prices/{gpu}", { params: { path: { gpu: gpu.id }, query: { currency: settings.currency } }, signal });
      if (answer.data !== undefined) market.snapshot(answer.data.items, gpu.id, settings.currency);
      return answer;
    },
    [gpu.id, settings.currency, generation, market],
  );
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{t.bestAsk}</h2>
      <dl className="asks">
        {TIERS.map((tier) => {
          const ask = askIn(quotes, gpu.id, tier, settings.currency);
          return (
            <div key={tier} data-tier={tier} data-price={ask?.price ?? ""}>
              <dt>{t.tiers[tier]}</dt>
              <dd>
                {ask === undefined ? "…" : ask === null ? t.noOffer : t.from(formats.money(ask.price, settings.currency))}
                {ask ? <span className="sub">{t.gpusAt(formats.number(ask.gpus))}</span> : null}
              </dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}

function Specs({ gpu }: { readonly gpu: Gpu }) {
  const { t, formats } = useSettings();
  const headingId = useId();
  const fitsId = useId();
  const tflops = (value: number) => `${formats.number(value)} TFLOPS`;
  const rows: [string, string][] = [
    [t.spec.vendor, gpu.vendor],
    [t.spec.architecture, gpu.architecture],
    [t.spec.memory, `${formats.memory(gpu.memory_gb)} ${gpu.memory_type}`],
    [t.spec.bandwidth, formats.bandwidth(gpu.bandwidth_gb_s)],
    [t.spec.bf16, tflops(gpu.bf16_tflops)],
    [t.spec.fp16, tflops(gpu.fp16_tflops)],
    [t.spec.fp8, gpu.fp8_tflops === null || gpu.fp8_tflops === undefined ? t.spec.noFp8 : tflops(gpu.fp8_tflops)],
    [t.spec.tdp, `${formats.number(gpu.tdp_w)} W`],
    [t.spec.formFactor, gpu.form_factor],
    [t.spec.interconnect, gpu.interconnect],
  ];
  // The catalog's source is a title and, usually, the document's address: the title links to it.
  const url = /https?:\/\/\S+/.exec(gpu.source)?.[0];
  const sourceTitle = (url === undefined ? gpu.source : gpu.source.replace(url, "")).replace(/[\s,;:]+$/, "");
  return (
    <div className="columns">
      <section aria-labelledby={headingId}>
        <h2 id={headingId}>{t.specs}</h2>
        <dl className="specs">
          {rows.map(([term, value]) => (
            <div key={term}>
              <dt>{term}</dt>
              <dd>{value}</dd>
            </div>
          ))}
          <div>
            <dt>{t.spec.source}</dt>
            <dd className="source">{url !== undefined ? <a href={url} rel="noreferrer">{sourceTitle || t.spec.datasheet}</a> : gpu.source}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby={fitsId}>
        <h2 id={fitsId}>{t.fits}</h2>
        <dl className="specs">
          {FITS.map((fit) => (
            <div key={fit}>
              <dt>{t.fit[fit]}</dt>
              <dd>{gpu.fit[fit] > 0 ? t.approx(formats.parameters(gpu.fit[fit])) : "–"}</dd>
            </div>
          ))}
        </dl>
        <p className="note small">{t.tableNote}</p>
      </section>
    </div>
  );
}

function CandleTable({ candles }: { readonly candles: readonly Candle[] }) {
  const { t, formats, settings } = useSettings();
  return (
    <details className="candles">
      <summary>{t.candleData}</summary>
      <ScrollTable label={t.candleData} columns={[{ label: t.candle.start }, { label: t.candle.open, num: true }, { label: t.candle.high, num: true }, { label: t.candle.low, num: true }, { label: t.candle.close, num: true }, { label: t.candle.gpus, num: true }]}>
        {[...candles].reverse().map((c) => (
          <tr key={c.start}>
            <th scope="row">{formats.dateTime(c.start)}</th>
            <td className="num">{formats.money(c.open, settings.currency)}</td>
            <td className="num">{formats.money(c.high, settings.currency)}</td>
            <td className="num">{formats.money(c.low, settings.currency)}</td>
            <td className="num">{formats.money(c.close, settings.currency)}</td>
            <td className="num">{formats.number(c.gpus)}</td>
          </tr>
        ))}
      </ScrollTable>
    </details>
  );
}

function useHistory(gpu: string, interval: Interval, tier: Tier) {
  const { settings } = useSettings();
  const refresh = useRefreshOnQuotes(gpu, tier, 3_000);
  return useApi(
    (signal) =>
      api.GET("/v1/prices/{gpu}/history", {
        params: { path: { gpu }, query: { interval, tier, currency: settings.currency } },
        signal,
      }),
    [gpu, interval, tier, settings.currency, refresh],
  );
}

function History({ gpu }: { readonly gpu: Gpu }) {
  const { t, formats, settings, change } = useSettings();
  const [interval, setCandleInterval] = useState<Interval>("1h");
  const headingId = useId();
  const history = useHistory(gpu.id, interval, settings.tier);
  const candles = history.data?.candles ?? [];
  const vwap = history.data?.vwap_24h;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{t.history}</h2>
      <div className="toolbar">
        <Radios legend={t.tier} name="history-tier" options={TIERS} value={settings.tier} label={(tier) => t.tiers[tier]} onChange={(tier) => change({ tier })} />
        <Radios legend={t.interval} name="interval" options={INTERVALS} value={interval} label={(option) => t.intervals[option]} onChange={setCandleInterval} />
      </div>
      <LoadStatus load={history} />
      <CandleChart candles={candles} currency={settings.currency} label={t.chartLabel(gpu.name, t.tiers[settings.tier], candles.length)} />
      <p className="note small">
        {history.status === "ok" && candles.length === 0 ? t.noTrades : null}
        {vwap !== null && vwap !== undefined ? t.vwap(formats.money(vwap, settings.currency)) : null}
      </p>
      <p className="note small attribution">
        {t.chartBy} <a href="https://www.tradingview.com/lightweight-charts/" rel="noreferrer">TradingView Lightweight Charts™</a>
      </p>
      {candles.length > 0 ? <CandleTable candles={candles} /> : null}
    </section>
  );
}

function TierBook({ gpu, tier }: { readonly gpu: string; readonly tier: Tier }) {
  const { t, settings } = useSettings();
  const refresh = useRefreshOnQuotes(gpu, tier, 2_000);
  const book = useApi(
    (signal) => api.GET("/v1/orderbook/{gpu}", { params: { path: { gpu }, query: { tier, currency: settings.currency } }, signal }),
    [gpu, tier, settings.currency, refresh],
  );
  return (
    <>
      <LoadStatus load={book} />
      {book.data !== undefined ? <Depth book={book.data} title={t.depthOf(t.tiers[tier])} /> : null}
    </>
  );
}

function OrderBooks({ gpu }: { readonly gpu: Gpu }) {
  const { t } = useSettings();
  const headingId = useId();
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{t.orderBook}</h2>
      <div className="columns">
        {TIERS.map((tier) => (
          <TierBook key={tier} gpu={gpu.id} tier={tier} />
        ))}
      </div>
    </section>
  );
}

export function GpuPage({ id }: { readonly id: string }) {
  const { t, formats } = useSettings();
  const gpu = useApi((signal) => api.GET("/v1/gpus/{gpu_id}", { params: { path: { gpu_id: id } }, signal }), [id]);
  const data = gpu.data;
  useTitle(data !== undefined ? t.gpuTitle(data.name) : gpu.status === "notFound" ? t.notFoundTitle : id);
  if (gpu.status === "notFound") {
    return (
      <>
        <PageHeading>{t.notFoundTitle}</PageHeading>
        <p>{t.gpuNotFound(id)}</p>
        <p>
          <Link href="/">{t.backToMarket}</Link>
        </p>
      </>
    );
  }
  return (
    <>
      <p className="crumbs">
        <Link href="/">{t.backToMarket}</Link>
      </p>
      <PageHeading>{data?.name ?? id}</PageHeading>
      <LoadStatus load={gpu} />
      {data !== undefined ? (
        <>
          <p className="lead">
            {data.vendor} · {data.architecture} · {formats.memory(data.memory_gb)} {data.memory_type} · {formats.bandwidth(data.bandwidth_gb_s)}
          </p>
          <BestAsks gpu={data} />
          <BuyPanel gpu={data} />
          <History gpu={data} />
          <OrderBooks gpu={data} />
          <Specs gpu={data} />
        </>
      ) : null}
    </>
  );
}
