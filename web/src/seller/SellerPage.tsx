// The seller's console at `/seller`: earnings per currency and the leases of the seller's
// offers; `/seller/offers`: the offers (create, bulk CSV upload, re-price, withdraw).
import { api } from "../api/client";
import { consolePath, sellerPath, type SellerSection } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { useApi } from "../app/useApi";
import { ConsoleFrame } from "../console/ConsoleFrame";
import { LeaseList } from "../console/Leases";
import { Panel, usePolling, useReload } from "../console/ui";
import { BulkUpload } from "./BulkUpload";
import { OfferForm, OffersList } from "./Offers";

function Earnings() {
  const { t, formats } = useSettings();
  const poll = usePolling(5_000);
  const earnings = useApi((signal) => api.GET("/v1/accounts/me/earnings", { signal }), [poll]);
  const items = earnings.data?.items ?? [];
  return (
    <Panel title={t.c.earnings}>
      <LoadStatus load={earnings} />
      {earnings.status === "ok" && items.length === 0 ? <p className="note" data-empty="">{t.c.noEarnings}</p> : null}
      {items.length > 0 ? (
        <div className="scroller" role="region" aria-label={t.c.earnings} tabIndex={0}>
          <table className="console-table earnings">
            <thead>
              <tr>
                <th scope="col">{t.currency}</th>
                <th scope="col" className="num">{t.c.gross}</th>
                <th scope="col" className="num">{t.c.fee}</th>
                <th scope="col" className="num">{t.c.net}</th>
                <th scope="col" className="num">{t.c.leasesCount}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((e) => (
                <tr key={e.currency} data-currency={e.currency} data-net={e.net}>
                  <th scope="row">{e.currency}</th>
                  <td className="num">{formats.money(e.gross, e.currency)}</td>
                  <td className="num">{formats.money(e.fee, e.currency)}</td>
                  <td className="num">{formats.money(e.net, e.currency)}</td>
                  <td className="num">{t.c.leasesRunning(formats.number(e.leases), formats.number(e.running))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Panel>
  );
}

function OffersSection() {
  const { t } = useSettings();
  const gpus = useApi((signal) => api.GET("/v1/gpus", { signal }), []);
  const [reload, bump] = useReload();
  return (
    <>
      <div className="columns">
        <Panel title={t.c.newOffer}>
          <LoadStatus load={gpus} />
          {gpus.data !== undefined ? <OfferForm gpus={gpus.data.items} onCreated={bump} /> : null}
        </Panel>
        <BulkUpload onSubmitted={bump} />
      </div>
      <OffersList refresh={reload} />
    </>
  );
}

export function SellerPage({ section }: { readonly section: SellerSection }) {
  const { t } = useSettings();
  const sections = [
    { path: sellerPath("overview"), label: t.c.sellerSections.overview },
    { path: sellerPath("offers"), label: t.c.sellerSections.offers },
    { path: consolePath("statement"), label: t.c.sections.statement },
    { path: consolePath("keys"), label: t.c.sections.keys },
  ];
  return (
    <ConsoleFrame title={t.c.sellerTitles[section]} role="seller" sections={sections}>
      {() =>
        section === "offers" ? (
          <OffersSection />
        ) : (
          <>
            <Earnings />
            <Panel title={t.c.offerLeases}>
              <LeaseList role="seller" />
            </Panel>
          </>
        )
      }
    </ConsoleFrame>
  );
}
