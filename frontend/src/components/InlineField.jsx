// A label that wraps its control, for forms laid out in rows and panels (launch, sweeps, the
// system editor), with the field's messages inside it.
import { FieldErrors } from "./Field.jsx";

// The messages are either `error`, one message shown as it is (the graph's errors), or the API's
// messages for `path` in `errors`; either marks the field invalid. `className` adds classes.
export function InlineField({ label, className, error, errors, path, children }) {
  const invalid = Boolean(error) || Boolean(path && errors?.[path]);
  return (
    <label className={`field${className ? ` ${className}` : ""}${invalid ? " invalid" : ""}`}>
      <span className="field-label">{label}</span>
      {children}
      {error ? (
        <span className="field-error" role="alert">
          {error}
        </span>
      ) : null}
      {path && <FieldErrors errors={errors} path={path} />}
    </label>
  );
}
