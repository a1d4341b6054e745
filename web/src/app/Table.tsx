// A table in a scrolling region of its own (a keyboard can scroll it, a screen reader names
// it), and what a list shows above it while it loads or when it is empty.
import type { ReactNode } from "react";

import { LoadStatus } from "./Status";
import type { Load } from "./useApi";

/** A header cell: a number column is right-aligned; a hidden one is read but not shown. */
export type Column = { readonly label: ReactNode; readonly num?: boolean; readonly hidden?: boolean };

export function ScrollTable({ label, className, columns, children }: {
  readonly label: string;
  readonly className?: string;
  readonly columns: readonly Column[];
  readonly children: ReactNode;
}) {
  return (
    <div className="scroller" role="region" aria-label={label} tabIndex={0}>
      <table className={className}>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col" className={column.num ? "num" : undefined}>
                {column.hidden ? <span className="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A list's load status, and `empty` once it has loaded with no items. */
export function ListStatus<T>({ load, count, empty }: { readonly load: Load<T>; readonly count: number; readonly empty: ReactNode }) {
  return (
    <>
      <LoadStatus load={load} />
      {load.status === "ok" && count === 0 ? <p className="note" data-empty="">{empty}</p> : null}
    </>
  );
}

export type ListTableProps<I> = {
  readonly load: Load<{ readonly items: readonly I[] }>;
  readonly empty: ReactNode;
  readonly label: string;
  readonly className: string;
  readonly columns: readonly Column[];
  readonly row: (item: I, index: number) => ReactNode;
};

/** A list answer's load status (`ListStatus`), then its items as a `ScrollTable`, a `row`
 * each, once there are any. */
export function ListTable<I>({ load, empty, label, className, columns, row }: ListTableProps<I>) {
  const items = load.data?.items ?? [];
  return (
    <>
      <ListStatus load={load} count={items.length} empty={empty} />
      {items.length > 0 ? (
        <ScrollTable label={label} className={className} columns={columns}>
          {items.map(row)}
        </ScrollTable>
      ) : null}
    </>
  );
}
