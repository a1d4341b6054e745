// The buyer's console at `/console` (the wallet), `/console/orders`, `/console/leases`,
// `/console/statement` and `/console/keys`.
import { consolePath, CONSOLE_SECTIONS, type ConsoleSection } from "../app/router";
import { useSettings } from "../app/settings";
import { ConsoleFrame } from "./ConsoleFrame";
import { Keys } from "./Keys";
import { LeaseList } from "./Leases";
import { Orders } from "./Orders";
import { Statement } from "./Statement";
import { Panel } from "./ui";
import { Wallet } from "./Wallet";

function Section({ section }: { readonly section: ConsoleSection }) {
  const { t } = useSettings();
  switch (section) {
    case "wallet":
      return <Wallet />;
    case "orders":
      return <Orders />;
    case "leases":
      return (
        <Panel title={t.c.yourLeases}>
          <LeaseList role="buyer" />
        </Panel>
      );
    case "statement":
      return <Statement />;
    case "keys":
      return <Keys />;
  }
}

export function ConsolePage({ section }: { readonly section: ConsoleSection }) {
  const { t } = useSettings();
  const sections = CONSOLE_SECTIONS.map((s) => ({ path: consolePath(s), label: t.c.sections[s] }));
  return (
    <ConsoleFrame title={t.c.titles[section]} role={section === "statement" || section === "keys" ? undefined : "buyer"} sections={sections}>
      {() => <Section section={section} />}
    </ConsoleFrame>
  );
}
