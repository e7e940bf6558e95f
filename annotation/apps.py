from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from .roles import grant_organizer_permissions

        # Permissions exist only once migrate has created them, so they are granted after every
        # migrate (idempotent), not in a data migration that a fresh database would run too early.
        post_migrate.connect(grant_organizer_permissions, dispatch_uid="quorum-organizer-permissions")
