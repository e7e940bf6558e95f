"""Organizer pages (dashboards for corpora, jobs, imports, exports). Included under /organize/."""
urlpatterns = []
