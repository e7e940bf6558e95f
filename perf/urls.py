from django.conf import settings
from django.urls import path
from django.views.static import serve

from quorum.urls import urlpatterns as quorum_urlpatterns

from .baseline_view import baseline

urlpatterns = [
    path("perf/baseline/", baseline),
    # The spoken-reading benchmark's baseline: the same files served bare (no login, role or query).
    path("perf/media/<path:path>", serve, {"document_root": settings.MEDIA_ROOT}),
    *quorum_urlpatterns,
]
