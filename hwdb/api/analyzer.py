"""POST /api/analyze/: the kernel analyzer over REST (hwdb.services.analyzer)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from hwdb.services.analyzer import kernel_analyze
from restapi.viewsets import LenientJSONParser
from simulator.analyze import LANGUAGES

MAX_SOURCE_CHARS = 200_000
MAX_TRIPS = 26
TRIP_NAME = r"^[a-z]$"
MSG_TRIP_NAME = "loops are named a, b, c, ... in program order; got {name!r}"


class KernelAnalyzeSerializer(serializers.Serializer):
    """SASS or CUDA source and what the analysis needs beside it."""

    language = serializers.ChoiceField(
        choices=list(LANGUAGES), help_text="sass: pasted SASS; cuda: compiled with nvcc."
    )
    # A field named like DRF's Field.source: the metaclass moves it into the declared fields.
    source = serializers.CharField(  # type: ignore[assignment]
        max_length=MAX_SOURCE_CHARS, trim_whitespace=False, help_text="The kernel's text."
    )
    arch = serializers.RegexField(
        r"^sm_[0-9]{2,3}[a-z]?$",
        required=False,
        allow_null=True,
        error_messages={"invalid": "the architecture looks like sm_52, sm_80 or sm_90a"},
        help_text="Target architecture; SASS may name it itself ('code for sm_XX').",
    )
    trips = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=10**9),
        required=False,
        default=dict,
        help_text="Trip count of each loop ({'a': 4}); without it the counts stay symbolic.",
    )
    kernel = serializers.CharField(
        max_length=500,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="The kernel's name when the input holds several.",
    )
    block_size = serializers.IntegerField(
        min_value=1,
        max_value=1024,
        required=False,
        allow_null=True,
        help_text="Block size for the occupancy.",
    )
    registers = serializers.IntegerField(
        min_value=1,
        max_value=255,
        required=False,
        allow_null=True,
        help_text="Registers per thread (SASS input; CUDA reads them from ptxas).",
    )
    shared_mem = serializers.IntegerField(
        min_value=0,
        max_value=1 << 20,
        required=False,
        default=0,
        help_text="Shared memory per block in bytes (SASS input).",
    )

    def validate_trips(self, value: dict[str, int]) -> dict[str, int]:
        if len(value) > MAX_TRIPS:
            raise serializers.ValidationError(f"at most {MAX_TRIPS} trip counts")
        for name in value:
            if len(name) != 1 or not ("a" <= name <= "z"):
                raise serializers.ValidationError(MSG_TRIP_NAME.format(name=name))
        return value

    def validate_kernel(self, value: str | None) -> str | None:
        return value or None


class KernelAnalyzeResultSerializer(serializers.Serializer):
    analysis = serializers.DictField(help_text="The parameter set (docs/kernel-analyzer.md).")
    summary = serializers.CharField()
    svg = serializers.CharField(help_text="The execution graph, the critical path highlighted.")


class KernelAnalyzerView(APIView):
    """Derive INS_cuda, INS_issued, GMem_bytes and Lat_bound from SASS or CUDA source."""

    parser_classes = [LenientJSONParser]

    @extend_schema(request=KernelAnalyzeSerializer, responses=KernelAnalyzeResultSerializer)
    def post(self, request: Request) -> Response:
        """Analyse the kernel in the sandbox's child (a minute at most); a refused input
        answers 400 naming the field, and the SASS line where there is one."""
        serializer = KernelAnalyzeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(serializer.validated_data)
        return Response(kernel_analyze(**data, user_id=request.user.pk))
