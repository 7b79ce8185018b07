// A data table with one header row; the rows are the children. A long table shows a page of
// rows at a time with its count, so that a run of thousands of messages stays a page long.
import { Children, useState } from "react";

// The rows a paged table shows first.
export const TABLE_PAGE_SIZE = 50;

// Return the page `page` (1-based, brought within range) of `count` rows at `pageSize` a page:
// {page, pages, first, last} with `first` and `last` 0-based, `last` excluded.
export function pageSlice(count, page, pageSize) {
  const pages = Math.max(1, Math.ceil(count / pageSize));
  const at = Math.min(Math.max(1, Math.floor(page) || 1), pages);
  const first = (at - 1) * pageSize;
  return { page: at, pages, first, last: Math.min(count, first + pageSize) };
}

// `columns` are the header cells' contents; a `false` one (a column shown only sometimes) is left
// out. `pageSize` (optional) pages the rows past that many, with their count and page buttons
// named after `label`.
export function GridTable({ label, columns, className = "grid", pageSize, children }) {
  const rows = Children.toArray(children);
  const [requested, setPage] = useState(1);
  const paged = Boolean(pageSize) && rows.length > pageSize;
  const slice = paged ? pageSlice(rows.length, requested, pageSize) : null;
  const table = (
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
      <tbody>{slice ? rows.slice(slice.first, slice.last) : children}</tbody>
    </table>
  );
  if (!slice) return table;
  const { page, pages, first, last } = slice;
  return (
    <div className="paged-table">
      {table}
      <nav className="actions pager" aria-label={`${label} pages`}>
        <button disabled={page <= 1} onClick={() => setPage(1)}>
          First page
        </button>
        <button disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous page
        </button>
        <span data-testid="table-rows">
          Rows {(first + 1).toLocaleString("en")}–{last.toLocaleString("en")} of{" "}
          {rows.length.toLocaleString("en")}
        </span>
        <button disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next page
        </button>
        <button disabled={page >= pages} onClick={() => setPage(pages)}>
          Last page
        </button>
      </nav>
    </div>
  );
}

// The header of a column of remove buttons: named for screen readers only.
export const REMOVE_COLUMN = <span className="sr-only">Remove</span>;
