// Orders: a form for market and limit orders (tier, GPUs, hours, the limit or a market
// order's cap, time in force: IOC, FOK, GTC, GTD), and the buyer's orders with their status;
// an order still on the book can be cancelled.
import { useState, type FormEvent } from "react";

import { api, ORDER_TIERS, TIMES_IN_FORCE, type Currency, type Gpu, type Order, type OrderIn, type OrderTier, type OrderType, type TimeInForce } from "../api/client";
import { idempotencyKey } from "../api/csrf";
import { Radios } from "../app/Radios";
import { failureText, problemText } from "../app/problems";
import { gpuPath, Link } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { useApi } from "../app/useApi";
import { ActionButton, Field, ListPanel, Panel, SelectField, SubmitRow, useAction, usePolling, useReload } from "./ui";

export const PRICE_PATTERN = "^[0-9]{1,5}([.,][0-9]{1,4})?$";
const OPEN = new Set(["pending_funds", "open", "partially_filled"]);
export const FINAL = new Set(["filled", "cancelled", "expired", "rejected"]);

/** Place an order (a fresh Idempotency-Key): the order as accepted, or an error text. */
export async function placeOrder(body: OrderIn): Promise<{ order?: Order; error?: string }> {
  const { data, error, response } = await api.POST("/v1/orders", { params: { header: { "Idempotency-Key": idempotencyKey() } }, body });
  return data !== undefined ? { order: data } : { error: problemText(error, response) };
}

/** A decimal as typed (1,5 in German) as the API takes it (1.5); empty stays empty. */
export function decimalInput(value: string): string {
  return value.trim().replace(",", ".");
}

interface Draft {
  gpu: string;
  type: OrderType;
  tier: OrderTier;
  gpus: string;
  hours: string;
  price: string;
  tif: TimeInForce;
  expires: string;
}

function orderBody(draft: Draft, currency: Currency): OrderIn {
  const price = decimalInput(draft.price);
  return {
    gpu: draft.gpu,
    gpus: Number(draft.gpus),
    type: draft.type,
    tier: draft.tier,
    currency,
    time_in_force: draft.tif,
    rebuy_on_interruption: false,
    ...(price !== "" && { max_price_per_gpu_hour: price }),
    ...(draft.hours.trim() !== "" && { hours: Number(draft.hours) }),
    ...(draft.tif === "gtd" && draft.expires !== "" && { expires_at: new Date(draft.expires).toISOString() }),
  };
}

export function OrderForm({ gpus, onPlaced }: { readonly gpus: readonly Gpu[]; readonly onPlaced: (order: Order) => void }) {
  const { t, settings } = useSettings();
  const [draft, setDraft] = useState<Draft>({ gpu: gpus[0]?.id ?? "", type: "market", tier: settings.tier, gpus: "1", hours: "1", price: "", tif: "ioc", expires: "" });
  const change = (update: Partial<Draft>) => setDraft((d) => ({ ...d, ...update }));
  const action = useAction();
  const tifs = draft.type === "market" ? TIMES_IN_FORCE.filter((tif) => tif !== "gtd") : TIMES_IN_FORCE;
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    await action.run(async () => {
      const placed = await placeOrder(orderBody(draft, settings.currency));
      if (placed.order !== undefined) onPlaced(placed.order);
      return placed.error;
    });
  };
  return (
    <form className="console-form" aria-label={t.c.placeOrder} onSubmit={(event) => void submit(event)}>
      <SelectField label={t.c.gpu} value={draft.gpu} options={gpus.map((g) => g.id)} text={(id) => gpus.find((g) => g.id === id)?.name ?? id} onChange={(gpu) => change({ gpu })} />
      <Radios legend={t.c.orderType} name="order-type" options={["market", "limit"] as const} value={draft.type} label={(type) => t.c.orderTypes[type]} onChange={(type) => change({ type, tif: type === "market" && draft.tif === "gtd" ? "ioc" : draft.tif })} />
      <SelectField label={t.tier} value={draft.tier} options={ORDER_TIERS} text={(tier) => t.c.orderTiers[tier]} onChange={(tier) => change({ tier })} />
      <Field label={t.c.gpus} type="number" min={1} max={4096} step={1} required value={draft.gpus} onChange={(event) => change({ gpus: event.target.value })} />
      <Field label={t.c.hours} type="number" min={1} max={8760} step={1} value={draft.hours} hint={t.c.hoursHint} onChange={(event) => change({ hours: event.target.value })} />
      <Field
        label={draft.type === "limit" ? t.c.limitPrice(settings.currency) : t.c.capPrice(settings.currency)}
        inputMode="decimal"
        pattern={PRICE_PATTERN}
        required={draft.type === "limit"}
        value={draft.price}
        hint={draft.type === "market" ? t.c.capHint : undefined}
        onChange={(event) => change({ price: event.target.value })}
      />
      <SelectField label={t.c.timeInForce} value={draft.tif} options={tifs} text={(tif) => t.c.tifs[tif]} onChange={(tif) => change({ tif })} />
      {draft.tif === "gtd" ? <Field label={t.c.expiresAt} type="datetime-local" required value={draft.expires} onChange={(event) => change({ expires: event.target.value })} /> : null}
      <SubmitRow label={t.c.placeOrder} action={action} />
    </form>
  );
}

/** Ask the exchange to cancel an order's rest: an error text, or undefined once it took the
 * request. */
async function cancelOrder(orderId: string): Promise<string | undefined> {
  return failureText(await api.DELETE("/v1/orders/{order_id}", { params: { path: { order_id: orderId } } }));
}

export function OrderStatus({ order }: { readonly order: Order }) {
  const { t, formats } = useSettings();
  return (
    <span className={`status status-${order.status}`} data-status={order.status}>
      {t.c.orderStatus[order.status]}
      {order.reason ? <span className="sub">{order.reason}</span> : null}
      {order.shortfall && order.shortfall_currency ? <span className="sub">{t.c.shortfall(formats.money(order.shortfall, order.shortfall_currency))}</span> : null}
    </span>
  );
}

export function OrdersList({ refresh }: { readonly refresh: number }) {
  const { t, formats } = useSettings();
  const [reload, bump] = useReload();
  const poll = usePolling(3_000);
  const orders = useApi((signal) => api.GET("/v1/orders", { params: { query: { limit: 50 } }, signal }), [refresh, reload, poll]);
  return (
    <ListPanel title={t.c.yourOrders} load={orders} empty={t.c.noOrders} className="console-table orders" columns={[{ label: t.c.created }, { label: t.c.gpu }, { label: t.c.orderType }, { label: t.tier }, { label: t.c.filled, num: true }, { label: t.c.hours, num: true }, { label: t.c.priceHr, num: true }, { label: t.c.timeInForce }, { label: t.c.status }, { label: t.c.actions, hidden: true }]} row={(o) => (
      <tr key={o.id} data-order={o.id} data-status={o.status}>
        <td>{formats.dateTime(o.created_at)}</td>
        <th scope="row"><Link href={gpuPath(o.gpu)}>{o.gpu}</Link></th>
        <td>{t.c.orderTypes[o.type]}</td>
        <td>{t.c.orderTiers[o.tier]}</td>
        <td className="num">{t.c.filledOf(formats.number(o.filled_gpus), formats.number(o.gpus))}</td>
        <td className="num">{o.hours === null ? t.c.openEnded : formats.number(o.hours)}</td>
        <td className="num">{o.max_price_per_gpu_hour === null ? "–" : formats.money(o.max_price_per_gpu_hour, o.currency)}</td>
        <td>{o.time_in_force.toUpperCase()}{o.expires_at ? <span className="sub">{formats.dateTime(o.expires_at)}</span> : null}</td>
        <td><OrderStatus order={o} /></td>
        <td>{OPEN.has(o.status) && o.remaining_gpus > 0 ? <ActionButton label={t.c.cancelOrder(o.id)} text={t.c.cancel} call={() => cancelOrder(o.id)} onDone={bump} /> : null}</td>
      </tr>
    )} />
  );
}

export function Orders() {
  const { t } = useSettings();
  const gpus = useApi((signal) => api.GET("/v1/gpus", { signal }), []);
  const [placed, setPlaced] = useState<Order | undefined>(undefined);
  const [reload, bump] = useReload();
  return (
    <>
      <Panel title={t.c.placeOrder}>
        <LoadStatus load={gpus} />
        {gpus.data !== undefined ? (
          <OrderForm
            gpus={gpus.data.items}
            onPlaced={(order) => {
              setPlaced(order);
              bump();
            }}
          />
        ) : null}
        {placed !== undefined ? <p className="note" role="status">{t.c.orderPlaced(placed.id)}</p> : null}
      </Panel>
      <OrdersList refresh={reload} />
    </>
  );
}
