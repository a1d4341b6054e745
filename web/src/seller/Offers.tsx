// The seller's offers: a form (on-demand price and, for on-demand GPUs, the price of the same
// GPUs sold interruptible; billing; the provisioning timeout, 0 = ready at the lease's start),
// the list with each offer's status and delivery record (leases ready in time, the seller's
// rate over all its offers), re-pricing (PATCH) and withdrawal (DELETE).
import { useState, type FormEvent } from "react";

import { api, BILLINGS, CURRENCIES, TIERS, type Billing, type Currency, type Gpu, type Offer, type Tier } from "../api/client";
import { idempotencyKey } from "../api/csrf";
import { failureText, problemText } from "../app/problems";
import { gpuPath, Link } from "../app/router";
import { useSettings } from "../app/settings";
import { useApi } from "../app/useApi";
import { decimalInput, PRICE_PATTERN } from "../console/Orders";
import { DEFAULT_NOTICE_S, type OfferDraft } from "../console/csv";
import { ActionButton, ErrorText, Field, ListPanel, SelectField, SubmitRow, useAction, usePolling, useReload } from "../console/ui";

const ENDED = new Set(["withdrawn", "rejected", "expired"]);

/** Submit one offer: the offer as accepted, or an error text. */
export async function submitOffer(offer: OfferDraft, key = idempotencyKey()): Promise<{ offer?: Offer; error?: string }> {
  const { data, error, response } = await api.POST("/v1/offers", { params: { header: { "Idempotency-Key": key } }, body: offer });
  return data !== undefined ? { offer: data } : { error: problemText(error, response) };
}

interface Draft {
  gpu: string;
  gpus: string;
  price: string;
  interruptible: string;
  currency: Currency;
  tier: Tier;
  billing: Billing;
  timeout: string;
}

function offerBody(d: Draft): OfferDraft {
  const interruptible = decimalInput(d.interruptible);
  return {
    gpu: d.gpu,
    gpus: Number(d.gpus),
    price_per_gpu_hour: decimalInput(d.price),
    currency: d.currency,
    tier: d.tier,
    billing: d.billing,
    provisioning_timeout_seconds: Number(d.timeout || "0"),
    interruption_notice_seconds: DEFAULT_NOTICE_S,
    ...(d.tier === "on_demand" && interruptible !== "" && { interruptible_price_per_gpu_hour: interruptible }),
  };
}

export function OfferForm({ gpus, onCreated }: { readonly gpus: readonly Gpu[]; readonly onCreated: () => void }) {
  const { t, settings } = useSettings();
  const [draft, setDraft] = useState<Draft>({ gpu: gpus[0]?.id ?? "", gpus: "1", price: "", interruptible: "", currency: settings.currency, tier: "on_demand", billing: "second", timeout: "0" });
  const [created, setCreated] = useState<Offer | undefined>(undefined);
  const change = (update: Partial<Draft>) => setDraft((d) => ({ ...d, ...update }));
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setCreated(undefined);
    await action.run(async () => {
      const result = await submitOffer(offerBody(draft));
      if (result.offer !== undefined) {
        setCreated(result.offer);
        onCreated();
      }
      return result.error;
    });
  };
  return (
    <form className="console-form" aria-label={t.c.newOffer} onSubmit={(event) => void submit(event)}>
      <SelectField label={t.c.gpu} value={draft.gpu} options={gpus.map((g) => g.id)} text={(id) => gpus.find((g) => g.id === id)?.name ?? id} onChange={(gpu) => change({ gpu })} />
      <Field label={t.c.gpus} type="number" min={1} max={4096} step={1} required value={draft.gpus} onChange={(event) => change({ gpus: event.target.value })} />
      <SelectField label={t.tier} value={draft.tier} options={TIERS} text={(tier) => t.tiers[tier]} onChange={(tier) => change({ tier })} />
      <SelectField label={t.currency} value={draft.currency} options={CURRENCIES} text={(c) => c} onChange={(currency) => change({ currency })} />
      <Field label={t.c.askPrice(draft.currency)} inputMode="decimal" required pattern={PRICE_PATTERN} value={draft.price} onChange={(event) => change({ price: event.target.value })} />
      {draft.tier === "on_demand" ? (
        <Field label={t.c.interruptiblePrice(draft.currency)} inputMode="decimal" pattern={PRICE_PATTERN} value={draft.interruptible} hint={t.c.interruptibleHint} onChange={(event) => change({ interruptible: event.target.value })} />
      ) : null}
      <SelectField label={t.c.billing} value={draft.billing} options={BILLINGS} text={(b) => t.c.billings[b]} onChange={(billing) => change({ billing })} />
      <Field label={t.c.provisioningTimeout} type="number" min={0} max={86400} step={1} required value={draft.timeout} hint={t.c.provisioningHint} onChange={(event) => change({ timeout: event.target.value })} />
      <SubmitRow label={t.c.submitOffer} action={action} />
      {created !== undefined ? <p className="note" role="status">{t.c.offerSubmitted(created.id)}</p> : null}
    </form>
  );
}

function Reprice({ offer, onDone }: { readonly offer: Offer; readonly onDone: () => void }) {
  const { t } = useSettings();
  const [price, setPrice] = useState(offer.price_per_gpu_hour);
  const [interruptible, setInterruptible] = useState(offer.interruptible_price_per_gpu_hour ?? "");
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const next = decimalInput(interruptible);
    await action.run(async () =>
      failureText(
        await api.PATCH("/v1/offers/{offer_id}", {
          params: { path: { offer_id: offer.id } },
          body: { price_per_gpu_hour: decimalInput(price), ...(offer.tier === "on_demand" && next !== "" && { interruptible_price_per_gpu_hour: next }) },
        }),
      ),
    );
    onDone();
  };
  return (
    <form className="reprice" aria-label={t.c.repriceOf(offer.gpu)} onSubmit={(event) => void submit(event)}>
      <Field label={t.c.newPrice} inputMode="decimal" required pattern={PRICE_PATTERN} value={price} size={7} onChange={(event) => setPrice(event.target.value)} />
      {offer.tier === "on_demand" ? <Field label={t.c.newInterruptiblePrice} inputMode="decimal" pattern={PRICE_PATTERN} value={interruptible} size={7} onChange={(event) => setInterruptible(event.target.value)} /> : null}
      <button type="submit" disabled={action.busy}>{t.c.reprice}</button>
      <ErrorText error={action.error} />
    </form>
  );
}

/** Ask the exchange to withdraw an offer: an error text, or undefined once it took the
 * request. */
async function withdrawOffer(offerId: string): Promise<string | undefined> {
  return failureText(await api.DELETE("/v1/offers/{offer_id}", { params: { path: { offer_id: offerId } } }));
}

type Counts = Offer["reliability"]["offer"];

/** A reliability rate (a decimal string, "0.9500") as a percentage: 95 % (de), 95% (en). */
function percent(locale: string, rate: string): string {
  const format = new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 2 });
  return (format.format as (value: string) => string)(rate);
}

/** The offer's leases ready in time of those counted, and the seller's rate over all offers. */
function Delivery({ offer, seller }: { readonly offer: Counts; readonly seller: Counts }) {
  const { t, formats } = useSettings();
  const total = offer.ready_in_time + offer.failed + offer.reclaimed;
  return (
    <td data-rate={offer.rate ?? ""}>
      {offer.rate === null ? t.c.notCounted : t.c.readyOf(formats.number(offer.ready_in_time), formats.number(total))}
      {seller.rate !== null ? <span className="sub">{t.c.sellerRate(percent(formats.locale, seller.rate))}</span> : null}
    </td>
  );
}

function OfferRow({ offer, onChange }: { readonly offer: Offer; readonly onChange: () => void }) {
  const { t, formats } = useSettings();
  const open = !ENDED.has(offer.status);
  return (
    <tr data-offer={offer.id} data-status={offer.status} data-gpu={offer.gpu}>
      <th scope="row"><Link href={gpuPath(offer.gpu)}>{offer.gpu}</Link></th>
      <td>{t.tiers[offer.tier]}</td>
      <td className="num">{t.c.leasedOf(formats.number(offer.leased_gpus), formats.number(offer.capacity_gpus))}</td>
      <td className="num">
        {formats.money(offer.price_per_gpu_hour, offer.currency)}
        {offer.interruptible_price_per_gpu_hour ? <span className="sub">{t.c.interruptibleAt(formats.money(offer.interruptible_price_per_gpu_hour, offer.currency))}</span> : null}
      </td>
      <td>{t.c.billings[offer.billing]}<span className="sub">{offer.provisioning_timeout_seconds === 0 ? t.c.readyAtStart : t.c.provisionWithin(formats.number(offer.provisioning_timeout_seconds))}</span></td>
      <Delivery offer={offer.reliability.offer} seller={offer.reliability.seller} />
      <td>
        <span className={`status status-${offer.status}`} data-status={offer.status}>{t.c.offerStatus[offer.status as keyof typeof t.c.offerStatus] ?? offer.status}</span>
        {offer.reason ? <span className="sub">{offer.reason}</span> : null}
      </td>
      <td className="actions">{open ? <><Reprice offer={offer} onDone={onChange} /><ActionButton label={t.c.withdrawOf(offer.gpu)} text={t.c.withdraw} call={() => withdrawOffer(offer.id)} onDone={onChange} /></> : null}</td>
    </tr>
  );
}

export function OffersList({ refresh }: { readonly refresh: number }) {
  const { t } = useSettings();
  const [reload, bump] = useReload();
  const poll = usePolling(3_000);
  const offers = useApi((signal) => api.GET("/v1/offers", { params: { query: { limit: 100 } }, signal }), [refresh, reload, poll]);
  return (
    <ListPanel title={t.c.yourOffers} load={offers} empty={t.c.noOffers} className="console-table offers" columns={[{ label: t.c.gpu }, { label: t.tier }, { label: t.c.leased, num: true }, { label: t.c.priceHr, num: true }, { label: t.c.billing }, { label: t.c.delivery }, { label: t.c.status }, { label: t.c.actions }]} row={(offer) => (
      <OfferRow key={offer.id} offer={offer} onChange={bump} />
    )} />
  );
}
