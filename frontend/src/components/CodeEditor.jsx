// CodeMirror 6 editor: JavaScript or Python highlighting; `errorLine` marks a line in red,
// `errors` ([{ line, message }]) marks several.
import { useEffect, useRef } from "react";
import { EditorView, basicSetup } from "codemirror";
import { EditorState, Compartment } from "@codemirror/state";
import { javascript } from "@codemirror/lang-javascript";
import { python } from "@codemirror/lang-python";
import { setDiagnostics } from "@codemirror/lint";

const editable = (readOnly) => [
  EditorState.readOnly.of(readOnly),
  EditorView.editable.of(!readOnly),
];

export function CodeEditor({
  value,
  onChange,
  language,
  label,
  errorLine,
  errorMessage,
  errors,
  readOnly = false,
}) {
  const host = useRef(null);
  const view = useRef(null);
  const readOnlyCompartment = useRef(new Compartment());
  // The editor is built once per language; the latest props reach it through these refs, and
  // the effects below keep its text and read-only state in step with them.
  const latest = useRef({ onChange, value, readOnly, label });
  useEffect(() => {
    latest.current = { onChange, value, readOnly, label };
  });

  useEffect(() => {
    const { value: doc, readOnly: locked, label: name } = latest.current;
    const state = EditorState.create({
      doc: doc || "",
      extensions: [
        basicSetup,
        language === "python" ? python() : javascript(),
        readOnlyCompartment.current.of(editable(locked)),
        EditorView.contentAttributes.of({ "aria-label": name || "Code editor" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) latest.current.onChange?.(update.state.doc.toString());
        }),
      ],
    });
    const editor = new EditorView({ state, parent: host.current });
    view.current = editor;
    return () => editor.destroy();
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (v && value !== undefined && v.state.doc.toString() !== value) {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({
      effects: readOnlyCompartment.current.reconfigure(editable(readOnly)),
    });
  }, [readOnly]);

  const marked = errors?.length
    ? errors
    : errorLine
      ? [{ line: errorLine, message: errorMessage || "Error" }]
      : [];
  const markedKey = JSON.stringify(marked);
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const diagnostics = JSON.parse(markedKey)
      .filter(({ line }) => line >= 1 && line <= v.state.doc.lines)
      .map(({ line, message }) => {
        const at = v.state.doc.line(line);
        return { from: at.from, to: Math.max(at.to, at.from), severity: "error", message };
      });
    v.dispatch(setDiagnostics(v.state, diagnostics));
  }, [markedKey]);

  return (
    <div
      className="code-editor"
      ref={host}
      data-error-line={marked[0]?.line || ""}
      data-error-lines={marked.map(({ line }) => line).join(" ")}
    />
  );
}
