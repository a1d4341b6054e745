// What a page shows while its data loads, waits for a busy exchange, or failed.
import type { Load } from "./useApi";
import { useSettings } from "./settings";

export function LoadStatus<T>({ load }: { readonly load: Load<T> }) {
  const { t } = useSettings();
  switch (load.status) {
    case "ok":
    case "notFound":
      return null;
    case "loading":
      return load.data === undefined ? <p className="note" role="status">{t.loading}</p> : null;
    case "retrying":
      return <p className="note warn" role="status">{t.retrying(load.seconds)}</p>;
    case "failed":
      return <p className="note error" role="alert">{t.failed(load.detail)}</p>;
  }
}
