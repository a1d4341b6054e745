// A group of radio buttons shown as a segmented switch: a fieldset with its legend, one label
// per option, arrow keys move within the group (the browser's own radio behaviour).
import { useId } from "react";

export interface RadiosProps<T extends string> {
  readonly legend: string;
  readonly options: readonly T[];
  readonly value: T;
  readonly label: (option: T) => string;
  readonly onChange: (option: T) => void;
  readonly name?: string;
}

export function Radios<T extends string>({ legend, options, value, label, onChange, name }: RadiosProps<T>) {
  const generated = useId();
  const group = name ?? generated;
  return (
    <fieldset className="switch">
      <legend>{legend}</legend>
      <div className="options">
        {options.map((option) => {
          const id = `${group}-${option}`;
          return (
            <span key={option}>
              <input
                type="radio"
                id={id}
                name={group}
                value={option}
                checked={option === value}
                onChange={() => onChange(option)}
              />
              <label htmlFor={id}>{label(option)}</label>
            </span>
          );
        })}
      </div>
    </fieldset>
  );
}
