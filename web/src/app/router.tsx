// The app's few routes, on the History API: `/` the market, `/gpus/{id}` a GPU, `/guide` the
// fine-tuning guide, `/console/…` the buyer's console, `/seller/…` the seller's. The gateway
// answers every such path with index.html, so a reload or a shared link lands on the page.
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

export type Route =
  | { readonly page: "market" }
  | { readonly page: "guide" }
  | { readonly page: "gpu"; readonly id: string }
  | { readonly page: "console"; readonly section: ConsoleSection }
  | { readonly page: "seller"; readonly section: SellerSection }
  | { readonly page: "notFound" };

export const GUIDE_PATH = "/guide";
export const CONSOLE_PATH = "/console";
export const SELLER_PATH = "/seller";
export const CONSOLE_SECTIONS = ["wallet", "orders", "leases", "statement", "keys"] as const;
export const SELLER_SECTIONS = ["overview", "offers"] as const;
export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number];
export type SellerSection = (typeof SELLER_SECTIONS)[number];

/** A console section's path: the first section is the console's own (`/console`). */
export function consolePath(section: ConsoleSection = "wallet"): string {
  return section === "wallet" ? CONSOLE_PATH : `${CONSOLE_PATH}/${section}`;
}

export function sellerPath(section: SellerSection = "overview"): string {
  return section === "overview" ? SELLER_PATH : `${SELLER_PATH}/${section}`;
}

/** Where to go after signing in: a path of this app from `?next=` (never another origin). */
export function nextPath(search: string): string | undefined {
  const next = new URLSearchParams(search).get("next");
  if (next === null || !next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return undefined;
  return parseRoute(next.split(/[?#]/)[0] ?? "").page === "notFound" ? undefined : next;
}

/** The console's sign-in, coming back to `from` afterwards. */
export function signInPath(from: string): string {
  return `${CONSOLE_PATH}?next=${encodeURIComponent(from)}`;
}

function section<T extends string>(pathname: string, base: string, sections: readonly T[]): T | undefined {
  const rest = pathname.replace(/\/$/, "");
  if (rest === base) return sections[0];
  const found = sections.slice(1).find((name) => rest === `${base}/${name}`);
  return found;
}

const NAVIGATED = "gpux:navigated";
let focusPending = false;

export function parseRoute(pathname: string): Route {
  if (pathname === "/" || pathname === "") return { page: "market" };
  if (pathname === GUIDE_PATH || pathname === `${GUIDE_PATH}/`) return { page: "guide" };
  const consoleSection = section(pathname, CONSOLE_PATH, CONSOLE_SECTIONS);
  if (consoleSection !== undefined) return { page: "console", section: consoleSection };
  const sellerSection = section(pathname, SELLER_PATH, SELLER_SECTIONS);
  if (sellerSection !== undefined) return { page: "seller", section: sellerSection };
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
