// A labelled choice among a few options (a `<select>`): the display settings' and the consoles'
// forms'.
import { useId } from "react";

/** Each option shown as `text` gives it (in the language `lang` gives it, if any); the field
 * styled as `className` (a console form's field unless told). */
export function SelectField<T extends string>({ label, value, options, text, lang, className = "form-field", onChange }: {
  readonly label: string;
  readonly value: T;
  readonly options: readonly T[];
  readonly text: (option: T) => string;
  readonly lang?: (option: T) => string;
  readonly className?: string;
  readonly onChange: (value: T) => void;
}) {
  const id = useId();
  return (
    <div className={className}>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value as T)}>
        {options.map((option) => (
          <option key={option} value={option} lang={lang?.(option)}>
            {text(option)}
          </option>
        ))}
      </select>
    </div>
  );
}
