// The system model and application model pickers that the launch and sweep forms share.
import { InlineField } from "../../components/InlineField.jsx";

// `choices` is useLaunchChoices(); `errors` the API's field messages (the launch form's).
export function ModelChoices({ choices: c, errors }) {
  return (
    <>
      <InlineField label="System model" errors={errors} path={errors && "system_model"}>
        <select
          aria-label="System model"
          value={c.systemId}
          onChange={(e) => c.setSystemId(e.target.value)}
        >
          {c.systems.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </InlineField>
      <InlineField label="Application model" errors={errors} path={errors && "application"}>
        <select
          aria-label="Application model"
          value={c.appId}
          onChange={(e) => c.setAppId(e.target.value)}
        >
          {c.apps.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </InlineField>
    </>
  );
}
