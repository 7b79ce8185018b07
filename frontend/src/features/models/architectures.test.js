import { describe, expect, it } from "vitest";
import { formatArchitectures, parseArchitectures } from "./architectures.js";

describe("validated architectures", () => {
  it("shows a model's list as one line", () => {
    expect(formatArchitectures(["Maxwell", "Pascal"])).toBe("Maxwell, Pascal");
    expect(formatArchitectures([])).toBe("");
    expect(formatArchitectures(undefined)).toBe("");
  });

  it("reads the names back, separated by commas or spaces, without empty entries", () => {
    expect(parseArchitectures("Maxwell, Pascal")).toEqual(["Maxwell", "Pascal"]);
    expect(parseArchitectures(" Hopper ,, Blackwell  Ada ")).toEqual([
      "Hopper",
      "Blackwell",
      "Ada",
    ]);
    expect(parseArchitectures("")).toEqual([]);
    expect(parseArchitectures(formatArchitectures(["Volta", "Turing"]))).toEqual([
      "Volta",
      "Turing",
    ]);
  });

  it("keeps a name as typed, for the server to refuse a misspelt one by name", () => {
    expect(parseArchitectures("hopper")).toEqual(["hopper"]);
  });
});
