"""Who may do what. Organizers build corpora and jobs; annotators only do work.

An organizer is a superuser or a member of the "organizers" group; an annotator is a user with
an in-house Worker identity. One user may be both.
"""
from django.contrib.auth.models import Group

ORGANIZERS_GROUP = "organizers"


def is_organizer(user) -> bool:
    if not user or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=ORGANIZERS_GROUP).exists()


def worker_for(user):
    """The in-house Worker of a logged-in user, or None if the user is not an annotator."""
    if not user or not user.is_authenticated:
        return None
    from .models import Worker

    return Worker.objects.filter(user=user).first()


def make_organizer(user):
    group, _ = Group.objects.get_or_create(name=ORGANIZERS_GROUP)
    user.groups.add(group)
    user.is_staff = True  # organizers use the Django admin for raw records
    user.save(update_fields=["is_staff"])


def make_annotator(user):
    from .models import Worker

    worker, _ = Worker.objects.get_or_create(provider=Worker.INHOUSE, external_id=user.get_username(), defaults={"user": user})
    return worker
