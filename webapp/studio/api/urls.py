"""Routes of the studio API (included under /api/ by webapp.urls)."""

from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from webapp.studio.api.views import (
    ApplicationModelViewSet,
    QueueListView,
    ShareViewSet,
    SimulationViewSet,
    StudyViewSet,
    SweepViewSet,
    TraceImportView,
    WorkloadCheckView,
    WorkloadPresetsView,
    WorkloadServeView,
    WorkloadSweepView,
    WorkloadView,
)

router = SimpleRouter()
router.register("applications", ApplicationModelViewSet, basename="application-model")
router.register("simulations", SimulationViewSet, basename="simulation")
router.register("sweeps", SweepViewSet, basename="sweep")
router.register("studies", StudyViewSet, basename="study")
router.register("shares", ShareViewSet, basename="share")

# Downloads keep their file name in the path, without the router's trailing slash.
urlpatterns = [
    path("queues/", QueueListView.as_view(), name="queue-list"),
    path("trace-imports/", TraceImportView.as_view(), name="trace-import"),
    path("workloads/presets/", WorkloadPresetsView.as_view(), name="workload-presets"),
    path("workloads/check/", WorkloadCheckView.as_view(), name="workload-check"),
    path("workloads/serve/", WorkloadServeView.as_view(), name="workload-serve"),
    path("workloads/sweep/", WorkloadSweepView.as_view(), name="workload-sweep"),
    path("workloads/", WorkloadView.as_view(), name="workload-launch"),
    path("workloads/<int:pk>/", WorkloadView.as_view(), name="workload-detail"),
    path(
        "simulations/<int:pk>/result.json",
        SimulationViewSet.as_view({"get": "result"}),
        name="simulation-result",
    ),
    path(
        "simulations/<int:pk>/memory.csv",
        SimulationViewSet.as_view({"get": "memory"}),
        name="simulation-memory",
    ),
    path(
        "simulations/<int:pk>/trace.json",
        SimulationViewSet.as_view({"get": "trace_download"}),
        name="simulation-trace",
    ),
    path(
        "sweeps/<int:pk>/results.csv",
        SweepViewSet.as_view({"get": "results"}),
        name="sweep-results",
    ),
    *router.urls,
]
