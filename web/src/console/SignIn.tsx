// Signed out: sign in with an API key (the gateway opens a session for it: an HttpOnly
// cookie; the key itself is not kept), or sign up (the new key is shown once, then forgotten).
import { useState, type FormEvent } from "react";

import { ROLES, type Role } from "../api/client";
import { useAccount } from "../app/account";
import { navigate, nextPath } from "../app/router";
import { useSettings } from "../app/settings";
import { ErrorText, Field, Panel, useAction } from "./ui";

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
        <div className="form-actions">
          <button type="submit" className="primary" disabled={action.busy}>
            {t.c.signIn}
          </button>
        </div>
        <ErrorText error={action.error} />
      </form>
    </Panel>
  );
}

function SignUpForm() {
  const { t } = useSettings();
  const { signUp } = useAccount();
  const [name, setName] = useState("");
  const [roles, setRoles] = useState<readonly Role[]>(["buyer"]);
  const action = useAction();
  const toggle = (role: Role, on: boolean) => setRoles((current) => (on ? [...current, role] : current.filter((r) => r !== role)));
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
        <fieldset className="checks">
          <legend>{t.c.roles}</legend>
          {ROLES.map((role) => (
            <label key={role}>
              <input type="checkbox" name="roles" value={role} checked={roles.includes(role)} onChange={(event) => toggle(role, event.target.checked)} />
              {t.c.role[role]}
            </label>
          ))}
        </fieldset>
        {roles.length === 0 ? <p className="note warn">{t.c.pickRole}</p> : null}
        <div className="form-actions">
          <button type="submit" className="primary" disabled={action.busy || roles.length === 0}>
            {t.c.signUp}
          </button>
        </div>
        <ErrorText error={action.error} />
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
