// Small pieces the consoles' forms and lists share: labelled fields (and `SelectField`),
// checkboxes, a hook for one write at a time (busy, its error) with its submit row or button,
// a list's panel, polling and the ticking clock.
import { useCallback, useEffect, useId, useState, type InputHTMLAttributes, type ReactNode } from "react";

import { ListTable, type ListTableProps } from "../app/Table";

export { SelectField } from "../app/SelectField";

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

/** Which boxes of a set of checkboxes are on (in the order they were checked), and a function
 * that turns one on or off. */
export function useChecked<T>(initial: readonly T[]): [readonly T[], (option: T, on: boolean) => void] {
  const [checked, setChecked] = useState<readonly T[]>(initial);
  const toggle = useCallback((option: T, on: boolean) => setChecked((current) => (on ? [...current, option] : current.filter((o) => o !== option))), []);
  return [checked, toggle];
}

/** A checkbox per option, under `legend`; `checked` and `toggle` as `useChecked` gives them. */
export function Checks<T extends string>({ legend, name, options, checked, toggle, text }: {
  readonly legend: string;
  readonly name?: string;
  readonly options: readonly T[];
  readonly checked: readonly T[];
  readonly toggle: (option: T, on: boolean) => void;
  readonly text: (option: T) => ReactNode;
}) {
  return (
    <fieldset className="checks">
      <legend>{legend}</legend>
      {options.map((option) => (
        <label key={option}>
          <input type="checkbox" name={name} value={option} checked={checked.includes(option)} onChange={(event) => toggle(option, event.target.checked)} />
          {text(option)}
        </label>
      ))}
    </fieldset>
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

/** A form's submit button, off while its write is busy (or `disabled`), beside any `children`
 * buttons; under them the error of the last try. */
export function SubmitRow({ label, action, disabled = false, children }: {
  readonly label: string;
  readonly action: { readonly busy: boolean; readonly error: string | undefined };
  readonly disabled?: boolean;
  readonly children?: ReactNode;
}) {
  return (
    <>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={action.busy || disabled}>
          {label}
        </button>
        {children}
      </div>
      <ErrorText error={action.error} />
    </>
  );
}

/** A row's button for one write (`call` answers an error text, or undefined when it
 * succeeded), its error beside it; `onDone` after each try, with whether it succeeded. */
export function ActionButton({ label, text, call, onDone }: {
  readonly label: string;
  readonly text: string;
  readonly call: () => Promise<string | undefined>;
  readonly onDone?: (ok: boolean) => void;
}) {
  const action = useAction();
  const click = () => void action.run(call).then((ok) => onDone?.(ok));
  return (
    <>
      <button type="button" onClick={click} disabled={action.busy} aria-label={label}>
        {text}
      </button>
      <ErrorText error={action.error} />
    </>
  );
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

/** A panel titled `title` that holds one list (`ListTable`, named as the panel). */
export function ListPanel<I>({ title, ...table }: Omit<ListTableProps<I>, "label"> & { readonly title: string }) {
  return (
    <Panel title={title}>
      <ListTable label={title} {...table} />
    </Panel>
  );
}
