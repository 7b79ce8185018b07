// Errors not shown beside a field: listed at the top of the form.
import { useEffect } from "react";

// Move the keyboard focus to the first invalid control of the page, else to the error box.
export function focusFirstError() {
  const main = document.getElementById("main");
  if (!main) return;
  const target =
    main.querySelector('[aria-invalid="true"], .field.invalid input, .field.invalid select') ||
    main.querySelector(".error-box");
  if (target) target.focus({ preventScroll: false });
}

// A new error moves the focus to the first invalid field (or to this box), so keyboard and
// screen-reader users land on it. `names` (optional) turns a path into the words shown before
// its messages (null: none); without it the path is shown as code.
export function ErrorSummary({ error, shown = [], names }) {
  useEffect(() => {
    if (error) focusFirstError();
  }, [error]);
  if (!error) return null;
  const fields = error.fields || {};
  const rest = Object.entries(fields).filter(
    ([path]) =>
      !shown.some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)),
  );
  return (
    <div className="error-box" role="alert" aria-live="assertive" tabIndex={-1}>
      <strong>{error.message}</strong>
      {rest.length > 0 && (
        <ul>
          {rest.map(([path, messages]) => {
            const name = names ? names(path) : null;
            return (
              <li key={path}>
                {names ? (
                  name && <strong>{name}:</strong>
                ) : path && path !== "non_field_errors" && path !== "detail" ? (
                  <code>{path}</code>
                ) : null}{" "}
                {messages.join(" ")}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
