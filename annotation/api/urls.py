"""REST API routes (DRF). Included under /api/ by quorum/urls.py."""
urlpatterns = []
