// The frame of every page: a skip link, the banner with the navigation and the display
// settings (language, currency), the page's main content, and the footer.
import type { ReactNode } from "react";

import { CURRENCIES } from "../api/client";
import { LANGUAGES, MESSAGES } from "../i18n/messages";
import { SelectField } from "./SelectField";
import { useStreamState } from "./live";
import { CONSOLE_PATH, GUIDE_PATH, Link, SELLER_PATH, usePathname } from "./router";
import { useSettings } from "./settings";

function Settings() {
  const { settings, change, t } = useSettings();
  return (
    <form className="settings" aria-label={t.settings} onSubmit={(event) => event.preventDefault()}>
      <SelectField
        className="field"
        label={t.language}
        value={settings.language}
        options={LANGUAGES}
        text={(language) => MESSAGES[language].languageName}
        lang={(language) => language}
        onChange={(language) => change({ language })}
      />
      <SelectField className="field" label={t.currency} value={settings.currency} options={CURRENCIES} text={(currency) => currency} onChange={(currency) => change({ currency })} />
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
