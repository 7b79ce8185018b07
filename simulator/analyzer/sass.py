"""Parse SASS text (cuobjdump -sass, nvdisasm, or pasted lines as in 000 Listing 3).

Accepted forms, mixed freely:

* cuobjdump / nvdisasm lines ``/*0008*/  @P0 BRA 0x100;  /* 0x...encoding... */``; the leading
  ``/*addr*/`` gives the instruction's address, other comments are dropped;
* bare lines ``MOV R1, c[0x0][0x20];`` as printed in papers; addresses are then computed from
  the architecture's code layout (Maxwell/Pascal: 8-byte instructions with a control word before
  every three, the first at 0x08; Kepler: one control word per seven; Volta and later: 16-byte
  instructions from 0x00), which is how Listing 3's ``BRA 0xd0`` finds its loop head;
* Maxwell/Pascal dual-issue pairs ``{ A; B; }`` on one line or across lines;
* labels ``.L_x_0:`` and label targets ``BRA `(.L_x_0)``;
* headers (``code for sm_52``, ``Function : name``, ``.headerflags``...), which also name the
  architecture and split several kernels.

Every instruction keeps its 1-based line in the input, so errors and the stride overrides of
the CLI refer to what the user sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from simulator.analyzer import isa
from simulator.analyzer.errors import (
    BAD_TARGET,
    NO_INSTRUCTIONS,
    PAIR_SIZE,
    UNBALANCED_BRACE,
    UNKNOWN_OPCODE,
    AnalyzerError,
)

_ADDRESS = re.compile(r"^\s*/\*\s*([0-9a-fA-F]{4,})\s*\*/")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_CODE_FOR = re.compile(r"code for (sm_\d+[a-z]?)")
_LABEL = re.compile(r"^\s*([.$A-Za-z_][\w.$]*)\s*:\s*(.*)$")
_LOOKS_LIKE_INSTRUCTION = re.compile(
    r"^[{}\s]*(@!?U?P[T\d]\s+)?[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*(\s|$|[{}])"
)
_GUARD = re.compile(r"^@(!?)(U?P[T\d])\s+")
_REGISTER = re.compile(r"(?<![\w.])(U?R\d+|U?P\d|RZ|URZ|PT|UPT)((?:\.[A-Za-z0-9_]+)*)")
_HEX_TARGET = re.compile(r"^0x[0-9a-fA-F]+$")
_LABEL_TARGET = re.compile(r"^`?\(?\s*([.$A-Za-z_][\w.$]*)\s*\)?$")
_IGNORED_REGISTERS = frozenset({"RZ", "URZ", "PT", "UPT"})


@dataclass
class Instruction:
    """One SASS instruction with the facts the analyzer needs."""

    index: int
    line: int
    text: str
    opcode: str  # with modifiers, e.g. "LDG.E.64"
    operands: tuple[str, ...]
    guard: str | None = None  # predicate register, e.g. "P0"
    guard_negated: bool = False
    address: int | None = None
    target_text: str | None = None
    target: int | None = None  # index of the target instruction
    pair: int | None = None  # index of the dual-issue partner
    labels: tuple[str, ...] = ()
    dests: tuple[str, ...] = ()
    srcs: tuple[str, ...] = ()

    @property
    def base(self) -> str:
        """Return the opcode without modifiers."""
        return self.opcode.split(".")[0]

    @property
    def modifiers(self) -> tuple[str, ...]:
        """Return the opcode modifiers, e.g. ('E', '64')."""
        return tuple(self.opcode.split(".")[1:])

    @property
    def klass(self) -> str:
        """Return the execution class (see isa.py)."""
        return isa.opcode_class(self.base) or "unknown"

    @property
    def memory(self) -> tuple[str, str] | None:
        """Return (space, kind) for memory instructions."""
        return isa.memory_space(self.base)

    @property
    def is_jump(self) -> bool:
        """Return whether the instruction may transfer control elsewhere (BRA, JMP, BRX...)."""
        return self.base in isa.JUMPS

    @property
    def always(self) -> bool:
        """Return whether the instruction is unconditional (no guard, or @PT)."""
        return self.guard is None or (self.guard in {"PT", "UPT"} and not self.guard_negated)

    @property
    def never(self) -> bool:
        """Return whether the guard is @!PT (never executes)."""
        return self.guard in {"PT", "UPT"} and self.guard_negated

    @property
    def element_bytes(self) -> int:
        """Return the bytes each thread accesses (memory instructions): 4 unless a width is given."""
        widths = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16, "32": 4}
        for modifier in self.modifiers:
            if modifier in widths:
                return widths[modifier]
        return 4

    def __str__(self) -> str:
        """Return the instruction as written (without the trailing semicolon)."""
        return self.text


@dataclass
class SassFunction:
    """One kernel's instructions, in program order."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class SassListing:
    """Everything parsed from one text."""

    arch: str | None
    functions: list[SassFunction]


def _split_operands(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _expand(register: str, width: int) -> list[str]:
    """Return `register` and the following ones up to `width` (a 64-bit pair: R2 -> R2, R3)."""
    match = re.fullmatch(r"(U?R)(\d+)", register)
    if not match or width == 1:
        return [register]
    prefix, number = match.group(1), int(match.group(2))
    return [f"{prefix}{number + k}" for k in range(width)]


def _registers(operand: str, *, default_width: int = 1, address_pair: bool = False) -> list[str]:
    """Return the registers an operand names, pairs expanded."""
    found: list[str] = []
    inside = operand.find("[")
    for match in _REGISTER.finditer(operand):
        name, suffix = match.group(1), match.group(2)
        if name in _IGNORED_REGISTERS:
            continue
        width = default_width
        if ".64" in suffix:
            width = 2
        elif ".128" in suffix:
            width = 4
        in_brackets = inside >= 0 and match.start() > inside and not name.startswith("U")
        if in_brackets and address_pair:
            width = max(width, 2)
        elif in_brackets:
            width = 1 if ".64" not in suffix else 2
        found.extend(_expand(name, width))
    return found


def _assign_registers(instruction: Instruction) -> None:
    """Fill dests and srcs from the operands (conventions in the module docstring of graph.py)."""
    base = instruction.base
    modifiers = instruction.modifiers
    operands = list(instruction.operands)
    if instruction.is_jump and operands:
        operands = operands[:-1] if instruction.target_text is not None else operands
    memory = instruction.memory
    data_width = max(1, instruction.element_bytes // 4) if memory else 1
    wide = instruction.klass == "fp64" or "WIDE" in modifiers
    address_pair = "E" in modifiers and memory is not None and memory[0] == "global"
    dest_count = 0
    if base not in isa.NO_DESTINATION and operands:
        dest_count = 2 if base in isa.TWO_DESTINATIONS else 1
        while (
            dest_count < len(operands)
            and base not in isa.TWO_DESTINATIONS
            and re.fullmatch(r"U?P[T\d]", operands[dest_count])
        ):
            dest_count += 1
    dests: list[str] = []
    srcs: list[str] = []
    for position, operand in enumerate(operands):
        if position < dest_count:
            width = data_width if memory else (2 if wide and operand.startswith("R") else 1)
            dests.extend(_registers(operand, default_width=width))
        else:
            is_data = memory is not None and "[" not in operand
            width = data_width if is_data else (2 if wide else 1)
            srcs.extend(_registers(operand, default_width=width, address_pair=address_pair))
    if instruction.guard and instruction.guard not in _IGNORED_REGISTERS:
        srcs.append(instruction.guard)
    instruction.dests = tuple(dict.fromkeys(dests))
    instruction.srcs = tuple(dict.fromkeys(srcs))


def _parse_statement(text: str, line: int, index: int) -> Instruction:
    body = text.strip()
    guard: str | None = None
    negated = False
    match = _GUARD.match(body)
    if match:
        negated, guard = match.group(1) == "!", match.group(2)
        body = body[match.end() :]
    opcode, _, rest = body.partition(" ")
    if isa.opcode_class(opcode.split(".")[0]) is None:
        raise AnalyzerError(
            UNKNOWN_OPCODE.format(opcode=opcode.split(".")[0], line=line, text=text.strip()),
            line=line,
        )
    operands = tuple(_split_operands(rest))
    instruction = Instruction(
        index=index,
        line=line,
        text=text.strip(),
        opcode=opcode,
        operands=operands,
        guard=guard,
        guard_negated=negated,
    )
    if instruction.is_jump and operands and instruction.base not in isa.INDIRECT_JUMPS:
        last = operands[-1].strip()
        if _HEX_TARGET.match(last) or _LABEL_TARGET.match(last.replace("`", "")):
            instruction.target_text = last
    _assign_registers(instruction)
    return instruction


def _code_address(index: int, arch: str | None) -> int:
    """Return the address of the `index`-th instruction under the architecture's code layout."""
    major = int(arch[3:-1]) if arch else 7
    if major in (5, 6):
        return 8 + (index // 3) * 32 + (index % 3) * 8
    if major == 3:
        return 8 + (index // 7) * 64 + (index % 7) * 8
    return 16 * index


def parse_sass(text: str, *, arch: str | None = None) -> SassListing:
    """Return the kernels in `text`; raises AnalyzerError for unknown opcodes or bad braces.

    `arch` (e.g. "sm_52") places instructions without printed addresses; without it the
    ``code for sm_XX`` header is used.
    """
    found_arch: str | None = None
    functions: list[SassFunction] = []
    current: SassFunction | None = None
    pending_labels: list[str] = []
    group: list[Instruction] | None = None
    group_line = 0

    def function() -> SassFunction:
        nonlocal current
        if current is None:
            current = SassFunction(name="kernel")
            functions.append(current)
        return current

    for number, raw in enumerate(text.splitlines(), start=1):
        header = _FUNCTION.match(raw)
        if header:
            current = SassFunction(name=header.group(1))
            functions.append(current)
            continue
        code_for = _CODE_FOR.search(raw)
        if code_for and ";" not in raw:
            found_arch = found_arch or code_for.group(1)
            continue
        address_match = _ADDRESS.match(raw)
        address = int(address_match.group(1), 16) if address_match else None
        line = raw[address_match.end() :] if address_match else raw
        line = _BLOCK_COMMENT.sub(" ", line).split("//")[0].strip()
        if not line:
            continue
        label = _LABEL.match(line)
        if label and not label.group(1).isupper():
            pending_labels.append(label.group(1))
            line = label.group(2).strip()
            if not line:
                continue
        braces_only = set(line) <= set("{} \t")
        if ";" not in line and not (braces_only or _LOOKS_LIKE_INSTRUCTION.match(line)):
            continue
        if ";" not in line and ("=" in line or ":" in line):
            continue
        statement = ""
        for char in line + ("" if line.rstrip("{} \t").endswith(";") else ";"):
            if char == "{":
                if group is not None:
                    raise AnalyzerError(
                        UNBALANCED_BRACE.format(brace="{", line=number), line=number
                    )
                group, group_line = [], number
            elif char == "}":
                if statement.strip():
                    raise AnalyzerError(
                        UNBALANCED_BRACE.format(brace="}", line=number), line=number
                    )
                if group is None:
                    raise AnalyzerError(
                        UNBALANCED_BRACE.format(brace="}", line=number), line=number
                    )
                if len(group) != 2:
                    raise AnalyzerError(
                        PAIR_SIZE.format(line=group_line, count=len(group)), line=group_line
                    )
                group[0].pair, group[1].pair = group[1].index, group[0].index
                group = None
            elif char == ";":
                if statement.strip():
                    target = function()
                    instruction = _parse_statement(statement, number, len(target.instructions))
                    instruction.address = address
                    instruction.labels = tuple(pending_labels)
                    pending_labels = []
                    target.instructions.append(instruction)
                    if group is not None:
                        group.append(instruction)
                statement = ""
            else:
                statement += char
    if group is not None:
        raise AnalyzerError(UNBALANCED_BRACE.format(brace="{", line=group_line), line=group_line)
    functions = [f for f in functions if f.instructions]
    if not functions:
        raise AnalyzerError(NO_INSTRUCTIONS)
    layout_arch = arch or found_arch
    for fn in functions:
        _place(fn, layout_arch)
    return SassListing(arch=found_arch, functions=functions)


def _place(function: SassFunction, arch: str | None) -> None:
    """Give every instruction an address and resolve branch targets to instruction indices."""
    instructions = function.instructions
    if any(i.address is None for i in instructions):
        for instruction in instructions:
            instruction.address = _code_address(instruction.index, arch)
    by_label = {label: i.index for i in instructions for label in i.labels}
    for instruction in instructions:
        if instruction.target_text is None:
            continue
        text = instruction.target_text
        if _HEX_TARGET.match(text):
            wanted = int(text, 16)
            later = [i for i in instructions if (i.address or 0) >= wanted]
            if not later:
                raise AnalyzerError(
                    BAD_TARGET.format(target=text, line=instruction.line), line=instruction.line
                )
            instruction.target = later[0].index
            if later[0].address != wanted:
                function.notes.append(
                    f"line {instruction.line}: branch target {text} is not an instruction "
                    f"address; taken as the next instruction, {later[0].address:#x} "
                    f"(line {later[0].line})"
                )
        else:
            label_match = _LABEL_TARGET.match(text.replace("`", ""))
            name = label_match.group(1) if label_match else text
            if name not in by_label:
                raise AnalyzerError(
                    BAD_TARGET.format(target=text, line=instruction.line), line=instruction.line
                )
            instruction.target = by_label[name]
