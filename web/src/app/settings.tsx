// The reader's choices, kept in localStorage: language, currency and tier. German readers
// (by the browser's language) start in German with euros, everyone else in English with dollars.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";

import { CURRENCIES, TIERS, type Currency, type Tier } from "../api/client";
import { Formats } from "../i18n/format";
import { LANGUAGES, MESSAGES, type Language, type Messages } from "../i18n/messages";

export interface Settings {
  readonly language: Language;
  readonly currency: Currency;
  readonly tier: Tier;
}

interface SettingsContextValue {
  readonly settings: Settings;
  readonly change: (change: Partial<Settings>) => void;
  readonly t: Messages;
  readonly formats: Formats;
}

const STORAGE_KEY = "gpux.settings";

function browserLanguage(): Language {
  const preferred = navigator.languages.length > 0 ? navigator.languages : [navigator.language];
  for (const tag of preferred) {
    const base = tag.toLowerCase().split("-")[0];
    if (base === "de" || base === "en") return base;
  }
  return "en";
}

function pick<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

function initialSettings(): Settings {
  let stored: Record<string, unknown> = {};
  try {
    stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "{}") as Record<string, unknown>;
  } catch {
    // unreadable: the defaults
  }
  const language = pick(stored["language"], LANGUAGES, browserLanguage());
  return {
    language,
    currency: pick(stored["currency"], CURRENCIES, language === "de" ? "EUR" : "USD"),
    tier: pick(stored["tier"], TIERS, "on_demand"),
  };
}

const SettingsContext = createContext<SettingsContextValue | null>(null);

export function SettingsProvider({ children }: { readonly children: ReactNode }) {
  const [settings, setSettings] = useState(initialSettings);
  const change = useCallback((update: Partial<Settings>) => {
    setSettings((current) => {
      const next = { ...current, ...update };
      try {
        localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
      } catch {
        // private mode: the choice lasts for this page
      }
      return next;
    });
  }, []);
  useEffect(() => {
    document.documentElement.lang = settings.language;
  }, [settings.language]);
  const value = useMemo(
    () => ({ settings, change, t: MESSAGES[settings.language], formats: new Formats(settings.language) }),
    [settings, change],
  );
  return <SettingsContext.Provider value={value}>{children}</SettingsContext.Provider>;
}

export function useSettings(): SettingsContextValue {
  const value = useContext(SettingsContext);
  if (value === null) throw new Error("useSettings outside SettingsProvider");
  return value;
}
