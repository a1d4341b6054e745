// The frame of both consoles: the heading, the sections' navigation, who is signed in and the
// sign-out button, a new key shown once; signed out, the sign-in and sign-up forms instead.
import type { ReactNode } from "react";

import type { Account, Role } from "../api/client";
import { useAccount } from "../app/account";
import { PageHeading } from "../app/PageHeading";
import { Link, usePathname } from "../app/router";
import { useSettings } from "../app/settings";
import { useTitle } from "../app/title";
import { KeyReveal } from "./KeyReveal";
import { SignIn } from "./SignIn";

export interface Section {
  readonly path: string;
  readonly label: string;
}

export function ConsoleFrame({ title, role, sections, children }: {
  readonly title: string;
  readonly role: Role | undefined;
  readonly sections: readonly Section[];
  readonly children: (account: Account) => ReactNode;
}) {
  const { t } = useSettings();
  const { state, signOut } = useAccount();
  const pathname = usePathname().replace(/\/$/, "") || "/";
  const heading = state.status === "signedOut" ? t.c.signInHeading : title;
  useTitle(heading);
  return (
    <>
      <PageHeading>{heading}</PageHeading>
      <KeyReveal />
      {state.status === "loading" ? <p className="note" role="status">{t.loading}</p> : null}
      {state.status === "signedOut" ? <SignIn /> : null}
      {state.status === "signedIn" ? (
        <>
          <div className="console-bar">
            <nav aria-label={t.c.sectionsOf(title)} className="sections">
              <ul>
                {sections.map((section) => (
                  <li key={section.path}>
                    <Link href={section.path} aria-current={pathname === section.path ? "page" : undefined}>
                      {section.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
            <p className="who" data-account={state.account.id}>
              {t.c.signedInAs(state.account.name)}{" "}
              <button type="button" onClick={() => void signOut()}>
                {t.c.signOut}
              </button>
            </p>
          </div>
          {role === undefined || state.account.roles.includes(role) ? children(state.account) : <p className="note warn">{t.c.lacksRole(t.c.role[role])}</p>}
        </>
      ) : null}
    </>
  );
}
