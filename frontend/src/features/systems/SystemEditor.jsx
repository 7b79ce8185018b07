// A system model's editor: a canvas (React Flow) of hardware nodes, nesting groups and edges,
// a palette of hardware from the database, and a properties panel (paper 000, Fig. 5.3). The
// state lives in systemEditorReducer, the graph conversions in graph.js, the placement in
// layout.js; this component wires the canvas's events to them.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ReactFlow, ReactFlowProvider, Background, Controls, useReactFlow } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { download, get } from "../../lib/api.js";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { InlineField } from "../../components/InlineField.jsx";
import { Loading } from "../../components/Loading.jsx";
import { SharedCheckbox } from "../../components/RecordFields.jsx";
import { EditorHeader } from "../../components/EditorHeader.jsx";
import { VersionConflict } from "../../components/VersionConflict.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { useRecordEditor } from "../../hooks/useRecordEditor.js";
import {
  EMPTY_SYSTEM,
  afterSave,
  editorState,
  fingerprint,
  systemEditorReducer,
  toBody,
} from "./editorState.js";
import { decorate, errorsByNode } from "./graph.js";
import { GROUP_SIZE, LEAF, groupAt, isDescendant, placeNew } from "./layout.js";
import { NodeProperties } from "./NodeProperties.jsx";
import { NODE_TYPES } from "./nodes.jsx";
import { TopologyPanel } from "./TopologyPanel.jsx";
import { NETWORK_MODELS } from "./network.js";

const NO_GRAPH = { nodes: [], edges: [] };

export function SystemEditor({ id }) {
  return (
    <ReactFlowProvider>
      <SystemEditorInner id={id} />
    </ReactFlowProvider>
  );
}

function SystemEditorInner({ id }) {
  const flow = useReactFlow();
  const editor = useRecordEditor({
    id,
    endpoint: "/api/systems/",
    appPath: "/app/systems",
    blank: EMPTY_SYSTEM,
    fromServer: editorState,
    toBody,
    afterSave,
    fingerprint,
    reducer: systemEditorReducer,
  });
  const { isNew, record: system, dirty, save, remove, clone, edit, setError } = editor;
  const componentList = useApiGet("/api/components/?page_size=200&ordering=type,name,id", {
    all: true,
  });
  const modelList = useApiGet("/api/models/?page_size=200", { all: true });
  const components = useMemo(() => componentList.data || [], [componentList.data]);
  const models = useMemo(() => modelList.data || [], [modelList.data]);
  const error = editor.error || componentList.error || modelList.error;
  const [paletteSearch, setPaletteSearch] = useState("");
  // Set when a control that picks or drops the selection is used: the focus then moves to the
  // first control of the properties panel instead of falling back to the page.
  const [focusProperties, setFocusProperties] = useState(false);
  const propertiesRef = useRef(null);
  useEffect(() => {
    if (!focusProperties) return;
    propertiesRef.current?.querySelector("input:not([readonly]), select, input")?.focus();
    setFocusProperties(false);
  }, [focusProperties]);

  const nodes = system ? system.nodes : NO_GRAPH.nodes;
  const edges = system ? system.edges : NO_GRAPH.edges;
  const selectedId = system?.selectedId ?? null;
  const nodeErrors = useMemo(
    () => errorsByNode(editor.error?.fields, editor.sent?.graph || NO_GRAPH),
    [editor.error, editor.sent],
  );
  const view = useMemo(() => {
    const componentName = new Map(components.map((c) => [c.id, c.name]));
    const componentType = new Map(components.map((c) => [c.id, c.type]));
    const componentAttributes = new Map(
      components.map((c) => [
        c.id,
        Object.fromEntries((c.attributes || []).map((a) => [a.key, a.value])),
      ]),
    );
    const modelName = new Map(models.map((m) => [m.id, m.name]));
    return decorate(nodes, edges, {
      selectedId,
      componentName,
      componentType,
      componentAttributes,
      modelName,
      nodeErrors,
    });
  }, [nodes, edges, selectedId, components, models, nodeErrors]);

  const onNodesChange = useCallback((changes) => edit({ type: "nodesChanged", changes }), [edit]);
  const onEdgesChange = useCallback((changes) => edit({ type: "edgesChanged", changes }), [edit]);
  const onConnect = useCallback(
    (connection) =>
      edit({
        type: "connected",
        connection,
        id: `e-${connection.source}-${connection.target}-${Date.now()}`,
      }),
    [edit],
  );

  if (!system) return error ? <ErrorSummary error={error} /> : <Loading />;

  const select = (nodeId) => edit({ type: "selected", id: nodeId });
  const setFields = (patch) => edit({ type: "fields", patch });
  const absolute = (nodeId) =>
    flow.getInternalNode(nodeId)?.internals?.positionAbsolute || { x: 0, y: 0 };
  const addNode = (component, dropPoint) => {
    const size = component === "group" ? GROUP_SIZE : LEAF;
    edit({
      type: "nodeAdded",
      component,
      ...placeNew(nodes, selectedId, dropPoint, absolute, size),
    });
  };
  const arrange = () => {
    edit({ type: "arranged" });
    // After React Flow has drawn the new positions, show the whole graph.
    window.requestAnimationFrame(() => flow.fitView({ padding: 0.2, maxZoom: 1 }));
  };
  const pickNode = (nodeId) => {
    select(nodeId);
    setFocusProperties(true);
  };

  const onDragOver = (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  };
  const onDrop = (event) => {
    event.preventDefault();
    const raw = event.dataTransfer.getData("application/x-parasim");
    if (!raw) return;
    const point = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
    addNode(raw === "group" ? "group" : components.find((c) => String(c.id) === raw), point);
  };

  // Dropping a node onto a group nests it there; dropping it outside every group un-nests it.
  const onNodeDragStop = (_, node) => {
    const a = absolute(node.id);
    const w = node.measured?.width ?? LEAF.w;
    const h = node.measured?.height ?? LEAF.h;
    const g = groupAt(nodes, { x: a.x + w / 2, y: a.y + h / 2 }, absolute, node.id);
    const newParent = g ? g.id : undefined;
    if (newParent === node.parentId) return;
    const ga = g ? absolute(g.id) : { x: 0, y: 0 };
    edit({
      type: "nodeMoved",
      id: node.id,
      parentId: newParent,
      position: { x: a.x - ga.x, y: a.y - ga.y },
    });
  };

  const selected = nodes.find((n) => n.id === selectedId);
  const updateSelected = (patch) => edit({ type: "nodeUpdated", patch });
  const setParent = (parentId) => edit({ type: "parentSet", parentId });
  const removeSelected = () => edit({ type: "selectedRemoved" });
  const connect = (target) => {
    if (!target || target === selectedId) return;
    edit({
      type: "connected",
      connection: { source: selectedId, target },
      id: `e-${selectedId}-${target}-${Date.now()}`,
    });
  };

  const exportSnapshot = async () => {
    try {
      const snap = await get(`/api/systems/${id}/snapshot/`);
      download(
        `${system.name.replace(/[^\w.-]+/g, "_") || "system"}.snapshot.json`,
        JSON.stringify(snap, null, 2),
      );
    } catch (e) {
      setError(e);
    }
  };

  const readOnly = !system.can_edit;
  const fieldErrors = error?.fields || {};
  const q = paletteSearch.toLowerCase();
  const palette = components.filter(
    (c) => !q || c.name.toLowerCase().includes(q) || c.type.toLowerCase().includes(q),
  );
  const groups = nodes.filter(
    (n) => n.data.group && n.id !== selectedId && !isDescendant(nodes, selectedId, n.id),
  );
  const summaryError = error && {
    message: error.message,
    fields: {
      ...Object.fromEntries(Object.entries(fieldErrors).filter(([p]) => !/^nodes\[/.test(p))),
    },
  };
  const labelEntries = selected ? Object.entries(selected.data.labels || {}) : [];

  return (
    <section className="system-editor" aria-labelledby="sys-title">
      <EditorHeader
        titleId="sys-title"
        title={isNew ? "New system model" : system.name}
        dirty={dirty}
        onSave={readOnly ? null : save}
        onDelete={isNew || readOnly ? null : remove}
      >
        {!readOnly && (
          <button
            onClick={arrange}
            disabled={nodes.length === 0}
            title="Arrange the nodes in layers along their edges, without overlaps"
          >
            Auto-layout
          </button>
        )}
        {!isNew && <button onClick={exportSnapshot}>Export snapshot JSON</button>}
        {!isNew && <button onClick={() => clone()}>Clone</button>}
      </EditorHeader>
      <VersionConflict
        conflict={editor.conflict}
        onReload={editor.reload}
        onOverwrite={editor.overwrite}
      />
      {readOnly && (
        <p className="note">
          {system.owner ? `System model of ${system.owner}` : "Built-in example"}: read-only. Clone
          it to edit a copy.
        </p>
      )}
      <div className="form-row">
        <InlineField label="Name" errors={fieldErrors} path="name">
          <input
            aria-label="System model name"
            value={system.name}
            readOnly={readOnly}
            aria-invalid={Boolean(fieldErrors.name)}
            onChange={(e) => setFields({ name: e.target.value })}
          />
        </InlineField>
        <InlineField label="Description" className="grow">
          <input
            aria-label="System model description"
            value={system.description}
            readOnly={readOnly}
            onChange={(e) => setFields({ description: e.target.value })}
          />
        </InlineField>
        <InlineField label="Network model" errors={fieldErrors} path="networkModel">
          <select
            aria-label="Network model"
            value={system.networkModel || ""}
            disabled={readOnly}
            aria-invalid={Boolean(fieldErrors.networkModel)}
            onChange={(e) => setFields({ networkModel: e.target.value })}
          >
            {(NETWORK_MODELS.some(([value]) => value === (system.networkModel || ""))
              ? NETWORK_MODELS
              : [...NETWORK_MODELS, [system.networkModel, system.networkModel]]
            ).map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </InlineField>
        <SharedCheckbox
          label="Shared"
          checked={system.shared}
          readOnly={readOnly}
          onChange={(shared) => setFields({ shared })}
        />
      </div>
      {summaryError && Object.keys(fieldErrors).length > 0 && <ErrorSummary error={summaryError} />}
      {error && Object.keys(fieldErrors).length === 0 && <ErrorSummary error={error} />}
      {Object.keys(nodeErrors.nodes).length > 0 && (
        <p className="error-box" role="alert">
          The graph has errors on {Object.keys(nodeErrors.nodes).length} node(s):{" "}
          {Object.keys(nodeErrors.nodes)
            .map((nodeId) => nodes.find((n) => n.id === nodeId)?.data.name || nodeId)
            .join(", ")}{" "}
          (marked in red).
        </p>
      )}
      <div className={`editor-body${readOnly ? " no-palette" : ""}`}>
        {!readOnly && (
          <aside className="palette" aria-label="Hardware palette">
            <h2>Palette</h2>
            <p className="hint">
              Drag onto the canvas (into a group to nest it), or press Add: it goes into the
              selected group.
            </p>
            <div
              className="palette-item group-item"
              draggable
              onDragStart={(e) => e.dataTransfer.setData("application/x-parasim", "group")}
            >
              <span>Group (cluster, machine)</span>
              <button aria-label="Add group" onClick={() => addNode("group")}>
                Add
              </button>
            </div>
            <input
              type="search"
              aria-label="Search the palette"
              placeholder="search hardware"
              value={paletteSearch}
              onChange={(e) => setPaletteSearch(e.target.value)}
            />
            <TopologyPanel
              nodes={nodes}
              components={components}
              topologies={system.topologies || []}
              readOnly={readOnly}
              onInsert={(template) =>
                edit({ type: "templateInserted", ...template, position: { x: 40, y: 40 } })
              }
              onRemove={(index) => edit({ type: "templateRemoved", index })}
            />
            <ul>
              {palette.map((c) => (
                <li
                  key={c.id}
                  className="palette-item"
                  draggable
                  onDragStart={(e) => e.dataTransfer.setData("application/x-parasim", String(c.id))}
                >
                  <span title={`#${c.id} ${c.vendor || ""}`}>
                    <span className={`tag tag-${c.type}`}>{c.type}</span> {c.name}
                  </span>
                  <button aria-label={`Add ${c.name}`} onClick={() => addNode(c)}>
                    Add
                  </button>
                </li>
              ))}
            </ul>
          </aside>
        )}
        <div
          className="canvas"
          onDragOver={onDragOver}
          onDrop={onDrop}
          aria-label="System model canvas"
        >
          <ReactFlow
            nodes={view.nodes}
            edges={view.edges}
            nodeTypes={NODE_TYPES}
            onNodesChange={readOnly ? undefined : onNodesChange}
            onEdgesChange={readOnly ? undefined : onEdgesChange}
            onConnect={readOnly ? undefined : onConnect}
            onNodeClick={(_, n) => select(n.id)}
            onPaneClick={() => select(null)}
            onNodeDragStop={readOnly ? undefined : onNodeDragStop}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            fitView
            fitViewOptions={{ padding: 0.2, maxZoom: 1 }}
            deleteKeyCode={readOnly ? null : ["Delete"]}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={16} />
            <Controls />
          </ReactFlow>
        </div>
        <aside className="properties" aria-label="Properties" ref={propertiesRef}>
          <h2>Properties</h2>
          {!selected ? (
            <>
              <p className="hint">Select a node or group on the canvas.</p>
              <label>
                <span className="field-label">Select node</span>
                <select
                  aria-label="Select node"
                  value=""
                  onChange={(e) => pickNode(e.target.value)}
                >
                  <option value="">—</option>
                  {nodes.map((n) => (
                    <option key={n.id} value={n.id}>
                      {n.data.name || n.id}
                    </option>
                  ))}
                </select>
              </label>
            </>
          ) : (
            <NodeProperties
              node={selected}
              readOnly={readOnly}
              errors={nodeErrors.nodes[selected.id] || []}
              components={components}
              models={models}
              groups={groups}
              nodes={nodes}
              labelEntries={labelEntries}
              update={updateSelected}
              setParent={setParent}
              connect={connect}
              remove={() => {
                removeSelected();
                setFocusProperties(true);
              }}
              edges={edges}
              removeEdge={(edgeId) => edit({ type: "edgeRemoved", id: edgeId })}
              select={pickNode}
            />
          )}
          {readOnly && (system.topologies || []).length > 0 && (
            <TopologyPanel
              nodes={nodes}
              components={components}
              topologies={system.topologies}
              readOnly
            />
          )}
        </aside>
      </div>
    </section>
  );
}
