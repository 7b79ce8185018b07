"""API views of the studio: each validates the request, calls one selector or service, serializes.

Application models use the owned-record viewset of `hwdb.api.viewsets`; errors become
responses in `webapp.api.exceptions`. Records a user may not see answer 404; launches (simulations and sweeps) are rate-limited per
user with the "launch" throttle scope (settings REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn, cast

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from hwdb.api.pagination import MAX_PAGE_SIZE
from hwdb.api.viewsets import OwnedRecordViewSet
from restapi.cache import cached, cached_response
from simulator.results import memory_rows
from simulator.trace_export import chrome_trace
from webapp.api.throttling import LaunchRateThrottle
from webapp.studio import selectors
from webapp.studio.api.serializers import (
    ApplicationModelSerializer,
    QueueSerializer,
    ShareCreateSerializer,
    ShareRedeemSerializer,
    ShareSerializer,
    SimulationDetailSerializer,
    SimulationLaunchSerializer,
    SimulationSerializer,
    StudyDetailSerializer,
    StudyLaunchSerializer,
    StudySerializer,
    StudyTrialSerializer,
    SweepDetailSerializer,
    SweepLaunchSerializer,
    SweepSerializer,
)
from webapp.studio.models import ApplicationModel, Simulation, SimulationStatus, Study, Sweep
from webapp.studio.services.applications import (
    application_model_create,
    application_model_delete,
    application_model_update,
)
from webapp.studio.services.launch import simulation_launch
from webapp.studio.services.runs import simulation_cancel
from webapp.studio.services.shares import share_create, share_redeem, share_revoke
from webapp.studio.services.studies import study_launch, study_resume, study_stop
from webapp.studio.services.sweeps import sweep_cancel, sweep_launch
from webapp.studio.services.traces import trace_import
from webapp.studio.services.workloads import (
    workload_check,
    workload_launch,
    workload_presets,
    workload_result,
    workload_serve,
    workload_sweep,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

NO_RESULT = "Simulation {pk} has no result: it is {status}."
# A spreadsheet runs a cell starting with one of these as a formula (CSV injection, OWASP).
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    """Return `value` for a CSV cell: text a spreadsheet would run as a formula gets a quote."""
    if isinstance(value, str) and value.startswith(CSV_FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_response(
    columns: Sequence[str], rows: Iterable[Mapping[str, object]], *, filename: str
) -> HttpResponse:
    """Return a CSV download of `rows` under `columns`, each cell made safe by csv_safe."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: csv_safe(value) for key, value in row.items()} for row in rows)
    response = HttpResponse(out.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _user(request: Request) -> User:
    """Return the signed-in user (the default IsAuthenticated lets no anonymous one in)."""
    return cast("User", request.user)


def _no_result(simulation: Any) -> Response:
    """Return the 409 of a result download while the run has none (its error, if failed)."""
    return Response(
        {
            "detail": NO_RESULT.format(pk=simulation.pk, status=simulation.status),
            "error": simulation.error,
        },
        status=status.HTTP_409_CONFLICT,
    )


MSG_LAUNCH_RATE = "Launches are limited to {rate} per user (PARASIM_LAUNCH_RATE)."


class LaunchThrottleMixin:
    """Throttle `create` with the per-user "launch" scope."""

    throttle_scope = "launch"

    def get_throttles(self) -> list[BaseThrottle]:
        if getattr(self, "action", None) == "create":
            return [LaunchRateThrottle()]
        return []

    def throttled(self, request: Request, wait: float) -> NoReturn:
        """Refuse the launch (429), saying what the limit is and when to try again."""
        rate = LaunchRateThrottle.THROTTLE_RATES.get(self.throttle_scope)
        raise Throttled(wait, detail=MSG_LAUNCH_RATE.format(rate=rate_words(rate)))


def rate_words(rate: str | None) -> str:
    """Return a DRF rate ("120/min") in words ("120 a minute")."""
    count, _, period = (rate or "").partition("/")
    unit = {"s": "second", "m": "minute", "h": "hour", "d": "day"}.get(period[:1], period)
    return f"{count} a {unit}"


class ApplicationModelViewSet(OwnedRecordViewSet):
    """Application models: Python run once per simulated process, with declared variables."""

    serializer_class = ApplicationModelSerializer
    queryset = ApplicationModel.objects.none()  # for the schema only; reads go through selectors
    # DRF's own parsers and ids, as this API has always had them.
    parser_classes = [JSONParser, FormParser, MultiPartParser]
    lookup_value_regex = "[^/.]+"
    filter_backends: list[Any] = []
    not_owner_message = "Only the owner or staff may change this application model."

    def record_list(self) -> QuerySet[ApplicationModel]:
        return selectors.application_model_list(user=self.user)

    def record_get(self, pk: str) -> ApplicationModel:
        return selectors.application_model_get(user=self.user, application_id=pk)

    def record_create(self, data: dict[str, Any]) -> ApplicationModel:
        return application_model_create(owner=self.user, **data)

    def record_update(
        self,
        record: ApplicationModel,
        data: dict[str, Any],
        *,
        partial: bool,
        expected_version: int | None,
    ) -> ApplicationModel:
        return application_model_update(
            application=record, fields=data, expected_version=expected_version
        )

    def record_delete(self, record: ApplicationModel) -> None:
        application_model_delete(application=record)


def _with_places(page: Mapping[str, Any], places: Mapping[int, int]) -> dict[str, Any]:
    """Return a copy of a runs-list page (the cached one is every request's: webapp.cache.
    ObjectCache) with each run's place in its queue (None: not queued)."""
    results = [{**run, "queue_position": places.get(run["id"])} for run in page["results"]]
    return {**page, "results": results}


@extend_schema_view(
    list=extend_schema(
        description=(
            "The signed-in user's runs (staff: everybody's), newest first, one page at a time "
            f"(`page`, `page_size` up to {MAX_PAGE_SIZE}), filtered by the parameters below; "
            "an empty parameter filters nothing, a bad one is a 400 naming it."
        ),
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=SimulationStatus.values),
            OpenApiParameter("queue", OpenApiTypes.STR, description="A configured queue."),
            OpenApiParameter(
                "sweep",
                OpenApiTypes.STR,
                description='A sweep id: its runs; "none": the runs outside any sweep.',
            ),
            OpenApiParameter(
                "system_model", OpenApiTypes.INT, description="Launched from this system model."
            ),
            OpenApiParameter(
                "application",
                OpenApiTypes.INT,
                description="Launched from this application model.",
            ),
            OpenApiParameter(
                "launched_after",
                OpenApiTypes.STR,
                description=(
                    "Launched at or after this date (YYYY-MM-DD, from its start) or date and "
                    "time (ISO 8601)."
                ),
            ),
            OpenApiParameter(
                "launched_before",
                OpenApiTypes.STR,
                description=(
                    "Launched before this date and time (ISO 8601), or up to the end of this "
                    "date (YYYY-MM-DD)."
                ),
            ),
            OpenApiParameter(
                "search",
                OpenApiTypes.STR,
                description=(
                    "Words of the run's row as the list shows it (its name, else "
                    "'Simulation <id>', then '#<id>'), its system model's or application "
                    "model's name, or a run id ('12' or '#12'); case-insensitive."
                ),
            ),
            OpenApiParameter(
                "group_sweeps",
                OpenApiTypes.BOOL,
                description=(
                    "One row per sweep (its first run passing the other filters) beside the "
                    "runs outside sweeps; list a sweep's runs with `sweep`."
                ),
            ),
        ],
    ),
    create=extend_schema(request=SimulationLaunchSerializer, responses=SimulationDetailSerializer),
)
class SimulationViewSet(
    LaunchThrottleMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Simulations: create launches one on a queue; cancel; download the result, its memory
    figures and its Chrome trace."""

    filter_backends: list[Any] = []

    def get_serializer_class(self) -> Any:
        if self.action == "retrieve":
            return SimulationDetailSerializer
        if self.action == "create":
            return SimulationLaunchSerializer
        return SimulationSerializer

    def get_queryset(self) -> Any:
        params = self.request.query_params
        filters = {key: params.get(key) for key in selectors.SIMULATION_FILTERS}
        return selectors.simulation_list(user=self.request.user, filters=filters)

    def get_object(self) -> Simulation:
        return selectors.simulation_get(user=self.request.user, simulation_id=self.kwargs["pk"])

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # The page is built once per version of the user's runs (restapi.cache; on
        # PostgreSQL); the queue places, which other users' runs move, on every request. A
        # page with no queued run has no place to read: it is kept rendered as well, and
        # served as the GPU list is.
        version = selectors.simulation_list_version(user=request.user)
        build = self.list_page
        data, queued = build() if version is None else cached(self, version=version, build=build)
        if version is not None and not queued:
            return cached_response(
                self, version=(version, "rendered"), build=lambda: _with_places(data, {})
            )
        return Response(_with_places(data, selectors.queue_positions(queued=queued)))

    def list_page(self) -> tuple[dict[str, Any], Sequence[tuple[int, str, datetime]]]:
        """Return the page's data (queue places left out) and its queued runs' id, queue and
        launch time."""
        page = self.paginate_queryset(self.get_queryset()) or []
        data = self.get_paginated_response(SimulationSerializer(page, many=True).data).data
        queued = [(run.pk, run.queue, run.created) for run in page if run.status == "queued"]
        return dict(data), queued

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = SimulationLaunchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        launched = simulation_launch(user=_user(request), **serializer.validated_data)
        # As the detail shows it, with its queue position; the launch holds the records it
        # used (owner, system model, application) and whether it was held back.
        simulation = selectors.simulation_queue_positions(simulations=[launched])[0]
        return Response(SimulationDetailSerializer(simulation).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=SimulationSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel a queued or running simulation (its owner's or staff's: a shared one is a 404)."""
        owned = selectors.simulation_get_owned(user=request.user, simulation_id=pk)
        simulation = simulation_cancel(simulation=owned)
        return Response(SimulationSerializer(simulation).data)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def result(self, request: Request, pk: str | None = None) -> HttpResponse:
        """Download the result JSON of a succeeded simulation (409 while it has none)."""
        simulation = self.get_object()
        if simulation.status != SimulationStatus.SUCCEEDED or simulation.result is None:
            return _no_result(simulation)
        response = HttpResponse(json.dumps(simulation.result), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="simulation-{simulation.pk}.json"'
        return response

    @extend_schema(
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            404: OpenApiResponse(description="The run is not yours or does not exist."),
            409: OpenApiResponse(description="The run has no result (yet)."),
        }
    )
    def memory(self, request: Request, pk: str | None = None) -> HttpResponse:
        """Download the run's memory-hierarchy figures as CSV: one row per cache, memory and
        fabric instance, one per coherence message type (type COHERENCE, its count in
        `messages`). Only the header when the system model has no memory hierarchy; 409
        while the run has no result, as the result download."""
        simulation = self.get_object()
        if simulation.status != SimulationStatus.SUCCEEDED or simulation.result is None:
            return _no_result(simulation)
        columns, rows = memory_rows(simulation.result)
        return csv_response(columns, rows, filename=f"simulation-{simulation.pk}-memory.csv")

    @extend_schema(
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            404: OpenApiResponse(description="The run is not yours or does not exist."),
            409: OpenApiResponse(description="The run has no result (yet)."),
        }
    )
    # Not named `trace`: a viewset answers an HTTP method with the method of its name, and
    # TRACE /api/simulations/ reached the download without a pk.
    def trace_download(self, request: Request, pk: str | None = None) -> HttpResponse:
        """Download the run as a Chrome trace (Trace Event Format JSON, for Perfetto and
        chrome://tracing; simulator.trace_export); 409 while the run has no result, as the
        result download."""
        simulation = self.get_object()
        if simulation.status != SimulationStatus.SUCCEEDED or simulation.result is None:
            return _no_result(simulation)
        response = HttpResponse(
            json.dumps(chrome_trace(simulation.result)), content_type="application/json"
        )
        response["Content-Disposition"] = (
            f'attachment; filename="simulation-{simulation.pk}.trace.json"'
        )
        return response


# The query of a sweep's table (its REST view and its CSV): simulator.pareto's rule.
SWEEP_TABLE_PARAMETERS = [
    OpenApiParameter(
        "x", OpenApiTypes.STR, description="First objective (default overall_time_s)."
    ),
    OpenApiParameter("y", OpenApiTypes.STR, description="Second objective (default energy_j)."),
    OpenApiParameter(
        "x_direction",
        OpenApiTypes.STR,
        enum=["min", "max"],
        description="Default: min (p_success: max).",
    ),
    OpenApiParameter(
        "y_direction",
        OpenApiTypes.STR,
        enum=["min", "max"],
        description="Default: min (p_success: max).",
    ),
    OpenApiParameter(
        "constraint",
        OpenApiTypes.STR,
        many=True,
        description='Repeatable: "<metric> <op> <number>", op one of <=, <, >=, >, '
        'e.g. "gpu_power_w <= 700".',
    ),
]
SWEEP_SAMPLE_PARAMETER = OpenApiParameter(
    "sample",
    OpenApiTypes.INT,
    description="Show at most this many points (1 to "
    f"{selectors.SWEEP_SAMPLE_MAX}): every point on the Pareto front, then an evenly spaced "
    "sample of the others; `points_total` counts them all (default: every point).",
)


@extend_schema_view(
    create=extend_schema(request=SweepLaunchSerializer, responses=SweepDetailSerializer),
)
class SweepViewSet(
    LaunchThrottleMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Sweeps: create expands the specification into queued child simulations."""

    filter_backends: list[Any] = []

    def get_serializer_class(self) -> Any:
        if self.action == "retrieve":
            return SweepDetailSerializer
        if self.action == "create":
            return SweepLaunchSerializer
        return SweepSerializer

    def get_queryset(self) -> Any:
        return selectors.sweep_list(user=self.request.user)

    def get_object(self) -> Sweep:
        return selectors.sweep_get(user=self.request.user, sweep_id=self.kwargs["pk"])

    def _table(
        self, request: Request, sweep: Sweep
    ) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
        """Return the sweep's table with its rows flagged feasible and on the Pareto front
        for the objectives and constraints of the query (selectors.sweep_objectives)."""
        axes, rows = selectors.sweep_points(sweep=sweep)
        query = request.query_params
        applied = selectors.sweep_objectives(
            axes,
            rows,
            x=query.get("x"),
            y=query.get("y"),
            x_direction=query.get("x_direction"),
            y_direction=query.get("y_direction"),
            constraints=query.getlist("constraint"),
        )
        return axes, rows, applied

    @extend_schema(
        parameters=[*SWEEP_TABLE_PARAMETERS, SWEEP_SAMPLE_PARAMETER],
        responses=SweepDetailSerializer,
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A sweep with one row per point (or, with `sample`, the front and a sample of the
        others), each flagged `feasible` and `pareto`; built once per version of its runs
        (restapi.cache)."""
        sweep = self.get_object()
        limit = selectors.sweep_sample(request.query_params.get("sample"))

        def build() -> dict[str, Any]:
            _, rows, applied = self._table(request, sweep)
            total = len(rows)
            if limit is not None:
                rows = selectors.rows_shown(rows, best="pareto", limit=limit, order="simulation")
            context = {"points": rows, "points_total": total, **applied}
            return dict(SweepDetailSerializer(sweep, context=context).data)

        return Response(cached(self, version=selectors.sweep_version(sweep=sweep), build=build))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = SweepLaunchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        sweep = sweep_launch(
            user=_user(request),
            name=serializer.validated_data.get("name", ""),
            spec=serializer.validated_data["spec"],
        )
        return Response(SweepDetailSerializer(sweep).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=SweepSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel the sweep's queued and running children (its owner's or staff's: a shared one
        is a 404)."""
        sweep = sweep_cancel(sweep=selectors.sweep_get_owned(user=request.user, sweep_id=pk))
        return Response(SweepSerializer(sweep).data)

    @extend_schema(
        parameters=SWEEP_TABLE_PARAMETERS, responses={(200, "text/csv"): OpenApiTypes.STR}
    )
    def results(self, request: Request, pk: str | None = None) -> HttpResponse:
        """Download the sweep's table as CSV, one row per point, with the same `feasible`
        and `pareto` flags as the sweep's REST view for the same query."""
        sweep = self.get_object()
        axes, rows, _ = self._table(request, sweep)
        columns = selectors.sweep_columns(axes, rows)
        return csv_response(columns, rows, filename=f"sweep-{sweep.pk}.csv")


@extend_schema_view(
    create=extend_schema(request=StudyLaunchSerializer, responses=StudyDetailSerializer),
)
class StudyViewSet(
    LaunchThrottleMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Studies: an optimiser's search over a sweep's axes, one run per trial; create
    launches it, stop asks for no more trials, resume goes on from its storage. A study is
    shared by sharing its sweep (`sweep`)."""

    filter_backends: list[Any] = []

    def get_serializer_class(self) -> Any:
        if self.action == "retrieve":
            return StudyDetailSerializer
        if self.action == "create":
            return StudyLaunchSerializer
        return StudySerializer

    def get_queryset(self) -> Any:
        return selectors.study_list(user=self.request.user)

    def get_object(self) -> Study:
        return selectors.study_get(user=self.request.user, study_id=self.kwargs["pk"])

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """A study with its progress: the counts, the best trials and a sample of the others
        (selectors.study_progress), built once per version of its runs (restapi.cache)."""
        study = self.get_object()
        version = selectors.study_version(study=study)
        return Response(
            cached(self, version=version, build=lambda: StudyDetailSerializer(study).data)
        )

    @extend_schema(request=None, responses=StudyTrialSerializer(many=True))
    @action(detail=True, methods=["get"])
    def trials(self, request: Request, pk: str | None = None) -> Response:
        """Every trial of the study by number, a page at a time (selectors.study_trials)."""
        study = self.get_object()

        def build() -> dict[str, Any]:
            page = self.paginate_queryset(selectors.study_trials(study=study)) or []
            return dict(self.get_paginated_response(page).data)

        return Response(cached(self, version=selectors.study_version(study=study), build=build))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = StudyLaunchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        study = study_launch(
            user=_user(request),
            name=data.get("name", ""),
            spec=data["spec"],
            objectives=data["objectives"],
            constraints=data.get("constraints"),
            sampler=data.get("sampler"),
            seed=data.get("seed"),
            budget=data["budget"],
            parallel=data.get("parallel"),
        )
        return Response(StudyDetailSerializer(study).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=StudySerializer)
    @action(detail=True, methods=["post"])
    def stop(self, request: Request, pk: str | None = None) -> Response:
        """Ask for no more trials; those in flight finish and are told (the owner's or
        staff's: a shared study is a 404)."""
        study = study_stop(study=selectors.study_get_owned(user=request.user, study_id=pk))
        return Response(StudySerializer(study).data)

    @extend_schema(request=None, responses=StudySerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Go on with a stopped study from its storage (as stop: the owner's or staff's)."""
        study = study_resume(study=selectors.study_get_owned(user=request.user, study_id=pk))
        return Response(StudySerializer(study).data)


@extend_schema_view(
    list=extend_schema(
        description=(
            "The shares of your runs and sweeps and those given to you, oldest first; "
            "`simulation` or `sweep` keeps one run's or sweep's, `received` those given to you."
        ),
        parameters=[
            OpenApiParameter("simulation", OpenApiTypes.INT),
            OpenApiParameter("sweep", OpenApiTypes.INT),
            OpenApiParameter("received", OpenApiTypes.BOOL),
        ],
    ),
    create=extend_schema(request=ShareCreateSerializer, responses=ShareSerializer),
)
class ShareViewSet(
    mixins.ListModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Read-only shares of a run or a sweep: with a user by username, or published under a
    link; destroy revokes (a link's takes the grants of those who opened it along)."""

    serializer_class = ShareSerializer
    filter_backends: list[Any] = []

    def get_queryset(self) -> Any:
        params = self.request.query_params
        return selectors.share_list(
            user=self.request.user,
            simulation_id=params.get("simulation"),
            sweep_id=params.get("sweep"),
            received=params.get("received"),
        )

    def get_object(self) -> Any:
        return selectors.share_get_given(user=self.request.user, share_id=self.kwargs["pk"])

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = ShareCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        share = share_create(
            user=_user(request),
            simulation_id=data.get("simulation"),
            sweep_id=data.get("sweep"),
            username=data.get("username", ""),
            link=data.get("link", False),
        )
        return Response(ShareSerializer(share).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: Any) -> None:
        share_revoke(share=instance)

    @extend_schema(request=ShareRedeemSerializer, responses=ShareSerializer)
    @action(detail=False, methods=["post"])
    def redeem(self, request: Request) -> Response:
        """Open a link: the signed-in user's grant of the linked run or sweep (404: no such
        link, or revoked)."""
        serializer = ShareRedeemSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        share = share_redeem(user=_user(request), link=serializer.validated_data["link"])
        return Response(ShareSerializer(share).data)


class QueueListView(APIView):
    """The configured simulation queues with the workers currently serving each."""

    @extend_schema(responses=QueueSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(QueueSerializer(selectors.queue_list(), many=True).data)


class TraceImportView(LaunchThrottleMixin, APIView):
    """Upload a PyTorch profiler (Kineto) trace or an Nsight Systems SQLite export and get the
    application model, replay snapshot and report `python -m simulator import-trace` gives
    (docs/traces.md); with `name`, the model is saved as one of your application models.
    The trace is read and mapped in a sandbox child on the interactive worker, as one of the
    user's interactive jobs; an import is also counted as a launch (the per-user "launch"
    rate)."""

    parser_classes = [MultiPartParser, FormParser]

    def get_throttles(self) -> list[BaseThrottle]:
        return [LaunchRateThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "trace": {"type": "string", "format": "binary"},
                    "target_gpu": {"type": "string"},
                    "measured_gpu": {"type": "string"},
                    "ranks": {"type": "integer"},
                    "system": {"type": "string"},
                    "name": {"type": "string"},
                },
                "required": ["trace"],
            }
        },
        responses=OpenApiTypes.OBJECT,
    )
    def post(self, request: Request) -> Response:
        data = cast("Mapping[str, Any]", request.data)
        answer = trace_import(
            user=_user(request),
            upload=request.FILES.get("trace"),
            target_gpu=str(data.get("target_gpu", "")),
            measured_gpu=str(data.get("measured_gpu", "")),
            ranks=data.get("ranks", 1),
            name=str(data.get("name", "")),
            system=str(data.get("system", "")),
        )
        created = "application" in answer
        return Response(answer, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class WorkloadPresetsView(APIView):
    """The shipped LLM model configs and cluster templates (docs/workloads.md)."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        return Response(workload_presets(user=_user(request)))


class WorkloadCheckView(APIView):
    """Check a training plan without running it: its memory per GPU and the figures' basis,
    or 400 naming the field and the reason (memory needed against the GPU's)."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        return Response(
            workload_check(cast("Mapping[str, Any]", request.data), user=_user(request))
        )


class WorkloadServeView(LaunchThrottleMixin, APIView):
    """Serve a request stream with continuous batching and answer its latency percentiles,
    throughput and, with `saturate`, the saturating arrival rate. The stream is served in a
    sandbox child on the interactive worker, as one of the user's interactive jobs; a serve
    is also counted as a launch (the per-user "launch" rate)."""

    def get_throttles(self) -> list[BaseThrottle]:
        return [LaunchRateThrottle()]

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        data = request.data
        if not isinstance(data, Mapping):
            return Response({"detail": "Expected an object."}, status=status.HTTP_400_BAD_REQUEST)
        return Response(workload_serve(user=_user(request), data=data))


class WorkloadSweepView(LaunchThrottleMixin, APIView):
    """Check (and with `launch`, launch) every plan of a sweep over the parallel plan's fields;
    a plan that cannot run is answered as invalid with its field and reason (a launching
    sweep is throttled as launches are; a check is not, as `check/` is not)."""

    def get_throttles(self) -> list[BaseThrottle]:
        data = self.request.data
        launching = isinstance(data, Mapping) and data.get("launch") is True
        return [LaunchRateThrottle()] if launching else []

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        data = request.data
        if not isinstance(data, Mapping):
            return Response({"detail": "Expected an object."}, status=status.HTTP_400_BAD_REQUEST)
        answer = workload_sweep(user=_user(request), data=data)
        launched = any("simulation" in point for point in answer["points"])
        return Response(answer, status=status.HTTP_201_CREATED if launched else status.HTTP_200_OK)


class WorkloadView(LaunchThrottleMixin, APIView):
    """Launch a training step as a simulation (POST, throttled as launches are), read an
    evaluation's figures (GET)."""

    def get_throttles(self) -> list[BaseThrottle]:
        return [LaunchRateThrottle()] if self.request.method == "POST" else []

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        data = request.data
        if not isinstance(data, Mapping):
            return Response({"detail": "Expected an object."}, status=status.HTTP_400_BAD_REQUEST)
        simulation = workload_launch(user=_user(request), data=data)
        return Response(workload_result(simulation), status=status.HTTP_201_CREATED)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        simulation = selectors.simulation_get(user=request.user, simulation_id=pk)
        return Response(workload_result(simulation))
