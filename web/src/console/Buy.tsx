// Buying from the market pages: the GPU page's buy panel (a market order for that GPU: tier,
// GPUs, hours, cap) and what an order placed there became: its status as the exchange fills
// it, then its leases with their cost ticking. Signed out, a link to sign in.
import { useId, useState, type FormEvent } from "react";

import { api, TIERS, type Gpu, type Order, type Tier } from "../api/client";
import { useAccount } from "../app/account";
import { consolePath, Link, signInPath, usePathname } from "../app/router";
import { useSettings } from "../app/settings";
import { useApi } from "../app/useApi";
import { LeaseList } from "./Leases";
import { decimalInput, FINAL, OrderStatus, placeOrder, PRICE_PATTERN } from "./Orders";
import { ErrorText, Field, SelectField, SubmitRow, useAction, usePolling } from "./ui";

/** An order just placed: its status until it is final, then its leases. */
export function BuyOutcome({ placed }: { readonly placed: Order }) {
  const { t } = useSettings();
  const [final, setFinal] = useState(FINAL.has(placed.status));
  const poll = usePolling(1_000, !final);
  const order = useApi(
    async (signal) => {
      const answer = await api.GET("/v1/orders/{order_id}", { params: { path: { order_id: placed.id } }, signal });
      if (answer.data !== undefined && FINAL.has(answer.data.status)) setFinal(true);
      return answer;
    },
    [placed.id, poll],
  );
  const current = order.data ?? placed;
  return (
    <div className="buy-outcome" data-order={placed.id} aria-live="polite">
      <p>
        {t.c.orderLabel} <OrderStatus order={current} />
      </p>
      {current.filled_gpus > 0 || final ? <LeaseList role="buyer" orderId={placed.id} /> : null}
      <p>
        <Link href={consolePath("leases")}>{t.c.seeLeases}</Link>
      </p>
    </div>
  );
}

function BuyForm({ gpu, onPlaced }: { readonly gpu: Gpu; readonly onPlaced: (order: Order) => void }) {
  const { t, settings } = useSettings();
  const [tier, setTier] = useState<Tier>(settings.tier);
  const [gpus, setGpus] = useState("1");
  const [hours, setHours] = useState("1");
  const [cap, setCap] = useState("");
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const price = decimalInput(cap);
    await action.run(async () => {
      const placed = await placeOrder({
        gpu: gpu.id,
        gpus: Number(gpus),
        type: "market",
        tier,
        currency: settings.currency,
        time_in_force: "ioc",
        rebuy_on_interruption: false,
        ...(hours.trim() !== "" && { hours: Number(hours) }),
        ...(price !== "" && { max_price_per_gpu_hour: price }),
      });
      if (placed.order !== undefined) onPlaced(placed.order);
      return placed.error;
    });
  };
  return (
    <form className="console-form" aria-label={t.c.buyTitle} onSubmit={(event) => void submit(event)}>
      <SelectField label={t.tier} value={tier} options={TIERS} text={(option) => t.tiers[option]} onChange={setTier} />
      <Field label={t.c.gpus} type="number" min={1} max={4096} step={1} required value={gpus} onChange={(event) => setGpus(event.target.value)} />
      <Field label={t.c.hours} type="number" min={1} max={8760} step={1} value={hours} hint={t.c.hoursHint} onChange={(event) => setHours(event.target.value)} />
      <Field label={t.c.capPrice(settings.currency)} inputMode="decimal" pattern={PRICE_PATTERN} value={cap} hint={t.c.capHint} onChange={(event) => setCap(event.target.value)} />
      <SubmitRow label={action.busy ? t.c.buying : t.c.buy} action={action} />
    </form>
  );
}

/** Buy the cheapest fitting GPU for a job: one GPU for the job's hours (rounded up), a
 * market order capped at its live best ask. */
export function BuyCheapest({ gpu, gpuName, hours, price }: { readonly gpu: string; readonly gpuName: string; readonly hours: number; readonly price: string }) {
  const { t, settings, formats } = useSettings();
  const { state } = useAccount();
  const [placed, setPlaced] = useState<Order | undefined>(undefined);
  const action = useAction();
  const pathname = usePathname();
  const whole = Math.min(8760, Math.max(1, Math.ceil(hours)));
  const buy = () =>
    void action.run(async () => {
      const result = await placeOrder({
        gpu,
        gpus: 1,
        type: "market",
        tier: settings.tier,
        currency: settings.currency,
        time_in_force: "ioc",
        rebuy_on_interruption: false,
        hours: whole,
        max_price_per_gpu_hour: price,
      });
      if (result.order !== undefined) setPlaced(result.order);
      return result.error;
    });
  if (state.status !== "signedIn" || !state.account.roles.includes("buyer")) {
    return (
      <div className="buy-cheapest">
        <p>
          <Link href={signInPath(pathname)}>{t.c.signInToBuy}</Link>
        </p>
      </div>
    );
  }
  return (
    <div className="buy-cheapest" data-gpu={gpu} data-hours={whole}>
      <p className="note small">{t.c.buyCheapestText}</p>
      <button type="button" className="primary" onClick={buy} disabled={action.busy || placed !== undefined}>
        {t.c.buyCheapest(gpuName, formats.hours(whole))}
      </button>
      <ErrorText error={action.error} />
      {placed !== undefined ? <BuyOutcome placed={placed} /> : null}
    </div>
  );
}

export function BuyPanel({ gpu }: { readonly gpu: Gpu }) {
  const { t } = useSettings();
  const { state } = useAccount();
  const headingId = useId();
  const [placed, setPlaced] = useState<Order | undefined>(undefined);
  const pathname = usePathname();
  return (
    <section className="buy" aria-labelledby={headingId}>
      <h2 id={headingId}>{t.c.buyTitle}</h2>
      {state.status === "signedOut" ? (
        <p>
          <Link href={signInPath(pathname)}>{t.c.signInToBuy}</Link>
        </p>
      ) : null}
      {state.status === "signedIn" && !state.account.roles.includes("buyer") ? <p className="note">{t.c.notABuyer}</p> : null}
      {state.status === "signedIn" && state.account.roles.includes("buyer") ? (
        <>
          <p className="note small">{t.c.buyText}</p>
          <BuyForm gpu={gpu} onPlaced={setPlaced} />
          {placed !== undefined ? <BuyOutcome key={placed.id} placed={placed} /> : null}
        </>
      ) : null}
    </section>
  );
}
