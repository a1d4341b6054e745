// Who is signed in. The gateway's session cookie is HttpOnly: the page cannot read it, but the
// CSRF cookie that comes with it is readable, so a page without one knows it is signed out
// without asking (and without a 401 in the console). With one, GET /v1/accounts/me says who.
// Signing up shows the new API key once (`revealed`), until the reader dismisses it; the page
// keeps no key anywhere else (nothing in localStorage): the session stands for it.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";

import { api, UNAUTHORIZED, type Account, type Role } from "../api/client";
import { CSRF_COOKIE, idempotencyKey, readCookie } from "../api/csrf";
import { problemText } from "./problems";

export type AccountState =
  | { readonly status: "loading" }
  | { readonly status: "signedOut" }
  | { readonly status: "signedIn"; readonly account: Account };

/** An API key shown once: after sign-up or after creating one. */
export interface Revealed {
  readonly apiKey: string;
  readonly name: string;
}

interface AccountContextValue {
  readonly state: AccountState;
  readonly revealed: Revealed | null;
  readonly forgetKey: () => void;
  readonly reveal: (key: Revealed) => void;
  /** An error text, or undefined when the session is open. */
  readonly signIn: (apiKey: string) => Promise<string | undefined>;
  readonly signUp: (name: string, roles: readonly Role[]) => Promise<string | undefined>;
  readonly signOut: () => Promise<void>;
  readonly refresh: () => void;
}

const AccountContext = createContext<AccountContextValue | null>(null);

function hasSessionCookie(): boolean {
  return (readCookie(document.cookie, CSRF_COOKIE) ?? "") !== "";
}

function dropSessionCookie(): void {
  // The CSRF cookie of an expired or revoked session (the HttpOnly one the gateway ends).
  document.cookie = `${CSRF_COOKIE}=; Max-Age=0; Path=/; SameSite=Strict`;
}

async function whoAmI(): Promise<AccountState> {
  if (!hasSessionCookie()) return { status: "signedOut" };
  const { data, response } = await api.GET("/v1/accounts/me");
  if (data !== undefined) return { status: "signedIn", account: data };
  if (response.status === 401) dropSessionCookie();
  return { status: "signedOut" };
}

async function openSession(apiKey: string): Promise<string | undefined> {
  const { data, error, response } = await api.POST("/v1/sessions", { body: { api_key: apiKey } });
  return data !== undefined ? undefined : problemText(error, response);
}

export function AccountProvider({ children }: { readonly children: ReactNode }) {
  const [state, setState] = useState<AccountState>({ status: "loading" });
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const [generation, setGeneration] = useState(0);
  const refresh = useCallback(() => setGeneration((g) => g + 1), []);
  useEffect(() => {
    let current = true;
    whoAmI().then(
      (next) => current && setState(next),
      () => current && setState({ status: "signedOut" }),
    );
    return () => {
      current = false;
    };
  }, [generation]);
  useEffect(() => {
    // A session that ended while the page was open: signed out from then on.
    const ended = () => {
      if (!hasSessionCookie()) return;
      dropSessionCookie();
      setState({ status: "signedOut" });
    };
    window.addEventListener(UNAUTHORIZED, ended);
    return () => window.removeEventListener(UNAUTHORIZED, ended);
  }, []);
  const signIn = useCallback(
    async (apiKey: string) => {
      const failed = await openSession(apiKey.trim());
      if (failed === undefined) refresh();
      return failed;
    },
    [refresh],
  );
  const signUp = useCallback(
    async (name: string, roles: readonly Role[]) => {
      const { data, error, response } = await api.POST("/v1/accounts", {
        params: { header: { "Idempotency-Key": idempotencyKey() } },
        body: { name, roles: [...roles] },
      });
      if (data === undefined) return problemText(error, response);
      setRevealed({ apiKey: data.api_key, name: data.key.name });
      const failed = await openSession(data.api_key);
      if (failed === undefined) refresh();
      return failed;
    },
    [refresh],
  );
  const signOut = useCallback(async () => {
    await api.DELETE("/v1/sessions/current");
    dropSessionCookie();
    setRevealed(null);
    setState({ status: "signedOut" });
  }, []);
  const value = useMemo(
    () => ({ state, revealed, forgetKey: () => setRevealed(null), reveal: setRevealed, signIn, signUp, signOut, refresh }),
    [state, revealed, signIn, signUp, signOut, refresh],
  );
  return <AccountContext.Provider value={value}>{children}</AccountContext.Provider>;
}

export function useAccount(): AccountContextValue {
  const value = useContext(AccountContext);
  if (value === null) throw new Error("useAccount outside AccountProvider");
  return value;
}

/** The signed-in account, if any, and whether it has `role`. */
export function useRole(role: Role): Account | undefined {
  const { state } = useAccount();
  return state.status === "signedIn" && state.account.roles.includes(role) ? state.account : undefined;
}
