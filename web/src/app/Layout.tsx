// The frame of every page: a skip link, the banner with the navigation and the display
// settings (language, currency), the page's main content, and the footer.
import { useId, type ReactNode } from "react";

import { CURRENCIES, type Currency } from "../api/client";
import { LANGUAGES, MESSAGES, type Language } from "../i18n/messages";
import { useStreamState } from "./live";
import { CONSOLE_PATH, GUIDE_PATH, Link, SELLER_PATH, usePathname } from "./router";
import { useSettings } from "./settings";

function Settings() {
  const { settings, change, t } = useSettings();
  const languageId = useId();
  const currencyId = useId();
  return (
    <form className="settings" aria-label={t.settings} onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor={languageId}>{t.language}</label>
        <select
          id={languageId}
          value={settings.language}
          onChange={(event) => change({ language: event.target.value as Language })}
        >
          {LANGUAGES.map((language) => (
            <option key={language} value={language} lang={language}>
              {MESSAGES[language].languageName}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={currencyId}>{t.currency}</label>
        <select
          id={currencyId}
          value={settings.currency}
          onChange={(event) => change({ currency: event.target.value as Currency })}
        >
          {CURRENCIES.map((currency) => (
            <option key={currency} value={currency}>
              {currency}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}

function StreamStatus() {
  const { t } = useSettings();
  const state = useStreamState();
  return (
    <p className={`stream stream-${state}`} role="status" data-stream={state}>
      <span className="dot" aria-hidden="true" />
      {t.streamState[state]}
    </p>
  );
}

export function Layout({ children }: { readonly children: ReactNode }) {
  const { t } = useSettings();
  const pathname = usePathname();
  const current = (path: string) => (pathname === path || pathname === `${path}/` ? "page" : undefined);
  const within = (path: string) => (pathname === path || pathname.startsWith(`${path}/`) ? "page" : undefined);
  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="banner">
        <div className="bar">
          <Link href="/" className="brand">
            <img src="/favicon.svg" alt="" width="28" height="28" />
            <span>{t.brand}</span>
          </Link>
          <nav aria-label={t.navMain}>
            <ul>
              <li>
                <Link href="/" aria-current={current("/")}>
                  {t.navMarket}
                </Link>
              </li>
              <li>
                <Link href={GUIDE_PATH} aria-current={current(GUIDE_PATH)}>
                  {t.navGuide}
                </Link>
              </li>
              <li>
                <Link href={CONSOLE_PATH} aria-current={within(CONSOLE_PATH)}>
                  {t.navConsole}
                </Link>
              </li>
              <li>
                <Link href={SELLER_PATH} aria-current={within(SELLER_PATH)}>
                  {t.navSeller}
                </Link>
              </li>
              <li>
                <a href="/docs">{t.navApi}</a>
              </li>
            </ul>
          </nav>
          <Settings />
          <StreamStatus />
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
      <footer className="footer">
        <p>
          {t.tagline}. {t.footerPrices}
        </p>
        <p>
          <a href="/docs">{t.footerApi}</a>
        </p>
      </footer>
    </>
  );
}
