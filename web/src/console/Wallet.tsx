// The wallet: available and held balance per currency, and a top-up. Billing books a top-up
// when its provider confirms it (the `dev` provider of a development exchange at once), so the
// balances are read again for a while after one.
import { useEffect, useState, type FormEvent } from "react";

import { api, CURRENCIES, type Currency } from "../api/client";
import { idempotencyKey } from "../api/csrf";
import { problemText } from "../app/problems";
import { useSettings } from "../app/settings";
import { useApi } from "../app/useApi";
import { ErrorText, Field, ListPanel, Panel, SelectField, useAction, usePolling, useReload } from "./ui";

const AMOUNT = "^([1-9][0-9]{0,5}([.,][0-9]{1,2})?|0[.,]([1-9][0-9]?|0[1-9]))$";

export function Balances({ refresh }: { readonly refresh: number }) {
  const { t, formats } = useSettings();
  const balances = useApi((signal) => api.GET("/v1/accounts/me/balances", { signal }), [refresh]);
  return (
    <ListPanel title={t.c.balances} load={balances} empty={t.c.noBalances} className="console-table balances" columns={[{ label: t.currency }, { label: t.c.available, num: true }, { label: t.c.held, num: true }]} row={(b) => (
      <tr key={b.currency} data-currency={b.currency} data-available={b.available}>
        <th scope="row">{b.currency}</th>
        <td className="num">{formats.money(b.available, b.currency)}</td>
        <td className="num">{formats.money(b.held, b.currency)}</td>
      </tr>
    )} />
  );
}

function TopUp({ onDone }: { readonly onDone: () => void }) {
  const { t, settings, formats } = useSettings();
  const [amount, setAmount] = useState("");
  const [currency, setCurrency] = useState<Currency>(settings.currency);
  const [done, setDone] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const value = amount.trim().replace(",", ".");
    setDone(undefined);
    const ok = await action.run(async () => {
      const { data, error, response } = await api.POST("/v1/topups", {
        params: { header: { "Idempotency-Key": idempotencyKey() } },
        body: { amount: value, currency, provider: "dev" },
      });
      return data !== undefined ? undefined : problemText(error, response);
    });
    if (ok) {
      setDone(t.c.toppedUp(formats.money(value, currency)));
      setAmount("");
      onDone();
    }
  };
  return (
    <Panel title={t.c.topUp}>
      <p className="note small">{t.c.topUpText}</p>
      <form className="console-form inline" aria-label={t.c.topUp} onSubmit={(event) => void submit(event)}>
        <Field label={t.c.amount} inputMode="decimal" required pattern={AMOUNT} value={amount} onChange={(event) => setAmount(event.target.value)} />
        <SelectField label={t.currency} value={currency} options={CURRENCIES} text={(c) => c} onChange={setCurrency} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={action.busy}>
            {t.c.topUpButton}
          </button>
        </div>
      </form>
      <ErrorText error={action.error} />
      {done !== undefined ? <p className="note" role="status">{done}</p> : null}
    </Panel>
  );
}

const WATCH_MS = 15_000;

export function Wallet() {
  const [reload, bump] = useReload();
  // After a top-up the balances are read every second for a while (billing books it soon).
  const [watching, setWatching] = useState(0);
  const poll = usePolling(1_000, watching > 0);
  useEffect(() => {
    if (watching === 0) return;
    const timer = setTimeout(() => setWatching(0), WATCH_MS);
    return () => clearTimeout(timer);
  }, [watching]);
  return (
    <div className="columns">
      <Balances refresh={reload + poll} />
      <TopUp
        onDone={() => {
          bump();
          setWatching((w) => w + 1);
        }}
      />
    </div>
  );
}
