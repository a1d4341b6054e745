// The app's few routes, on the History API: `/` the market, `/gpus/{id}` a GPU, `/guide` the
// fine-tuning guide. The gateway
// answers every such path with index.html, so a reload or a shared link lands on the page.
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

export type Route =
  | { readonly page: "market" }
  | { readonly page: "guide" }
  | { readonly page: "gpu"; readonly id: string }
  | { readonly page: "notFound" };

export const GUIDE_PATH = "/guide";

const NAVIGATED = "gpux:navigated";
let focusPending = false;

export function parseRoute(pathname: string): Route {
  if (pathname === "/" || pathname === "") return { page: "market" };
  if (pathname === GUIDE_PATH || pathname === `${GUIDE_PATH}/`) return { page: "guide" };
  const gpu = /^\/gpus\/([a-z0-9][a-z0-9.-]{0,63})\/?$/.exec(pathname);
  if (gpu?.[1] !== undefined) return { page: "gpu", id: gpu[1] };
  return { page: "notFound" };
}

export function gpuPath(id: string): string {
  return `/gpus/${encodeURIComponent(id)}`;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener("popstate", markNavigated);
  window.addEventListener(NAVIGATED, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener("popstate", markNavigated);
    window.removeEventListener(NAVIGATED, onChange);
  };
}

export function usePathname(): string {
  return useSyncExternalStore(subscribe, () => window.location.pathname);
}

function markNavigated(): void {
  focusPending = true;
}

/** Whether the page now shown was reached by a navigation within the app (once per one). */
export function takeNavigationFocus(): boolean {
  const pending = focusPending;
  focusPending = false;
  return pending;
}

export function navigate(to: string): void {
  markNavigated();
  window.history.pushState(null, "", to);
  window.scrollTo(0, 0);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** A link within the app: a real <a href> (new tab, copy link), routed without a reload. */
export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { readonly href: string }) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={follow} {...rest} />;
}
