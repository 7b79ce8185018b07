// The controls every record editor (hardware, computational models, application models, system
// models) shows for the record's own fields.
import { Field } from "./Field.jsx";

// A text input (a textarea when `rows` is given) in a Field, bound to `record[name]`: a change
// calls `set({[name]: value})`. Other props (aria-invalid, aria-label, ...) go to the control.
export function TextField({ label, name, record, errors, set, readOnly, rows, ...controlProps }) {
  const props = {
    value: record[name],
    readOnly,
    onChange: (e) => set({ [name]: e.target.value }),
    ...controlProps,
  };
  return (
    <Field label={label} path={name} errors={errors}>
      {rows ? <textarea rows={rows} {...props} /> : <input {...props} />}
    </Field>
  );
}

// The record's "shared" flag: whether every user sees the record.
export function SharedCheckbox({ checked, readOnly, onChange, label = "Shared with every user" }) {
  return (
    <label className="check">
      <input
        type="checkbox"
        checked={checked}
        disabled={readOnly}
        onChange={(e) => onChange(e.target.checked)}
      />{" "}
      {label}
    </label>
  );
}

// The owner column of a record list: the owner (or what stands for none) and whether it is shared.
export function OwnerCell({ owner, shared }) {
  return (
    <td>
      {owner}
      {shared ? " · shared" : ""}
    </td>
  );
}
