// A new API key, shown once (the exchange keeps only its digest): copy it now. Dismissing it
// forgets it; the page keeps it nowhere.
import { useId, useState } from "react";

import { useAccount } from "../app/account";
import { useSettings } from "../app/settings";

export function KeyReveal() {
  const { t } = useSettings();
  const { revealed, forgetKey } = useAccount();
  const [copied, setCopied] = useState(false);
  const id = useId();
  const headingId = useId();
  if (revealed === null) return null;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(revealed.apiKey);
      setCopied(true);
    } catch {
      document.getElementById(id)?.focus();
      (document.getElementById(id) as HTMLInputElement | null)?.select();
    }
  };
  return (
    <section className="reveal" aria-labelledby={headingId} role="alert">
      <h2 id={headingId}>{t.c.newKeyTitle(revealed.name)}</h2>
      <p className="warn">{t.c.newKeyWarning}</p>
      <div className="form-field">
        <label htmlFor={id}>{t.c.apiKey}</label>
        <input id={id} className="key" readOnly value={revealed.apiKey} spellCheck={false} onFocus={(event) => event.target.select()} />
      </div>
      <div className="form-actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? t.c.copied : t.c.copy}
        </button>
        <button type="button" className="primary" onClick={forgetKey}>
          {t.c.storedIt}
        </button>
      </div>
    </section>
  );
}
