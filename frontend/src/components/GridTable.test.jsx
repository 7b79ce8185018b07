import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { GridTable, REMOVE_COLUMN, pageSlice } from "./GridTable.jsx";

afterEach(cleanup);

describe("GridTable", () => {
  it("renders the header row and the rows given", () => {
    render(
      <GridTable label="Models" columns={["Name", "Owner"]}>
        <tr>
          <td>A</td>
          <td>ada</td>
        </tr>
      </GridTable>,
    );
    const table = screen.getByRole("table", { name: "Models" });
    expect(table.className).toBe("grid");
    expect(screen.getAllByRole("columnheader").map((th) => th.textContent)).toEqual([
      "Name",
      "Owner",
    ]);
    expect(screen.getAllByRole("row")).toHaveLength(2);
  });

  it("leaves out a false column and takes other classes", () => {
    const { container } = render(
      <GridTable label="Attributes" className="grid attributes" columns={["Key", false]} />,
    );
    expect(container.querySelector("table").className).toBe("grid attributes");
    expect(container.querySelectorAll("th")).toHaveLength(1);
  });

  it("names a remove column for screen readers only", () => {
    const { container } = render(<GridTable label="Variables" columns={["Name", REMOVE_COLUMN]} />);
    expect(container.querySelector("th:last-child span.sr-only").textContent).toBe("Remove");
  });
});

describe("a paged GridTable", () => {
  const rows = (count) =>
    Array.from({ length: count }, (_, i) => (
      <tr key={i}>
        <td>row {i + 1}</td>
      </tr>
    ));

  it("shows a page of a long table with the count, and pages through it", () => {
    render(
      <GridTable label="Kernel and transfer times" columns={["Row"]} pageSize={50}>
        {rows(2500)}
      </GridTable>,
    );
    const table = screen.getByRole("table", { name: "Kernel and transfer times" });
    expect(table.querySelectorAll("tbody tr")).toHaveLength(50);
    expect(screen.getByTestId("table-rows").textContent).toBe("Rows 1–50 of 2,500");
    fireEvent.click(screen.getByRole("button", { name: "Last page" }));
    expect(screen.getByTestId("table-rows").textContent).toBe("Rows 2,451–2,500 of 2,500");
    expect(table.querySelector("tbody tr").textContent).toBe("row 2451");
    fireEvent.click(screen.getByRole("button", { name: "Previous page" }));
    expect(table.querySelector("tbody tr").textContent).toBe("row 2401");
  });

  it("shows a short table whole, without page buttons", () => {
    render(
      <GridTable label="Processes" columns={["Row"]} pageSize={50}>
        {rows(50)}
      </GridTable>,
    );
    expect(screen.getAllByRole("row")).toHaveLength(51);
    expect(screen.queryByRole("navigation")).toBeNull();
  });

  it("keeps a page within the rows there are", () => {
    expect(pageSlice(0, 1, 50)).toEqual({ page: 1, pages: 1, first: 0, last: 0 });
    expect(pageSlice(120, 9, 50)).toEqual({ page: 3, pages: 3, first: 100, last: 120 });
    expect(pageSlice(120, -1, 50)).toEqual({ page: 1, pages: 3, first: 0, last: 50 });
  });
});
