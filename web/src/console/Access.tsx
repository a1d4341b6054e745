// A lease's access handoff (docs/DELIVERY.md): its seller posts how to reach the machines
// (host, port, login, a URL, notes; kept encrypted, the post makes a provisioning lease
// ready), its buyer reads them once they are posted.
import { useState, type FormEvent } from "react";

import { api, type Lease } from "../api/client";
import { problemText } from "../app/problems";
import { useSettings } from "../app/settings";
import { ActionButton, Field, SubmitRow, useAction } from "./ui";

type AccessOut = NonNullable<Awaited<ReturnType<typeof readAccess>>["data"]>;

function readAccess(leaseId: string) {
  return api.GET("/v1/leases/{lease_id}/access", { params: { path: { lease_id: leaseId } } });
}

/** The buyer's: read the access details on demand (the seller may not have posted any). */
export function AccessDetails({ lease }: { readonly lease: Lease }) {
  const { t, formats } = useSettings();
  const [access, setAccess] = useState<AccessOut | null | undefined>(undefined);
  const load = async () => {
    const { data, error, response } = await readAccess(lease.lease_id);
    if (data !== undefined) setAccess(data);
    else if (response.status === 404) setAccess(null);
    else return problemText(error, response);
    return undefined;
  };
  if (access === undefined) return <ActionButton label={t.c.accessOf(lease.gpu)} text={t.c.access} call={load} />;
  if (access === null) return <span className="sub">{t.c.noAccess}</span>;
  const ssh = access.host !== null ? `ssh ${access.port !== null && access.port !== 22 ? `-p ${access.port} ` : ""}${access.user !== null ? `${access.user}@` : ""}${access.host}` : null;
  return (
    <dl className="access" data-access={lease.lease_id}>
      {ssh !== null ? (
        <div>
          <dt>{t.c.sshCommand}</dt>
          <dd><code>{ssh}</code></dd>
        </div>
      ) : null}
      {access.endpoint_url !== null ? (
        <div>
          <dt>{t.c.endpoint}</dt>
          <dd><a href={access.endpoint_url} rel="noreferrer">{access.endpoint_url}</a></dd>
        </div>
      ) : null}
      {access.notes !== "" ? (
        <div>
          <dt>{t.c.notes}</dt>
          <dd>{access.notes}</dd>
        </div>
      ) : null}
      <div>
        <dt>{t.c.postedAt}</dt>
        <dd>{formats.dateTime(access.posted_at)}</dd>
      </div>
    </dl>
  );
}

/** The seller's: post (or post again) how the buyer reaches the machines. */
export function PostAccess({ lease, onDone }: { readonly lease: Lease; readonly onDone: () => void }) {
  const { t } = useSettings();
  const [open, setOpen] = useState(false);
  const [host, setHost] = useState("");
  const [port, setPort] = useState("22");
  const [user, setUser] = useState("");
  const [url, setUrl] = useState("");
  const [notes, setNotes] = useState("");
  const action = useAction();
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} aria-label={t.c.postAccessOf(lease.gpu)}>
        {t.c.postAccess}
      </button>
    );
  }
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const { data, error, response } = await api.POST("/v1/leases/{lease_id}/access", {
        params: { path: { lease_id: lease.lease_id } },
        body: {
          notes: notes.trim(),
          ...(host.trim() !== "" && { host: host.trim() }),
          ...(port.trim() !== "" && host.trim() !== "" && { port: Number(port) }),
          ...(user.trim() !== "" && { user: user.trim() }),
          ...(url.trim() !== "" && { endpoint_url: url.trim() }),
        },
      });
      return data !== undefined ? undefined : problemText(error, response);
    });
    if (ok) {
      setOpen(false);
      onDone();
    }
  };
  return (
    <form className="console-form access-form" aria-label={t.c.postAccessOf(lease.gpu)} onSubmit={(event) => void submit(event)}>
      <Field label={t.c.host} value={host} maxLength={253} onChange={(event) => setHost(event.target.value)} />
      <Field label={t.c.port} type="number" min={1} max={65535} value={port} onChange={(event) => setPort(event.target.value)} />
      <Field label={t.c.user} value={user} maxLength={64} onChange={(event) => setUser(event.target.value)} />
      <Field label={t.c.endpoint} type="url" value={url} maxLength={2048} onChange={(event) => setUrl(event.target.value)} />
      <Field label={t.c.notes} value={notes} maxLength={2000} onChange={(event) => setNotes(event.target.value)} />
      <SubmitRow label={t.c.postAccess} action={action}>
        <button type="button" onClick={() => setOpen(false)}>
          {t.c.cancel}
        </button>
      </SubmitRow>
    </form>
  );
}
