// The API client: every path, parameter and body type is generated from the gateway's
// OpenAPI document (web/openapi.json, `npm run generate`), none is written by hand.
import createClient from "openapi-fetch";

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
/** The `data` of one `best_ask` event of the price stream (gpux_contracts BestAskChanged). */
export type Quote = streamComponents["schemas"]["BestAskChanged"];

export const CURRENCIES: readonly Currency[] = ["EUR", "USD", "GBP"];
export const TIERS: readonly Tier[] = ["on_demand", "interruptible"];
export const METHODS: readonly Method[] = ["qlora", "lora", "full"];
export const INTERVALS: readonly Interval[] = ["1m", "1h", "1d"];

/** The stream's path, checked against the document's paths. */
export const PRICE_STREAM: keyof paths = "/v1/stream/prices";

/** Same origin: the gateway serves the app and the API. */
export const api = createClient<paths>({ baseUrl: "" });
