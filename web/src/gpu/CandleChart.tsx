// Candles with volume, drawn by TradingView's lightweight-charts (a canvas), with the same
// candles as a table for screen readers and keyboards. Prices become numbers only here, to
// be drawn; every price shown as text is formatted from the API's decimal string.
import {
  type AutoscaleInfo,
  CandlestickSeries,
  ColorType,
  createChart,
  HistogramSeries,
  type IChartApi,
  type ISeriesApi,
  type UTCTimestamp,
} from "lightweight-charts";
import { useEffect, useRef } from "react";

import type { Candle, Currency } from "../api/client";
import { useSettings } from "../app/settings";

const UP = "#15803d";
const DOWN = "#b91c1c";

interface Series {
  readonly chart: IChartApi;
  readonly candles: ISeriesApi<"Candlestick">;
  readonly volume: ISeriesApi<"Histogram">;
}

function seconds(iso: string): UTCTimestamp {
  return Math.floor(Date.parse(iso) / 1000) as UTCTimestamp;
}

export function CandleChart({ candles, currency, label }: { readonly candles: readonly Candle[]; readonly currency: Currency; readonly label: string }) {
  const { formats } = useSettings();
  const box = useRef<HTMLDivElement>(null);
  const series = useRef<Series | null>(null);

  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const chart = createChart(element, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: "#ffffff" }, textColor: "#1f2937", attributionLogo: false },
      grid: { vertLines: { color: "#eef2f7" }, horzLines: { color: "#eef2f7" } },
      timeScale: { timeVisible: true, secondsVisible: false },
      rightPriceScale: { scaleMargins: { top: 0.1, bottom: 0.3 } },
    });
    const candleSeries = chart.addSeries(CandlestickSeries, {
      upColor: UP,
      downColor: DOWN,
      borderUpColor: UP,
      borderDownColor: DOWN,
      wickUpColor: UP,
      wickDownColor: DOWN,
      // A flat market (one price) still gets a readable axis: at least ±2 % around it.
      autoscaleInfoProvider: (original: () => AutoscaleInfo | null) => {
        const info = original();
        if (info?.priceRange == null) return info;
        const { minValue, maxValue } = info.priceRange;
        const pad = Math.max((maxValue - minValue) * 0.1, maxValue * 0.02);
        return { ...info, priceRange: { minValue: minValue - pad, maxValue: maxValue + pad } };
      },
    });
    const volume = chart.addSeries(HistogramSeries, {
      priceFormat: { type: "volume" },
      priceScaleId: "",
      color: "#93c5fd",
      lastValueVisible: false,
      priceLineVisible: false,
    });
    volume.priceScale().applyOptions({ scaleMargins: { top: 0.78, bottom: 0 } });
    series.current = { chart, candles: candleSeries, volume };
    return () => {
      series.current = null;
      chart.remove();
    };
  }, []);

  useEffect(() => {
    const current = series.current;
    if (current === null) return;
    current.chart.applyOptions({ localization: { locale: formats.locale } });
    current.candles.applyOptions({
      priceFormat: { type: "custom", minMove: 0.0001, formatter: (price: number) => formats.money(price.toFixed(4), currency) },
    });
  }, [formats, currency]);

  useEffect(() => {
    const current = series.current;
    if (current === null) return;
    current.candles.setData(
      candles.map((c) => ({ time: seconds(c.start), open: Number(c.open), high: Number(c.high), low: Number(c.low), close: Number(c.close) })),
    );
    current.volume.setData(
      candles.map((c) => ({ time: seconds(c.start), value: c.gpus, color: Number(c.close) >= Number(c.open) ? "#86efac" : "#fca5a5" })),
    );
    current.chart.timeScale().fitContent();
  }, [candles]);

  return <div className="chart" ref={box} role="img" aria-label={label} data-candles={candles.length} />;
}
