"""SASS opcodes (Kepler to Hopper) by execution class and memory space.

Classes drive both the counts of 000 section 4.2 and the latency lookup of section 5.1:

* CUDA-core classes, counted in INS_cuda: ``fp32``, ``fp16``, ``int``, ``logic``, ``move``,
  ``special`` (S2R and friends) and ``control`` (BRA, EXIT, ...). The paper counts "everything
  except memory accesses" of saxpy2 as CUDA-core work, which includes its S2R, EXIT and BRA
  instructions: that is how 23 + 4a arises from Listing 3.
* Other units, counted separately: ``sfu`` (MUFU), ``fp64``, ``conversion``, ``tensor``,
  ``uniform`` (the scalar datapath of sm_75+), ``memory``, ``sync`` (barriers), ``nop``.

Sources: the opcode lists of NVIDIA's "CUDA Binary Utilities" documentation (instruction set
reference for Maxwell/Pascal, Volta, Turing, Ampere, Hopper) and the class mapping of PPT-GPU's
ISA tables (Arafa et al., hardware/ISA/Volta.py and Ampere.py).
"""

from __future__ import annotations

from typing import Final

CUDA_CORE_CLASSES: Final = frozenset({"fp32", "fp16", "int", "logic", "move", "special", "control"})

_CLASSES: Final[dict[str, str]] = {}


def _add(klass: str, names: str) -> None:
    for name in names.split():
        _CLASSES[name] = klass


_add(
    "fp32",
    "FADD FADD32I FMUL FMUL32I FFMA FFMA32I FMNMX FSET FSETP FCMP FSWZ FSWZADD FCHK FSEL "
    "RRO FMNMX3 FADD2 FMUL2 FFMA2",
)
_add(
    "fp16",
    "HADD2 HADD2_32I HMUL2 HMUL2_32I HFMA2 HFMA2_32I HSET2 HSETP2 HMNMX2",
)
_add(
    "int",
    "IADD IADD3 IADD32I IMAD IMADSP IMUL IMUL32I XMAD ISCADD ISCADD32I IMNMX ISET ISETP ICMP "
    "IABS ISAD LEA POPC FLO BREV BMSK BFE BFI SHF SHL SHR IDP IDP4A IDP2A VABSDIFF VABSDIFF4 "
    "VADD VMAD VMNMX VSET VSETP VSHL VSHR VIADD VIMNMX VIADDMNMX VIMNMX3 IMNMX3 VHMNMX "
    "CCTL QSPC",
)
_add("logic", "LOP LOP3 LOP32I PLOP3 PSETP PSET R2P P2R CSET CSETP SEL PRMT SGXT")
_add("move", "MOV MOV32I MOVM")
_add("special", "S2R CS2R B2R R2B GETLMEMBASE SETLMEMBASE LEPC SETCTAID PMTRIG")
_add(
    "control",
    "BRA BRX BRXU JMP JMX JMXU JCAL CALL RET EXIT BPT KILL BREAK BRK CONT RTT RPCMOV",
)
_add(
    "sync",
    "BAR BSSY BSYNC SSY SYNC PBK PCNT PRET PEXIT WARPSYNC MEMBAR ERRBAR DEPBAR YIELD "
    "NANOSLEEP VOTE VOTEU MATCH REDUX ELECT ACQBULK ARRIVES SYNCS FENCE LDGDEPBAR BMOV "
    "SETMAXREG WARPGROUP WARPGROUPSET ACQSHMINIT ENDCOLLECTIVE CGAERRBAR PREEXIT",
)
_add("nop", "NOP")
_add("sfu", "MUFU")
_add("fp64", "DADD DMUL DFMA DMNMX DSET DSETP")
_add("conversion", "F2F F2I I2F I2I I2IP F2IP I2FP F2FP FRND F2I64 I2F64")
_add(
    "tensor",
    "HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA OMMA QMMA UTCHMMA UTCIMMA UTCQMMA",
)
_add(
    "uniform",
    "R2UR S2UR UBMSK UBREV UCLEA UF2FP UFLO UIADD3 UIMAD UISETP ULEA ULOP ULOP3 ULOP32I "
    "UMOV UP2UR UPLOP3 UPOPC UPRMT UPSETP UR2UP USEL USGXT USHF USHL USHR UIABS UIMNMX "
    "UVIADD UVIMNMX UMOV32I USETMAXREG UCGABAR_ARV UCGABAR_WAIT",
)
_add("shuffle", "SHFL")

# Memory instructions: opcode -> (space, kind). Generic LD/ST/ATOM are taken as global.
MEMORY: Final[dict[str, tuple[str, str]]] = {
    "LDG": ("global", "load"),
    "STG": ("global", "store"),
    "LD": ("global", "load"),
    "ST": ("global", "store"),
    "ATOM": ("global", "atomic"),
    "ATOMG": ("global", "atomic"),
    "RED": ("global", "store"),
    "REDG": ("global", "store"),
    "LDGSTS": ("global", "load"),
    "UTMALDG": ("global", "bulk"),
    "UTMASTG": ("global", "bulk"),
    "UTMAPF": ("global", "bulk"),
    "UBLKCP": ("global", "bulk"),
    "UBLKRED": ("global", "bulk"),
    "UBLKPF": ("global", "bulk"),
    "LDS": ("shared", "load"),
    "STS": ("shared", "store"),
    "ATOMS": ("shared", "atomic"),
    "LDSM": ("shared", "load"),
    "STSM": ("shared", "store"),
    "LDL": ("local", "load"),
    "STL": ("local", "store"),
    "LDC": ("constant", "load"),
    "ULDC": ("constant", "load"),
    "TEX": ("texture", "load"),
    "TEXS": ("texture", "load"),
    "TLD": ("texture", "load"),
    "TLDS": ("texture", "load"),
    "TLD4": ("texture", "load"),
    "TLD4S": ("texture", "load"),
    "TMML": ("texture", "load"),
    "TXD": ("texture", "load"),
    "TXQ": ("texture", "load"),
    "SULD": ("texture", "load"),
    "SUST": ("texture", "store"),
    "SUATOM": ("texture", "atomic"),
    "SURED": ("texture", "store"),
}
for _name in MEMORY:
    _CLASSES[_name] = "memory"

JUMPS: Final = frozenset({"BRA", "JMP", "BRX", "BRXU", "JMX", "JMXU"})
INDIRECT_JUMPS: Final = frozenset({"BRX", "BRXU", "JMX", "JMXU"})
TERMINATORS: Final = frozenset({"EXIT", "RET", "KILL"})

# Opcodes that write nothing to a register (their first operand is a source).
NO_DESTINATION: Final = frozenset(
    {name for name, (_, kind) in MEMORY.items() if kind in {"store", "bulk"}}
    | {n for n, k in _CLASSES.items() if k in {"control", "nop"}}
    | {
        "BAR",
        "BSSY",
        "BSYNC",
        "SSY",
        "SYNC",
        "PBK",
        "PCNT",
        "PRET",
        "PEXIT",
        "WARPSYNC",
        "MEMBAR",
        "ERRBAR",
        "DEPBAR",
        "YIELD",
        "NANOSLEEP",
        "FENCE",
        "LDGDEPBAR",
        "ARRIVES",
        "ACQBULK",
        "CCTL",
        "PREEXIT",
        "CGAERRBAR",
    }
)

# Opcodes whose first two operands are destinations (predicate pairs).
TWO_DESTINATIONS: Final = frozenset(
    {
        "ISETP",
        "FSETP",
        "DSETP",
        "HSETP2",
        "PSETP",
        "PLOP3",
        "UISETP",
        "UPSETP",
        "UPLOP3",
        "VSETP",
        "CSETP",
    }
)


# Atomic and reduction instructions (global, shared, surface): INS_atomic.
ATOMICS: Final = frozenset({"ATOM", "ATOMG", "ATOMS", "RED", "REDG", "SUATOM", "SURED"})
# The global ones (generic ATOM taken as global, as in MEMORY), resolved in L2: the current
# model's atomicsPerThread (C.8).
GLOBAL_ATOMICS: Final = frozenset({"ATOM", "ATOMG", "RED", "REDG"})


def is_block_barrier(opcode: str) -> bool:
    """Return whether the opcode waits for the block's warps (BAR.SYNC, BAR.RED; __syncthreads
    compiles to BAR.SYNC.DEFER_BLOCKING), not BAR.ARV, which only arrives."""
    base, *modifiers = opcode.split(".")
    return base == "BAR" and "ARV" not in modifiers


# Tensor opcodes whose base fixes the precision (the gpu_current model's TENSOR_PRECISIONS);
# HMMA, HGMMA and UTCHMMA take it from a modifier (TF32, BF16, else FP16).
_TENSOR_PRECISION_BY_BASE: Final = {
    "DMMA": "fp64",
    "IMMA": "int8",
    "IGMMA": "int8",
    "UTCIMMA": "int8",
    "QMMA": "fp8",
    "QGMMA": "fp8",
    "UTCQMMA": "fp8",
    "OMMA": "fp4",
}


def tensor_precision(opcode: str) -> str | None:
    """Return the precision of a tensor instruction from its opcode with modifiers (e.g.
    "HMMA.16816.F32.BF16" -> "bf16"), None for one without a rate (BMMA) or not a tensor one."""
    base, *modifiers = opcode.split(".")
    if base in _TENSOR_PRECISION_BY_BASE:
        return _TENSOR_PRECISION_BY_BASE[base]
    if base not in ("HMMA", "HGMMA", "UTCHMMA"):
        return None
    if "TF32" in modifiers:
        return "tf32"
    return "bf16" if "BF16" in modifiers else "fp16"


def opcode_class(base: str) -> str | None:
    """Return the execution class of the opcode `base` (no modifiers), None when unknown."""
    return _CLASSES.get(base)


def memory_space(base: str) -> tuple[str, str] | None:
    """Return (space, kind) for a memory opcode: space global/shared/local/constant/texture."""
    return MEMORY.get(base)
