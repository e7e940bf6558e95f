"""Only the evaluation API, for checking its part of the OpenAPI schema on its own."""
from django.urls import include, path

urlpatterns = [path("api/evaluation/", include("evaluation.api.urls"))]
