import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { FailureFields, failuresBody } from "./FailureFields.jsx";

afterEach(cleanup);

describe("failuresBody", () => {
  it("sends nothing for none and the numbers typed otherwise", () => {
    expect(failuresBody({})).toBeUndefined();
    expect(failuresBody({ mode: "abort", samples: "5000", restartS: "3" })).toEqual({
      mode: "abort",
      samples: 5000,
    });
    expect(failuresBody({ mode: "restart", samples: "", restartS: "2.5" })).toEqual({
      mode: "restart",
      restart_s: 2.5,
    });
    expect(failuresBody({ mode: "restart", samples: "many" })).toEqual({
      mode: "restart",
      samples: "many",
    });
  });
});

function Form({ errors = {} }) {
  const [values, setValues] = useState({});
  return <FailureFields values={values} onChange={setValues} errors={errors} />;
}

describe("FailureFields", () => {
  it("asks for samples, and a restart's cost only when restarting", () => {
    render(<Form />);
    expect(screen.queryByLabelText("Failure samples")).toBeNull();
    fireEvent.change(screen.getByLabelText("Failure injection"), { target: { value: "abort" } });
    expect(screen.getByLabelText("Failure samples")).toBeTruthy();
    expect(screen.queryByLabelText("Restart cost")).toBeNull();
    fireEvent.change(screen.getByLabelText("Failure injection"), { target: { value: "restart" } });
    expect(screen.getByLabelText("Restart cost")).toBeTruthy();
  });

  it("shows the server's message beside the field it names", () => {
    render(<Form errors={{ "failures.mode": ["Expected abort or restart, got 'x'."] }} />);
    expect(screen.getByText("Expected abort or restart, got 'x'.")).toBeTruthy();
  });
});
