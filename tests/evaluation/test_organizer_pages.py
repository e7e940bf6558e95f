"""Every evaluation page is for organizers, through the one decorator of all apps
(`quorum.roles.organizer_required`): an anonymous visitor is sent to log in, an annotator gets the
"Organizers only" page with 403, before the page looks at its arguments."""
import pytest
from django.urls import URLPattern, reverse

from evaluation import urls

PLACEHOLDERS = {"int": 1, "string": "x"}


def _pages() -> list[tuple[str, dict]]:
    pages = []
    for pattern in urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        converters = pattern.pattern.converters
        kwargs = {name: PLACEHOLDERS[type(converter).__name__.removesuffix("Converter").lower()] for name, converter in converters.items()}
        pages.append((f"evaluation:{pattern.name}", kwargs))
    return pages


@pytest.mark.django_db
@pytest.mark.parametrize("name, kwargs", _pages())
def test_every_evaluation_page_is_for_organizers(client, make_annotator, name, kwargs):
    url = reverse(name, kwargs=kwargs)
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    user, _ = make_annotator("ann")
    client.force_login(user)
    for answer in (client.get(url), client.post(url)):
        assert answer.status_code == 403
        assert b"Organizers only" in answer.content
