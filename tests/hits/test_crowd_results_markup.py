"""What a crowd action did is announced as a status and still read as a list: a `ul` with
role="status" is neither to axe-core (aria-allowed-role, and each `li` outside a list: listitem),
so the live region wraps the list."""
import re

import pytest

from .test_crowd_pages import _project_urls, org_client, submitted  # noqa: F401 (fixtures)


@pytest.mark.django_db
def test_the_crowd_sections_results_are_a_list_inside_a_status(submitted, org_client):  # noqa: F811
    job, (a, _b, _c) = submitted
    response = org_client.post(
        f"/crowd/jobs/{job.pk}/bonus/", {"assignments": [a.pk], "amount": "9.00", "reason": "Careful work"}, follow=True
    )
    body = response.content.decode()
    assert re.search(r'<div role="status"><ul class="messages" id="crowd-results"><li', body)
    assert not re.search(r'<ul[^>]*role="status"', body[body.index('id="crowd"'):])
