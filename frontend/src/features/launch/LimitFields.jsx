// The launch form's run limits: empty means the queue's default; the queue's maximum is shown.
import { InlineField } from "../../components/InlineField.jsx";
import { errorId } from "../../lib/errors.js";
import { LIMIT_FIELDS } from "./limits.js";

// `limits` is the chosen queue's {field: {default, max}}; `values` the typed texts by field.
export function LimitFields({ limits, values, onChange, errors }) {
  return LIMIT_FIELDS.map(({ field, label }) => {
    const range = limits?.[field];
    return (
      <InlineField
        key={field}
        label={
          <>
            {label}, s{" "}
            {range && (
              <span className="muted">
                (default {range.default}, at most {range.max})
              </span>
            )}
          </>
        }
        errors={errors}
        path={field}
      >
        <input
          aria-label={`${label} in seconds`}
          inputMode="numeric"
          placeholder={range ? String(range.default) : "queue default"}
          value={values[field] ?? ""}
          aria-invalid={Boolean(errors?.[field])}
          aria-describedby={errors?.[field] ? errorId(field) : undefined}
          onChange={(e) => onChange({ ...values, [field]: e.target.value })}
        />
      </InlineField>
    );
  });
}
