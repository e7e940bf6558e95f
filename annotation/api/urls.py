"""REST API routes (DRF). Included under /api/ by quorum/urls.py; names are in the "api" namespace."""
from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

app_name = "api"

router = SimpleRouter()
router.register("corpora", views.CorpusViewSet, basename="corpus")
router.register("imports", views.ImportRunViewSet, basename="import")
router.register("jobs", views.JobViewSet, basename="job")
router.register("job-creations", views.JobCreationRunViewSet, basename="job-creation")
router.register("exports", views.ExportRunViewSet, basename="export")

urlpatterns = [
    path("token/", views.TokenView.as_view(), name="token"),
    path("task-types/", views.TaskTypeListView.as_view(), name="task-types"),
    path("exports/<int:pk>/zip/", views.ExportRunViewSet.as_view({"get": "download_zip"}), name="export-zip"),
    path(
        "exports/<int:pk>/files/<path:name>",
        views.ExportRunViewSet.as_view({"get": "download"}),
        name="export-file",
    ),
    path("responses/<int:pk>/override/", views.ResponseOverrideView.as_view(), name="response-override"),
    path("workers/<int:pk>/quality/", views.WorkerQualityView.as_view(), name="worker-quality"),
    path("workers/<int:pk>/unblock/", views.WorkerUnblockView.as_view(), name="worker-unblock"),
    *router.urls,
]
