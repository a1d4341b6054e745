// The API client: every path, parameter and body type is generated from the gateway's
// OpenAPI document (web/openapi.json, `npm run generate`), none is written by hand.
import createClient from "openapi-fetch";

import { csrfHeader } from "./csrf";

import type { components, paths } from "./schema.gen";
import type { components as streamComponents } from "./stream.gen";

type Schemas = components["schemas"];

export type Gpu = Schemas["GpuOut"];
export type Currency = Schemas["Currency"];
export type Tier = Schemas["Tier"];
export type Interval = Schemas["IntervalParam"];
export type PriceItem = Schemas["PriceOut"];
export type History = Schemas["HistoryOut"];
export type Candle = Schemas["CandleOut"];
export type OrderBook = Schemas["OrderBookOut"];
export type BookLevel = Schemas["BookLevelOut"];
export type Problem = Schemas["Problem"];
export type Model = Schemas["ModelOut"];
export type Method = Schemas["Method"];
export type Recommendation = Schemas["Recommendation"];
export type Recommendations = Schemas["RecommendationList"];
export type Account = Schemas["AccountOut"];
export type Role = Schemas["Role"];
export type Scope = Schemas["Scope"];
export type ApiKey = Schemas["KeyOut"];
export type Balance = Schemas["BalanceOut"];
export type Order = Schemas["OrderOut"];
export type OrderIn = Schemas["OrderIn"];
export type OrderType = Schemas["OrderType"];
export type OrderTier = Schemas["OrderTier"];
export type TimeInForce = Schemas["TimeInForce"];
export type Offer = Schemas["OfferOut"];
export type OfferIn = Schemas["OfferIn"];
export type Billing = Schemas["BillingGranularity"];
export type Lease = Schemas["LeaseOut"];
export type LedgerLine = Schemas["LedgerLineOut"];
export type Earnings = Schemas["EarningsOut"];
/** The `data` of one `best_ask` event of the price stream (gpux_contracts BestAskChanged). */
export type Quote = streamComponents["schemas"]["BestAskChanged"];

export const CURRENCIES: readonly Currency[] = ["EUR", "USD", "GBP"];
export const TIERS: readonly Tier[] = ["on_demand", "interruptible"];
export const ROLES: readonly Role[] = ["buyer", "seller"];
export const SCOPES: readonly Scope[] = ["read", "offers:write", "orders:write", "wallet:write", "keys:manage"];
export const ORDER_TIERS: readonly OrderTier[] = ["on_demand", "interruptible", "any"];
export const TIMES_IN_FORCE: readonly TimeInForce[] = ["ioc", "fok", "gtc", "gtd"];
export const BILLINGS: readonly Billing[] = ["second", "hour"];
export const METHODS: readonly Method[] = ["qlora", "lora", "full"];
export const INTERVALS: readonly Interval[] = ["1m", "1h", "1d"];

/** The stream's path, checked against the document's paths. */
export const PRICE_STREAM: keyof paths = "/v1/stream/prices";

/** Same origin: the gateway serves the app and the API, and the session cookie goes along. */
export const api = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

/** Fired when the exchange answers 401: the session ended (revoked, expired, its key revoked). */
export const UNAUTHORIZED = "gpux:unauthorized";

// Every write made with the session cookie echoes the CSRF cookie (src/api/csrf.ts); a 401
// tells the page that it is signed out.
api.use({
  onRequest({ request }) {
    for (const [name, value] of Object.entries(csrfHeader(request.method, document.cookie))) {
      request.headers.set(name, value);
    }
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) window.dispatchEvent(new Event(UNAUTHORIZED));
    return response;
  },
});
