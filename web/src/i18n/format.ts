// Numbers, money and dates per locale (German: 1.008 GB/s, 0,33 $; English: 1,008 GB/s, $0.33).
import type { Currency } from "../api/client";
import type { Language } from "./messages";

const LOCALE: Record<Language, string> = { de: "de-DE", en: "en-US" };

/** Intl's format takes a decimal string exactly (no float in between); its types lag. */
type DecimalFormat = (value: number | string) => string;

export class Formats {
  readonly locale: string;
  private readonly integer: Intl.NumberFormat;
  private readonly compact: Intl.NumberFormat;
  private readonly moneyBy = new Map<Currency, Intl.NumberFormat>();
  private readonly exactBy = new Map<Currency, Intl.NumberFormat>();
  private readonly hourFormat: Intl.NumberFormat;
  private readonly gibFormat: Intl.NumberFormat;
  private readonly countFormat: Intl.NumberFormat;
  private readonly when: Intl.DateTimeFormat;
  private readonly time: Intl.DateTimeFormat;

  constructor(language: Language) {
    this.locale = LOCALE[language];
    this.integer = new Intl.NumberFormat(this.locale, { maximumFractionDigits: 1 });
    this.compact = new Intl.NumberFormat(this.locale, { notation: "compact", compactDisplay: "short" });
    this.hourFormat = new Intl.NumberFormat(this.locale, { style: "unit", unit: "hour", unitDisplay: "short", maximumFractionDigits: 2 });
    this.countFormat = new Intl.NumberFormat(this.locale, { maximumFractionDigits: 0 });
    this.gibFormat = new Intl.NumberFormat(this.locale, { maximumFractionDigits: 1 });
    this.when = new Intl.DateTimeFormat(this.locale, { dateStyle: "medium", timeStyle: "short" });
    this.time = new Intl.DateTimeFormat(this.locale, { timeStyle: "medium" });
  }

  /** A plain number: 1.008 (de), 1,008 (en). */
  number(value: number): string {
    return this.integer.format(value);
  }

  /** GB/s as vendors state it: 1.008 GB/s. */
  bandwidth(gbPerS: number): string {
    return `${this.number(gbPerS)} GB/s`;
  }

  /** Memory as vendors state it: 24 GB. */
  memory(gb: number): string {
    return `${this.number(gb)} GB`;
  }

  /** Billions of parameters, short: 15 Mrd. (de), 15B (en). */
  parameters(billions: number): string {
    return this.compact.format(billions * 1e9);
  }

  /** Estimated hours, to 0.01 for reading: 1,02 Std. (de), 1.02 hr (en). */
  hours(value: number): string {
    // One non-breaking space between number and unit, whichever space the ICU writes.
    return this.hourFormat.format(value).replace(/\s/gu, "\u00a0");
  }

  /** An estimate's memory in GiB (2³⁰ bytes, as the estimator computes it): 21,8 GiB. */
  gib(value: number): string {
    return `${this.gibFormat.format(value)} GiB`;
  }

  /** A count in full: 10.240.000 (de), 10,240,000 (en). */
  count(value: number): string {
    return this.countFormat.format(value);
  }

  /** A decimal amount of money, exact to the exchange's 4 decimals: 0,33 $ (de), $0.33 (en). */
  money(amount: string, currency: Currency): string {
    let format = this.moneyBy.get(currency);
    if (format === undefined) {
      format = new Intl.NumberFormat(this.locale, {
        style: "currency",
        currency,
        minimumFractionDigits: 2,
        maximumFractionDigits: 4,
      });
      this.moneyBy.set(currency, format);
    }
    return (format.format as DecimalFormat)(amount);
  }

  /** Money to the micro-unit (a per-second lease's cost as it ticks): 0,000123 $. */
  moneyExact(amount: string, currency: Currency): string {
    let format = this.exactBy.get(currency);
    if (format === undefined) {
      format = new Intl.NumberFormat(this.locale, { style: "currency", currency, minimumFractionDigits: 2, maximumFractionDigits: 6 });
      this.exactBy.set(currency, format);
    }
    return (format.format as DecimalFormat)(amount);
  }

  /** A date and time in the reader's time zone. */
  dateTime(iso: string): string {
    return this.when.format(new Date(iso));
  }

  /** A time of day in the reader's time zone. */
  timeOfDay(date: Date): string {
    return this.time.format(date);
  }
}
