// The head of a record editor: its title with the unsaved mark, then Save, the editor's own
// actions (children, in their order) and Delete. A missing handler leaves its button out
// (read-only records have no Save, new ones no Delete).
export function EditorHeader({ titleId, title, dirty, onSave, onDelete, children }) {
  return (
    <header className="page-head">
      <h1 id={titleId}>
        {title}
        {dirty && <span className="unsaved"> · unsaved</span>}
      </h1>
      <div className="actions">
        {onSave && (
          <button className="primary" onClick={onSave}>
            Save
          </button>
        )}
        {children}
        {onDelete && (
          <button className="danger" onClick={onDelete}>
            Delete
          </button>
        )}
      </div>
    </header>
  );
}
