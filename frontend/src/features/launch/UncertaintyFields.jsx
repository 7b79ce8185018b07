// The launch form's prediction interval (docs/uncertainty.md): Monte Carlo samples over the
// records' uncertain attributes, with their seed. Left empty: no interval. The server checks
// the values (uncertainty.samples, at most 200; uncertainty.seed).
import { FieldErrors } from "../../components/Field.jsx";
import { InlineField } from "../../components/InlineField.jsx";

// Return the launch body's `uncertainty`: undefined when no samples are typed, else
// {samples, seed} with numbers where the text reads as one (anything else is sent as typed,
// for the server to name).
export function uncertaintyBody({ samples = "", seed = "" }) {
  if (samples.trim() === "") return undefined;
  const number = (text) =>
    text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
  const body = { samples: number(samples) };
  if (seed.trim() !== "") body.seed = number(seed);
  return body;
}

export function UncertaintyFields({ values, onChange, errors }) {
  const set = (key) => (e) => onChange({ ...values, [key]: e.target.value });
  return (
    <>
      <InlineField
        label="Prediction interval: samples (empty: none, at most 200)"
        errors={errors}
        path="uncertainty.samples"
      >
        <input
          aria-label="Interval samples"
          inputMode="numeric"
          placeholder="none"
          value={values.samples || ""}
          onChange={set("samples")}
        />
      </InlineField>
      {values.samples && (
        <InlineField label="Seed of the interval's draws" errors={errors} path="uncertainty.seed">
          <input
            aria-label="Interval seed"
            inputMode="numeric"
            placeholder="0"
            value={values.seed || ""}
            onChange={set("seed")}
          />
        </InlineField>
      )}
      <FieldErrors errors={errors} path="uncertainty" />
    </>
  );
}
