import { useEffect } from "react";

/** The document's title for the page shown: "<page> · gpux". */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · gpux`;
  }, [title]);
}
