"""The SASS parser: predicates, operands, registers, memory spaces, braces, targets, errors."""

from __future__ import annotations

import pytest

from simulator.analyzer.errors import AnalyzerError
from simulator.analyzer.sass import parse_sass
from simulator.analyzer.structure import find_loops, reachable

CUOBJDUMP_SM80 = """
	code for sm_80
		Function : _Z3fooPf
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;        /* 0x00000a00ff017624 */
                                                                                  /* 0x000fe400078e00ff */
        /*0010*/                   LDG.E.64 R2, [R4.64] ;                         /* 0x0000000404027981 */
        /*0020*/              @!P0 BRA 0x40 ;                                     /* 0x0000009000008947 */
        /*0030*/                   STS [R0+0x4], R2 ;                             /* 0x0000000000007388 */
        /*0040*/                   LDL R6, [R1] ;                                 /* 0x0000000000007388 */
        /*0050*/                   EXIT ;                                         /* 0x000000000000794d */
        /*0060*/                   BRA 0x60;                                      /* 0xfffffff000007947 */
		..........
"""


def test_it_reads_cuobjdump_output_with_addresses_and_header() -> None:
    listing = parse_sass(CUOBJDUMP_SM80)
    assert listing.arch == "sm_80"
    (function,) = listing.functions
    assert function.name == "_Z3fooPf"
    load, branch, store, local = function.instructions[1:5]
    assert load.address == 0x10
    assert load.memory == ("global", "load")
    assert load.element_bytes == 8
    assert load.dests == ("R2", "R3") and load.srcs == ("R4", "R5")
    assert branch.guard == "P0" and branch.guard_negated and branch.target == 4
    assert store.memory == ("shared", "store") and store.dests == () and store.srcs == ("R0", "R2")
    assert local.memory == ("local", "load")


def test_it_leaves_the_padding_after_exit_unreachable() -> None:
    function = parse_sass(CUOBJDUMP_SM80).functions[0]
    live = reachable(function.instructions)
    assert 6 not in live and 5 in live
    assert find_loops(function.instructions, live) == []


def test_it_pairs_maxwell_dual_issue_braces_on_one_line() -> None:
    text = "MOV R1, R2;\n{ MOV R5, RZ; LDG.E R0, [R2]; }\nEXIT;\n"
    instructions = parse_sass(text, arch="sm_52").functions[0].instructions
    assert instructions[1].pair == 2 and instructions[2].pair == 1
    assert instructions[2].srcs == ("R2", "R3")  # .E: 64-bit address in a register pair


def test_it_places_bare_maxwell_lines_like_cuobjdump() -> None:
    text = "\n".join(["MOV R0, RZ;"] * 5) + "\n@P0 BRA 0x28;\nEXIT;\n"
    instructions = parse_sass(text, arch="sm_52").functions[0].instructions
    assert [i.address for i in instructions[:5]] == [0x08, 0x10, 0x18, 0x28, 0x30]
    assert instructions[5].target == 3


def test_it_resolves_nvdisasm_labels() -> None:
    text = ".L_x_0:\n  IADD3 R0, R0, 0x1, RZ ;\n  ISETP.GE.AND P0, PT, R0, 0x4, PT ;\n"
    text += "  @!P0 BRA `(.L_x_0) ;\n  EXIT ;\n"
    instructions = parse_sass(text, arch="sm_80").functions[0].instructions
    assert instructions[2].target == 0
    assert instructions[1].dests == ("P0",) and instructions[1].srcs == ("R0",)
    loops = find_loops(instructions, reachable(instructions))
    assert [(loop.head, loop.latch, loop.symbol) for loop in loops] == [(0, 2, "a")]


def test_it_names_an_unknown_opcode_with_its_line() -> None:
    with pytest.raises(AnalyzerError, match=r"unknown opcode 'FOO' on line 2") as caught:
        parse_sass("MOV R1, R2;\nFOO R1, R2;\n", arch="sm_52")
    assert caught.value.line == 2


def test_it_rejects_unbalanced_braces_and_missing_code() -> None:
    with pytest.raises(AnalyzerError, match="unbalanced dual-issue brace"):
        parse_sass("{ MOV R1, R2;\nMOV R3, R4;\n", arch="sm_52")
    with pytest.raises(AnalyzerError, match="exactly two"):
        parse_sass("{ MOV R1, R2; MOV R3, R4; MOV R5, R6; }\n", arch="sm_52")
    with pytest.raises(AnalyzerError, match="no SASS instructions"):
        parse_sass("code for sm_80\n", arch="sm_80")


def test_it_rejects_a_branch_to_an_unknown_label() -> None:
    with pytest.raises(AnalyzerError, match=r"branch target .* on line 1"):
        parse_sass("BRA `(.L_x_9);\nEXIT;\n", arch="sm_80")
