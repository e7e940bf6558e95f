"""Who may do what, for every app. Organizers build corpora, jobs, crowds and evaluations;
annotators only do work.

An organizer is a superuser or a member of the "organizers" group; an annotator is a user with
an in-house Worker identity. One user may be both. Every organizer page is guarded by
`organizer_required`; the API by `quorum.api.permissions.IsOrganizer`.
"""
from collections.abc import Callable
from functools import wraps

from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Worker

ORGANIZERS_GROUP = "organizers"
#: The apps whose records organizers own and see in the Django admin.
ORGANIZER_APPS = ("annotation", "hits", "evaluation")
#: Models organizers may also add and change in the admin: the ones whose rows are plain
#: configuration. Everything with a life of its own (responses, slots, rounds, payments) changes
#: only through the services, so the admin shows it read-only.
ORGANIZER_EDITS = {
    ("annotation", "corpus"), ("annotation", "dialog"), ("annotation", "turn"), ("annotation", "job"),
    ("annotation", "worker"), ("annotation", "qualitypolicy"),
}


def is_organizer(user) -> bool:
    if not user or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=ORGANIZERS_GROUP).exists()


def organizer_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """An organizer page: an anonymous user logs in first; a user who is not an organizer gets the
    "organizers only" page with status 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_organizer(request.user):
            return render(request, "organizers_only.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def worker_for(user):
    """The in-house Worker of a logged-in user, or None if the user is not an annotator."""
    if not user or not user.is_authenticated:
        return None
    return Worker.objects.filter(user=user).first()


def grant_after_migrate(app_config, **kwargs):
    """The post_migrate receiver: migrate sends the signal once per app with models, in app order,
    and each app's permissions are created at its own; so the grant runs once, at the last app's,
    when every permission it gives exists."""
    with_models = [config for config in apps.get_app_configs() if config.models_module is not None]
    if with_models and app_config is with_models[-1]:
        grant_organizer_permissions()


def grant_organizer_permissions():
    """Give the organizers group view permission on every model of ORGANIZER_APPS and add/change on
    ORGANIZER_EDITS (after every migrate, and called by make_organizer). Idempotent."""
    group, _ = Group.objects.get_or_create(name=ORGANIZERS_GROUP)
    wanted = []
    for perm in Permission.objects.filter(content_type__app_label__in=ORGANIZER_APPS).select_related("content_type"):
        action = perm.codename.split("_", 1)[0]
        model = (perm.content_type.app_label, perm.content_type.model)
        if action == "view" or (action in ("add", "change") and model in ORGANIZER_EDITS):
            wanted.append(perm)
    group.permissions.add(*wanted)
    return group


def make_organizer(user):
    group = grant_organizer_permissions()
    user.groups.add(group)
    user.is_staff = True  # organizers use the Django admin for raw records
    user.save(update_fields=["is_staff"])


def make_annotator(user):
    worker, _ = Worker.objects.get_or_create(provider=Worker.INHOUSE, external_id=user.get_username(), defaults={"user": user})
    return worker
