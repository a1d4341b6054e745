// API keys (create with scopes, shown once; revoke) and the browser sessions open for the
// account (revoke one; this one is marked).
import { useState, type FormEvent } from "react";

import { api, SCOPES, type Scope } from "../api/client";
import { idempotencyKey } from "../api/csrf";
import { useAccount } from "../app/account";
import { failureText, problemText } from "../app/problems";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { ScrollTable } from "../app/Table";
import { useApi } from "../app/useApi";
import { ActionButton, Checks, Field, Panel, SubmitRow, useAction, useChecked, useReload } from "./ui";

function NewKeyForm({ onCreated }: { readonly onCreated: () => void }) {
  const { t } = useSettings();
  const { reveal } = useAccount();
  const [name, setName] = useState("");
  const [scopes, toggle] = useChecked<Scope>(["read"]);
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const { data, error, response } = await api.POST("/v1/accounts/me/keys", {
        params: { header: { "Idempotency-Key": idempotencyKey() } },
        body: { name: name.trim() || "api key", scopes: SCOPES.filter((s) => scopes.includes(s)) },
      });
      if (data === undefined) return problemText(error, response);
      reveal({ apiKey: data.api_key, name: data.key.name });
      return undefined;
    });
    if (ok) {
      setName("");
      onCreated();
      window.scrollTo(0, 0);
    }
  };
  return (
    <form className="console-form" aria-label={t.c.newKey} onSubmit={(event) => void submit(event)}>
      <Field label={t.c.keyName} maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <Checks
        legend={t.c.scopes}
        options={SCOPES}
        checked={scopes}
        toggle={toggle}
        text={(scope) => (
          <>
            <code>{scope}</code> {t.c.scopeText[scope]}
          </>
        )}
      />
      <SubmitRow label={t.c.createKey} action={action} disabled={scopes.length === 0} />
    </form>
  );
}

/** Revoke a key or a session. Revoking this browser's own session signs it out: the page
 * then only learns that (reading the lists again would be refused). */
function RevokeButton({ label, path, own = false, onDone }: {
  readonly label: string;
  readonly path: { kind: "key" | "session"; id: string };
  readonly own?: boolean;
  readonly onDone: () => void;
}) {
  const { t } = useSettings();
  const { refresh } = useAccount();
  const revoke = async () =>
    failureText(
      path.kind === "key"
        ? await api.DELETE("/v1/accounts/me/keys/{key_id}", { params: { path: { key_id: path.id } } })
        : await api.DELETE("/v1/sessions/{session_id}", { params: { path: { session_id: path.id } } }),
    );
  const done = (ok: boolean) => {
    if (!(ok && own)) onDone();
    refresh();
  };
  return <ActionButton label={label} text={t.c.revoke} call={revoke} onDone={done} />;
}

function KeysTable({ refresh, onChange }: { readonly refresh: number; readonly onChange: () => void }) {
  const { t, formats } = useSettings();
  const keys = useApi((signal) => api.GET("/v1/accounts/me/keys", { signal }), [refresh]);
  return (
    <>
      <LoadStatus load={keys} />
      {keys.data !== undefined ? (
        <ScrollTable label={t.c.apiKeys} className="console-table keys" columns={[{ label: t.c.keyName }, { label: t.c.prefix }, { label: t.c.scopes }, { label: t.c.created }, { label: t.c.actions, hidden: true }]}>
          {keys.data.items.map((key) => (
            <tr key={key.id} data-key={key.id} data-revoked={key.revoked_at !== null ? "" : undefined}>
              <th scope="row">{key.name}</th>
              <td><code>{key.prefix}…</code></td>
              <td>{key.scopes.join(", ")}</td>
              <td>{formats.dateTime(key.created_at)}</td>
              <td>{key.revoked_at !== null ? t.c.revokedAt(formats.dateTime(key.revoked_at)) : <RevokeButton label={t.c.revokeKey(key.name)} path={{ kind: "key", id: key.id }} onDone={onChange} />}</td>
            </tr>
          ))}
        </ScrollTable>
      ) : null}
    </>
  );
}

function Sessions({ refresh, onChange }: { readonly refresh: number; readonly onChange: () => void }) {
  const { t, formats } = useSettings();
  const sessions = useApi((signal) => api.GET("/v1/sessions", { signal }), [refresh]);
  return (
    <Panel title={t.c.sessions}>
      <p className="note small">{t.c.sessionsText}</p>
      <LoadStatus load={sessions} />
      {sessions.data !== undefined ? (
        <ScrollTable label={t.c.sessions} className="console-table sessions" columns={[{ label: t.c.browser }, { label: t.c.created }, { label: t.c.expires }, { label: t.c.actions, hidden: true }]}>
          {sessions.data.items.map((session) => (
            <tr key={session.id} data-session={session.id} data-current={session.current ? "" : undefined}>
              <th scope="row">{session.user_agent || "–"}{session.current ? <span className="badge">{t.c.thisSession}</span> : null}</th>
              <td>{formats.dateTime(session.created_at)}</td>
              <td>{formats.dateTime(session.expires_at)}</td>
              <td><RevokeButton label={t.c.revokeSession(formats.dateTime(session.created_at))} path={{ kind: "session", id: session.id }} own={session.current} onDone={onChange} /></td>
            </tr>
          ))}
        </ScrollTable>
      ) : null}
    </Panel>
  );
}

export function Keys() {
  const { t } = useSettings();
  const [reload, bump] = useReload();
  return (
    <>
      <Panel title={t.c.apiKeys}>
        <KeysTable refresh={reload} onChange={bump} />
        <h3>{t.c.newKey}</h3>
        <NewKeyForm onCreated={bump} />
      </Panel>
      <Sessions refresh={reload} onChange={bump} />
    </>
  );
}
