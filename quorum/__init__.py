"""The Quorum Django project: settings, URLs, the Celery app, WSGI/ASGI."""
from .celery import app as celery_app

__all__ = ("celery_app",)
