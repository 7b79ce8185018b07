// The launch form's failure injection (docs/models.md, section 6): none, "abort" (a failure
// ends the run) or "restart" (it restarts the run, each restart costing some seconds), with
// the number of samples. The server checks the values (failures.mode, .samples, .restart_s).
import { FieldErrors } from "../../components/Field.jsx";
import { InlineField } from "../../components/InlineField.jsx";

// Return the launch body's `failures`: undefined for none, else {mode, samples, restart_s}
// with numbers where the text reads as one (anything else is sent as typed, for the server
// to name).
export function failuresBody({ mode = "", samples = "", restartS = "" }) {
  if (!mode) return undefined;
  const number = (text) =>
    text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
  const body = { mode };
  if (samples.trim() !== "") body.samples = number(samples);
  if (mode === "restart" && restartS.trim() !== "") body.restart_s = number(restartS);
  return body;
}

export function FailureFields({ values, onChange, errors }) {
  const set = (key) => (e) => onChange({ ...values, [key]: e.target.value });
  return (
    <>
      <InlineField label="Failure injection (Monte Carlo)" errors={errors} path="failures.mode">
        <select aria-label="Failure injection" value={values.mode || ""} onChange={set("mode")}>
          <option value="">none: the analytic probability only</option>
          <option value="abort">abort: a failure ends the run</option>
          <option value="restart">restart: a failure restarts the run</option>
        </select>
      </InlineField>
      {values.mode && (
        <InlineField label="Samples (default 10,000)" errors={errors} path="failures.samples">
          <input
            aria-label="Failure samples"
            inputMode="numeric"
            placeholder="10000"
            value={values.samples || ""}
            onChange={set("samples")}
          />
        </InlineField>
      )}
      {values.mode === "restart" && (
        <InlineField label="Cost of a restart (s)" errors={errors} path="failures.restart_s">
          <input
            aria-label="Restart cost"
            inputMode="decimal"
            placeholder="0"
            value={values.restartS || ""}
            onChange={set("restartS")}
          />
        </InlineField>
      )}
      <FieldErrors errors={errors} path="failures" />
    </>
  );
}
