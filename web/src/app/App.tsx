// The app: settings, who is signed in, the one price stream, the frame, and the page of the current path.
import { lazy, Suspense } from "react";

import { MarketPage } from "../market/MarketPage";
import { AccountProvider } from "./account";
import { Layout } from "./Layout";
import { LiveProvider } from "./live";
import { PageHeading } from "./PageHeading";
import { Link, parseRoute, usePathname } from "./router";
import { SettingsProvider, useSettings } from "./settings";
import { useTitle } from "./title";

// The GPU page and its chart library load when first needed: the market page needs neither.
const GpuPage = lazy(async () => ({ default: (await import("../gpu/GpuPage")).GpuPage }));
const GuidePage = lazy(async () => ({ default: (await import("../guide/GuidePage")).GuidePage }));
const ConsolePage = lazy(async () => ({ default: (await import("../console/ConsolePage")).ConsolePage }));
const SellerPage = lazy(async () => ({ default: (await import("../seller/SellerPage")).SellerPage }));

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
    case "console":
      return (
        <Suspense fallback={<Loading />}>
          <ConsolePage section={route.section} />
        </Suspense>
      );
    case "seller":
      return (
        <Suspense fallback={<Loading />}>
          <SellerPage section={route.section} />
        </Suspense>
      );
    case "notFound":
      return <NotFound />;
  }
}

export function App() {
  return (
    <SettingsProvider>
      <AccountProvider>
        <LiveProvider>
          <Layout>
            <Page />
          </Layout>
        </LiveProvider>
      </AccountProvider>
    </SettingsProvider>
  );
}
