// The statement: every ledger line on the account's balances, newest first, a page at a time
// (the API's cursors), optionally of one currency; exported as CSV in the browser (every page).
import { useState } from "react";

import { api, CURRENCIES, type Currency, type LedgerLine } from "../api/client";
import { problemText } from "../app/problems";
import { useSettings } from "../app/settings";
import { ListTable } from "../app/Table";
import { useApi } from "../app/useApi";
import { download, statementCsv } from "./csv";
import { ErrorText, Panel, SelectField, useAction } from "./ui";

const PAGE = 25;
const EXPORT_PAGE = 100;
const EXPORT_PAGES = 100;
type Filter = Currency | "all";

async function everyLine(currency: Currency | undefined): Promise<{ lines?: LedgerLine[]; error?: string }> {
  const lines: LedgerLine[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < EXPORT_PAGES; page++) {
    const { data, error, response } = await api.GET("/v1/ledger", { params: { query: { limit: EXPORT_PAGE, ...(currency && { currency }), ...(cursor && { cursor }) } } });
    if (data === undefined) return { error: problemText(error, response) };
    lines.push(...data.items);
    if (data.next_cursor === null) break;
    cursor = data.next_cursor;
  }
  return { lines };
}

export function Statement() {
  const { t, formats } = useSettings();
  const [filter, setFilter] = useState<Filter>("all");
  const [cursors, setCursors] = useState<readonly string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const currency = filter === "all" ? undefined : filter;
  const page = useApi(
    (signal) => api.GET("/v1/ledger", { params: { query: { limit: PAGE, ...(currency && { currency }), ...(cursor && { cursor }) } }, signal }),
    [currency, cursor],
  );
  const exporting = useAction();
  const exportCsv = () =>
    void exporting.run(async () => {
      const all = await everyLine(currency);
      if (all.lines !== undefined) download(`gpux-statement${currency ? `-${currency}` : ""}.csv`, statementCsv(all.lines));
      return all.error;
    });
  const next = page.data?.next_cursor ?? null;
  return (
    <Panel title={t.c.statement}>
      <div className="toolbar">
        <SelectField<Filter> label={t.currency} value={filter} options={["all", ...CURRENCIES]} text={(c) => (c === "all" ? t.c.allCurrencies : c)} onChange={(value) => { setFilter(value); setCursors([]); }} />
        <button type="button" onClick={exportCsv} disabled={exporting.busy}>
          {t.c.exportCsv}
        </button>
      </div>
      <ErrorText error={exporting.error} />
      <ListTable load={page} empty={t.c.noLines} label={t.c.statement} className="console-table statement" columns={[{ label: t.c.when }, { label: t.c.kind }, { label: t.c.balance }, { label: t.c.reference }, { label: t.c.amount, num: true }]} row={(line, index) => (
        <tr key={`${line.transfer_id}-${line.account_kind}-${index}`} data-kind={line.kind} data-amount={line.amount} data-reference={line.reference}>
          <td>{formats.dateTime(line.created_at)}</td>
          <th scope="row">{t.c.kinds[line.kind as keyof typeof t.c.kinds] ?? line.kind}</th>
          <td>{t.c.accountKinds[line.account_kind as keyof typeof t.c.accountKinds] ?? line.account_kind}</td>
          <td className="ref">{line.reference}{line.fx_rate && line.fx_base && line.fx_quote ? <span className="sub">{t.c.fx(line.fx_base, line.fx_quote, line.fx_rate)}</span> : null}</td>
          <td className={`num ${line.amount.startsWith("-") ? "debit" : "credit"}`}>{formats.moneyExact(line.amount, line.currency)}</td>
        </tr>
      )} />
      <nav className="pager" aria-label={t.c.pages}>
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
          {t.c.newer}
        </button>
        <span>{t.c.pageNumber(cursors.length + 1)}</span>
        <button type="button" disabled={next === null} onClick={() => next !== null && setCursors((c) => [...c, next])}>
          {t.c.older}
        </button>
      </nav>
    </Panel>
  );
}
