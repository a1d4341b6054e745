// Leases, the buyer's or the seller's: status (provisioning, running, failed, …), the price,
// and the cost so far: a running per-second lease's ticks every second on screen (price ×
// GPUs × the seconds since it was ready, exactly as the gateway computes it), read again from
// the exchange every few seconds. Its buyer can stop a lease.
import { api, type Lease } from "../api/client";
import { failureText } from "../app/problems";
import { gpuPath, Link } from "../app/router";
import { useSettings } from "../app/settings";
import { ListStatus, ScrollTable } from "../app/Table";
import { useApi } from "../app/useApi";
import { fromMicros } from "../guide/finder";
import { AccessDetails, PostAccess } from "./Access";
import { liveCostMicros, ticks } from "./cost";
import { ActionButton, useNow, usePolling, useReload } from "./ui";

/** The delivery fields of a lease (docs/DELIVERY.md), read when the API gives them. */
type Delivered = Lease & {
  readonly ready_at?: string | null;
  readonly provisioning_deadline?: string | null;
  readonly failure?: string | null;
  readonly failure_detail?: string | null;
};

const STOPPABLE = new Set(["provisioning", "scheduled", "running", "interrupting"]);
const REACHABLE = new Set(["running", "interrupting"]);
const HANDED_OVER = new Set(["provisioning", "running", "interrupting"]);

/** When a lease began to be charged: when its machines were ready, else its start. */
export function chargedFrom(lease: Delivered): string {
  return lease.ready_at ?? lease.started_at;
}

/** Ask the exchange to stop a lease: an error text, or undefined once it took the request. */
async function stopLease(leaseId: string): Promise<string | undefined> {
  return failureText(await api.POST("/v1/leases/{lease_id}/stop", { params: { path: { lease_id: leaseId } } }));
}

export function LeaseStatusText({ lease }: { readonly lease: Delivered }) {
  const { t, formats } = useSettings();
  const status = lease.status;
  return (
    <span className={`status status-${status}`} data-status={status}>
      {t.c.leaseStatus[status]}
      {status === "ended" && lease.end_reason ? <span className="sub">{t.c.endReasons[lease.end_reason]}</span> : null}
      {status === "failed" && (lease.failure_detail ?? lease.failure) ? <span className="sub">{lease.failure_detail ?? lease.failure}</span> : null}
      {status === "provisioning" && lease.provisioning_deadline ? <span className="sub">{t.c.readyBy(formats.dateTime(lease.provisioning_deadline))}</span> : null}
      {status === "interrupting" && lease.interrupt_at ? <span className="sub">{t.c.interruptAt(formats.dateTime(lease.interrupt_at))}</span> : null}
    </span>
  );
}

function Cost({ lease, now }: { readonly lease: Lease; readonly now: number }) {
  const { formats } = useSettings();
  const cost = fromMicros(liveCostMicros(lease, chargedFrom(lease), now));
  return (
    <td className="num cost" data-cost={cost} data-ticking={ticks(lease) ? "" : undefined}>
      {ticks(lease) ? formats.moneyExact(cost, lease.currency) : formats.money(cost, lease.currency)}
    </td>
  );
}

export function LeasesTable({ leases, role, onChange }: { readonly leases: readonly Lease[]; readonly role: "buyer" | "seller"; readonly onChange: () => void }) {
  const { t, formats } = useSettings();
  const now = useNow(leases.some(ticks));
  return (
    <ScrollTable label={role === "buyer" ? t.c.yourLeases : t.c.offerLeases} className="console-table leases" columns={[{ label: t.c.gpu }, { label: t.tier }, { label: t.c.gpus, num: true }, { label: t.c.priceHr, num: true }, { label: t.c.billing }, { label: t.c.started }, { label: t.c.status }, { label: t.c.costSoFar, num: true }, { label: t.c.actions, hidden: true }]}>
      {leases.map((lease) => (
        <tr key={lease.lease_id} data-lease={lease.lease_id} data-order={lease.order_id} data-status={lease.status}>
          <th scope="row"><Link href={gpuPath(lease.gpu)}>{lease.gpu}</Link></th>
          <td>{t.tiers[lease.tier as "on_demand"] ?? lease.tier}</td>
          <td className="num">{formats.number(lease.gpus)}</td>
          <td className="num">{formats.money(lease.price_per_gpu_hour, lease.currency)}</td>
          <td>{t.c.billings[lease.billing]}{lease.hours !== null ? <span className="sub">{t.c.forHours(formats.number(lease.hours))}</span> : null}</td>
          <td>{formats.dateTime(chargedFrom(lease))}</td>
          <td><LeaseStatusText lease={lease} /></td>
          <Cost lease={lease} now={now} />
          <td className="actions">
            {role === "buyer" && STOPPABLE.has(lease.status) ? <ActionButton label={t.c.stopLease(lease.gpu)} text={t.c.stop} call={() => stopLease(lease.lease_id)} onDone={onChange} /> : null}
            {role === "buyer" && REACHABLE.has(lease.status) ? <AccessDetails lease={lease} /> : null}
            {role === "seller" && HANDED_OVER.has(lease.status) ? <PostAccess lease={lease} onDone={onChange} /> : null}
          </td>
        </tr>
      ))}
    </ScrollTable>
  );
}

/** The account's leases in one role (optionally only those of one order), read again every
 * few seconds. */
export function LeaseList({ role, orderId, refresh = 0 }: { readonly role: "buyer" | "seller"; readonly orderId?: string; readonly refresh?: number }) {
  const { t } = useSettings();
  const [reload, bump] = useReload();
  const poll = usePolling(3_000);
  const leases = useApi((signal) => api.GET("/v1/leases", { params: { query: { role, limit: 50 } }, signal }), [role, refresh, reload, poll]);
  const items = (leases.data?.items ?? []).filter((lease) => orderId === undefined || lease.order_id === orderId);
  return (
    <>
      <ListStatus load={leases} count={items.length} empty={orderId === undefined ? t.c.noLeases : t.c.noLeaseYet} />
      {items.length > 0 ? <LeasesTable leases={items} role={role} onChange={bump} /> : null}
    </>
  );
}
