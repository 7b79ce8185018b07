import { describe, expect, it } from "vitest";
import { errorId, sourceErrorLine, sourceErrors } from "./errors.js";

describe("errorId", () => {
  it("makes an element id of an API field path", () => {
    expect(errorId("attributes[0].key")).toBe("error-attributes_0_key");
    expect(errorId("name")).toBe("error-name");
  });
});

describe("sourceErrorLine", () => {
  it("reads the line of a compile error", () => {
    expect(sourceErrorLine(["Line 12: unexpected token"])).toBe(12);
  });
  it("is null for other messages", () => {
    expect(sourceErrorLine(["This field is required."])).toBeNull();
    expect(sourceErrorLine(undefined)).toBeNull();
  });
});

describe("sourceErrors", () => {
  it("lists every located message with its line", () => {
    expect(sourceErrors(["Line 1: a", "no line", "Line 3: b"])).toEqual([
      { line: 1, message: "Line 1: a" },
      { line: 3, message: "Line 3: b" },
    ]);
    expect(sourceErrors(undefined)).toEqual([]);
  });
});
