// The app: settings, the one price stream, the frame, and the page of the current path.
import { lazy, Suspense } from "react";

import { MarketPage } from "../market/MarketPage";
import { Layout } from "./Layout";
import { LiveProvider } from "./live";
import { PageHeading } from "./PageHeading";
import { Link, parseRoute, usePathname } from "./router";
import { SettingsProvider, useSettings } from "./settings";
import { useTitle } from "./title";

// The GPU page and its chart library load when first needed: the market page needs neither.
const GpuPage = lazy(async () => ({ default: (await import("../gpu/GpuPage")).GpuPage }));
const GuidePage = lazy(async () => ({ default: (await import("../guide/GuidePage")).GuidePage }));

function Loading() {
  const { t } = useSettings();
  return <p className="note" role="status">{t.loading}</p>;
}

function NotFound() {
  const { t } = useSettings();
  useTitle(t.notFoundTitle);
  return (
    <>
      <PageHeading>{t.notFoundTitle}</PageHeading>
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
  switch (route.page) {
    case "market":
      return <MarketPage />;
    case "guide":
      return (
        <Suspense fallback={<Loading />}>
          <GuidePage />
        </Suspense>
      );
    case "gpu":
      return (
        <Suspense fallback={<Loading />}>
          <GpuPage key={route.id} id={route.id} />
        </Suspense>
      );
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
