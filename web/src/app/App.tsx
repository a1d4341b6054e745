// The app: settings, the one price stream, the frame, and the page of the current path.
import { useEffect, useRef } from "react";

import { GpuPage } from "../gpu/GpuPage";
import { MarketPage } from "../market/MarketPage";
import { Layout } from "./Layout";
import { LiveProvider } from "./live";
import { Link, parseRoute, usePathname } from "./router";
import { SettingsProvider, useSettings } from "./settings";
import { useTitle } from "./title";

function NotFound() {
  const { t } = useSettings();
  useTitle(t.notFoundTitle);
  return (
    <>
      <h1 tabIndex={-1}>{t.notFoundTitle}</h1>
      <p>{t.notFoundText}</p>
      <p>
        <Link href="/">{t.backToMarket}</Link>
      </p>
    </>
  );
}

function Page() {
  const pathname = usePathname();
  const route = parseRoute(pathname);
  const first = useRef(true);
  // After a navigation (not the first page) the new page's heading takes the focus, so a
  // screen reader announces it and the keyboard starts from the top of the new content.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.querySelector<HTMLElement>("main h1")?.focus();
  }, [pathname]);
  switch (route.page) {
    case "market":
      return <MarketPage />;
    case "gpu":
      return <GpuPage key={route.id} id={route.id} />;
    case "notFound":
      return <NotFound />;
  }
}

export function App() {
  return (
    <SettingsProvider>
      <LiveProvider>
        <Layout>
          <Page />
        </Layout>
      </LiveProvider>
    </SettingsProvider>
  );
}
