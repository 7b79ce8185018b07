// A data table with one header row; the rows are the children.

// `columns` are the header cells' contents; a `false` one (a column shown only sometimes) is left
// out.
export function GridTable({ label, columns, className = "grid", children }) {
  return (
    <table className={className} aria-label={label}>
      <thead>
        <tr>
          {columns
            .filter((column) => column !== false)
            .map((column, i) => (
              <th key={i}>{column}</th>
            ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

// The header of a column of remove buttons: named for screen readers only.
export const REMOVE_COLUMN = <span className="sr-only">Remove</span>;
