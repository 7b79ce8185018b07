// The system editor's topology templates (docs/topologies.md): the templates the system holds,
// and a form that inserts one (a kind, its parameters, the endpoints node, the hardware of its
// switches or links) showing what it expands to before it is inserted.
import { useState } from "react";
import { TEMPLATE_KINDS, describeSize, templateSize } from "./topology.js";

const ROLE_NAMES = { leaf: "Leaf switch", spine: "Spine switch", link: "Link", switch: "Switch" };
const roleName = (role) =>
  ROLE_NAMES[role] || (role.startsWith("level") ? `Level ${role.slice(5)} switch` : role);

// The templates already in the system, each with a remove button when it may be edited.
function TemplateList({ topologies, readOnly, onRemove }) {
  if (!topologies.length) return null;
  return (
    <ul className="topology-list" aria-label="Templates in this system">
      {topologies.map((t, index) => (
        <li key={t.id || index}>
          <span>
            {TEMPLATE_KINDS[t.kind]?.label || t.kind} over <code>{t.endpoints}</code> ({t.routing})
          </span>
          {!readOnly && (
            <button aria-label={`Remove template ${t.id || index}`} onClick={() => onRemove(index)}>
              Remove
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

export function TopologyPanel({ nodes, components, topologies, readOnly, onInsert, onRemove }) {
  const [kind, setKind] = useState("fatTree");
  const [params, setParams] = useState(TEMPLATE_KINDS.fatTree.params);
  const [routing, setRouting] = useState(TEMPLATE_KINDS.fatTree.routings[0]);
  const [endpoints, setEndpoints] = useState("");
  const [chosen, setChosen] = useState({});
  const spec = TEMPLATE_KINDS[kind];
  const size = templateSize(kind, params);
  const hardwareNodes = nodes.filter((n) => !n.data.group);
  const network = components.filter((c) => c.type === "NETWORK");
  const roles = size.error ? [] : Object.keys(size.counts);
  const picked = Object.fromEntries(
    roles.map((role) => [role, network.find((c) => String(c.id) === chosen[role])]),
  );
  const ready = !size.error && endpoints && roles.every((role) => picked[role]);

  const pickKind = (next) => {
    setKind(next);
    setParams(TEMPLATE_KINDS[next].params);
    setRouting(TEMPLATE_KINDS[next].routings[0]);
  };

  return (
    <section className="topology-panel" aria-label="Topology templates">
      <h2>Topology templates</h2>
      <TemplateList topologies={topologies} readOnly={readOnly} onRemove={onRemove} />
      {!readOnly && (
        <>
          <label>
            <span className="field-label">Template</span>
            <select
              aria-label="Template kind"
              value={kind}
              onChange={(e) => pickKind(e.target.value)}
            >
              {Object.entries(TEMPLATE_KINDS).map(([key, k]) => (
                <option key={key} value={key}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          {Object.keys(spec.params).map((key) => (
            <label key={key}>
              <span className="field-label">{key}</span>
              <input
                aria-label={`Template ${key}`}
                value={params[key]}
                aria-invalid={Boolean(size.error?.[key])}
                onChange={(e) => setParams({ ...params, [key]: e.target.value })}
              />
              {size.error?.[key] && <span className="field-error">{size.error[key]}</span>}
            </label>
          ))}
          <label>
            <span className="field-label">Routing</span>
            <select
              aria-label="Template routing"
              value={routing}
              onChange={(e) => setRouting(e.target.value)}
            >
              {spec.routings.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span className="field-label">Endpoints node</span>
            <select
              aria-label="Template endpoints"
              value={endpoints}
              onChange={(e) => setEndpoints(e.target.value)}
            >
              <option value="">—</option>
              {hardwareNodes.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.data.name || n.id}
                </option>
              ))}
            </select>
          </label>
          {roles.map((role) => (
            <label key={role}>
              <span className="field-label">
                {roleName(role)} hardware (count {size.counts[role]})
              </span>
              <select
                aria-label={`${roleName(role)} hardware`}
                value={chosen[role] || ""}
                onChange={(e) => setChosen({ ...chosen, [role]: e.target.value })}
              >
                <option value="">—</option>
                {network.map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.name}
                  </option>
                ))}
              </select>
            </label>
          ))}
          {!size.error && (
            <p className="hint" aria-label="Expanded size">
              Expands to {describeSize(size)}.
            </p>
          )}
          <button
            disabled={!ready}
            onClick={() => onInsert({ kind, endpoints, components: picked, size, routing })}
          >
            Insert template
          </button>
        </>
      )}
    </section>
  );
}
