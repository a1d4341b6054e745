// CSV in the browser (RFC 4180): the seller's bulk offer upload is parsed here, row by row,
// and the statement is exported from here; nothing goes to a server to be converted.
import type { Billing, Currency, LedgerLine, Tier } from "../api/client";

/** The rows of a CSV text: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== "") rows.push(row);
    row = [];
    field = "";
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRow();
    } else field += c;
  }
  if (field !== "" || row.length > 0) endRow();
  return rows;
}

/** One field as CSV writes it: quoted when it holds a comma, a quote or a line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** Rows as CSV text, CRLF line ends (RFC 4180). */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}

export const STATEMENT_COLUMNS = ["created_at", "kind", "reference", "account_kind", "currency", "amount", "fx_rate", "fx_base", "fx_quote", "transfer_id"] as const;

/** The statement as CSV: one line per ledger line, amounts exactly as the API gave them. */
export function statementCsv(lines: readonly LedgerLine[]): string {
  return toCsv([STATEMENT_COLUMNS, ...lines.map((line) => STATEMENT_COLUMNS.map((column) => String(line[column] ?? "")))]);
}

/** What a bulk upload row becomes: an offer's body (as POST /v1/offers takes it). */
export interface OfferDraft {
  gpu: string;
  gpus: number;
  price_per_gpu_hour: string;
  currency: Currency;
  tier: Tier;
  billing: Billing;
  interruptible_price_per_gpu_hour?: string;
  provisioning_timeout_seconds: number;
  interruption_notice_seconds: number;
  region?: string;
  min_hours?: number;
}

/** The API's defaults for what a row leaves out (OfferIn's). */
export const DEFAULT_PROVISIONING_TIMEOUT_S = 600;
export const DEFAULT_NOTICE_S = 120;

export type RowProblem = { readonly kind: "missing" | "invalid"; readonly column: string } | { readonly kind: "columns" };

export type OfferRow =
  | { readonly line: number; readonly offer: OfferDraft }
  | { readonly line: number; readonly problem: RowProblem };

export const OFFER_COLUMNS = ["gpu", "gpus", "price_per_gpu_hour", "currency", "tier", "billing", "interruptible_price_per_gpu_hour", "provisioning_timeout_seconds", "interruption_notice_seconds", "region", "min_hours"] as const;
const REQUIRED = ["gpu", "gpus", "price_per_gpu_hour", "currency"] as const;
const PRICE = /^\d{1,5}(\.\d{1,4})?$/;
const INTEGER = /^\d{1,6}$/;
const CHOICES: Record<string, readonly string[]> = {
  currency: ["EUR", "USD", "GBP"],
  tier: ["on_demand", "interruptible"],
  billing: ["hour", "second"],
};

function check(column: string, value: string): boolean {
  if (column === "gpus" || column.endsWith("_seconds") || column === "min_hours") return INTEGER.test(value);
  if (column === "price_per_gpu_hour" || column === "interruptible_price_per_gpu_hour") return PRICE.test(value);
  const choices = CHOICES[column];
  return choices === undefined || choices.includes(value);
}

function draft(values: Record<string, string>): OfferDraft {
  const offer: OfferDraft = {
    gpu: values["gpu"] ?? "",
    gpus: Number(values["gpus"]),
    price_per_gpu_hour: values["price_per_gpu_hour"] ?? "",
    currency: (values["currency"] ?? "USD") as Currency,
    tier: (values["tier"] || "on_demand") as Tier,
    billing: (values["billing"] || "hour") as Billing,
    provisioning_timeout_seconds: values["provisioning_timeout_seconds"] ? Number(values["provisioning_timeout_seconds"]) : DEFAULT_PROVISIONING_TIMEOUT_S,
    interruption_notice_seconds: values["interruption_notice_seconds"] ? Number(values["interruption_notice_seconds"]) : DEFAULT_NOTICE_S,
  };
  if (values["interruptible_price_per_gpu_hour"]) offer.interruptible_price_per_gpu_hour = values["interruptible_price_per_gpu_hour"];
  if (values["region"]) offer.region = values["region"];
  if (values["min_hours"]) offer.min_hours = Number(values["min_hours"]);
  return offer;
}

/** The offers of an uploaded CSV: a header row names the columns (OFFER_COLUMNS, any order,
 * unknown ones ignored); each further row is an offer or the reason it is not one. `line` is
 * the row's line in the file (the header is line 1). */
export function offerRows(text: string): OfferRow[] {
  const [header, ...rows] = parseCsv(text);
  if (header === undefined) return [];
  const names = header.map((name) => name.trim().toLowerCase());
  return rows.map((cells, index) => {
    const line = index + 2;
    if (cells.length > names.length) return { line, problem: { kind: "columns" } };
    const values: Record<string, string> = {};
    names.forEach((name, i) => (values[name] = (cells[i] ?? "").trim()));
    const missing = REQUIRED.find((column) => !values[column]);
    if (missing !== undefined) return { line, problem: { kind: "missing", column: missing } };
    const invalid = OFFER_COLUMNS.find((column) => values[column] && !check(column, values[column]));
    if (invalid !== undefined) return { line, problem: { kind: "invalid", column: invalid } };
    return { line, offer: draft(values) };
  });
}

/** A browser download of `text` as a file named `name` (no server round trip). */
export function download(name: string, text: string, type = "text/csv;charset=utf-8"): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}
