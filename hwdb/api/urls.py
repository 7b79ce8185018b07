"""Routes of the hardware database API (included under /api/)."""

from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from hwdb.api.analyzer import KernelAnalyzerView
from hwdb.api.views import ComponentViewSet, ComputationalModelViewSet, SystemModelViewSet

router = SimpleRouter()
router.register("components", ComponentViewSet, basename="component")
router.register("models", ComputationalModelViewSet, basename="computational-model")
router.register("systems", SystemModelViewSet, basename="system-model")

urlpatterns = [path("analyze/", KernelAnalyzerView.as_view(), name="kernel-analyze"), *router.urls]
