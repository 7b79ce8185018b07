"""JavaScript names: the identifier pattern and the names a hardware attribute must not take,
readable without loading V8.

Attributes become JavaScript globals inside computational models (simulator.shallow), so a
key must not be a reserved word or a name the runtime gives the model. hwdb refuses them as
attribute keys (hwdb.validation) and imports this module alone: simulator.shallow loads
mini-racer, which the web process has no need of for that.
"""

from __future__ import annotations

__all__ = ["JS_IDENTIFIER", "JS_RESERVED"]

# A JavaScript identifier as attribute keys and function names may use (ASCII only).
JS_IDENTIFIER = r"^[A-Za-z_$][A-Za-z0-9_$]*$"

# JavaScript reserved words and names an attribute must not shadow as a global (hwdb refuses
# them as attribute keys).
JS_RESERVED = frozenset(
    (
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "let",
        "static",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "await",
        "arguments",
        "eval",
        "undefined",
        "NaN",
        "Infinity",
        "hw",
        "params",
        "globalThis",
    )
)
