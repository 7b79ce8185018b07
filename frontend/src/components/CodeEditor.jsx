// CodeMirror 6 editor: JavaScript or Python highlighting; `errorLine` marks a line in red.
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

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    if (errorLine && errorLine >= 1 && errorLine <= v.state.doc.lines) {
      const line = v.state.doc.line(errorLine);
      v.dispatch(
        setDiagnostics(v.state, [
          {
            from: line.from,
            to: Math.max(line.to, line.from),
            severity: "error",
            message: errorMessage || "Error",
          },
        ]),
      );
    } else {
      v.dispatch(setDiagnostics(v.state, []));
    }
  }, [errorLine, errorMessage]);

  return <div className="code-editor" ref={host} data-error-line={errorLine || ""} />;
}
