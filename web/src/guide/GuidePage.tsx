// The fine-tuning guide at `/guide`: the reference page's content generated from the catalog
// (the fit table of every GPU with its live best ask, the explanations of QLoRA, LoRA 16-bit
// and full fine-tuning), and a "what fits" finder: model + method + dataset → the GPUs that
// hold the job (GET /v1/recommendations), priced and ranked at the live best asks.
import { useId, useMemo, useState, type FormEvent } from "react";

import { api, METHODS, TIERS, type Method, type Model, type Recommendations } from "../api/client";
import { useQuotes } from "../app/live";
import { PageHeading } from "../app/PageHeading";
import { Radios } from "../app/Radios";
import { gpuPath, Link } from "../app/router";
import { useSettings } from "../app/settings";
import { LoadStatus } from "../app/Status";
import { useTitle } from "../app/title";
import { useApi } from "../app/useApi";
import { askIn } from "../market/asks";
import { GpuTable, usePriceSnapshot } from "../market/MarketPage";
import { GUIDE_KEYS } from "../market/table";
import { BuyCheapest } from "../console/Buy";
import { rankJobs } from "./finder";

/** What the finder asks the gateway for. */
export interface Job {
  readonly model: string;
  readonly method: Method;
  readonly examples: number;
  readonly avgTokens: number;
  readonly epochs: number;
}

const PREFERRED_MODEL = "llama-3.1-8b";
const DEFAULT_JOB: Omit<Job, "model"> = { method: "qlora", examples: 10_000, avgTokens: 1_024, epochs: 1 };

function Explanations() {
  const { t } = useSettings();
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="explain">
      <h2 id={headingId}>{t.guide.explainHeading}</h2>
      <div className="columns">
        {METHODS.map((method) => (
          <article key={method} data-method={method}>
            <h3>{t.guide.methods[method].title}</h3>
            <p>{t.guide.methods[method].text}</p>
          </article>
        ))}
      </div>
      <h3>{t.guide.memoryTitle}</h3>
      <p>{t.guide.memoryText}</p>
      <h3>{t.guide.startTitle}</h3>
      <p>{t.guide.startText}</p>
    </section>
  );
}

function NumberField({ label, value, min, max, step, onChange }: {
  readonly label: string;
  readonly value: string;
  readonly min: number;
  readonly max: number;
  readonly step: number | "any";
  readonly onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="number" inputMode="decimal" required min={min} max={max} step={step} value={value} onChange={(event) => onChange(event.target.value)} />
    </div>
  );
}

function FinderForm({ models, job, onFind }: { readonly models: readonly Model[]; readonly job: Job; readonly onFind: (job: Job) => void }) {
  const { t } = useSettings();
  const modelId = useId();
  const [model, setModel] = useState(job.model);
  const [method, setMethod] = useState<Method>(job.method);
  const [examples, setExamples] = useState(String(job.examples));
  const [avgTokens, setAvgTokens] = useState(String(job.avgTokens));
  const [epochs, setEpochs] = useState(String(job.epochs));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onFind({ model, method, examples: Number(examples), avgTokens: Number(avgTokens), epochs: Number(epochs) });
  };
  return (
    <form className="finder-form" aria-label={t.guide.finderHeading} onSubmit={submit}>
      <div className="form-field">
        <label htmlFor={modelId}>{t.guide.model}</label>
        <select id={modelId} value={model} onChange={(event) => setModel(event.target.value)}>
          {models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </select>
      </div>
      <Radios legend={t.guide.method} name="method" options={METHODS} value={method} label={(m) => t.guide.methodNames[m]} onChange={setMethod} />
      <NumberField label={t.guide.examples} value={examples} min={1} max={10_000_000_000} step={1} onChange={setExamples} />
      <NumberField label={t.guide.avgTokens} value={avgTokens} min={1} max={1_048_576} step={1} onChange={setAvgTokens} />
      <NumberField label={t.guide.epochs} value={epochs} min={0.01} max={1000} step="any" onChange={setEpochs} />
      <div className="form-actions">
        <button type="submit" className="primary">
          {t.guide.find}
        </button>
      </div>
    </form>
  );
}

function Ranking({ answer }: { readonly answer: Recommendations }) {
  const { t, formats, settings } = useSettings();
  const quotes = useQuotes();
  const captionId = useId();
  const hintId = useId();
  const ranked = useMemo(
    () => rankJobs(answer.items, (gpu) => askIn(quotes, gpu, settings.tier, settings.currency), settings.currency),
    [answer, quotes, settings.tier, settings.currency],
  );
  const method = t.guide.methodNames[answer.method];
  const cheapest = ranked[0];
  return (
    <div className="finder-result" aria-live="polite">
      <h3>{t.guide.resultHeading(answer.model.name, method)}</h3>
      <p>{t.guide.needs(formats.gib(answer.required_gb), formats.count(answer.dataset.tokens))}</p>
      {ranked.length === 0 ? (
        <p className="note" data-empty="">{t.guide.noneFits}</p>
      ) : (
        <>
          <p className="note small">{t.guide.rankedBy}</p>
          <p className="hint" id={hintId}>
            {t.swipeHint}
          </p>
          <div className="scroller" role="region" aria-labelledby={captionId} aria-describedby={hintId} tabIndex={0}>
            <table className="finder">
              <caption id={captionId}>{t.guide.results}</caption>
              <thead>
                <tr>
                  <th scope="col" className="num">{t.guide.col.rank}</th>
                  <th scope="col">{t.guide.col.gpu}</th>
                  <th scope="col" className="num">{t.guide.col.cost}</th>
                  <th scope="col" className="num">{t.guide.col.hours}</th>
                  <th scope="col" className="num">{t.guide.col.price}</th>
                  <th scope="col" className="num">{t.guide.col.headroom}</th>
                </tr>
              </thead>
              <tbody>
                {ranked.map((row) => (
                  <tr key={row.item.gpu_id} data-gpu={row.item.gpu_id} data-cost={row.cost ?? ""} data-hours={row.item.hours}>
                    <td className="num">{formats.number(row.rank)}</td>
                    <th scope="row">
                      <Link href={gpuPath(row.item.gpu_id)}>{row.item.gpu_name}</Link>
                      {row.rank === 1 && row.cost !== null ? <span className="badge">{t.guide.cheapest}</span> : null}
                    </th>
                    <td className="num col-cost">{row.cost === null ? "–" : formats.money(row.cost, settings.currency)}</td>
                    <td className="num col-hours">{formats.hours(row.item.hours)}</td>
                    <td className="num col-ask">{row.price === null ? t.noOffer : formats.money(row.price, settings.currency)}</td>
                    <td className="num">{formats.gib(row.item.headroom_gb)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {cheapest !== undefined && cheapest.price !== null ? (
            <BuyCheapest key={`${cheapest.item.gpu_id}-${cheapest.item.hours}`} gpu={cheapest.item.gpu_id} gpuName={cheapest.item.gpu_name} hours={cheapest.item.hours} price={cheapest.price} />
          ) : null}
        </>
      )}
    </div>
  );
}

function Finder({ models, first }: { readonly models: readonly Model[]; readonly first: Model }) {
  const { t, settings } = useSettings();
  const headingId = useId();
  const [job, setJob] = useState<Job>({ model: first.id, ...DEFAULT_JOB });
  const answer = useApi(
    (signal) =>
      api.GET("/v1/recommendations", {
        params: {
          query: {
            model: job.model,
            method: job.method,
            examples: job.examples,
            avg_tokens: job.avgTokens,
            epochs: job.epochs,
            currency: settings.currency,
            tier: settings.tier,
          },
        },
        signal,
      }),
    [job, settings.currency, settings.tier],
  );
  return (
    <section aria-labelledby={headingId} className="finder-section">
      <h2 id={headingId}>{t.guide.finderHeading}</h2>
      <p>{t.guide.finderIntro}</p>
      <FinderForm models={models} job={job} onFind={setJob} />
      <LoadStatus load={answer} />
      {answer.data !== undefined ? <Ranking answer={answer.data} /> : null}
      <p className="note small">{t.guide.estimateNote}</p>
    </section>
  );
}

export function GuidePage() {
  const { t, settings, change } = useSettings();
  useTitle(t.guide.title);
  const gpus = useApi((signal) => api.GET("/v1/gpus", { signal }), []);
  const models = useApi((signal) => api.GET("/v1/models", { signal }), []);
  const prices = usePriceSnapshot();
  const items = models.data?.items ?? [];
  const first = items.find((m) => m.id === PREFERRED_MODEL) ?? items[0];
  return (
    <>
      <PageHeading>{t.guide.heading}</PageHeading>
      <p className="lead">{t.guide.intro}</p>
      <div className="toolbar">
        <Radios legend={t.tier} name="tier" options={TIERS} value={settings.tier} label={(tier) => t.tiers[tier]} onChange={(tier) => change({ tier })} />
      </div>
      <LoadStatus load={gpus} />
      {prices.status === "failed" || prices.status === "retrying" ? <LoadStatus load={prices} /> : null}
      {gpus.data !== undefined ? <GpuTable gpus={gpus.data.items} columns={GUIDE_KEYS} heading={t.guide.tableHeading} note={t.guide.tableNote} /> : null}
      <LoadStatus load={models} />
      {first !== undefined ? <Finder models={items} first={first} /> : null}
      <Explanations />
    </>
  );
}
