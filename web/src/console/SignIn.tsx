// Signed out: sign in with an API key (the gateway opens a session for it: an HttpOnly
// cookie; the key itself is not kept), or sign up (the new key is shown once, then forgotten).
import { useState, type FormEvent } from "react";

import { ROLES, type Role } from "../api/client";
import { useAccount } from "../app/account";
import { navigate, nextPath } from "../app/router";
import { useSettings } from "../app/settings";
import { Checks, Field, Panel, SubmitRow, useAction, useChecked } from "./ui";

function SignInForm() {
  const { t } = useSettings();
  const { signIn } = useAccount();
  const [key, setKey] = useState("");
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (await action.run(() => signIn(key))) {
      setKey("");
      const next = nextPath(window.location.search);
      if (next !== undefined) navigate(next);
    }
  };
  return (
    <Panel title={t.c.signInTitle}>
      <p className="note">{t.c.signInText}</p>
      <form className="console-form" aria-label={t.c.signInTitle} onSubmit={(event) => void submit(event)}>
        <Field label={t.c.apiKey} type="password" autoComplete="off" spellCheck={false} required value={key} onChange={(event) => setKey(event.target.value)} />
        <SubmitRow label={t.c.signIn} action={action} />
      </form>
    </Panel>
  );
}

function SignUpForm() {
  const { t } = useSettings();
  const { signUp } = useAccount();
  const [name, setName] = useState("");
  const [roles, toggle] = useChecked<Role>(["buyer"]);
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (roles.length === 0) return;
    await action.run(() => signUp(name.trim(), ROLES.filter((r) => roles.includes(r))));
  };
  return (
    <Panel title={t.c.signUpTitle}>
      <p className="note">{t.c.signUpText}</p>
      <form className="console-form" aria-label={t.c.signUpTitle} onSubmit={(event) => void submit(event)}>
        <Field label={t.c.accountName} required maxLength={100} autoComplete="organization" value={name} onChange={(event) => setName(event.target.value)} />
        <Checks legend={t.c.roles} name="roles" options={ROLES} checked={roles} toggle={toggle} text={(role) => t.c.role[role]} />
        {roles.length === 0 ? <p className="note warn">{t.c.pickRole}</p> : null}
        <SubmitRow label={t.c.signUp} action={action} disabled={roles.length === 0} />
      </form>
    </Panel>
  );
}

export function SignIn() {
  return (
    <div className="columns">
      <SignInForm />
      <SignUpForm />
    </div>
  );
}
