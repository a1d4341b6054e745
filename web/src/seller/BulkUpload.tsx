// Bulk upload: a CSV of offers (a header row naming the columns, one offer a row) parsed in the
// browser, then submitted row by row, each with an Idempotency-Key of its own (kept for the
// file, so submitting it again after a failure does not offer a row twice), with a progress
// bar and each row's error.
import { useId, useState, type ChangeEvent } from "react";

import { idempotencyKey } from "../api/csrf";
import { useSettings } from "../app/settings";
import { OFFER_COLUMNS, offerRows, type OfferRow, type RowProblem } from "../console/csv";
import { Panel } from "../console/ui";
import { submitOffer } from "./Offers";

interface Row {
  readonly row: OfferRow;
  readonly key: string;
  outcome?: { readonly ok: true; readonly id: string } | { readonly ok: false; readonly error: string };
}

export function BulkUpload({ onSubmitted }: { readonly onSubmitted: () => void }) {
  const { t } = useSettings();
  const fileId = useId();
  const progressId = useId();
  const [rows, setRows] = useState<readonly Row[]>([]);
  const [done, setDone] = useState(0);
  const [running, setRunning] = useState(false);
  const problem = (p: RowProblem) => (p.kind === "columns" ? t.c.csvColumns : p.kind === "missing" ? t.c.csvMissing(p.column) : t.c.csvInvalid(p.column));
  const read = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (file === undefined) return;
    const parsed = offerRows(await file.text());
    setRows(parsed.map((row) => ({ row, key: idempotencyKey() })));
    setDone(0);
  };
  const valid = rows.filter((r) => "offer" in r.row);
  const submit = async () => {
    setRunning(true);
    setDone(0);
    const next = rows.map((r) => ({ ...r }));
    let count = 0;
    for (const r of next) {
      if (!("offer" in r.row)) continue;
      if (r.outcome?.ok === true) {
        setDone(++count);
        continue;
      }
      const result = await submitOffer(r.row.offer, r.key);
      r.outcome = result.offer !== undefined ? { ok: true, id: result.offer.id } : { ok: false, error: result.error ?? "" };
      setDone(++count);
      setRows([...next]);
    }
    setRunning(false);
    onSubmitted();
  };
  const failures = rows.filter((r) => "problem" in r.row || r.outcome?.ok === false);
  const accepted = rows.filter((r) => r.outcome?.ok === true).length;
  return (
    <Panel title={t.c.bulkTitle} className="bulk">
      <p className="note small">{t.c.bulkText}</p>
      <p className="note small columns-list">
        <code>{OFFER_COLUMNS.join(", ")}</code>
      </p>
      <div className="form-field">
        <label htmlFor={fileId}>{t.c.csvFile}</label>
        <input id={fileId} type="file" accept=".csv,text/csv" onChange={(event) => void read(event)} disabled={running} />
      </div>
      {rows.length > 0 ? (
        <>
          <p role="status">{t.c.csvRead(rows.length, valid.length)}</p>
          <div className="form-actions">
            <button type="button" className="primary" disabled={running || valid.length === 0} onClick={() => void submit()}>
              {t.c.submitRows(valid.length)}
            </button>
          </div>
          <label htmlFor={progressId}>{t.c.progress(done, valid.length)}</label>
          <progress id={progressId} max={Math.max(1, valid.length)} value={done} data-done={done} data-total={valid.length} />
          {accepted > 0 ? <p className="note" data-accepted={accepted}>{t.c.rowsAccepted(accepted)}</p> : null}
          {failures.length > 0 ? (
            <ul className="row-errors" aria-label={t.c.rowErrors}>
              {failures.map((r) => (
                <li key={r.row.line} data-line={r.row.line}>
                  {t.c.line(r.row.line)}: {"problem" in r.row ? problem(r.row.problem) : r.outcome?.ok === false ? r.outcome.error : ""}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : null}
    </Panel>
  );
}
