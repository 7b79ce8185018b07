import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { UncertaintyFields, uncertaintyBody } from "./UncertaintyFields.jsx";

afterEach(cleanup);

describe("uncertaintyBody", () => {
  it("sends nothing without samples and the numbers typed otherwise", () => {
    expect(uncertaintyBody({})).toBeUndefined();
    expect(uncertaintyBody({ samples: " ", seed: "4" })).toBeUndefined();
    expect(uncertaintyBody({ samples: "100", seed: "4" })).toEqual({ samples: 100, seed: 4 });
    expect(uncertaintyBody({ samples: "many" })).toEqual({ samples: "many" });
  });
});

function Form({ errors = {} }) {
  const [values, setValues] = useState({});
  return <UncertaintyFields values={values} onChange={setValues} errors={errors} />;
}

describe("UncertaintyFields", () => {
  it("asks for the seed once samples are typed", () => {
    render(<Form />);
    expect(screen.queryByLabelText("Interval seed")).toBeNull();
    fireEvent.change(screen.getByLabelText("Interval samples"), { target: { value: "50" } });
    expect(screen.getByLabelText("Interval seed")).toBeTruthy();
  });

  it("shows the server's message beside the field it names", () => {
    const message = "At most 200 samples are allowed (each is a whole simulation), got 500.";
    render(<Form errors={{ "uncertainty.samples": [message] }} />);
    expect(screen.getByText(message)).toBeTruthy();
  });
});
