"""Routes of the hardware database API (included under /api/)."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from hwdb.api.views import ComponentViewSet, ComputationalModelViewSet, SystemModelViewSet

router = SimpleRouter()
router.register("components", ComponentViewSet, basename="component")
router.register("models", ComputationalModelViewSet, basename="computational-model")
router.register("systems", SystemModelViewSet, basename="system-model")

urlpatterns = router.urls
