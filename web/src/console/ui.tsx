// Small pieces the consoles' forms and lists share: labelled fields, a hook for one write at a
// time (busy, its error), polling and the ticking clock.
import { useCallback, useEffect, useId, useState, type InputHTMLAttributes, type ReactNode } from "react";

export function Field({ label, hint, ...input }: InputHTMLAttributes<HTMLInputElement> & { readonly label: string; readonly hint?: string | undefined }) {
  const id = useId();
  const hintId = useId();
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint !== undefined ? hintId : undefined} {...input} />
      {hint !== undefined ? (
        <span className="hint-text" id={hintId}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

export function SelectField<T extends string>({ label, value, options, text, onChange }: {
  readonly label: string;
  readonly value: T;
  readonly options: readonly T[];
  readonly text: (option: T) => string;
  readonly onChange: (value: T) => void;
}) {
  const id = useId();
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value as T)}>
        {options.map((option) => (
          <option key={option} value={option}>
            {text(option)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A write in progress and what it answered: `run` takes an async call returning an error
 * text (or undefined when it succeeded). */
export function useAction(): {
  readonly busy: boolean;
  readonly error: string | undefined;
  readonly run: (call: () => Promise<string | undefined>) => Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = useCallback(async (call: () => Promise<string | undefined>) => {
    setBusy(true);
    setError(undefined);
    try {
      const failed = await call();
      setError(failed);
      return failed === undefined;
    } catch (thrown) {
      setError(String(thrown));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

export function ErrorText({ error }: { readonly error: string | undefined }) {
  return error === undefined ? null : (
    <p className="note error" role="alert">
      {error}
    </p>
  );
}

/** A counter to read a list again (after a write), and the function that bumps it. */
export function useReload(): [number, () => void] {
  const [count, setCount] = useState(0);
  return [count, useCallback(() => setCount((c) => c + 1), [])];
}

/** A counter that grows every `ms` while `active` (lists whose items change by themselves). */
export function usePolling(ms: number, active = true): number {
  const [count, setCount] = useState(0);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setCount((c) => c + 1), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
  return count;
}

/** The clock, re-read every second while `active` (a per-second lease's cost ticks). */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

export function Panel({ title, children, className }: { readonly title: string; readonly children: ReactNode; readonly className?: string }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className={`panel ${className ?? ""}`}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}
