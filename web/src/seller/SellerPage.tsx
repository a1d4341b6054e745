// The seller's console at `/seller`: earnings per currency and the leases of the seller's
// offers; `/seller/offers`: the offers (create, bulk CSV upload, re-price, withdraw).
import { api } from "../api/client";
import { consolePath, sellerPath, type SellerSection } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { useApi } from "../app/useApi";
import { ConsoleFrame } from "../console/ConsoleFrame";
import { LeaseList } from "../console/Leases";
import { ListPanel, Panel, usePolling, useReload } from "../console/ui";
import { BulkUpload } from "./BulkUpload";
import { OfferForm, OffersList } from "./Offers";

function Earnings() {
  const { t, formats } = useSettings();
  const poll = usePolling(5_000);
  const earnings = useApi((signal) => api.GET("/v1/accounts/me/earnings", { signal }), [poll]);
  return (
    <ListPanel title={t.c.earnings} load={earnings} empty={t.c.noEarnings} className="console-table earnings" columns={[{ label: t.currency }, { label: t.c.gross, num: true }, { label: t.c.fee, num: true }, { label: t.c.net, num: true }, { label: t.c.leasesCount, num: true }]} row={(e) => (
      <tr key={e.currency} data-currency={e.currency} data-net={e.net}>
        <th scope="row">{e.currency}</th>
        <td className="num">{formats.money(e.gross, e.currency)}</td>
        <td className="num">{formats.money(e.fee, e.currency)}</td>
        <td className="num">{formats.money(e.net, e.currency)}</td>
        <td className="num">{t.c.leasesRunning(formats.number(e.leases), formats.number(e.running))}</td>
      </tr>
    )} />
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
